"""hybrid:SOLVER: heuristic -> warm-started solver -> polish -> heuristic, with a tagged trace."""
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.errors import InputError
from minlp_fs.methods import get_method
from minlp_fs.solvers.hybrid import Hybrid
from builders import synthetic_instance


def small(kernel="rbf", sense="paper", C=1.0, **sizes):
    return synthetic_instance(kernel, sense, C=C, **sizes)


def _check(inst, res):
    assert res.objective == pytest.approx(inst.objective(res.alpha, res.features), abs=1e-9)
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve(res.features).value, rel=1e-6)


def test_registry_name_sets_the_solver():
    method = get_method("hybrid:ipopt", max_rounds=2)
    assert isinstance(method, Hybrid) and method.solver == "ipopt" and method.label == "hybrid:ipopt"
    with pytest.raises(InputError, match="solver adapter"):
        get_method("hybrid:ls")
    with pytest.raises(InputError, match="starts from a subset"):
        get_method("hybrid:scip", heuristic="rfe1")
    for bad in (0, True, 2.5):
        with pytest.raises(InputError, match="hybrid: max_rounds must be an integer >= 1"):
            get_method("hybrid:scip", max_rounds=bad)


def test_hybrid_scip_is_certified_at_the_enumerated_optimum():
    pytest.importorskip("pyscipopt", reason="pyscipopt not installed (pip install minlp-fs[scip])")
    inst = small("rbf")
    res = get_method("hybrid:scip", time_limit=20, max_rounds=3).solve(inst, start="random")
    _check(inst, res)
    assert res.status == "optimal" and res.certified and res.method == "hybrid:scip"
    assert res.objective == pytest.approx(get_method("enumerate").solve(inst).objective, rel=1e-7)
    assert [r["component"] for r in res.info["rounds"]][:2] == ["ls*", "scip"]
    assert {p.source for p in res.trace} <= {"ls*", "scip"}


def test_hybrid_ipopt_trace_names_components_and_never_loses_to_its_heuristic():
    pytest.importorskip("cyipopt", reason="cyipopt not installed (pip install minlp-fs[ipopt])")
    inst = small("poly3", sense="fit", C=10.0, m=30, n_noise=5, B=3)
    res = get_method("hybrid:ipopt", time_limit=20, max_rounds=3).solve(inst, start="random")
    _check(inst, res)
    alone = get_method("ls*").solve(inst, start="random")
    assert not inst.better(alone.objective, res.objective)
    assert res.trace and {p.source for p in res.trace} <= {"ls*", "ipopt"}
    rounds = res.info["rounds"]
    assert rounds[0]["component"] == "ls*" and rounds[1]["component"] == "ipopt"
    assert res.status in ("converged", "time_limit") and not res.certified


def test_unavailable_solver_makes_the_hybrid_unavailable():
    from minlp_fs.solvers.knitro import license_check
    if license_check().ok:
        pytest.skip("Knitro is licensed here")
    res = get_method("hybrid:knitro", time_limit=5).solve(small())
    assert res.status == "unavailable" and license_check().reason in res.message
    assert res.info["rounds"] == []   # checked before any component runs


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_hybrid_bound_is_the_best_of_the_solvers_and_the_senses_valid_bound(sense):
    """A local solver gives no bound: the sense's own one stands (paper: the trivial bound, fit: g <= 0);
    a global solver's bound is kept when tighter, and every bound is valid for the enumerated optimum."""
    pytest.importorskip("cyipopt", reason="cyipopt not installed (pip install minlp-fs[ipopt])")
    inst = small("rbf", sense=sense)
    opt = get_method("enumerate").solve(inst).objective
    local = get_method("hybrid:ipopt", time_limit=20, max_rounds=2).solve(inst, start="random")
    assert local.bound == (inst.trivial_bound if sense == "paper" else 0.0)
    assert not inst.better(opt, local.bound)   # valid: the optimum is no better than the bound
    pytest.importorskip("pyscipopt", reason="pyscipopt not installed (pip install minlp-fs[scip])")
    glob = get_method("hybrid:scip", time_limit=20, max_rounds=2).solve(inst, start="random")
    assert inst.score(glob.bound) <= inst.score(opt) + 1e-6 * abs(opt)   # valid
    assert not inst.better(glob.bound, local.bound)   # never looser than the sense's bound
    if sense == "paper":   # SCIP proves this one within the limit: its bound replaces the trivial one
        assert glob.certified and glob.bound == pytest.approx(opt, rel=1e-5)


def test_a_last_heuristic_stopped_by_the_deadline_makes_the_hybrid_a_time_limit(monkeypatch):
    """No improvement in the round ends the hybrid, but when its heuristic was cut by the deadline the run
    ended because of the time limit, not by converging."""
    import dataclasses
    import time

    from minlp_fs.result import Status
    from minlp_fs.solvers.base import Availability

    inst = small("rbf")
    found = get_method("ls*").solve(inst, start=[0, 1])
    hybrid = get_method("hybrid:ipopt", time_limit=0.3, max_rounds=1)
    heuristic_runs = iter([(0.0, found), (0.5, dataclasses.replace(found, status=Status.TIME_LIMIT))])

    class Component:
        def __init__(self, name):
            self.name = name

        def availability(self, instance):
            return Availability(True)

        def solve(self, instance, start=None, oracle=None):
            if self.name == "ipopt":        # the solver finds the same subset again
                return dataclasses.replace(found, method="ipopt")
            pause, result = next(heuristic_runs)
            time.sleep(pause)               # the second heuristic run outlasts the hybrid's deadline
            return result

    monkeypatch.setattr(Hybrid, "_component", lambda self, name, time_limit: Component(name))
    res = hybrid.solve(inst, start=[0, 1])
    assert [r["component"] for r in res.info["rounds"]] == ["ls*", "ipopt", "ls*"]
    assert res.status == "time_limit" and res.features == found.features
