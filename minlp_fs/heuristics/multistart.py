"""Multistart: a start-dependent method run from k shared random starts (paper section 5.1.2).

The k starts are uniform random B-subsets drawn by :func:`random_subset` from
``np.random.default_rng(seed)``, so every method run with the same seed gets the same starts (the
paper's "10 shared random starting points"). Each run builds its own alpha-subproblem oracle, so the
runs are independent and the outcome does not depend on ``n_jobs`` (runs on a thread pool).

Statistics follow the instance's sense (the best run has the smallest ``instance.score``). With
gap(f) = 100 sign (f - f_bk) / |f_bk| the gap to a best-known value f_bk, the paper's spread (text
before Table b2-summary) is gap(f_worst) - gap(f_best) = 100 sign (f_worst - f_best) / |f_bk|;
:attr:`MultistartResult.spread` takes f_bk = the best of these runs, ``spread_to(f_bk)`` any other
best-known value (the best over all methods, as in the table).

Ctrl-C stops the multistart and keeps the finished runs (a run cut short is dropped). With
``n_jobs > 1`` the runs in progress stop at their next incumbent improvement (their callback raises
:class:`~minlp_fs.stopping.SearchStopped`) or at their end.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from ..blas import one_blas_thread
from ..errors import InputError
from ..methods import Method, get_method
from ..options import check_value
from ..workers import cap_jobs
from ..result import Result, Status
from ..stopping import SearchStopped
from .starts import random_subset


@dataclass
class MultistartResult:
    """The finished runs of one method from shared random starts, and their statistics."""

    method: str
    sense: str
    seed: int
    starts: list
    #: finished runs, in start order; ``completed[i]`` is the index in ``starts`` of ``results[i]``
    results: list = field(default_factory=list)
    completed: list = field(default_factory=list)
    total_time_s: float = 0.0
    interrupted: bool = False

    @property
    def sign(self) -> float:
        """+1 in the paper sense (minimise), -1 in the fit sense (maximise)."""
        return 1.0 if self.sense == "paper" else -1.0

    def _ranked(self) -> list:
        return sorted((r for r in self.results if r.ok), key=lambda r: self.sign * r.objective)

    @property
    def best(self) -> Result | None:
        ranked = self._ranked()
        return ranked[0] if ranked else None

    @property
    def best_objective(self) -> float | None:
        return self.best.objective if self.best is not None else None

    @property
    def worst_objective(self) -> float | None:
        ranked = self._ranked()
        return ranked[-1].objective if ranked else None

    @property
    def mean_objective(self) -> float | None:
        values = [r.objective for r in self.results if r.ok]
        return float(np.mean(values)) if values else None

    def spread_to(self, best_known: float) -> float | None:
        """100 sign (f_worst - f_best) / |best_known|, in percent."""
        if self.best is None or best_known == 0:
            return None
        return 100.0 * self.sign * (self.worst_objective - self.best_objective) / abs(best_known)

    @property
    def spread(self) -> float | None:
        """The spread in percent, relative to the best of these runs."""
        return self.spread_to(self.best_objective) if self.best is not None else None

    def to_dict(self, with_alpha: bool = False) -> dict:
        best = self.best
        return {"method": self.method, "sense": self.sense, "seed": self.seed, "k": len(self.starts),
                "starts": [list(s) for s in self.starts], "completed": list(self.completed),
                "interrupted": self.interrupted, "total_time_s": self.total_time_s,
                "best_index": None if best is None else self.completed[self.results.index(best)],
                "best_objective": self.best_objective, "mean_objective": self.mean_objective,
                "worst_objective": self.worst_objective, "spread": self.spread,
                "results": [r.to_dict(with_alpha=with_alpha) for r in self.results]}


def shared_starts(instance, k: int, seed: int) -> list:
    """The k random starts every method gets for this seed."""
    check_value("multistart", "seed", seed, int, low=0)
    rng = np.random.default_rng(seed)
    return [random_subset(instance.n, instance.B, rng) for _ in range(k)]


def multistart(method, instance, k: int = 10, seed: int = 0, n_jobs: int = 1,
               progress: bool = False) -> MultistartResult:
    """Run ``method`` (a start-dependent Method or its name) from k shared random starts."""
    if isinstance(method, str):
        method = get_method(method)
    if not isinstance(method, Method) or not method.uses_start:
        raise InputError(f"multistart needs a start-dependent method (such as ls, ls*, acso); "
                         f"{getattr(method, 'name', method)!r} takes no start")
    check_value("multistart", "k (number of starts)", k, int, low=1)
    n_jobs = cap_jobs(n_jobs, "multistart: n_jobs")
    t0 = time.perf_counter()
    starts = shared_starts(instance, k, seed)
    finished: dict = {}
    stop = threading.Event()

    def run(start):
        def halt(_point):
            if stop.is_set():
                raise SearchStopped()
        return method.solve(instance, start=start, callback=halt)

    def keep(i, result):
        if result.status == Status.INTERRUPTED:
            raise SearchStopped()
        finished[i] = result
        bar.update()

    interrupted = False
    with tqdm(total=k, desc=method.name, disable=not progress) as bar:
        try:
            if n_jobs == 1:
                for i, start in enumerate(starts):
                    keep(i, run(start))
            else:
                with one_blas_thread(), ThreadPoolExecutor(max_workers=n_jobs) as pool:
                    futures = {pool.submit(run, s): i for i, s in enumerate(starts)}
                    try:
                        for fut in as_completed(futures):
                            keep(futures[fut], fut.result())
                    except (KeyboardInterrupt, SearchStopped):
                        stop.set()
                        for fut in futures:
                            fut.cancel()
                        raise
        except (KeyboardInterrupt, SearchStopped):
            interrupted = True
    order = sorted(finished)
    return MultistartResult(method=method.name, sense=instance.sense, seed=seed, starts=starts,
                            results=[finished[i] for i in order], completed=order,
                            total_time_s=time.perf_counter() - t0, interrupted=interrupted)
