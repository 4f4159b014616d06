"""SCIP (global MINLP, pyscipopt) on DFS-SVM, with our LS*/ACSO* inside as a primal heuristic.

The model is written directly with pyscipopt expressions, kernel entries in the linear-in-beta form
of the bullet points after problem (4): k_ih = (gamma sum_j beta_j x_ij x_hj + c)^d or
exp(-gamma sum_j beta_j (x_ij - x_hj)^2), each pair i < h written once plus the diagonal (features
with a zero term left out). The quadratic form sits in a nonlinear constraint on an epigraph
variable t >= 0 (it is >= 0 since K_beta is PSD); the objective is linear:

* ``paper`` (problem (4)): alpha in [0, C]^m, beta binary, y'alpha = 0, sum beta = B,
  min t - e'alpha with t >= 1/2 sum_ih y_i y_h alpha_i alpha_h k_ih;
* ``fit``: the kernelised SVM primal over (beta, c, b, xi): min t + C e'xi with
  t >= 1/2 sum_ih c_i c_h k_ih, y_i(sum_h k_ih c_h + b) + xi_i >= 1, xi >= 0, and y_i c_i in [0, C],
  sum c = 0 (valid cuts: c = alpha*y at a dual optimum alpha); its optimum is -max_beta g(beta)
  (strong duality).

The warm start (alpha, beta) is added as a complete solution before solving. The heuristic plugin
(:class:`_SearchHeuristic`, option ``heuristic``) takes SCIP's LP solution and incumbent, rounds beta
to its top B, runs a short LS* (or any start-using method) from there and hands the polished
(alpha, beta) back with ``trySol``; the trace says which component found each incumbent:
``start``, ``scip`` or ``heuristic:<name>``. Certified only when SCIP reports ``optimal`` with a
zero gap (and the base class's check of our polished value against SCIP's bounds).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import time
import typing
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, plain
from ..models.scip_model import ScipModel, expanded_terms
from ..objective import svm_primal
from ..options import option
from ..result import TracePoint
from .base import Availability, RawSolution, SolverMethod, top_b

#: (lock, [runs inside, saved descriptor]) of _c_stdout_to_stderr: SCIP runs on threads share one redirection
_REDIRECT = (threading.Lock(), [0, None])


@contextlib.contextmanager
def _c_stdout_to_stderr():
    """The process's stdout (file descriptor 1) sent to stderr while SCIP runs: SCIP prints "pressed CTRL-C ..."
    to the C stdout whatever its own output settings, which broke `minlp-fs ... --json` (the review of the eighth
    session). Runs on several threads share it: the first in redirects, the last out flushes the C library's
    buffers and puts the descriptor back."""
    lock, state = _REDIRECT
    with lock:
        if state[0] == 0:
            sys.stdout.flush()
            state[1] = os.dup(1)
            os.dup2(2, 1)
        state[0] += 1
    try:
        yield
    finally:
        with lock:
            state[0] -= 1
            if state[0] == 0:
                with contextlib.suppress(OSError, AttributeError, TypeError):   # no C library: nothing buffered
                    ctypes.CDLL(None).fflush(None)
                os.dup2(state[1], 1)
                os.close(state[1])


#: SCIP statuses that end a run early with a feasible, unproven answer (resource limits; userinterrupt: a Ctrl-C)
_LIMITS = ("timelimit", "memlimit", "nodelimit", "totalnodelimit", "stallnodelimit", "sollimit",
           "bestsollimit", "restartlimit", "gaplimit", "userinterrupt")
#: those that are neither the time limit, the gap reached nor a Ctrl-C: status limit (named without "limit")
_OTHER_LIMITS = tuple(s for s in _LIMITS if s not in ("timelimit", "gaplimit", "userinterrupt"))


class _SearchHeuristic:
    """SCIP primal heuristic: LS* (or another start-using method) from SCIP's rounded beta."""

    @staticmethod
    def create(scip_model: ScipModel, method, oracle, log: list):
        import pyscipopt as ps

        class Heur(ps.Heur):
            def heurexec(self, heurtiming, nodeinfeasible):
                return {"result": self.outer.run(self)}

        heur = Heur()
        heur.outer = _SearchHeuristic(scip_model, method, oracle, log)
        return heur

    def __init__(self, scip_model, method, oracle, log):
        self.sm, self.method, self.oracle, self.log = scip_model, method, oracle, log
        self.tried: set = set()      # subsets a search started from
        self.submitted: set = set()  # subsets handed to SCIP

    def _candidates(self, model):
        from pyscipopt import SCIP_LPSOLSTAT

        out = []
        if model.getLPSolstat() == SCIP_LPSOLSTAT.OPTIMAL:
            out.append(top_b([model.getSolVal(None, v) for v in self.sm.beta], self.sm.instance.B))
        best = model.getBestSol()
        if best is not None:
            out.append(top_b([model.getSolVal(best, v) for v in self.sm.beta], self.sm.instance.B))
        return [s for s in dict.fromkeys(out) if s not in self.tried]

    def run(self, heur):
        from pyscipopt import SCIP_RESULT

        model = heur.model
        cands = self._candidates(model)
        if not cands:
            return SCIP_RESULT.DIDNOTRUN
        found = False
        for subset in cands:
            self.tried.add(subset)
            res = self.method.solve(self.sm.instance, start=list(subset), oracle=self.oracle)
            found_subset = tuple(res.features)
            if res.objective is None or found_subset in self.submitted:
                continue
            self.submitted.add(found_subset)
            self.tried.add(found_subset)  # a search from it would return it again
            sol = self.sm.make_solution(found_subset, np.asarray(res.alpha), heur)
            score = self.sm.instance.sign * res.objective
            self.log.append(score)
            found |= bool(model.trySol(sol, printreason=False, free=True))
        return SCIP_RESULT.FOUNDSOL if found else SCIP_RESULT.DIDNOTFIND


def _best_events(log: list, t0: float, trace: list, sign: float, heur_name: str):
    """An event handler appending a TracePoint (value f) at each new incumbent, tagged by its source."""
    import pyscipopt as ps

    class Events(ps.Eventhdlr):
        def eventinit(self):
            self.model.catchEvent(ps.SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexit(self):
            self.model.dropEvent(ps.SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexec(self, event):
            score = self.model.getSolObjVal(self.model.getBestSol())
            if trace and _close(score, sign * trace[-1].value):
                return  # the same value again (e.g. polished by SCIP's sub-NLP): not an improvement
            ours = any(_close(score, a) for a in log)
            trace.append(TracePoint(time.perf_counter() - t0, sign * score,
                                    f"heuristic:{heur_name}" if ours else "scip"))

    return Events()


def _close(a: float, b: float | None, rtol: float = 1e-7) -> bool:
    return b is not None and abs(a - b) <= rtol * max(1.0, abs(b))


def _with_start(trace: list, model, start_score, t_start: float, sign: float) -> list:
    """The trace with SCIP's first incumbent tagged ``start`` when it was our warm start."""
    if start_score is None or not _close(model.getFirstPrimalBound(), start_score):
        return trace
    if trace and _close(sign * trace[0].value, start_score, rtol=1e-10):  # the start itself, not a neighbour
        return [TracePoint(trace[0].time_s, trace[0].value, "start")] + trace[1:]
    return [TracePoint(t_start, sign * start_score, "start")] + trace


def set_params(model, params: dict, owner: str = "scip") -> None:
    """``model.setParam`` for each entry, the value taken as the parameter's type (an integer-valued number
    for an int parameter, 0/1 for a bool); an unknown name or a value SCIP refuses is an InputError naming
    it (pyscipopt alone would truncate 1.5 to 1 for an int parameter, or raise a bare KeyError)."""
    for key, value in params.items():
        try:
            current = model.getParam(key)
        except KeyError:
            raise InputError(f"{owner}: SCIP has no parameter {key!r} (solver_options)") from None
        typed = _typed(current, value)
        if typed is None:
            kind = {bool: "True or False", int: "an integer", float: "a number", str: "a string"}[type(current)]
            raise InputError(f"{owner}: SCIP parameter {key!r} must be {kind}; got {plain(value)}")
        try:
            model.setParam(key, typed)
        except (ValueError, TypeError) as exc:
            raise InputError(f"{owner}: SCIP refuses {key} = {plain(value)}: {exc}") from None


def _typed(current, value):
    """``value`` as the type of the parameter's ``current`` value, or None when it is not one."""
    is_bool = isinstance(value, (bool, np.bool_))
    if isinstance(current, bool):
        return bool(value) if is_bool or (isinstance(value, int) and value in (0, 1)) else None
    if isinstance(current, str):
        return value if isinstance(value, str) else None
    if is_bool or isinstance(value, str):
        return None
    if isinstance(current, int):
        return int(value) if float(value).is_integer() else None
    return float(value)


@dataclass
class Scip(SolverMethod):
    """SCIP global MINLP; ``heuristic`` (e.g. "ls*", "acso*" or None) runs inside as a primal heuristic."""

    memory_limit_mb: int = option(4000, int, low=1, doc="SCIP's memory limit in MB")
    max_expanded_terms: int = option(1_000_000, int, low=1, doc="largest expanded model SCIP is given "
                                                                "(monomials of the kernel powers)")
    heuristic: str | None = option("ls*", str, none=True, doc="a start-using method run inside SCIP as a "
                                                               "primal heuristic (None: off)")
    heuristic_time: float = option(1.0, float, low=0, low_open=True, doc="seconds per heuristic call")
    gap: float = option(0.0, float, low=0, doc="relative gap at which SCIP stops")

    name: typing.ClassVar[str] = "scip"
    certifies: typing.ClassVar[bool] = True
    reserved: typing.ClassVar[dict] = {"limits/time": "time_limit", "timing/clocktype": "time_limit",
                                       "limits/memory": "memory_limit_mb", "limits/gap": "gap",
                                       "randomization/randomseedshift": "seed"}

    def check(self):
        super().check()
        if self.heuristic is not None:
            self._heuristic_method()  # unknown names are an input error now, not inside SCIP

    def _heuristic_method(self):
        from ..methods import get_method, method_class

        cls = method_class(self.heuristic)
        if not cls.uses_start:
            raise InputError(f"heuristic {self.heuristic!r} does not start from a subset; use ls* or acso*")
        opts = {"time_limit": float(self.heuristic_time), "seed": self.seed}
        return get_method(self.heuristic, **{k: v for k, v in opts.items() if k in cls.options()})

    def _available(self, instance=None) -> Availability:
        try:
            import pyscipopt  # noqa: F401
        except ImportError as exc:
            return Availability.missing(f"pyscipopt not installed (pip install minlp-fs[scip]): {exc}")
        if instance is not None:
            terms = expanded_terms(instance)
            if terms > self.max_expanded_terms:
                return Availability.too_large(
                    f"model too large for SCIP: its expression simplifier expands the kernel powers into about "
                    f"{terms:.2g} monomials (> max_expanded_terms = {self.max_expanded_terms:.2g}), which exhausts "
                    f"memory whatever the memory limit; use a reduced instance (--m)")
        return Availability(True)

    def _check_solver_options(self) -> None:
        if not self.solver_options:
            return
        import pyscipopt

        model = pyscipopt.Model()
        model.hideOutput()
        set_params(model, self.solver_options or {}, self.name)

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        t0 = time.perf_counter()
        sm = ScipModel(instance)
        model = sm.model
        build = time.perf_counter() - t0
        if build >= time_limit:
            return RawSolution.not_run(warm, "the SCIP model was built")
        model.hideOutput(not self.tee)
        set_params(model, self.solver_params({
            "limits/time": time_limit - build, "timing/clocktype": 2,  # 2: wall clock; the building counts
            "limits/memory": float(self.memory_limit_mb), "limits/gap": float(self.gap),
            "randomization/randomseedshift": int(self.seed)}), self.name)
        log, trace = [], []
        heur_name = self.heuristic or ""
        if self.heuristic is not None:
            model.includeHeur(_SearchHeuristic.create(sm, self._heuristic_method(), oracle, log),
                              f"minlpfs_{heur_name}", f"minlp-fs {heur_name} from the rounded beta", "Y",
                              priority=-1000, freq=1, freqofs=0)
        start_score = None
        if warm is not None:
            # the start's value in SCIP's units: f in the paper sense, the SVM primal (= -g) in the fit sense
            start_score = warm.value if instance.sense == "paper" else \
                svm_primal(instance, instance.gram(warm.subset), warm.alpha)[3]
            model.addSol(sm.make_solution(warm.subset, warm.alpha), free=True)
        t_start = time.perf_counter() - t0
        model.includeEventhdlr(_best_events(log, t0, trace, instance.sign, heur_name),
                               "minlpfs_trace", "incumbent trace")
        with _c_stdout_to_stderr():
            model.optimize()
        status = model.getStatus()
        best = model.getBestSol() if model.getNSols() > 0 else None
        beta = None if best is None else np.array([model.getSolVal(best, v) for v in sm.beta])
        alpha = None
        if best is not None and instance.sense == "paper":
            alpha = np.array([model.getSolVal(best, v) for v in sm.w])
        gap = model.getGap()
        trace = _with_start(trace, model, start_score, t_start, instance.sign)
        presolve = model.getPresolvingTime()
        overrun_cause = (f"SCIP's presolve took {presolve:.3g} s of the {time_limit - build:.3g} s it was given: its "
                         "expression canonicalisation does not check the time limit; a smaller instance (--m) "
                         "presolves faster" if presolve > time_limit - build else None)
        return RawSolution(
            beta=beta, alpha=alpha, solver_status=status,
            objective=None if best is None else model.getSolObjVal(best), bound=model.getDualbound(),
            proven_optimal=status == "optimal" and gap <= max(self.gap, 1e-6),
            time_limit_reached=status == "timelimit",
            limit=status.removesuffix("limit") if status in _OTHER_LIMITS else "",
            interrupted=status == "userinterrupt",   # SCIP caught the Ctrl-C itself: the answer so far, status interrupted
            failed=status not in _LIMITS and status != "optimal", wall_time_s=time.perf_counter() - t0,
            trace=trace, message="" if status == "optimal" else f"SCIP stopped: {status}, gap {gap:.3g}",
            info={"build_time_s": build, "presolve_time_s": presolve, "gap": gap,
                  "n_nodes": model.getNNodes(),
                  "first_primal_bound": model.getFirstPrimalBound(), "heuristic": self.heuristic,
                  "heuristic_incumbents": sum(p.source.startswith("heuristic") for p in trace),
                  "memory_limit_mb": self.memory_limit_mb, **({"overrun_cause": overrun_cause} if overrun_cause else {})})
