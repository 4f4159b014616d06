"""Heuristic <-> solver decomposition (``--method hybrid:SOLVER``).

    beta_0 = heuristic(start)                        (LS* by default, paper section 3)
    repeat up to max_rounds:
        beta_s = polish(SOLVER warm-started at the incumbent)   (any solver adapter)
        beta_h = heuristic(beta_s)
        stop unless the incumbent improved this round, or the solver certified it

Every candidate is an exact alpha-subproblem value (the heuristics' and the adapters' polished
answers), so the incumbent only improves; the trace tags each improvement with the component that
found it (``ls*``, ``scip``, ...). The time limit is shared: each solver run gets the remaining time
divided by the rounds left. Certified when a global solver certified the incumbent's value.
"""
from __future__ import annotations

import time
import typing
from dataclasses import dataclass

from ..alpha import AlphaSubproblem
from ..errors import InputError, check_integer
from ..methods import Method, canonical_name, check_options, get_method, method_class
from ..result import Incumbent, Result
from .base import SolverMethod


@dataclass
class Hybrid(Method):
    """Alternate a start-using heuristic and a warm-started solver while the incumbent improves."""

    solver: str = "scip"
    heuristic: str = "ls*"
    max_rounds: int = 5
    time_limit: float = 600.0
    seed: int = 0
    tee: bool = False

    name: typing.ClassVar[str] = "hybrid"
    uses_start: typing.ClassVar[bool] = True

    def __post_init__(self):
        solver_cls = method_class(self.solver)
        if not issubclass(solver_cls, SolverMethod):
            raise InputError(f"hybrid needs a solver adapter, not {self.solver!r}")
        if not method_class(self.heuristic).uses_start:
            raise InputError(f"hybrid needs a heuristic that starts from a subset (ls*, acso*), "
                             f"not {self.heuristic!r}")
        check_integer(self.name, "max_rounds", self.max_rounds, 1)
        if not (isinstance(self.time_limit, (int, float)) and self.time_limit > 0):
            raise InputError(f"time_limit must be > 0 seconds; got {self.time_limit!r}")
        check_options(self)
        self.certifies = solver_cls.certifies

    @property
    def label(self) -> str:
        return f"hybrid:{canonical_name(self.solver)}"

    def _component(self, name: str, time_limit: float):
        cls = method_class(name)
        opts = {"time_limit": max(time_limit, 1e-3), "seed": self.seed, "tee": self.tee}
        return get_method(name, **{k: v for k, v in opts.items() if k in cls.options()})

    def solve(self, instance, start=None, oracle=None, callback=None) -> Result:
        oracle = oracle if oracle is not None else AlphaSubproblem(instance)
        solves0 = oracle.n_solves
        inc = Incumbent(instance, callback)
        deadline = time.perf_counter() + self.time_limit
        solver_name, heur_name = canonical_name(self.solver), canonical_name(self.heuristic)
        rounds, bound, certified, stopped_by = [], None, False, "converged"
        avail = self._component(solver_name, self.time_limit).availability(instance)
        if not avail:
            return Result(method=self.label, sense=instance.sense, objective=None, features=[],
                          feature_names=[], alpha=None, status="unavailable",
                          message=f"{solver_name}: {avail.reason}", info={"rounds": rounds})

        def run(name, method, point):
            res = method.solve(instance, start=point, oracle=oracle)
            improved = res.objective is not None and inc.offer(res.objective, res.features, res.alpha, name)
            rounds.append({"component": name, "objective": res.objective, "status": res.status,
                           "certified": res.certified, "improved": improved, "message": res.message})
            return res, improved

        first, _ = run(heur_name, self._component(heur_name, self.time_limit), start)
        if first.objective is None:
            return inc.result(self.label, first.status, oracle.n_solves - solves0, message=first.message,
                              info={"rounds": rounds, "scope": "global" if self.certifies else "local"})
        certified = first.certified  # e.g. the trivial bound in the paper sense: nothing left to do
        for r in range(0 if certified else self.max_rounds):
            left = deadline - time.perf_counter()
            if left <= 0:
                stopped_by = "time_limit"
                break
            sol, improved_s = run(solver_name, self._component(solver_name, left / (self.max_rounds - r)),
                                  list(inc.subset))
            if sol.bound is not None and sol.info.get("scope") == "global":
                bound = sol.bound if bound is None or instance.better(bound, sol.bound) else bound
            if sol.certified and sol.objective is not None and not instance.better(inc.value, sol.objective):
                certified = True
                break
            if time.perf_counter() >= deadline:
                stopped_by = "time_limit"
                break
            start_h = sol.features if sol.objective is not None else list(inc.subset)
            heuristic = self._component(heur_name, deadline - time.perf_counter())
            _, improved_h = run(heur_name, heuristic, start_h)
            if not (improved_s or improved_h):
                break
        status = "optimal" if certified else stopped_by
        return inc.result(self.label, status, oracle.n_solves - solves0, certified=certified, bound=bound,
                          info={"rounds": rounds, "solver": solver_name, "heuristic": heur_name,
                                "scope": "global" if self.certifies else "local"})
