"""Knitro's local MINLP search on DFS-SVM through the ``knitro`` package (paper section 5.1).

The model is the NLP of :mod:`minlp_fs.solvers.nlp` (problem (4) in the paper sense, the kernelised
SVM primal in the fit sense) with beta declared binary, evaluated by Knitro's callback API from our
numpy functions: :func:`eval_fc` (objective and constraints), :func:`eval_ga` (objective gradient
and sparse Jacobian) and :func:`eval_h` (upper triangle of the Hessian of the Lagrangian
sigma * Hf + sum_i lambda_i Hc_i), or L-BFGS (option ``hessian``). Knitro's MINLP search is local
(branch-and-bound on a nonconvex relaxation): scope "local", never certified.

The package has no demo mode: without a license ``KN_new`` fails with -520, and the adapter says
"no Knitro license (KN_new returned -520)" instead of running. ``solver_options`` are Knitro's own
parameter names, set by name after the adapter's settings (:meth:`Knitro.knitro_params`).
The GAMS route (``gams-knitro``, :mod:`minlp_fs.solvers.gams`) is the runnable Knitro where only the
GAMS demo license exists.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import tempfile
import time
import typing
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, plain
from ..options import option
from .base import Availability, RawSolution, SolverMethod
from .nlp import HESSIANS, make_nlp

#: Knitro's return codes of its time limit, with a feasible point (-401) and without (-411)
_TIME_LIMITS = (-401, -411)
#: its other limits (-40x / -41x) by their last digit: status limit
_OTHER_LIMITS = {0: "iterations", 2: "function evaluations", 3: "MIP nodes exhausted", 4: "MIP feasible point",
                 5: "MIP subproblem solves", 6: "MIP nodes"}


def eval_fc(kc, cb, request, result, nlp) -> int:
    """Knitro EVALFC callback: objective and constraints at ``request.x``."""
    x = np.asarray(request.x, dtype=float)
    result.obj = nlp.objective(x)
    result.c[:] = nlp.constraints(x)
    return 0


def eval_ga(kc, cb, request, result, nlp) -> int:
    """Knitro EVALGA callback: dense objective gradient and the Jacobian in ``nlp.jacobianstructure()``."""
    x = np.asarray(request.x, dtype=float)
    result.objGrad[:] = nlp.gradient(x)
    result.jac[:] = nlp.jacobian(x)
    return 0


def eval_h(kc, cb, request, result, nlp) -> int:
    """Knitro EVALH callback: sigma * Hf + sum_i lambda_i Hc_i on :func:`hessian_structure`."""
    x = np.asarray(request.x, dtype=float)
    lam = np.asarray(request.lambda_[:nlp.ncon], dtype=float)
    result.hess[:] = nlp.hessian(x, lam, request.sigma)
    return 0


def hessian_structure(nlp):
    """(vars1, vars2) with vars1 <= vars2: the transpose of the NLP's lower triangle."""
    rows, cols = nlp.hessianstructure()
    return cols, rows


@functools.lru_cache(maxsize=1)
def license_check() -> Availability:
    """Whether ``knitro`` imports and ``KN_new`` succeeds (its license banner is kept off the terminal)."""
    try:
        import knitro
    except ImportError as exc:
        return Availability.missing(f"knitro not installed (pip install minlp-fs[knitro]): {exc}")
    with tempfile.TemporaryFile() as sink:
        saved = [os.dup(1), os.dup(2)]
        for fd in (1, 2):
            os.dup2(sink.fileno(), fd)
        try:
            kc = knitro.KN_new()
        except Exception as exc:
            code = re.search(r"-?\d+\s*$", str(exc))
            returned = code.group().strip() if code else exc
            return Availability.no_license(f"no Knitro license (KN_new returned {returned})")
        finally:
            ctypes.CDLL(None).fflush(None)  # the banner may sit in C's buffers: flush it into the sink
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)
    knitro.KN_free(kc)
    return Availability(True)


@dataclass
class Knitro(SolverMethod):
    """Knitro local MINLP via its Python API; needs a Knitro license."""

    hessian: str = option("exact", str, choices=HESSIANS, doc="exact Hessian or L-BFGS")

    name: typing.ClassVar[str] = "knitro"
    certifies: typing.ClassVar[bool] = False

    def _available(self, instance=None) -> Availability:
        return license_check()

    def knitro_params(self, time_limit: float) -> dict:
        """What Knitro receives (parameter id or name -> value): this method's settings, then
        ``solver_options`` (Knitro's parameter names); the time limits are on the wall clock."""
        import knitro as kn

        own = {kn.KN_PARAM_OUTLEV: 2 if self.tee else 0, kn.KN_PARAM_MIP_OUTLEVEL: 1 if self.tee else 0,
               kn.KN_PARAM_MS_SEED: int(self.seed), kn.KN_PARAM_MAXTIMEREAL: float(time_limit),
               kn.KN_PARAM_MIP_MAXTIMEREAL: float(time_limit)}
        if self.hessian != "exact":
            own[kn.KN_PARAM_HESSOPT] = kn.KN_HESSOPT_LBFGS
        return self.solver_params(own)

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        import knitro as kn

        t0 = time.perf_counter()
        nlp = make_nlp(instance)
        x0 = nlp.start(warm)
        x0_objective = nlp.objective(x0)
        beta_idx = _beta_positions(nlp)
        if time.perf_counter() - t0 >= time_limit:
            return RawSolution.not_run(warm, "the NLP was built")
        kc = kn.KN_new()
        try:
            kn.KN_add_vars(kc, nlp.nx)
            kn.KN_set_var_lobnds(kc, xLoBnds=list(nlp.lb))
            kn.KN_set_var_upbnds(kc, xUpBnds=list(nlp.ub))
            kn.KN_set_var_types(kc, indexVars=list(beta_idx), xTypes=[kn.KN_VARTYPE_BINARY] * beta_idx.size)
            kn.KN_add_cons(kc, nlp.ncon)
            kn.KN_set_con_lobnds(kc, cLoBnds=list(nlp.cl))
            kn.KN_set_con_upbnds(kc, cUpBnds=list(nlp.cu))
            kn.KN_set_var_primal_init_values(kc, xInitVals=list(x0))
            cb = kn.KN_add_eval_callback(kc, evalObj=True, indexCons=list(range(nlp.ncon)),
                                         funcCallback=eval_fc)
            rows, cols = nlp.jacobianstructure()
            kn.KN_set_cb_grad(kc, cb, objGradIndexVars=kn.KN_DENSE, jacIndexCons=list(rows),
                              jacIndexVars=list(cols), gradCallback=eval_ga)
            if self.hessian == "exact":
                v1, v2 = hessian_structure(nlp)
                kn.KN_set_cb_hess(kc, cb, hessIndexVars1=list(v1), hessIndexVars2=list(v2),
                                  hessCallback=eval_h)
            kn.KN_set_cb_user_params(kc, cb, nlp)
            build = time.perf_counter() - t0
            set_params(kc, self.knitro_params(max(time_limit - build, 1e-3)), self.name)  # the building counts
            code = kn.KN_solve(kc)
            status, obj, x, _ = kn.KN_get_solution(kc)
        finally:
            kn.KN_free(kc)
        limit = -499 <= code <= -400   # -40x with a feasible point, -41x without (Knitro's return codes)
        return RawSolution(
            beta=nlp.beta(np.asarray(x)), solver_status=str(code), objective=float(obj),
            time_limit_reached=code in _TIME_LIMITS, limit=_OTHER_LIMITS.get(-code % 10, "other") if limit and
            code not in _TIME_LIMITS else "", failed=not (limit or -199 <= code <= 0),
            wall_time_s=time.perf_counter() - t0,
            message=f"Knitro stopped at a limit (return code {code})" if limit else "",
            info={"build_time_s": build, "x0_objective": x0_objective, "hessian": self.hessian})


def set_params(kc, params: dict, owner: str = "knitro") -> None:
    """``KN_set_param`` for each entry (a parameter id, or a name from ``solver_options``); an unknown name
    or a value Knitro refuses is an InputError naming it, and so is a name for a parameter the adapter
    sets from its own options (``reserved`` cannot list Knitro's names without a licensed context)."""
    import knitro as kn

    own = {key for key in params if isinstance(key, int)}
    for key, value in params.items():
        try:
            pid = key if isinstance(key, int) else kn.KN_get_param_id(kc, key)
        except Exception:
            raise InputError(f"{owner}: Knitro has no parameter {key!r} (solver_options)") from None
        if not isinstance(key, int) and pid in own:
            raise InputError(f"{owner}: solver_options {key!r} is set by the adapter's own options "
                             "(time_limit, seed, tee, hessian)")
        try:
            kn.KN_set_param(kc, pid, value)
        except Exception as exc:
            raise InputError(f"{owner}: Knitro refuses {key} = {plain(value)}: {exc}") from None


def _beta_positions(nlp) -> np.ndarray:
    """Indices of beta inside the NLP's variable vector."""
    probe = np.arange(nlp.nx, dtype=float)
    return nlp.beta(probe).astype(int)
