"""Ipopt on the continuous relaxation of DFS-SVM, then top-B rounding (paper section 5.1).

Ipopt cannot handle integrality, so beta is relaxed to [0,1]^n with the kernel
k_beta = phi(sum_j beta_j T_j) (exact at binary beta; see :mod:`minlp_fs.solvers.nlp`); the answer's
beta is rounded to its B largest entries and polished by the exact alpha-subproblem (the base
class). The relaxation is nonconvex and Ipopt finds a local solution: the scope is "local" and its
value is no bound.

* :class:`IpoptRelaxation` (``ipopt``): cyipopt called directly with our numpy callbacks (objective,
  gradient, constraint Jacobian, exact or limited-memory Hessian), in either sense: problem (4) for
  ``paper``, the kernelised SVM primal for ``fit``.
* :class:`IpoptPyomo` (``ipopt-pyomo``): the same relaxation written as a Pyomo model
  (:func:`minlp_fs.models.build_model` with ``relax=True``) and solved by GAMS's IPOPT through Pyomo:
  the cross-check and benchmark peer of the native adapter.
"""
from __future__ import annotations

import time
import typing
from dataclasses import dataclass

from ..options import option
from .base import Availability, RawSolution, SolverMethod
from .nlp import HESSIANS, make_nlp

#: Ipopt return codes (ApplicationReturnStatus) that mean a local solution or a resource limit
_CONVERGED = {0: "solve succeeded", 1: "solved to acceptable level"}
_LIMITS = {-1: "maximum number of iterations exceeded", -4: "maximum CPU time exceeded",
           -5: "maximum wall time exceeded"}


@dataclass
class IpoptRelaxation(SolverMethod):
    """Relaxation by cyipopt with our own callbacks; option ``hessian``: exact (default) or limited-memory."""

    hessian: str = option("exact", str, choices=HESSIANS, doc="exact Hessian or L-BFGS")
    max_iter: int = option(3000, int, low=1, doc="Ipopt's iteration limit")

    name: typing.ClassVar[str] = "ipopt"
    certifies: typing.ClassVar[bool] = False

    def _available(self, instance=None) -> Availability:
        try:
            import cyipopt  # noqa: F401
        except ImportError as exc:
            return Availability.missing(f"cyipopt not installed (pip install minlp-fs[ipopt]): {exc}")
        return Availability(True)

    def problem(self, instance, nlp, time_limit: float | None = None):
        """The cyipopt problem for ``nlp`` with this method's options (``time_limit``: default the option)."""
        import cyipopt

        prob = cyipopt.Problem(n=nlp.nx, m=nlp.ncon, problem_obj=nlp, lb=nlp.lb, ub=nlp.ub,
                               cl=nlp.cl, cu=nlp.cu)
        prob.add_option("sb", "yes")
        prob.add_option("print_level", 5 if self.tee else 0)
        prob.add_option("max_wall_time", float(self.time_limit if time_limit is None else time_limit))
        prob.add_option("max_iter", int(self.max_iter))
        prob.add_option("hessian_approximation", "exact" if self.hessian == "exact" else "limited-memory")
        return prob

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        t0 = time.perf_counter()
        nlp = make_nlp(instance)
        x0 = nlp.start(warm)
        prob = self.problem(instance, nlp, time_limit)
        build = time.perf_counter() - t0
        x, out = prob.solve(x0)
        code = int(out["status"])
        text = out["status_msg"].decode() if isinstance(out["status_msg"], bytes) else str(out["status_msg"])
        text = _LIMITS.get(code, text)  # cyipopt has no text for some limits ("Unknown status")
        return RawSolution(
            beta=nlp.beta(x), solver_status=f"{code}: {text}", objective=float(out["obj_val"]),
            time_limit_reached=code in _LIMITS, failed=code not in _CONVERGED and code not in _LIMITS,
            wall_time_s=time.perf_counter() - t0, message=_LIMITS.get(code, ""),
            info={"build_time_s": build, "x0_objective": nlp.objective(x0), "hessian": self.hessian,
                  "relaxation_objective": float(out["obj_val"])})


@dataclass
class IpoptPyomo(SolverMethod):
    """The same relaxation as a Pyomo model (:func:`minlp_fs.models.build_model`, ``relax=True``),
    solved by GAMS's IPOPT through Pyomo's ``gams`` interface (no ``ipopt`` executable or PyNumero
    ASL library is needed). The ``gams`` executable is found in ``gamspy_base`` and IPOPT registered
    with GAMS by :mod:`minlp_fs.solvers.gams`; the GAMS demo licence's size limit applies."""

    name: typing.ClassVar[str] = "ipopt-pyomo"
    certifies: typing.ClassVar[bool] = False

    def _available(self, instance=None) -> Availability:
        from .gams import GamsIpopt

        return GamsIpopt().availability(instance)

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        import pyomo.environ as pyo
        from pyomo.common import Executable
        from pyomo.opt import TerminationCondition as TC

        from ..models import build_model, load_start, read_solution
        from .gams import gams_directory, register_solver

        t0 = time.perf_counter()
        register_solver("ipopt")
        Executable("gams").set_path(str(gams_directory() / "gams"))
        model = build_model(instance, relax=True)
        if warm is not None:
            load_start(model, warm.alpha, warm.beta)
        x0_objective = pyo.value(model.objective) if warm is not None else None
        build = time.perf_counter() - t0
        res = pyo.SolverFactory("gams").solve(
            model, solver="ipopt", tee=self.tee, load_solutions=False, io_options={"warmstart": True},
            add_options=[f"option reslim={float(time_limit)};"])
        cond = res.solver.termination_condition
        has_solution = len(res.solution) > 0
        if has_solution:
            model.solutions.load_from(res)
        limit = cond in (TC.maxTimeLimit, TC.maxIterations, TC.maxEvaluations)
        return RawSolution(
            beta=read_solution(model)[1] if has_solution else None, solver_status=str(cond),
            objective=pyo.value(model.objective) if has_solution else None, time_limit_reached=limit,
            failed=not limit and cond not in (TC.optimal, TC.locallyOptimal),
            wall_time_s=time.perf_counter() - t0,
            message="" if cond in (TC.optimal, TC.locallyOptimal) else f"GAMS/IPOPT via Pyomo: {cond}",
            info={"build_time_s": build, "x0_objective": x0_objective, "relaxation_objective":
                  pyo.value(model.objective) if has_solution else None})
