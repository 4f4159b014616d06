"""The verifier's cheap bounds (weak duality, feasible alphas) against exact solves, and tampering
that only a recomputation catches; verify --jobs gives the same verdict."""
import copy
import itertools

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.api import solve
from minlp_fs.exact.certificate import dual_lower_bound, load, score_bound, verify
from minlp_fs.objective import _hinge_bias

from bnb_helpers import KERNELS, SENSES, random_instance


def test_hinge_bias_is_the_minimiser_over_b():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = int(rng.integers(2, 30))
        p, y = rng.normal(size=m), np.where(rng.random(m) < 0.5, 1.0, -1.0)
        y[:2] = (1.0, -1.0)
        grid = np.linspace(p.min() - 1, p.max() + 1, 4001)
        h = [np.maximum(p[y > 0] - b, 0).sum() + np.maximum(b - p[y < 0], 0).sum() for b in np.concatenate([grid, p])]
        b = _hinge_bias(p, y)
        at_b = np.maximum(p[y > 0] - b, 0).sum() + np.maximum(b - p[y < 0], 0).sum()
        assert at_b == pytest.approx(min(h), abs=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
def test_weak_duality_brackets_g(kernel):
    """-P(any a) <= g(S) <= f(any feasible alpha, S), tight at the optimal alpha."""
    inst = random_instance(3, 25, 5, 2, kernel, "paper")
    oracle = AlphaSubproblem(inst)
    rng = np.random.default_rng(1)
    for S in itertools.combinations(range(inst.n), 2):
        fit = oracle.solve(S)
        assert dual_lower_bound(inst, S, fit.alpha) == pytest.approx(fit.value, rel=1e-6, abs=1e-6)
        for _ in range(3):
            a = rng.uniform(0, inst.C, inst.m) * (rng.random(inst.m) < 0.5)
            assert dual_lower_bound(inst, S, a) <= fit.value + 1e-9
            a[a > 0] -= (a @ inst.y) * inst.y[a > 0] / max(1, (a > 0).sum())   # not feasible in general
            assert dual_lower_bound(inst, S, a) <= fit.value + 1e-9


@pytest.mark.parametrize("sense", SENSES)
def test_score_bound_is_a_lower_bound_of_the_score(sense):
    inst = random_instance(5, 25, 5, 3, "poly2", sense)
    oracle = AlphaSubproblem(inst)
    other = oracle.solve((0, 1, 2)).alpha  # feasible, optimal for another subset
    for S in itertools.combinations(range(inst.n), 3):
        assert score_bound(inst, S, other) <= inst.score(oracle.solve(S).value) + 1e-9
    assert score_bound(inst, (0, 1, 2), None) is None
    if sense == "fit":  # an infeasible alpha gives no upper bound of g
        assert score_bound(inst, (0, 1, 2), other + 1.0) is None


@pytest.fixture(scope="module")
def proofs(tmp_path_factory):
    out = {}
    for sense in SENSES:
        path = tmp_path_factory.mktemp("cert") / f"{sense}.json"
        inst = random_instance(8, 40, 9, 4, "poly2", sense)
        solve(inst, "bnb", incumbent="none", certificate=str(path))
        out[sense] = load(path)
    return out


@pytest.mark.parametrize("sense", SENSES)
def test_cheap_bounds_replace_the_qps(proofs, sense):
    verdict = verify(proofs[sense])
    assert verdict.proven, verdict.reason
    assert verdict.n_qps <= 1 and verdict.n_cheap > 0   # at most the claimed optimum is solved
    assert verdict.tolerance == pytest.approx(1e-6 * max(1.0, abs(verdict.value)))


@pytest.mark.parametrize("sense", SENSES)
def test_verify_in_worker_processes_gives_the_same_verdict(proofs, sense):
    one, two = verify(proofs[sense]), verify(proofs[sense], jobs=2)
    assert two.proven and (one.n_cheap, one.n_qps, one.n_closed) == (two.n_cheap, two.n_qps, two.n_closed)


def _expanded_child(doc):
    """(parent record, child record): an expanded node whose parent is recorded too."""
    keyed = {(tuple(r["fixed"]), tuple(r["free"]), r["need"]): r for r in doc["nodes"] if r["kind"] != "leaf"}
    for rec in doc["nodes"]:
        if rec["kind"] == "leaf" or not rec.get("order"):
            continue
        for t, j in enumerate(rec["order"]):
            fixed = tuple(sorted(rec["fixed"] + [j]))
            free = tuple(sorted(rec["order"][t + 1:]))
            child = keyed.get((fixed, free, rec["need"] - 1))
            if child is not None:
                return rec, child
    raise AssertionError("no expanded child")


@pytest.mark.parametrize("sense", SENSES)
def test_a_removed_subtree_with_inflated_recorded_bounds_is_rejected(proofs, sense):
    """Recorded values and bounds are not trusted: the verifier recomputes them and finds the hole."""
    doc = copy.deepcopy(proofs[sense])
    parent, child = _expanded_child(doc)
    doc["nodes"].remove(child)
    big = 1e9 if sense == "paper" else -1e9
    for p in parent.get("probes", []):
        p[1], p[2] = big, 1e9
    if "value" in parent:
        parent["value"] = big
    assert not verify(doc).proven


@pytest.mark.parametrize("sense", SENSES)
def test_weakened_alphas_still_prove_by_libsvm_fallback(proofs, sense):
    """A stored alpha only makes a check cheap: a useless one costs libsvm solves, never a wrong verdict.
    Paper sense: any vector is a valid primal point (every alpha scaled by 0.01); fit sense: the leaves'
    alphas scaled towards 0 stay feasible (the fixed-alpha bounds of the inner nodes rest on theirs)."""
    doc = copy.deepcopy(proofs[sense])
    for rec in doc["nodes"]:
        alphas = [p[3] for p in rec.get("probes", [])] + ([rec["alpha"]] if rec["kind"] == "leaf" else [])
        for a in filter(None, alphas):          # a lazy probe (skipped by the search) has no alpha
            a["value"] = [0.01 * v for v in a["value"]]
    assert any(r["kind"] == "leaf" for r in doc["nodes"]) or sense == "paper"
    verdict = verify(doc)
    assert verdict.proven, verdict.reason
    assert verdict.n_qps > 1


@pytest.mark.parametrize("sense", SENSES)
def test_a_version_1_certificate_without_alphas_verifies_by_solves(proofs, sense):
    doc = copy.deepcopy(proofs[sense])
    doc["version"] = 1
    doc["claim"].pop("alpha")
    for rec in doc["nodes"]:
        if rec["kind"] == "leaf":
            rec.pop("alpha")
        for p in rec.get("probes", []):
            del p[3:]
    verdict = verify(doc)
    assert verdict.proven, verdict.reason
    assert verdict.n_qps > 1


def test_objective_on_the_support_is_the_objective():
    from minlp_fs.exact.certificate import _objective

    inst = random_instance(2, 30, 6, 3, "poly3", "fit")
    alpha = AlphaSubproblem(inst).solve((0, 2, 4)).alpha
    assert (alpha == 0).any()
    for S in [(0, 2, 4), (1, 3, 5), (0, 1, 2, 3)]:
        assert _objective(inst, S, alpha) == pytest.approx(inst.objective(alpha, S), rel=1e-12)
