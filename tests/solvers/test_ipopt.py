"""The relaxation NLPs (derivatives against finite differences) and the two Ipopt adapters."""
import sys
import time

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.errors import InputError
from minlp_fs.methods import get_method
from minlp_fs.objective import feasibility_violation
from minlp_fs.solvers.base import indicator
from minlp_fs.solvers.nlp import DualNLP, PrimalNLP, make_nlp
from builders import synthetic_instance

CASES = [(k, s) for k in ("poly3", "rbf") for s in ("paper", "fit")]


def small(kernel="poly3", sense="paper", **sizes):
    return synthetic_instance(kernel, sense, data_seed=1, **sizes)


def _interior_point(nlp, rng):
    lo = np.maximum(nlp.lb, -3.0)
    hi = np.minimum(nlp.ub, 3.0)
    return lo + rng.uniform(0.1, 0.9, nlp.nx) * (hi - lo)


def _dense_jacobian(nlp, x):
    J = np.zeros((nlp.ncon, nlp.nx))
    rows, cols = nlp.jacobianstructure()
    J[rows, cols] = nlp.jacobian(x)
    return J


def _central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("kernel,sense", CASES)
def test_gradient_jacobian_hessian_match_finite_differences(kernel, sense):
    inst = small(kernel, sense, m=8)
    nlp = make_nlp(inst)
    rng = np.random.default_rng(0)
    x = _interior_point(nlp, rng)
    fd = _central(nlp.objective, x)
    assert np.allclose(nlp.gradient(x), fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    fdJ = _central(nlp.constraints, x).T
    assert np.allclose(_dense_jacobian(nlp, x), fdJ, atol=1e-6 * max(1.0, np.abs(fdJ).max()))
    lam, sigma = rng.normal(size=nlp.ncon), 0.7
    lagrangian_grad = lambda z: sigma * nlp.gradient(z) + lam @ _dense_jacobian(nlp, z)  # noqa: E731
    fdH = _central(lagrangian_grad, x)
    H = np.zeros((nlp.nx, nlp.nx))
    H[nlp.hessianstructure()] = nlp.hessian(x, lam, sigma)
    H = H + np.tril(H, -1).T
    assert np.allclose(H, fdH, atol=1e-5 * np.abs(fdH).max())


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
def test_relaxation_is_exact_at_binary_beta(kernel):
    inst = small(kernel)
    fit = AlphaSubproblem(inst).solve((0, 3))
    x = np.concatenate([fit.alpha, indicator((0, 3), inst.n)])
    assert DualNLP(inst).objective(x) == pytest.approx(inst.objective(fit.alpha, (0, 3)), abs=1e-12)


def test_primal_start_has_value_minus_g_and_is_feasible():
    inst = small("rbf", "fit")
    oracle = AlphaSubproblem(inst)
    fit = oracle.solve((1, 2))
    nlp = PrimalNLP(inst)
    warm = type("W", (), {"alpha": fit.alpha, "beta": indicator((1, 2), inst.n), "subset": (1, 2)})
    x0 = nlp.start(warm)
    assert nlp.objective(x0) == pytest.approx(-fit.value, rel=1e-6)
    g = nlp.constraints(x0)
    assert g[0] == inst.B and np.all(g[1:inst.m + 1] >= 1 - 1e-9)
    assert g.size == inst.m + 2 and abs(g[-1]) < 1e-9      # the formulation's cut sum c = 0 (c = y o alpha)
    assert np.all(x0 >= nlp.lb) and np.all(x0 <= nlp.ub)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_the_nlp_has_the_formulations_bounds_and_linear_rows(sense):
    """Both NLPs take their variables' bounds and linear rows from models.formulation (one formulation)."""
    from minlp_fs.models.formulation import Formulation

    inst = small("poly2", sense)
    form, nlp = Formulation(inst, relax=True), make_nlp(inst)
    order = ("alpha", "beta") if sense == "paper" else ("beta", "c", "b", "xi")
    np.testing.assert_array_equal(nlp.lb, np.concatenate([form.blocks[b].lb for b in order]))
    np.testing.assert_array_equal(nlp.ub, np.concatenate([form.blocks[b].ub for b in order]))
    linear = {r.name: (r.lo, r.hi) for r in form.linear_rows if r.name != "objective_bound"}
    assert set(linear) == {"budget", "balance"}
    if sense == "fit":   # y_i c_i in [0, C]: the sign of c is the label's
        c = form.blocks["c"]
        assert np.all((inst.y > 0) == (c.ub > 0)) and np.all(np.isfinite(nlp.ub))
    assert nlp.ncon == (2 if sense == "paper" else inst.m + 2)


@pytest.fixture
def cyipopt():
    """The tests below run Ipopt; the NLP tests above need numpy only."""
    return pytest.importorskip("cyipopt", reason="cyipopt not installed (pip install minlp-fs[ipopt])")


def _check_polished(inst, res):
    assert len(res.features) == inst.B and res.alpha is not None
    assert res.objective == pytest.approx(inst.objective(res.alpha, res.features), abs=1e-9)
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve(res.features).value, rel=1e-6)
    assert feasibility_violation(res.alpha, inst.y, inst.C) < 1e-8
    assert res.info["scope"] == "local" and not res.certified


@pytest.mark.parametrize("kernel,sense", CASES)
def test_ipopt_returns_a_polished_feasible_answer(kernel, sense, cyipopt):
    inst = small(kernel, sense, m=30, n_noise=4, B=3)
    res = get_method("ipopt", time_limit=20).solve(inst)
    assert res.status == "converged", res.message
    _check_polished(inst, res)
    # the solver's own objective is kept apart, in the model's units (sign * f)
    assert res.info["solver_objective"] == pytest.approx(res.info["relaxation_objective"])


def test_ipopt_limited_memory_hessian_runs(cyipopt):
    inst = small("poly3", "paper", m=20)
    res = get_method("ipopt", hessian="limited-memory", time_limit=10).solve(inst)
    assert res.status in ("converged", "time_limit") and res.info["hessian"] == "limited-memory"
    _check_polished(inst, res)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_warm_start_is_ipopts_starting_point(sense, cyipopt):
    inst = small("rbf", sense, m=20)
    method = get_method("ipopt", time_limit=10)
    res = method.solve(inst, start=[0, 3])
    start_value = AlphaSubproblem(inst).solve((0, 3)).value
    assert res.info["start_subset"] == [0, 3]
    # x0's objective is f(alpha_start, beta_start) (paper) or the primal -g(beta_start) (fit)
    assert res.info["x0_objective"] == pytest.approx(inst.sign * start_value, rel=1e-6)
    cold = get_method("ipopt", time_limit=10, warm_start=False).solve(inst)
    assert cold.info["x0_objective"] != pytest.approx(res.info["x0_objective"], rel=1e-3)


def test_time_limit_is_reported(cyipopt):
    inst = small("poly3", "fit", m=60, n_noise=6, B=3)
    res = get_method("ipopt", hessian="limited-memory", time_limit=0.2).solve(inst)
    assert res.status == "time_limit" and "wall time" in res.message
    _check_polished(inst, res)


def test_building_the_nlp_counts_against_the_time_limit(cyipopt, monkeypatch):
    """A build that uses the whole time limit runs no Ipopt: the answer is the start, polished."""
    from minlp_fs.solvers import ipopt

    build = ipopt.make_nlp
    monkeypatch.setattr(ipopt, "make_nlp", lambda instance: (time.sleep(0.3), build(instance))[1])
    inst = small("poly3", "paper", m=20)
    res = get_method("ipopt", time_limit=0.2).solve(inst, start=[0, 3])
    assert res.status == "time_limit" and res.info["solver_status"] == "not run", res.message
    assert list(res.features) == [0, 3]
    _check_polished(inst, res)


def test_the_runs_deadline_stops_ipopt_whatever_its_max_wall_time(cyipopt, monkeypatch):
    """The intermediate callback stops Ipopt at its first iteration past the run's deadline; here Ipopt's
    own max_wall_time is out of the way and every gradient takes longer than the whole limit."""
    from minlp_fs.solvers import ipopt

    monkeypatch.setattr(ipopt.IpoptRelaxation, "ipopt_options",
                        lambda self, time_limit=None: {"sb": "yes", "print_level": 0, "max_wall_time": 1e6})
    build = ipopt.make_nlp

    def slow_gradient(instance):
        nlp = build(instance)
        gradient = nlp.gradient
        nlp.gradient = lambda x: (time.sleep(0.3), gradient(x))[1]
        return nlp

    monkeypatch.setattr(ipopt, "make_nlp", slow_gradient)
    inst = small("poly3", "paper", m=20)
    res = get_method("ipopt", time_limit=0.2).solve(inst, start=[0, 3])
    assert res.status == "time_limit" and "wall time" in res.message, res.message
    assert res.info["solver_status"].startswith("-5:")   # Ipopt's "user requested stop", named as the limit
    _check_polished(inst, res)


def test_bad_hessian_option():
    with pytest.raises(InputError, match="hessian"):
        get_method("ipopt", hessian="bfgs")


def test_missing_cyipopt_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cyipopt", None)
    res = get_method("ipopt").solve(small())
    assert res.status == "unavailable"
    assert res.message.startswith("cyipopt not installed (pip install minlp-fs[ipopt])")


@pytest.mark.requires_gams
def test_pyomo_route_solves_the_same_relaxation(cyipopt):
    inst = small("poly3", "fit", m=20)
    route = get_method("ipopt-pyomo", time_limit=30)
    avail = route.availability(inst)
    if not avail:
        pytest.skip(f"GAMS/IPOPT unavailable: {avail.reason}")
    native = get_method("ipopt", time_limit=30).solve(inst)
    res = route.solve(inst)
    assert res.status == "converged", res.message
    _check_polished(inst, res)
    assert res.info["x0_objective"] == pytest.approx(native.info["x0_objective"], rel=1e-6)
    assert res.info["relaxation_objective"] == pytest.approx(native.info["relaxation_objective"], rel=1e-4)
    assert res.features == native.features


# Pyomo's model write does not check the limit (0.5 s ends about 0.9 s late); the overrun report: test_stopping.py
@pytest.mark.filterwarnings("ignore::minlp_fs.stopping.TimeLimitOverrunWarning")
@pytest.mark.requires_gams
def test_pyomo_route_reports_the_time_limit_with_its_point():
    """GAMS stops IPOPT at reslim with solve status 3 (resource interrupt); Pyomo's results name only the
    model status (feasible, or intermediate infeasible as ``infeasible``): the run is a time limit,
    not a failure, and the last point is rounded and polished."""
    from minlp_fs.api import build_instance

    inst = build_instance("bcd", B=3, m=100)          # GAMS/IPOPT needs about 2 s on it
    route = get_method("ipopt-pyomo", time_limit=0.5)
    avail = route.availability(inst)
    if not avail:
        pytest.skip(f"GAMS/IPOPT unavailable: {avail.reason}")
    res = route.solve(inst, start=[0, 1, 2])
    assert res.info["gams_solve_status"] == 3, res.message
    assert res.status == "time_limit" and "resource interrupt" in res.message
    _check_polished(inst, res)


def test_pyomo_route_counts_the_model_building_against_the_time_limit(monkeypatch):
    """A Pyomo model build that uses the whole time limit runs no GAMS: the answer is the start, polished."""
    pytest.importorskip("gamspy_base", reason="gamspy not installed (pip install minlp-fs[gams])")
    import minlp_fs.models as models

    route = get_method("ipopt-pyomo", time_limit=0.2)
    if not route.availability():
        pytest.skip(f"GAMS/IPOPT unavailable: {route.availability().reason}")
    build = models.build_model
    monkeypatch.setattr(models, "build_model", lambda *a, **k: (time.sleep(0.3), build(*a, **k))[1])
    inst = small("poly3", "paper", m=20)
    res = route.solve(inst, start=[0, 3])
    assert res.status == "time_limit" and res.info["solver_status"] == "not run", res.message
    assert list(res.features) == [0, 3]
    _check_polished(inst, res)


def test_a_ctrl_c_during_ipopt_stops_it_at_its_point_as_interrupted(cyipopt, monkeypatch):
    """SIGINT at Ipopt's third iteration: the handler of _UntilDeadline.catching_ctrl_c sets a flag (a
    KeyboardInterrupt raised inside cyipopt's callbacks was lost there, and Ipopt ran on to "converged"), the next
    intermediate callback stops Ipopt, and the run ends interrupted with its rounded, polished point; Python's own
    handler is back afterwards."""
    import os
    import signal

    from minlp_fs.solvers import ipopt

    real, calls = ipopt._UntilDeadline.intermediate, []

    def pressing(self, *args):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        return real(self, *args)
    monkeypatch.setattr(ipopt._UntilDeadline, "intermediate", pressing)
    inst = small("poly3", "fit", m=60, n_noise=6, B=3)
    handler = signal.getsignal(signal.SIGINT)
    res = get_method("ipopt", time_limit=60).solve(inst)
    assert res.status == "interrupted" and "Ctrl-C" in res.message and len(calls) == 3
    assert signal.getsignal(signal.SIGINT) is handler
    _check_polished(inst, res)
