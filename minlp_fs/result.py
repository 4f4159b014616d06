"""One result type for every method: heuristics, enumeration and solver adapters alike.

Modelled on Pyomo's newer solver results: the termination condition (why the method stopped)
is kept apart from whether the answer is certified globally optimal; incumbent, bound, wall
time and a trace of incumbents (with the component that found each) travel together.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from enum import Enum

import numpy as np


class Status(str, Enum):
    """Why a method stopped. A ``str`` enum: it compares equal to, and is written to JSON as, its value."""

    OPTIMAL = "optimal"            # proven globally optimal (enumeration, trivial bound, a global solver's proof)
    CONVERGED = "converged"        # a heuristic's own stopping rule (local optimum, OptWindow)
    TIME_LIMIT = "time_limit"      # stopped by the time limit with a feasible answer
    LIMIT = "limit"                # stopped by another solver limit (iterations, nodes, memory: ``message`` says which)
    INTERRUPTED = "interrupted"    # stopped by Ctrl-C (or a callback raising SearchStopped) with what was finished
    UNAVAILABLE = "unavailable"    # the solver cannot run here; ``message`` says why
    ERROR = "error"                # the solver ran but failed; ``message`` says how

    def __str__(self) -> str:
        return self.value


#: the status values, in order
TERMINATIONS = tuple(s.value for s in Status)


@dataclass
class TracePoint:
    """An improvement of the incumbent: when, its value, and which component found it.

    ``bound``: a proven bound of the optimum at that time (branch-and-bound; source ``bound``), else None.
    """

    time_s: float
    value: float
    source: str = ""
    bound: float | None = None


@dataclass
class Result:
    """What any method returns. ``objective`` is f(alpha, beta) recomputed by our own code."""

    method: str
    sense: str
    objective: float | None
    features: list
    feature_names: list
    alpha: np.ndarray | None
    status: Status
    certified: bool = False
    degenerate: bool = False
    wall_time_s: float = 0.0
    n_svm_solves: int = 0
    bound: float | None = None
    trace: list = field(default_factory=list)
    message: str = ""
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in TERMINATIONS:
            raise ValueError(f"unknown status {self.status!r}")
        self.status = Status(self.status)

    @property
    def ok(self) -> bool:
        """A feasible answer is present."""
        return self.objective is not None

    def to_dict(self, with_alpha: bool = False) -> dict:
        d = asdict(self)
        d["alpha"] = None if self.alpha is None or not with_alpha else np.asarray(self.alpha, dtype=float).tolist()
        d["trace"] = [_point(t) if isinstance(t, TracePoint) else t for t in self.trace]
        return _jsonable(d)

    def to_json(self, with_alpha: bool = False, **kw) -> str:
        return json.dumps(self.to_dict(with_alpha=with_alpha), **kw)


def _point(t: TracePoint) -> dict:
    """A trace point as a dict; ``bound`` only when set, so incumbent-only traces keep their JSON."""
    d = asdict(t)
    if d["bound"] is None:
        del d["bound"]
    return d


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


class Incumbent:
    """Best-so-far bookkeeping shared by every method: value, subset, alpha and the trace.

    ``offer`` keeps a candidate when it is strictly better in the instance's sense, and records
    the improvement with the time since ``start`` and its source.
    """

    def __init__(self, instance, callback=None):
        self.instance = instance
        self.value: float | None = None
        self.subset: tuple | None = None
        self.alpha: np.ndarray | None = None
        self.trace: list[TracePoint] = []
        self.start = time.perf_counter()
        self.callback = callback

    @property
    def proves_optimal(self) -> bool:
        """The incumbent attains the paper sense's trivial bound: globally optimal, nothing to search."""
        return self.value is not None and self.instance.proves_optimal(self.value)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def offer(self, value: float, subset, alpha, source: str = "") -> bool:
        if not np.isfinite(value):
            raise ValueError(f"non-finite objective {value!r} offered for subset {tuple(subset)} ({source})")
        if self.value is not None and not self.instance.better(value, self.value):
            return False
        self.value, self.subset, self.alpha = value, tuple(subset), alpha
        self.trace.append(TracePoint(self.elapsed(), float(value), source))
        if self.callback is not None:
            self.callback(self.trace[-1])
        return True

    def result(self, method: str, status: str, n_svm_solves: int, certified: bool = False,
               bound: float | None = None, message: str = "", info: dict | None = None) -> Result:
        """The Result for the incumbent; a paper-sense incumbent at the trivial bound is certified."""
        inst = self.instance
        degenerate = self.value is not None and inst.is_degenerate(self.value)
        if self.proves_optimal:
            certified, status = True, "optimal"
            bound = inst.trivial_bound
            message = message or ("attains the trivial bound -2C*min(|I+|,|I-|) (to 1e-6 relative, the accuracy "
                                  "of every value): optimal to that tolerance, and degenerate (one-class SVM); "
                                  "use sense='fit' for a useful selection")
        feats = sorted(self.subset) if self.subset is not None else []
        return Result(method=method, sense=inst.sense, objective=self.value, features=feats,
                      feature_names=[inst.feature_names[j] for j in feats], alpha=self.alpha,
                      status=status, certified=certified, degenerate=degenerate,
                      wall_time_s=self.elapsed(), n_svm_solves=n_svm_solves, bound=bound,
                      trace=list(self.trace), message=message, info=dict(info or {}))
