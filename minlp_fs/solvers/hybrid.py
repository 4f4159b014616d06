"""Heuristic <-> solver decomposition (``--method hybrid:SOLVER``).

    beta_0 = heuristic(start)                        (LS* by default, paper section 3)
    repeat up to max_rounds:
        beta_s = polish(SOLVER warm-started at the incumbent)   (any solver adapter)
        beta_h = heuristic(beta_s)
        stop unless the incumbent improved this round, or the solver certified it

Every candidate is an exact alpha-subproblem value (the heuristics' and the adapters' polished
answers), so the incumbent only improves; the trace tags each improvement with the component that
found it (``ls*``, ``scip``, ...). The bound is the best of the global solvers' bounds and the valid
bound of the sense (paper: the trivial bound; fit: g <= 0). The time limit is shared: each solver run
gets the remaining time divided by the rounds left. Certified when a global solver certified the
incumbent's value. The status is ``time_limit`` when the deadline stopped the rounds or cut the last
component run (a solver cut by its share of the time is not the end of the hybrid).
"""
from __future__ import annotations

import typing
from dataclasses import dataclass

from ..errors import InputError, SolverUnavailableError
from ..methods import Method, canonical_name, get_method, method_class
from ..multiclass import binary_only
from ..options import option, seed_option
from ..result import Status
from ..stopping import SearchStopped
from .base import SolverMethod


@dataclass
class Hybrid(Method):
    """Alternate a start-using heuristic and a warm-started solver while the incumbent improves."""

    solver: str = option("scip", str, doc="the solver adapter")
    heuristic: str = option("ls*", str, doc="a start-using heuristic (ls*, acso*)")
    max_rounds: int = option(5, int, low=1, doc="most solver -> heuristic rounds")
    time_limit: float = option(600.0, float, low=0, low_open=True, doc="wall-clock seconds for all rounds")
    seed: int = seed_option()
    tee: bool = option(False, bool, doc="show the solver's log")
    solver_options: dict | None = option(None, dict, none=True, doc="the solver's own parameters (its "
                                                                     "solver_options)")

    name: typing.ClassVar[str] = "hybrid"
    uses_start: typing.ClassVar[bool] = True

    def check(self):
        solver_cls = method_class(self.solver)
        if not issubclass(solver_cls, SolverMethod):
            raise InputError(f"hybrid needs a solver adapter, not {self.solver!r}")
        if not method_class(self.heuristic).uses_start:
            raise InputError(f"hybrid needs a heuristic that starts from a subset (ls*, acso*), "
                             f"not {self.heuristic!r}")
        super().check()
        self.certifies = solver_cls.certifies

    @property
    def label(self) -> str:
        return f"hybrid:{canonical_name(self.solver)}"

    def _component(self, name: str, time_limit: float):
        cls = method_class(name)
        opts = {"time_limit": max(time_limit, 1e-3), "seed": self.seed, "tee": self.tee,
                "solver_options": self.solver_options}
        return get_method(name, **{k: v for k, v in opts.items() if k in cls.options()})

    def _search(self, run) -> Status:
        instance, inc, deadline = run.instance, run.incumbent, run.deadline
        binary_only(instance, self.label)
        solver_name, heur_name = canonical_name(self.solver), canonical_name(self.heuristic)
        rounds, certified, status = [], False, Status.CONVERGED
        # the bound starts at the one valid for every instance (g bounds, Remark 1): paper (min g),
        # g >= -2C min(|I+|,|I-|); fit (max g), g <= f(0, beta) = 0; a global solver's bound may tighten it
        bound = instance.trivial_bound if instance.sense == "paper" else 0.0
        run.info["rounds"] = rounds
        avail = self._component(solver_name, self.time_limit).availability(instance)
        if not avail:
            raise SolverUnavailableError(f"{solver_name}: {avail.reason}", avail.kind)

        def run_one(name, method, point):
            res = method.solve(instance, start=point, oracle=run.oracle)
            improved = res.objective is not None and inc.offer(res.objective, res.features, res.alpha, name)
            rounds.append({"component": name, "objective": res.objective, "status": res.status,
                           "certified": res.certified, "improved": improved, "message": res.message})
            if res.status == Status.INTERRUPTED:  # Ctrl-C reached the component: stop the hybrid too
                raise SearchStopped()
            return res, improved

        scope = "global" if self.certifies else "local"
        first, _ = run_one(heur_name, self._component(heur_name, self.time_limit), run.requested_start)
        if first.objective is None:
            run.message = first.message
            run.info["scope"] = scope
            return first.status
        certified = first.certified  # e.g. the trivial bound in the paper sense: nothing left to do
        for r in range(0 if certified else self.max_rounds):
            left = deadline.remaining()
            if left <= 0:
                status = Status.TIME_LIMIT
                break
            sol, improved_s = run_one(solver_name, self._component(solver_name, left / (self.max_rounds - r)),
                                      list(inc.subset))
            if sol.bound is not None and sol.info.get("scope") == "global":
                bound = sol.bound if instance.better(bound, sol.bound) else bound
            if sol.certified and sol.objective is not None and not instance.better(inc.value, sol.objective):
                certified = True
                break
            if deadline.expired():
                status = Status.TIME_LIMIT
                break
            start_h = sol.features if sol.objective is not None else list(inc.subset)
            heuristic = self._component(heur_name, deadline.remaining())
            _, improved_h = run_one(heur_name, heuristic, start_h)
            if not (improved_s or improved_h):
                break
        if status == Status.CONVERGED and rounds[-1]["status"] == Status.TIME_LIMIT and deadline.expired():
            status = Status.TIME_LIMIT  # the last component was cut by the hybrid's own deadline
        run.certified, run.bound = certified, bound
        run.info.update(solver=solver_name, heuristic=heur_name, scope=scope)
        return Status.OPTIMAL if certified else status
