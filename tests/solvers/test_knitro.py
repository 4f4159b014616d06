"""Knitro adapter: availability without a license (real call), the callbacks, and the status it returns."""
import re
from types import SimpleNamespace

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.methods import get_method
from minlp_fs.solvers.base import indicator
from minlp_fs.solvers.knitro import eval_fc, eval_ga, eval_h, hessian_structure, license_check
from minlp_fs.solvers.nlp import make_nlp
from builders import synthetic_instance

REASON = re.compile(r"^(no Knitro license \(KN_new returned -?\d+\)|knitro not installed)")


def small(kernel="rbf", sense="paper"):
    return synthetic_instance(kernel, sense, m=10, data_seed=2)


def _buffers(nlp):
    return SimpleNamespace(obj=None, c=np.zeros(nlp.ncon), objGrad=np.zeros(nlp.nx),
                           jac=np.zeros(len(nlp.jacobianstructure()[0])),
                           hess=np.zeros(len(nlp.hessianstructure()[0])))


def test_availability_says_why():
    avail = get_method("knitro").availability()
    assert avail.ok or REASON.match(avail.reason), avail.reason
    assert license_check() == avail


def test_solve_without_license_is_unavailable_with_the_reason():
    avail = license_check()
    if avail.ok:
        pytest.skip("a Knitro license is present: the unavailable path cannot be observed")
    res = get_method("knitro", time_limit=5).solve(small())
    assert res.status == "unavailable" and res.message == avail.reason and res.objective is None
    assert avail.kind in ("no_license", "missing_package") and res.info["unavailable_kind"] == avail.kind


@pytest.mark.parametrize("kernel,sense", [("rbf", "paper"), ("poly3", "fit")])
def test_callbacks_match_our_objective_and_finite_differences(kernel, sense):
    inst = small(kernel, sense)
    nlp = make_nlp(inst)
    fit = AlphaSubproblem(inst).solve((0, 2))
    warm = SimpleNamespace(alpha=fit.alpha, beta=indicator((0, 2), inst.n), subset=(0, 2))
    x = nlp.start(warm)
    out = _buffers(nlp)
    assert eval_fc(None, None, SimpleNamespace(x=list(x)), out, nlp) == 0
    # at a binary beta the callback's objective is f (paper) or the primal -g (fit)
    assert out.obj == pytest.approx(inst.sign * inst.objective(fit.alpha, (0, 2)), rel=1e-6)
    assert out.c[0] == pytest.approx(0.0 if sense == "paper" else inst.B, abs=1e-9)
    rng = np.random.default_rng(1)
    x = x + rng.uniform(-0.05, 0.05, x.size)
    assert eval_ga(None, None, SimpleNamespace(x=list(x)), out, nlp) == 0
    h = 1e-6
    fd = np.array([(nlp.objective(x + h * e) - nlp.objective(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    assert np.allclose(out.objGrad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    lam = rng.normal(size=nlp.ncon + nlp.nx)   # Knitro passes constraint then bound multipliers
    req = SimpleNamespace(x=list(x), lambda_=list(lam), sigma=0.5)
    assert eval_h(None, None, req, out, nlp) == 0
    assert np.allclose(out.hess, nlp.hessian(x, lam[:nlp.ncon], 0.5))
    v1, v2 = hessian_structure(nlp)
    assert np.all(np.asarray(v1) <= np.asarray(v2))


def test_runs_when_licensed():
    if not license_check().ok:
        pytest.skip(f"Knitro unavailable: {license_check().reason}")
    inst = small()
    res = get_method("knitro", time_limit=10).solve(inst, start=[0, 1])
    assert res.status in ("converged", "time_limit") and not res.certified
    assert res.objective == pytest.approx(inst.objective(res.alpha, res.features), abs=1e-9)
    assert res.info["x0_objective"] == pytest.approx(AlphaSubproblem(inst).solve((0, 1)).value, rel=1e-9)


def test_building_the_nlp_counts_against_the_time_limit(monkeypatch):
    """A build that uses the whole time limit runs no Knitro (no licence needed to get there): the answer
    is the start, polished."""
    pytest.importorskip("knitro", reason="knitro not installed (pip install minlp-fs[knitro])")
    import time

    from minlp_fs.solvers import knitro
    from minlp_fs.solvers.base import Availability

    monkeypatch.setattr(knitro, "license_check", lambda: Availability(True))
    build = knitro.make_nlp
    monkeypatch.setattr(knitro, "make_nlp", lambda instance: (time.sleep(0.3), build(instance))[1])
    inst = small()
    res = get_method("knitro", time_limit=0.2).solve(inst, start=[0, 1])
    assert res.status == "time_limit" and res.info["solver_status"] == "not run", res.message
    assert list(res.features) == [0, 1]
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve((0, 1)).value, rel=1e-9)
