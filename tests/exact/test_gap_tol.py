"""bnb with a relative optimality gap (``gap_tol``): the bound it returns is proven (against enumeration),
the incumbent lies within it, the certificate states the tolerance and ``verify`` proves it, and the
option is checked."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.api import solve
from minlp_fs.cli import main
from minlp_fs.errors import InputError
from minlp_fs.exact.certificate import load, verify

from bnb_helpers import random_instance

MONOTONE = ("poly2", "poly3", "poly5")


def _slack_allowed(res, gap_tol: float) -> float:
    """gap_tol * max(1, |incumbent|) over every incumbent the run held: the most one prune can leave."""
    values = [p.value for p in res.trace if p.source != "bound"]
    return gap_tol * max(1.0, *(abs(v) for v in values))


@pytest.mark.parametrize("kernel", MONOTONE)
@pytest.mark.parametrize("sense", ("paper", "fit"))
@given(seed=st.integers(0, 10_000), n=st.integers(5, 9), gap_tol=st.sampled_from([1e-3, 0.05, 0.3]),
       data=st.data())
@settings(max_examples=5, deadline=None)
def test_bound_is_proven_and_the_incumbent_within_it(kernel, sense, seed, n, gap_tol, data):
    B = data.draw(st.integers(1, n - 1))
    inst = random_instance(seed, 30, n, B, kernel, sense)
    opt = solve(inst, "enumerate").objective
    res = solve(inst, "bnb", gap_tol=gap_tol, incumbent=data.draw(st.sampled_from(["none", "alpha-start"])))
    # certified = optimal: by the search (no prune within the gap), or by the trivial bound the incumbent attains
    assert res.status == "optimal"
    assert res.certified == (res.info["gap_percent"] == 0 or inst.proves_optimal(res.objective))
    # the gap is the one between the answer's value and its bound
    gap = 100 * max(inst.score(res.objective) - inst.score(res.bound), 0.0) / max(abs(res.objective), 1e-12)
    assert res.info["gap_percent"] == pytest.approx(gap, rel=1e-9, abs=1e-12)
    eps = 1e-6 * max(1.0, abs(opt))
    assert inst.score(res.bound) <= inst.score(opt) + eps                 # no subset beats the bound
    assert inst.score(res.objective) <= inst.score(res.bound) + _slack_allowed(res, gap_tol) + eps
    assert abs(inst.objective(res.alpha, res.features) - res.objective) <= eps   # re-evaluated by our code
    assert res.info["gap_tol"] == gap_tol


def test_a_wide_gap_prunes_and_says_so(tmp_path):
    """A 30 % gap on an instance whose exact search expands many nodes: fewer nodes, a bound below the
    incumbent, a message and a certificate that state the gap, and verify proves it within that tolerance."""
    inst = random_instance(11, 40, 10, 4, "poly3", "paper")
    exact = solve(inst, "bnb", incumbent="none")
    path = tmp_path / "gap.json"
    res = solve(inst, "bnb", incumbent="none", gap_tol=0.3, certificate=str(path))
    assert res.status == "optimal" and not res.certified and res.info["nodes"] < exact.info["nodes"]
    slack = inst.score(res.objective) - inst.score(res.bound)
    assert 0 < slack <= _slack_allowed(res, 0.3) and "optimal within" in res.message
    assert inst.score(res.bound) <= inst.score(exact.objective) + 1e-9
    doc = load(path)
    assert doc["claim"]["tolerance"] == pytest.approx(slack)
    refused = verify(doc)                      # exact proofs only, by default
    assert not refused.proven and "--max-gap" in refused.reason
    assert not verify(doc, max_gap=0.9 * slack / max(1.0, abs(res.objective))).proven
    verdict = verify(doc, max_gap=0.3)
    assert verdict.proven and verdict.tolerance >= doc["claim"]["tolerance"]
    assert "gap_tol" in verdict.reason


def test_an_incumbent_at_the_trivial_bound_is_certified_whatever_the_gap(tmp_path):
    """Paper sense, gap_tol > 0, B = 1: the search prunes within the gap, then its incumbent attains the trivial bound
    -2C min(|I+|, |I-|) (Remark 1): the answer is certified with that bound and the gap to it (not the pruned nodes'),
    the trivial bound's message, and a certificate that states no tolerance and that verify proves as it is."""
    inst = random_instance(0, 30, 5, 1, "poly3", "paper")
    path = tmp_path / "trivial.json"
    res = solve(inst, "bnb", gap_tol=0.05, incumbent="none", certificate=str(path))
    assert inst.proves_optimal(res.objective) and res.info["nodes"] > 0
    assert res.status == "optimal" and res.certified and res.bound == inst.trivial_bound
    assert 0 <= res.info["gap_percent"] < 1e-4 and "attains the trivial bound" in res.message
    doc = load(path)
    assert doc["claim"]["tolerance"] == 0 and doc["claim"]["bound"] == inst.trivial_bound
    assert verify(doc).proven


def test_forged_gap_certificates_are_refused(tmp_path):
    """The stated tolerance widens the closing of children only: not the check that the claimed value is
    attained, not beyond the claim's own gap to its bound, and never with a number that overflows."""
    inst = random_instance(11, 40, 10, 4, "poly3", "paper")
    path = tmp_path / "gap.json"
    solve(inst, "bnb", incumbent="none", gap_tol=0.3, certificate=str(path))
    doc = load(path)
    tol = doc["claim"]["tolerance"]
    better = dict(doc, claim=dict(doc["claim"], value=doc["claim"]["value"] - 0.99 * tol,
                                  bound=doc["claim"]["bound"] - 0.99 * tol))
    assert not verify(better, max_gap=0.9).proven                        # the value is not attained
    vacuous = dict(doc, nodes=[], claim=dict(doc["claim"], value=-1e8, tolerance=1e9))
    assert not verify(vacuous, max_gap=0.9).proven                       # not the claim's own gap
    huge = dict(doc, claim=dict(doc["claim"], tolerance=10 ** 400))
    assert not verify(huge, max_gap=0.9).proven                          # no OverflowError


@pytest.mark.parametrize("stated", [-1.0, float("nan"), float("inf"), None])
def test_verify_refuses_a_stated_tolerance_that_is_not_a_number(stated, tmp_path):
    inst = random_instance(2, 30, 6, 2, "poly2", "fit")
    path = tmp_path / "c.json"
    solve(inst, "bnb", gap_tol=0.01, certificate=str(path))
    doc = load(path)
    assert verify(doc, max_gap=0.02).proven   # gap_tol 0.01 of an earlier, larger |incumbent|
    doc["claim"]["tolerance"] = stated
    verdict = verify(doc)
    assert not verdict.proven and "tolerance" in verdict.reason


@pytest.mark.parametrize("sense", ("paper", "fit"))
def test_parallel_search_keeps_the_workers_floor(sense):
    inst = random_instance(4, 40, 9, 4, "poly2", sense)
    opt = solve(inst, "enumerate").objective
    res = solve(inst, "bnb", gap_tol=0.2, n_jobs=2, incumbent="none")
    assert res.status == "optimal"
    assert inst.score(res.bound) <= inst.score(opt) + 1e-6 * max(1.0, abs(opt))
    assert inst.score(res.objective) - inst.score(res.bound) <= _slack_allowed(res, 0.2) + 1e-9


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan")])
def test_gap_tol_is_checked(bad):
    inst = random_instance(1, 20, 5, 2, "poly2", "paper")
    with pytest.raises(InputError, match="gap_tol"):
        solve(inst, "bnb", gap_tol=bad)


def test_cli_gap_tol(capsys):
    tiny = ["--dataset", "synthetic", "--B", "3", "--m", "40"]
    assert main(["certify", *tiny, "--method", "bnb", "--gap-tol", "0.05", "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["info"]["gap_tol"] == 0.05
    assert main(["certify", *tiny, "--method", "enumerate", "--gap-tol", "0.05"]) != 0
    assert "--gap-tol needs --method bnb" in capsys.readouterr().err
    assert main(["certify", *tiny, "--gap-tol", "-5"]) == 2            # auto: refused whatever method it picks
    assert "--gap-tol must be a number in [0, 1)" in capsys.readouterr().err


def test_the_bound_is_the_pruned_nodes_not_the_threshold():
    """Paper sense with a gap wider than incumbent - trivial bound: the root is pruned at once, and the bound
    reported is the root's (the trivial bound), not the lower threshold it was pruned against."""
    inst = random_instance(8, 40, 8, 3, "poly2", "paper")
    res = solve(inst, "bnb", gap_tol=0.9, incumbent="alpha-start")
    assert res.status == "optimal" and res.info["nodes"] == 1
    assert res.bound == pytest.approx(inst.trivial_bound)
    assert solve(inst, "enumerate").objective >= res.bound - 1e-9


@pytest.mark.parametrize("sense", ("paper", "fit"))
def test_an_interrupted_run_with_a_gap_keeps_a_valid_bound(sense):
    """Ctrl-C at the second incumbent: the bound (open nodes and the nodes pruned within the gap) is proven."""
    inst = random_instance(5, 40, 10, 4, "poly3", sense)
    optimum = solve(inst, "enumerate").objective
    calls = []

    def stop_at_second(point):
        calls.append(point)
        if len(calls) == 2:
            raise KeyboardInterrupt

    res = solve(inst, "bnb", incumbent="none", gap_tol=0.05, callback=stop_at_second)
    assert res.status in ("interrupted", "optimal")
    assert res.bound is None or inst.score(res.bound) <= inst.score(optimum) + 1e-6 * abs(optimum)
    assert all(inst.score(p.bound) <= inst.score(optimum) + 1e-6 * abs(optimum)
               for p in res.trace if p.source == "bound")
