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

import contextlib
import signal
import tempfile
import threading
import time
import typing
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path

from ..errors import InputError, plain
from ..options import option
from .base import Availability, RawSolution, SolverMethod
from .nlp import HESSIANS, make_nlp

#: Ipopt return codes (ApplicationReturnStatus) that mean a local solution or a resource limit
_CONVERGED = {0: "solve succeeded", 1: "solved to acceptable level"}
_LIMITS = {-1: "maximum number of iterations exceeded", -4: "maximum CPU time exceeded",
           -5: "maximum wall time exceeded"}
#: the one of them that is not a time limit (status limit)
_ITERATIONS = -1
#: Ipopt's return codes "user requested stop" (an intermediate callback returned False) and "maximum wall time"
_USER_STOP, _WALL_TIME = 5, -5


class _UntilDeadline:
    """An NLP of :mod:`minlp_fs.solvers.nlp` as cyipopt's problem object, with an intermediate callback that
    stops Ipopt (status "user requested stop") at its first iteration past ``deadline``, a
    ``time.perf_counter()`` value: the run's own wall clock, the same instant as Ipopt's ``max_wall_time``
    counted from the run's start, or after a Ctrl-C (:meth:`catching_ctrl_c`). Ipopt calls it, and checks
    ``max_wall_time``, once per iteration; neither can interrupt an iteration or Ipopt's initialisation (its first,
    symbolic factorisation of the KKT matrix: 1-1.5 s on the 569 rows of bcd in the fit sense)."""

    def __init__(self, nlp, deadline: float):
        self.nlp, self.deadline, self.interrupted = nlp, deadline, False

    def __getattr__(self, name):  # objective, gradient, constraints, jacobian, hessian and their structures
        return getattr(self.nlp, name)

    def intermediate(self, *args) -> bool:
        return time.perf_counter() < self.deadline and not self.interrupted

    @contextlib.contextmanager
    def catching_ctrl_c(self):
        """Ctrl-C during the solve sets ``interrupted`` instead of raising: a KeyboardInterrupt raised inside one
        of cyipopt's callbacks is lost there (its Hessian callback returns in a ``finally``), and Ipopt ran on to
        convergence, reported as such. The next iteration's :meth:`intermediate` stops Ipopt at its point. (Only
        in the main thread, where Python's handler runs.)"""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, lambda *_: setattr(self, "interrupted", True))
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


#: GAMS solve statuses of a limit: iteration, resource (the ``reslim`` time limit) and evaluation interrupt
_GAMS_LIMITS = (2, 3, 5)


def _keep_gams_statuses(gams) -> dict:
    """A dict that Pyomo's GAMS solver ``gams`` fills with GAMS's own statuses (``MODELSTAT``,
    ``SOLVESTAT``, ...) when it reads a run's results: Pyomo's results keep only a termination condition,
    taken from the model status when there is one, so a time limit reached at a feasible or an
    intermediate infeasible point reads ``feasible`` or ``infeasible`` there. Wraps Pyomo's two result
    readers on this solver object (``_parse_gdx_results``, ``_parse_dat_results`` of its shell interface)."""
    kept = {}
    for name in ("_parse_gdx_results", "_parse_dat_results"):
        def keeping(*args, _parse=getattr(gams, name)):
            solution, stat_vars = _parse(*args)
            kept.update(stat_vars)
            return solution, stat_vars
        setattr(gams, name, keeping)
    return kept


def _add_option(prob, key: str, value, owner: str) -> None:
    """``prob.add_option``, with True/False as Ipopt's yes/no and a number tried as an integer and as a
    float (Ipopt types its options; ``max_iter=1e3`` and ``tol=1`` both mean what they say); an
    unknown option or a value of the wrong type is an InputError naming it."""
    if isinstance(value, bool):
        tries = ["yes" if value else "no"]
    elif isinstance(value, str):
        tries = [value]
    elif isinstance(value, Integral):
        tries = [int(value), float(value)]
    else:
        tries = [float(value)] + ([int(value)] if float(value).is_integer() else [])
    for v in tries:
        try:
            prob.add_option(key, v)
            return
        except TypeError:
            continue
    raise InputError(f"{owner}: Ipopt refuses solver_options {key} = {plain(value)} (an unknown option or a "
                     f"value of the wrong type; Ipopt's own message is printed above)")


@dataclass
class IpoptRelaxation(SolverMethod):
    """Relaxation by cyipopt with our own callbacks; option ``hessian``: exact (default) or limited-memory."""

    hessian: str = option("exact", str, choices=HESSIANS, doc="exact Hessian or L-BFGS")
    max_iter: int = option(3000, int, low=1, doc="Ipopt's iteration limit")

    name: typing.ClassVar[str] = "ipopt"
    certifies: typing.ClassVar[bool] = False
    reserved: typing.ClassVar[dict] = {"max_wall_time": "time_limit", "max_iter": "max_iter",
                                       "hessian_approximation": "hessian", "print_level": "tee"}

    def _available(self, instance=None) -> Availability:
        try:
            import cyipopt  # noqa: F401
        except ImportError as exc:
            return Availability.missing(f"cyipopt not installed (pip install minlp-fs[ipopt]): {exc}")
        return Availability(True)

    def ipopt_options(self, time_limit: float | None = None) -> dict:
        """What Ipopt receives: this method's settings (``time_limit``: default the option; Ipopt's
        ``max_wall_time`` is on the wall clock), then ``solver_options``."""
        return self.solver_params({
            "sb": "yes", "print_level": 5 if self.tee else 0,
            "max_wall_time": float(self.time_limit if time_limit is None else time_limit),
            "max_iter": int(self.max_iter), "hessian_approximation": self.hessian})

    def problem(self, watch: _UntilDeadline):
        """The cyipopt problem of ``watch``'s NLP with :meth:`ipopt_options`, Ipopt's ``max_wall_time`` being what is
        left until its deadline (a ``time.perf_counter()`` value)."""
        import cyipopt

        nlp = watch.nlp
        prob = cyipopt.Problem(n=nlp.nx, m=nlp.ncon, problem_obj=watch, lb=nlp.lb, ub=nlp.ub, cl=nlp.cl, cu=nlp.cu)
        for key, value in self.ipopt_options(watch.deadline - time.perf_counter()).items():
            _add_option(prob, key, value, self.name)
        return prob

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        """Build the NLP, then Ipopt with what is left of ``time_limit``: the building counts against it."""
        t0 = time.perf_counter()
        deadline = t0 + time_limit
        nlp = make_nlp(instance)
        x0 = nlp.start(warm)
        x0_objective = nlp.objective(x0)
        build = time.perf_counter() - t0
        if build >= time_limit:
            return RawSolution.not_run(warm, "the NLP was built")
        watch = _UntilDeadline(nlp, deadline)
        prob = self.problem(watch)
        with watch.catching_ctrl_c():
            x, out = prob.solve(x0)
        code = int(out["status"])
        if code == _USER_STOP and not watch.interrupted:  # _UntilDeadline.intermediate stopped it: at the deadline
            code = _WALL_TIME
        text = out["status_msg"].decode() if isinstance(out["status_msg"], bytes) else str(out["status_msg"])
        text = _LIMITS.get(code, text)  # cyipopt has no text for some limits ("Unknown status")
        stopped = watch.interrupted and (code == _USER_STOP or code in _CONVERGED)   # Ctrl-C: its point so far
        return RawSolution(
            beta=nlp.beta(x), solver_status=f"{code}: {text}", objective=float(out["obj_val"]),
            time_limit_reached=code in _LIMITS and code != _ITERATIONS,
            limit="iterations" if code == _ITERATIONS else "",
            interrupted=stopped, failed=not stopped and code not in _CONVERGED and code not in _LIMITS,
            wall_time_s=time.perf_counter() - t0,
            message="interrupted (Ctrl-C): Ipopt's last iterate, rounded" if stopped else _LIMITS.get(code, ""),
            info={"build_time_s": build, "x0_objective": x0_objective, "hessian": self.hessian,
                  "relaxation_objective": float(out["obj_val"])})


@dataclass
class IpoptPyomo(SolverMethod):
    """The same relaxation as a Pyomo model (:func:`minlp_fs.models.build_model`, ``relax=True``),
    solved by GAMS's IPOPT through Pyomo's ``gams`` interface (no ``ipopt`` executable or PyNumero
    ASL library is needed). The ``gams`` executable is found in ``gamspy_base`` and IPOPT registered
    with GAMS by :mod:`minlp_fs.solvers.gams`; the GAMS demo licence's size limit applies.

    ``solver_options`` are written as ``ipopt.opt`` in GAMS's working folder (``GAMS_MODEL.optfile = 1``);
    Pyomo's run of GAMS has no timeout, so :class:`~minlp_fs.solvers.gams.kill_after` stops it at the
    limit plus ``GRACE_S``. The status is GAMS's own (kept by :func:`_keep_gams_statuses`): a solve
    status 3 (resource interrupt: the ``reslim`` time limit) is ``time_limit`` whatever the model
    status, with the last point IPOPT reached rounded and polished."""

    name: typing.ClassVar[str] = "ipopt-pyomo"
    certifies: typing.ClassVar[bool] = False
    reserved: typing.ClassVar[dict] = {"max_wall_time": "time_limit", "max_cpu_time": "time_limit"}

    def _available(self, instance=None) -> Availability:
        from .gams import GamsIpopt

        return GamsIpopt().availability(instance)

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        import pyomo.environ as pyo
        from pyomo.common import Executable
        from pyomo.opt import TerminationCondition as TC

        from ..models import build_model, load_start, read_solution
        from .gams import (GRACE_S, OTHER_LIMITS, describe, gams_executable, kill_after, option_errors,
                            option_file_text, register_solver)

        t0 = time.perf_counter()
        register_solver("ipopt")
        Executable("gams").set_path(str(gams_executable()))
        model = build_model(instance, relax=True)
        if warm is not None:
            load_start(model, warm.alpha, warm.beta)
        x0_objective = pyo.value(model.objective) if warm is not None else None
        build = time.perf_counter() - t0
        if build >= time_limit:
            return RawSolution.not_run(warm, "the Pyomo model was built")
        lines = [f"option reslim={time_limit - build};"] + (["GAMS_MODEL.optfile = 1;"] if self.solver_options else [])
        with tempfile.TemporaryDirectory(prefix="minlp_fs_pyomo_") as tmp:  # GAMS's curdir: ipopt.opt goes there
            log = Path(tmp) / "gams.log"
            if self.solver_options:
                (Path(tmp) / "ipopt.opt").write_text(option_file_text(self.solver_options))
            with kill_after(tmp, time_limit + GRACE_S) as watchdog:
                try:
                    gams = pyo.SolverFactory("gams")
                    statuses = _keep_gams_statuses(gams)
                    res = gams.solve(
                        model, solver="ipopt", tee=self.tee, load_solutions=False, io_options={"warmstart": True},
                        add_options=lines, tmpdir=tmp, logfile=str(log))
                except Exception:  # Pyomo finds no listing after the kill
                    if not watchdog.killed:
                        raise
            refused = option_errors(log.read_text(errors="replace")) if self.solver_options and log.exists() else []
        if refused:
            raise InputError(f"{self.name}: GAMS/IPOPT refuses solver_options: " + "; ".join(refused))
        if watchdog.killed:
            return RawSolution(beta=None, time_limit_reached=True, solver_status="killed",
                               message=f"GAMS did not return within {time_limit + GRACE_S:.0f} s; killed")
        cond = res.solver.termination_condition
        mstat, sstat = statuses.get("MODELSTAT"), statuses.get("SOLVESTAT")
        has_solution = len(res.solution) > 0
        if has_solution:
            model.solutions.load_from(res)
        limit = sstat in _GAMS_LIMITS
        ok = cond in (TC.optimal, TC.locallyOptimal)
        return RawSolution(
            beta=read_solution(model)[1] if has_solution else None, solver_status=f"{cond}: {describe(mstat, sstat)}",
            objective=pyo.value(model.objective) if has_solution else None, time_limit_reached=sstat == 3,
            limit=OTHER_LIMITS.get(sstat, ""),
            failed=not (limit or ok), wall_time_s=time.perf_counter() - t0,
            message="" if ok and not limit else f"GAMS/IPOPT via Pyomo: {describe(mstat, sstat)}",
            info={"build_time_s": build, "x0_objective": x0_objective, "relaxation_objective":
                  pyo.value(model.objective) if has_solution else None,
                  "gams_model_status": mstat, "gams_solve_status": sstat})
