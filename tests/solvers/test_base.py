"""The solver base class: fixed solve() sequence, warm start, polish, status mapping, list_solvers."""
from dataclasses import dataclass
from functools import partial
import sys
import time

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.errors import InputError, SolverUnavailableError
from minlp_fs.methods import REGISTRY
from minlp_fs.objective import feasibility_violation, svm_primal
from minlp_fs.solvers.base import Availability, RawSolution, SolverMethod, indicator, list_solvers, top_b
from builders import synthetic_instance


tiny = partial(synthetic_instance, C=1.0, name="tiny")


@dataclass
class Scripted(SolverMethod):
    """A solver double whose _run returns (or raises) what the test scripted, and records its start."""

    name = "scripted"
    certifies = True

    def __post_init__(self):
        super().__post_init__()
        self.raw, self.avail, self.seen = None, Availability(True), []

    def _available(self, instance=None):
        if isinstance(self.avail, Exception):
            raise self.avail
        return self.avail

    def _run(self, instance, warm, oracle, time_limit):
        self.seen.append(warm)
        self.budget = time_limit
        if isinstance(self.raw, BaseException):
            raise self.raw
        return self.raw(instance, warm, oracle) if callable(self.raw) else self.raw


def test_top_b_breaks_ties_by_lower_index():
    assert top_b([0.5, 0.9, 0.5, 0.5, 0.1], 2) == (0, 1)
    assert top_b([0.2, 0.7, 0.7, 0.7], 2) == (1, 2)
    assert top_b([1, 0, 1, 0], 2) == (0, 2)
    assert indicator((0, 2), 4).tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_svm_primal_value_is_minus_the_dual(kernel):
    inst = tiny(kernel, C=10.0)
    fit = AlphaSubproblem(inst).solve((0, 1))
    K = inst.gram((0, 1))
    c, b, xi, value = svm_primal(inst, K, fit.alpha)
    assert value == pytest.approx(-fit.value, rel=1e-5)
    assert np.all(inst.y * (K @ c + b) + xi >= 1 - 1e-9) and np.all(xi >= 0)


def test_unavailable_is_a_status_with_the_reason():
    inst = tiny()
    s = Scripted()
    s.avail = Availability(False, "package X not installed (pip install minlp-fs[x])")
    res = s.solve(inst)
    assert res.status == "unavailable" and res.objective is None
    assert res.message == "package X not installed (pip install minlp-fs[x])" and not s.seen


@pytest.mark.parametrize("avail, kind", [(Availability.missing("pip install x"), "missing_package"),
                                         (Availability.no_license("no licence"), "no_license"),
                                         (Availability.too_large("demo size limit"), "size_limit")])
def test_unavailable_result_carries_the_reason_kind(avail, kind):
    s = Scripted()
    s.avail = avail
    res = s.solve(tiny())
    assert res.status == "unavailable" and res.message == avail.reason and res.info["unavailable_kind"] == kind
    s.avail, s.raw = Availability(True), SolverUnavailableError("GAMS says: no licence", "no_license")
    res = s.solve(tiny())
    assert res.status == "unavailable" and res.info["unavailable_kind"] == "no_license"


def test_a_crashing_availability_check_is_a_reason():
    s = Scripted()
    s.avail = OSError("disk on fire")
    avail = s.availability()
    assert not avail and "OSError: disk on fire" in avail.reason and avail.kind == "check_failed"


def test_unavailable_found_while_running_and_a_crash_is_an_error():
    inst = tiny()
    s = Scripted()
    s.raw = SolverUnavailableError("no licence")
    res = s.solve(inst)
    assert (res.status, res.message) == ("unavailable", "no licence")
    s.raw = RuntimeError("segfault-ish")
    res = s.solve(inst)
    assert res.status == "error" and "RuntimeError: segfault-ish" in res.message and res.objective is None


def test_fractional_beta_is_rounded_and_polished_by_the_oracle():
    inst = tiny(C=10.0)
    s = Scripted()
    s.raw = RawSolution(beta=np.array([0.6, 0.1, 0.9, 0.4]), solver_status="done", objective=-1.0)
    res = s.solve(inst)
    assert res.features == [0, 2] and res.status == "converged" and not res.certified
    assert res.objective == pytest.approx(inst.objective(res.alpha, res.features), abs=1e-9)
    assert res.objective == AlphaSubproblem(inst).solve((0, 2)).value
    assert feasibility_violation(res.alpha, inst.y, inst.C) < 1e-9
    assert res.info["solver_objective"] == -1.0 and res.info["solver_status"] == "done"
    assert res.info["beta_max_fractionality"] == pytest.approx(0.4) and res.info["scope"] == "global"
    assert [p.source for p in res.trace] == ["polish"]


def test_the_solver_gets_what_the_warm_start_left_of_the_time_limit(monkeypatch):
    inst = tiny()
    s = Scripted(time_limit=5.0)
    s.raw = RawSolution(beta=indicator((0, 1), inst.n), solver_status="ok")
    s.solve(inst)
    assert 0 < s.budget <= 5.0
    real = Scripted.warm

    def slow_warm(self, run):
        time.sleep(0.3)
        return real(self, run)
    monkeypatch.setattr(Scripted, "warm", slow_warm)
    s = Scripted(time_limit=0.2)
    res = s.solve(inst)
    assert res.status == "time_limit" and not res.ok and s.seen == []   # the solver never ran


def test_warm_start_is_the_alpha_start_or_the_given_subset_or_none():
    inst = tiny(C=10.0)
    s = Scripted()
    s.raw = lambda instance, warm, oracle: RawSolution(beta=warm.beta if warm else np.ones(4))
    res = s.solve(inst)
    warm = s.seen[-1]
    assert res.info["start_source"] == "alpha-start" and warm.beta.sum() == inst.B
    assert warm.value == pytest.approx(inst.objective(warm.alpha, warm.subset), abs=1e-9)
    s.solve(inst, start=[1, 3])
    assert s.seen[-1].subset == (1, 3) and s.seen[-1].source == "given"
    s.warm_start = False
    res = s.solve(inst, start=[1, 3])
    assert s.seen[-1] is None and "start_subset" not in res.info


def _proof(objective, bound):
    def run(instance, warm, oracle):
        return RawSolution(beta=indicator((0, 1), instance.n), objective=objective(instance),
                           bound=bound(instance), proven_optimal=True, solver_status="optimal")
    return run


def test_certified_only_when_the_polished_value_matches_the_solvers_proof():
    inst = tiny(C=10.0)
    value = AlphaSubproblem(inst).solve((0, 1)).value
    s = Scripted()
    s.raw = _proof(lambda i: value * (1 + 1e-7), lambda i: value * (1 + 2e-7))
    res = s.solve(inst)
    assert res.status == "optimal" and res.certified and res.bound == pytest.approx(value, rel=1e-6)
    s.raw = _proof(lambda i: value * 0.9, lambda i: value * 0.9)   # claims a value we cannot reproduce
    res = s.solve(inst)
    assert res.status == "converged" and not res.certified and "not certified" in res.message


def test_fit_sense_units_are_the_primal_minimisation():
    inst = tiny(C=10.0, sense="fit")
    value = AlphaSubproblem(inst).solve((0, 1)).value
    s = Scripted()
    s.raw = _proof(lambda i: -value, lambda i: -value)
    res = s.solve(inst)
    assert res.certified and res.bound == pytest.approx(value) and res.objective == pytest.approx(value)


def test_limits_and_failures_map_to_statuses():
    inst = tiny(C=10.0)
    s = Scripted()
    s.raw = RawSolution(beta=indicator((0, 1), 4), time_limit_reached=True, proven_optimal=True)
    assert s.solve(inst).status == "time_limit"
    s.raw = RawSolution(beta=indicator((0, 1), 4), failed=True, message="restoration failed")
    res = s.solve(inst)
    assert res.status == "error" and res.message == "restoration failed" and res.objective is not None
    s.raw = RawSolution(beta=None, time_limit_reached=True)
    res = s.solve(inst)   # no point from the solver: its warm start, solved exactly, is the answer so far
    start = s.seen[-1]
    assert res.status == "time_limit" and res.objective == start.value and tuple(res.features) == start.subset
    assert res.trace[-1].source == "start (alpha-start)"
    cold = Scripted(warm_start=False)
    cold.raw = RawSolution(beta=None, time_limit_reached=True)
    assert cold.solve(inst).objective is None   # a cold start has nothing to keep
    s.raw = RawSolution(beta=indicator((0, 1), 4), limit="iterations", proven_optimal=True)
    res = s.solve(inst)
    assert res.status == "limit" and "iterations" in res.message and not res.certified
    s.raw = RawSolution(beta=None, limit="nodes", message="SCIP stopped: nodelimit")
    res = s.solve(inst)
    assert res.status == "limit" and res.message.startswith("SCIP stopped: nodelimit; the answer is its warm start")
    assert res.objective == start.value
    s.raw = RawSolution(beta=np.ones(3))
    assert "unusable beta" in s.solve(inst).message


def test_a_ctrl_c_inside_the_solver_keeps_the_solved_warm_start():
    inst = tiny(C=10.0)
    s = Scripted()
    s.raw = KeyboardInterrupt()
    res = s.solve(inst)
    assert res.status == "interrupted" and res.objective == s.seen[-1].value
    cold = Scripted(warm_start=False)
    cold.raw = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):   # nothing found: Ctrl-C goes on up (the CLI prints "interrupted")
        cold.solve(inst)


def test_bad_time_limit_is_an_input_error():
    with pytest.raises(InputError, match="time_limit"):
        Scripted(time_limit=0)


def test_list_solvers_covers_every_solver_entry(monkeypatch):
    rows = list_solvers()
    names = {r["name"] for r in rows}
    assert {"ipopt", "ipopt-pyomo", "scip", "knitro"} <= names
    assert names <= set(REGISTRY)
    for row in rows:
        assert set(row) == {"name", "available", "reason", "scope", "demo_limit", "kind"}
        assert row["available"] or row["reason"] != "ok"
    knitro = next(r for r in rows if r["name"] == "knitro")
    assert knitro["scope"] == "local"
    assert knitro["available"] or knitro["kind"] in ("no_license", "missing_package")
    monkeypatch.setitem(sys.modules, "minlp_fs.solvers.scip", None)   # an adapter that cannot import
    scip = next(r for r in list_solvers() if r["name"] == "scip")
    assert not scip["available"] and scip["reason"].startswith("unavailable: ")
    assert scip["kind"] == "missing_package"
