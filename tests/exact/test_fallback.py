"""bnb's fallback to enumeration (``fallback_share``, :mod:`minlp_fs.exact.fallback`): the same certified optimum as
enumeration whichever phase finishes, a valid bound when the time limit or Ctrl-C stops it, and the options."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.api import build_instance, solve
from minlp_fs.errors import InputError
from minlp_fs.exact import fallback
from minlp_fs.exact.cli import AUTO_FALLBACK_SHARE, certify_choice
from minlp_fs.exact.search import _Search
from minlp_fs.result import Status
from minlp_fs.solvers.enumeration import Estimate, estimate_seconds

from bnb_helpers import KERNELS, SENSES, random_instance


def _bnb_stops_early(monkeypatch, status=Status.TIME_LIMIT, nodes_per_search: int = 1):
    """Every bnb search processes ``nodes_per_search`` nodes and then stops with ``status`` (as its time limit
    would): the fallback's later phases then run whatever the clock says."""
    real = _Search.search_nodes

    def stop_early(self, nodes, max_nodes=None, bar=None):
        done = real(self, nodes, max_nodes=nodes_per_search, bar=bar)
        return status if self.stack else done

    monkeypatch.setattr(_Search, "search_nodes", stop_early)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("sense", SENSES)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 8), data=st.data())
@settings(max_examples=3, deadline=None)
def test_the_enumeration_phase_certifies_the_optimum_and_the_bnb_phases_bound_it(kernel, sense, seed, n, data):
    B = data.draw(st.integers(2, n - 2))
    inst = random_instance(seed, 30, n, B, kernel, sense)
    opt = solve(inst, "enumerate").objective
    with pytest.MonkeyPatch.context() as patch:
        _bnb_stops_early(patch)
        res = solve(inst, "bnb", fallback_share=0.5)
    eps = 1e-6 * max(1.0, abs(opt))
    assert abs(res.objective - opt) <= eps and res.certified and res.status == "optimal"
    methods = [p["method"] for p in res.info["phases"]]   # the phases run until one completes (one node may)
    assert methods == ["bnb", "bnb", "enumerate"][:len(methods)] and res.info["completed_by"] == methods[-1]
    assert [p["certified"] for p in res.info["phases"]] == [False] * (len(methods) - 1) + [True]
    assert res.bound == res.objective or res.bound == inst.trivial_bound and inst.proves_optimal(res.objective)
    assert res.n_svm_solves >= sum(p["svm_solves"] for p in res.info["phases"])
    assert abs(inst.objective(res.alpha, res.features) - res.objective) <= eps   # re-evaluated by our code


@pytest.mark.parametrize("sense", SENSES)
def test_a_search_that_never_finishes_falls_back_to_enumeration(sense, monkeypatch):
    inst = random_instance(11, 30, 8, 4, "poly3", sense)
    opt = solve(inst, "enumerate")
    _bnb_stops_early(monkeypatch, nodes_per_search=0)
    res = solve(inst, "bnb", fallback_share=0.5)
    assert [p["method"] for p in res.info["phases"]] == ["bnb", "bnb", "enumerate"]
    assert res.certified and res.info["completed_by"] == "enumerate" and res.features == opt.features
    assert res.objective == pytest.approx(opt.objective, rel=1e-9) and res.info["enumeration_subsets"] == 70
    assert res.info["enumeration_estimate_s"] > 0


def test_a_search_that_finishes_first_is_plain_bnb():
    inst = build_instance("synthetic", B=4, kernel="poly3", sense="fit")
    plain, hedged = solve(inst, "bnb"), solve(inst, "bnb", fallback_share=0.5)
    assert hedged.certified and hedged.info["completed_by"] == "bnb" and len(hedged.info["phases"]) == 1
    assert hedged.objective == pytest.approx(plain.objective, rel=1e-9) and hedged.features == plain.features
    assert "enumeration_estimate_s" not in hedged.info


@pytest.mark.parametrize("sense", SENSES)
def test_the_time_limit_ends_it_with_the_bnb_phase_s_valid_bound(sense, monkeypatch):
    inst = random_instance(3, 30, 8, 4, "poly2", sense)
    opt = solve(inst, "enumerate").objective
    _bnb_stops_early(monkeypatch)

    def slow_estimate(instance, seed, tol, budget_s):   # the time limit passes while enumeration's time is estimated
        import time
        time.sleep(0.6)
        return Estimate(100.0, 0)

    monkeypatch.setattr(fallback, "estimate_seconds", slow_estimate)
    res = solve(inst, "bnb", fallback_share=0.5, time_limit=0.5)
    assert res.status == "time_limit" and not res.certified and len(res.info["phases"]) == 1
    assert res.bound is not None and inst.score(res.bound) <= inst.score(opt) + 1e-9   # a bound of every subset
    assert inst.score(opt) <= inst.score(res.objective) + 1e-9


def test_ctrl_c_in_a_bnb_phase_stops_the_fallback(monkeypatch):
    inst = random_instance(5, 30, 8, 4, "poly3", "fit")
    _bnb_stops_early(monkeypatch, Status.INTERRUPTED)
    res = solve(inst, "bnb", fallback_share=0.5)
    assert res.status == "interrupted" and len(res.info["phases"]) == 1 and not res.certified
    assert res.objective is not None and res.bound is not None


def test_enumeration_time_estimate_walks_spread_ranges():
    inst = build_instance("synthetic", B=4, kernel="poly2", sense="fit")
    seconds, walked, value, subset, alpha = estimate_seconds(inst, None, budget_s=0.5)
    assert seconds > 0 and 8 <= walked <= math.comb(inst.n, inst.B)   # disjoint ranges: no subset twice
    assert len(subset) == 4 and abs(inst.objective(alpha, subset) - value) <= 1e-6 * abs(value)   # its best, exact
    tiny = build_instance("synthetic", B=1, kernel="poly2", sense="fit")   # 10 subsets: each walked once
    estimate = estimate_seconds(tiny, None, budget_s=0.5)
    opt = solve(tiny, "enumerate")
    assert estimate.walked == 10 and estimate.subset == tuple(opt.features)   # all walked: its best is the optimum
    assert estimate.value == pytest.approx(opt.objective, rel=1e-6)


@pytest.mark.parametrize("sense", SENSES)
def test_the_estimate_s_best_subset_is_offered_as_the_incumbent(sense, monkeypatch):
    inst = random_instance(13, 30, 8, 3, "poly3", sense)   # 56 subsets: the estimate's ranges walk every one
    opt = solve(inst, "enumerate")
    _bnb_stops_early(monkeypatch, nodes_per_search=0)
    res = solve(inst, "bnb", fallback_share=0.5, incumbent="none")   # no incumbent before the estimate
    found = [t for t in res.trace if t.source == "estimate"]
    assert len(found) == 1 and found[0].value == pytest.approx(opt.objective, rel=1e-6)
    assert res.certified and res.features == opt.features   # the later phases improve on it by rounding at most
    assert all(t.value == pytest.approx(found[0].value, rel=1e-9) for t in res.trace[res.trace.index(found[0]):])


def test_options_and_certify_auto_choice():
    small = build_instance("synthetic", B=2, kernel="poly2")          # C(10, 2) = 45 subsets: enumeration
    large = build_instance("bcd", B=5, kernel="poly2")                # C(30, 5) = 142,506: bnb, hedged
    assert certify_choice(small, "auto", None) == ("enumerate", {})
    assert certify_choice(large, "auto", None) == ("bnb", {"fallback_share": AUTO_FALLBACK_SHARE})
    assert certify_choice(large, "auto", "proof.json") == ("bnb", {})        # a proof needs the tree to finish
    assert certify_choice(large, "bnb", None) == ("bnb", {})                 # bnb asked for: bnb alone
    with pytest.raises(InputError, match="fallback_share must be None"):
        solve(small, "bnb", fallback_share=0.5, certificate="proof.json")
    with pytest.raises(InputError, match="fallback_share"):
        solve(small, "bnb", fallback_share=-1.0)


def test_ctrl_c_while_enumeration_s_time_is_estimated_keeps_the_first_phase_s_bound(monkeypatch):
    inst = random_instance(7, 30, 8, 4, "poly2", "paper")
    opt = solve(inst, "enumerate").objective
    _bnb_stops_early(monkeypatch)

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fallback, "estimate_seconds", ctrl_c)
    res = solve(inst, "bnb", fallback_share=0.5)
    assert res.status == "interrupted" and len(res.info["phases"]) == 1 and not res.certified
    assert res.bound is not None and inst.score(res.bound) <= inst.score(opt) + 1e-9 <= inst.score(res.objective) + 2e-9
