"""Common machinery of the solver adapters: availability, warm start, polish, status.

Every adapter (cyipopt, SCIP, Knitro, the GAMS solvers) is a :class:`SolverMethod` and runs the same
fixed sequence in :meth:`SolverMethod.solve`:

1. **availability**: :meth:`availability` says *why* a solver cannot run here (package absent, no
   license, demo size limit exceeded); then the result is ``status="unavailable"`` with that reason,
   never an exception;
2. **warm start**: the start subset (the paper's alpha-start when none is given, as in section 5.1:
   "warm-started on the same starting value used by our heuristics") and its exact alpha from the
   alpha-subproblem oracle (:class:`WarmStart`);
3. **build, load the start, run, read back**: the subclass's :meth:`SolverMethod._run`, which returns a
   :class:`RawSolution` (beta possibly fractional, the solver's own status, objective and bound);
4. **polish**: beta -> the B largest entries (ties by lower index) -> the exact alpha-subproblem g(beta)
   -> the objective recomputed by our code. The solver's own objective, status and bound stay in
   ``Result.info``.

Status mapping: a global solver's proof -> ``"optimal"`` with ``certified=True`` only when our polished
value agrees with the solver's objective and bound within :attr:`SolverMethod.certify_rtol`; a stop on the
time limit -> ``"time_limit"``, on another limit (iterations, nodes, memory: ``RawSolution.limit``) -> ``"limit"``
(with the best point so far; a stop before any, or a Ctrl-C inside the solver, keeps the solved warm start); a
local solver's normal end -> ``"converged"``; a failure -> ``"error"``. ``info["scope"]`` says what the solver can
certify: ``"global"`` or ``"local"``.

Solver options (``solver_options``, ``--solver-option KEY=VALUE`` on the command line): the solver's own
parameters, passed through unchanged by each adapter (SCIP ``setParam``, a GAMS solver option file,
Ipopt ``add_option``, Knitro ``KN_set_param``); a name the solver does not know is an InputError naming
it. A parameter that an adapter option already sets (:attr:`SolverMethod.reserved`, e.g. SCIP's
``limits/time`` from ``time_limit``) is refused: one setting, one place. Time limits are on the wall
clock for every adapter: the solver's own wall-clock limit in process (SCIP, cyipopt, Knitro), and for
an external process (GAMS) its limit plus a grace period, after which it is killed. Building the
solver's model counts against the limit (the solver gets what is left; when nothing is, it does not
run and the answer is the start).

Units: a solver's objective and bound are those of the model it minimises, i.e. ``instance.sign * f``:
f(alpha, beta) of problem (4) in the paper sense, the kernelised SVM primal
1/2 c'K_beta c + C sum xi (= -g(beta) at the optimum, by strong duality) in the fit sense.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field

import numpy as np

from ..alpha import AlphaSubproblem
from ..blas import one_blas_thread
from ..errors import InputError, MinlpFsError, SolverUnavailableError, UnavailableKind
from ..methods import REGISTRY, Method, method_class
from ..multiclass import binary_only
from ..options import option, seed_option
from ..result import Status, TracePoint
from ..stopping import SearchStopped


@dataclass(frozen=True)
class Availability:
    """Whether a solver can run here, and if not, why: ``kind`` (an :class:`~minlp_fs.errors.UnavailableKind`)
    and ``reason`` (one line, with the fix when there is one)."""

    ok: bool
    reason: str = ""
    kind: UnavailableKind | None = None

    def __bool__(self) -> bool:
        return self.ok

    @classmethod
    def missing(cls, reason: str) -> "Availability":
        return cls(False, reason, UnavailableKind.MISSING_PACKAGE)

    @classmethod
    def no_license(cls, reason: str) -> "Availability":
        return cls(False, reason, UnavailableKind.NO_LICENSE)

    @classmethod
    def too_large(cls, reason: str) -> "Availability":
        return cls(False, reason, UnavailableKind.SIZE_LIMIT)

    def error(self) -> SolverUnavailableError:
        return SolverUnavailableError(self.reason, self.kind)


@dataclass(frozen=True)
class WarmStart:
    """A feasible starting point: subset, 0/1 beta, the exact alpha of g(subset) and its value."""

    subset: tuple
    beta: np.ndarray
    alpha: np.ndarray
    value: float
    source: str


@dataclass
class RawSolution:
    """What a solver returned, before polishing.

    ``beta`` has length n (possibly fractional); ``objective`` and ``bound`` are in the model's units
    (``instance.sign * f``; see the module docstring); ``trace`` holds :class:`TracePoint` values of f
    with times since the run began and the component that found each incumbent.
    """

    beta: np.ndarray | None
    solver_status: str = ""
    objective: float | None = None
    bound: float | None = None
    alpha: np.ndarray | None = None
    proven_optimal: bool = False
    time_limit_reached: bool = False
    #: the name of a limit other than time that stopped the solver ("iterations", "nodes", "memory", ...): status limit
    limit: str = ""
    #: the solver stopped on a Ctrl-C it caught itself (SCIP's userinterrupt): the answer so far, status interrupted
    interrupted: bool = False
    failed: bool = False
    wall_time_s: float = 0.0
    trace: list = field(default_factory=list)
    message: str = ""
    info: dict = field(default_factory=dict)

    @classmethod
    def not_run(cls, warm, what: str) -> "RawSolution":
        """The time limit was used up while ``what`` (e.g. "the NLP was built"): the solver does not run and
        the answer is the start (none on a cold start), as when a solver stops before its first step."""
        return cls(beta=None if warm is None else warm.beta, time_limit_reached=True, solver_status="not run",
                   message=f"the time limit was reached while {what}")


def top_b(beta: np.ndarray, B: int) -> tuple:
    """The B largest entries of beta, ties broken by the lower index; a sorted tuple of indices."""
    beta = np.asarray(beta, dtype=float)
    order = np.lexsort((np.arange(beta.size), -beta))
    return tuple(sorted(int(j) for j in order[:B]))


def indicator(subset, n: int) -> np.ndarray:
    """The 0/1 vector beta of a subset."""
    beta = np.zeros(n)
    beta[list(subset)] = 1.0
    return beta


@dataclass
class SolverMethod(Method):
    """Base of the solver adapters; subclasses implement :meth:`_available` and :meth:`_run`."""

    time_limit: float = option(600.0, float, low=0, low_open=True,
                               doc="wall-clock seconds for the whole solve (warm start included)")
    tee: bool = option(False, bool, doc="show the solver's log")
    warm_start: bool = option(True, bool, doc="start from the given subset (default: the alpha-start)")
    seed: int = seed_option()
    solver_options: dict | None = option(None, dict, none=True,
                                         doc="the solver's own parameters, passed through unchanged")

    uses_start: typing.ClassVar[bool] = True
    #: solver parameter (lower case) -> the adapter option that sets it (refused in ``solver_options``)
    reserved: typing.ClassVar[dict] = {}
    #: relative tolerance between our polished value and the solver's objective/bound for a certificate
    certify_rtol: typing.ClassVar[float] = 1e-5

    def check(self) -> None:
        super().check()
        for key in self.solver_options or {}:
            owner = self.reserved.get(key.lower())
            if owner is not None:
                raise InputError(f"{self.name}: solver_options {key!r} is set by the option {owner}; "
                                 f"use {owner} instead")

    def solver_params(self, own: dict) -> dict:
        """The parameters the solver receives: the adapter's ``own`` settings, then ``solver_options``."""
        return {**own, **(self.solver_options or {})}

    @property
    def scope(self) -> str:
        """``"global"`` when the solver can prove global optimality, else ``"local"``."""
        return "global" if self.certifies else "local"

    # ---- to implement ----------------------------------------------------------------------------
    def _available(self, instance=None) -> Availability:
        """Availability for this solver (and, given an instance, its size limits)."""
        raise NotImplementedError

    def _check_solver_options(self) -> None:
        """InputError for a ``solver_options`` entry the solver refuses, where the solver can say so before
        the run (SCIP); the others are checked when the solver receives them."""

    def _run(self, instance, warm: WarmStart | None, oracle: AlphaSubproblem, time_limit: float) -> RawSolution:
        """Build the model, load ``warm`` (None: a cold start), run within ``time_limit`` seconds (what
        is left of the option's after the warm start), read back."""
        raise NotImplementedError

    # ---- the fixed sequence ----------------------------------------------------------------------
    def availability(self, instance=None) -> Availability:
        """Never raises: an unexpected failure of the check is itself the reason."""
        try:
            return self._available(instance)
        except Exception as exc:  # the check must not crash the caller
            return Availability(False, f"availability check failed: {type(exc).__name__}: {exc}",
                                UnavailableKind.CHECK_FAILED)

    def _search(self, run) -> Status:
        """The fixed sequence; ``start`` is ignored when ``warm_start`` is False, and the callback
        receives the solver's incumbent trace once the run is over (then the polished point)."""
        run.info["scope"] = self.scope
        binary_only(run.instance, self.name)  # the MINLP/NLP models are the binary problem (4)
        avail = self.availability(run.instance)
        if not avail:
            raise avail.error()
        self._check_solver_options()
        warm = self.warm(run) if self.warm_start else None
        left = run.deadline.remaining()
        if left <= 0:  # the warm start (its alpha-start) used the whole time limit: it is the answer
            self._keep_start(run, warm)
            raise SearchStopped(Status.TIME_LIMIT)
        t_run = run.incumbent.elapsed()
        try:
            with one_blas_thread():  # our numpy callbacks are small: threads only add overhead
                raw = self._run(run.instance, warm, run.oracle, left)
        except MinlpFsError:  # unavailable after all, bad input, an unsupported request: raised as such
            raise
        except KeyboardInterrupt:   # Ctrl-C inside the solver: the start solved so far is kept
            self._keep_start(run, warm)
            raise
        except Exception as exc:  # a solver failure is a result, not a crash
            raw = RawSolution(beta=None, failed=True, solver_status="exception",
                              message=f"{type(exc).__name__}: {exc}")
        return self._polish(run, raw, warm, t_run)

    @staticmethod
    def _keep_start(run, warm) -> bool:
        """A run stopped (time limit, Ctrl-C) before the solver returned a point: its warm start, already solved
        exactly, is the answer so far (a solver that returns one is judged by it, not by its start). True if kept."""
        if warm is None or run.incumbent.value is not None:
            return False
        run.incumbent.offer(warm.value, warm.subset, warm.alpha, source=f"start ({warm.source})")
        return True

    def warm(self, run) -> WarmStart:
        """The start subset (alpha-start when None) with its exact alpha and value g(subset)."""
        instance, start = run.instance, run.requested_start
        fit = run.oracle.solve(run.start())
        source = start if isinstance(start, str) else ("alpha-start" if start is None else "given")
        return WarmStart(tuple(fit.subset), indicator(fit.subset, instance.n), fit.alpha, fit.value, source)

    def _polish(self, run, raw: RawSolution, warm, t_run: float) -> Status:
        instance, inc = run.instance, run.incumbent
        info = run.info
        info.update({"solver_status": raw.solver_status, "solver_objective": raw.objective,
                     "solver_bound": raw.bound, "solver_time_s": raw.wall_time_s, **raw.info})
        if warm is not None:
            info.update(start_subset=list(warm.subset), start_objective=warm.value, start_source=warm.source)
        for point in raw.trace:
            inc.trace.append(TracePoint(t_run + point.time_s, point.value, point.source))
            if inc.callback is not None:
                inc.callback(inc.trace[-1])
        beta = None if raw.beta is None else np.asarray(raw.beta, dtype=float)
        if beta is None or beta.shape != (instance.n,) or not np.all(np.isfinite(beta)):
            if raw.failed or beta is not None:   # a failure, or a beta we cannot use
                status = Status.ERROR
            elif raw.interrupted:
                status = Status.INTERRUPTED
            else:
                status = Status.TIME_LIMIT if raw.time_limit_reached else Status.LIMIT if raw.limit else Status.ERROR
            kept = status in (Status.INTERRUPTED, Status.TIME_LIMIT, Status.LIMIT) and self._keep_start(run, warm)
            msg = raw.message or ("the solver returned no solution" if beta is None else
                                  f"the solver returned an unusable beta (shape {beta.shape}, "
                                  f"n = {instance.n})")
            run.message = msg + ("; the answer is its warm start, solved exactly" if kept else "")
            return status
        subset = top_b(beta, instance.B)
        info["beta_max_fractionality"] = float(np.max(np.minimum(np.abs(beta), np.abs(1 - beta))))
        info["rounded_subset"] = list(subset)
        fit = run.oracle.solve(subset)
        inc.offer(fit.value, subset, fit.alpha, source="polish")
        status, run.certified, run.bound, run.message = self._status(instance, raw, fit.value)
        return status

    def _status(self, instance, raw: RawSolution, value: float):
        """(status, certified, bound in f units, message) from the raw answer and our polished value."""
        bound = None if raw.bound is None else instance.sign * raw.bound
        msg = raw.message
        if raw.failed:
            return Status.ERROR, False, bound, msg or "the solver failed"
        if raw.interrupted:
            return Status.INTERRUPTED, False, bound, msg
        if raw.time_limit_reached:
            return Status.TIME_LIMIT, False, bound, msg
        if raw.limit:
            return Status.LIMIT, False, bound, msg or f"the solver's {raw.limit} limit was reached"
        if not (raw.proven_optimal and self.certifies):
            return Status.CONVERGED, False, bound, msg
        score = instance.sign * value
        tol = self.certify_rtol * max(1.0, abs(score))
        ref_obj = raw.objective if raw.objective is not None else raw.bound
        ref_bound = raw.bound if raw.bound is not None else raw.objective
        if ref_obj is not None and abs(score - ref_obj) <= tol and score - ref_bound <= tol:
            return Status.OPTIMAL, True, bound, msg
        note = (f"the solver claims global optimality at {ref_obj} (bound {ref_bound}) but the polished "
                f"value is {score}: not certified")
        return Status.CONVERGED, False, bound, f"{msg}; {note}" if msg else note


def list_solvers() -> list:
    """One row per solver adapter in the registry: name, available, reason, scope."""
    rows = []
    for name, path in REGISTRY.items():
        if not path.startswith("minlp_fs.solvers."):
            continue
        try:
            cls = method_class(name)
        except Exception as exc:
            rows.append({"name": name, "available": False, "scope": "?", "demo_limit": None,
                         "kind": UnavailableKind.MISSING_PACKAGE.value,
                         "reason": f"unavailable: {path} cannot be imported ({type(exc).__name__}: {exc})"})
            continue
        if not (isinstance(cls, type) and issubclass(cls, SolverMethod)):
            continue
        method = cls()
        avail = method.availability()
        rows.append({"name": name, "available": avail.ok, "reason": avail.reason or "ok",
                     "scope": method.scope,
                     "kind": None if avail.kind is None else avail.kind.value,
                     "demo_limit": getattr(cls, "demo_limit", None)})
    return rows
