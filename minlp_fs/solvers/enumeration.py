"""Certified global optimum of problem (4) by enumerating all C(n, B) feature subsets (appendix app:cert).

For a fixed beta, problem (4) is the convex SVM dual (3), whose optimum g(beta) is found exactly.
Hence  min_beta sign * g(beta)  over the C(n, B) subsets of size B is the certified optimum of (4)
(paper sense, sign = +1) or of its fit-sense counterpart (sign = -1), whatever the kernel.

Four things make the enumeration cheaper than re-fitting every subset from scratch with libsvm
(the paper's procedure), without changing what it computes:

* Subsets are visited in the *revolving-door* order (Knuth, TAOCP 7.2.1.3, Algorithm R):
  R(n, k) = R(n-1, k) followed by the reverse of R(n-1, k-1) with element n-1 added to each.
  Consecutive subsets differ by one swap (j_out -> j_in), so the kernel's base matrix
  sum_{j in S} T_j is updated in O(m^2) (``Kernel.swap``) instead of rebuilt in O(m^2 B), and
  rebuilt from scratch every ``REBUILD_EVERY`` swaps so rounding errors cannot accumulate.
* The alpha-subproblem of each subset is solved by SMO warm-started from the previous subset's
  alpha (the dual polytope Delta does not depend on beta).
* A subset's solve stops as soon as duality proves it worse than the incumbent, a heuristic's value
  found first or the best subset of its chunk so far (``AlphaSubproblem.solve(worse_than=...)``: the
  dual value f(alpha) bounds g from above, minus the SVM primal from below); only subsets that may win
  are solved to the full tolerance. The
  swap's pass over the base matrix also gives the warm start's gradient, and SMO's first steps run on kernel
  rows computed from the base (:mod:`minlp_fs.alpha.opening`; polynomial and Gaussian kernels, the latter's
  subsets solved on their matrices where its opening seldom decides): a subset stopped there never has its
  kernel matrix built; in the fit sense every step is the one the full solve takes, in the paper sense the
  opening tests a stronger primal bound (the slack's best bias) and stops subsets sooner.
* Contiguous rank ranges (:func:`~.revolving_door.unrank` gives any rank's subset) are independent chunks, solved in
  parallel processes. Chunking depends only on C(n, B), never on ``n_jobs``, so every subset gets
  the same warm start and the result is identical for any ``n_jobs`` (ties: the incumbent's subset,
  then the lowest rank). With less time left than worker processes take to start
  (:func:`~minlp_fs.workers.no_time_for_workers`), the chunks run in this process (``info['in_process']``).

In the paper sense the trivial bound -2C min(|I+|, |I-|) (Remark 1) bounds g from below, so the
enumeration stops at the first subset (in rank order) that attains it: that subset is optimal. It is also the
bound an unfinished run (time limit, Ctrl-C) reports there, with the incumbent; in the fit sense such a run
reports none (the subsets not enumerated may hold any value).
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from tqdm.auto import tqdm

from ..alpha import BACKENDS, DEFAULT_TOL, AlphaSubproblem
from ..alpha.opening import Opening
from ..blas import one_blas_thread
from ..methods import Method, check_incumbent
from ..options import n_jobs_option, option, time_limit_option
from ..workers import n_workers, no_time_for_workers
from ..result import Status
from ..stopping import Deadline, SearchStopped
from .opened_walk import opened_fits
from .revolving_door import swaps

#: swaps between two rebuilds of the base matrix from scratch (bounds floating-point drift)
REBUILD_EVERY = 1000
#: ``incumbent="auto"`` runs LS* first above this many subsets, else the alpha-start (2 QPs). Ionosphere poly5 fit
#: B = 8 (8 chunks of 1,000): 0.081 ms per subset against the chunks' own best, 0.062 against the alpha-start's
#: value, 0.045 against LS*'s (which took 1.2 s: the time of about 27,000 subsets)
AUTO_LS_FROM = 100_000
#: default chunk length: about C(n, B) / TARGET_CHUNKS, clipped to [MIN_CHUNK, MAX_CHUNK]
TARGET_CHUNKS, MIN_CHUNK, MAX_CHUNK = 64, 64, 1000
#: rank ranges, spread evenly over the order, that :func:`estimate_seconds` walks
SAMPLE_RANGES = 8


def gram_walk(instance, start: int, stop: int, rebuild_every: int = REBUILD_EVERY):
    """Yield (subset, K, rebuilt) for ranks start..stop-1 of R(n, B), K updated by swaps.

    The base matrix is built for the first subset and after every ``rebuild_every`` swaps
    (``rebuilt`` is then True); otherwise one ``Kernel.swap``. K is one buffer, overwritten at
    every step: copy it to keep it.
    """
    X, kern = instance.X, instance.kernel
    base = K = None
    since = 0
    for move, subset in swaps(instance.n, instance.B, start, stop):
        rebuilt = move is None or since >= rebuild_every
        if rebuilt:
            base, since = kern.base(X, subset), 0
        else:
            kern.swap(base, X, *move)
            since += 1
        K = kern.apply(base, out=K)
        yield subset, K, rebuilt


def _matrix_fits(oracle, start: int, stop: int, worse_than):
    """Yield (rank, subset, fit, rebuilt, 0) for ranks start..stop-1, each subset solved on its kernel matrix
    warm-started from the previous subset's alpha (the shape of :func:`.opened_walk.opened_fits`)."""
    alpha = None
    for rank, (subset, K, rebuilt) in enumerate(gram_walk(oracle.instance, start, stop, REBUILD_EVERY), start):
        fit = oracle.solve(subset, warm_start=alpha, K=K, worse_than=worse_than())
        alpha = fit.alpha
        yield rank, subset, fit, rebuilt, 0


@dataclass
class _Chunk:
    """What a worker returns for ranks start..start+n_done-1: its best subset and counters."""

    start: int
    n_done: int = 0
    n_rebuilds: int = 0
    n_stopped_early: int = 0
    best_rank: int | None = None
    best_value: float | None = None
    best_subset: tuple | None = None
    best_alpha: np.ndarray | None = None
    hit_bound: bool = False
    timed_out: bool = False


def _enumerate_chunk(instance, start: int, stop: int, backend: str, tol: float, deadline=None,
                     seed: float | None = None) -> _Chunk:
    """Solve the alpha-subproblem of every subset of ranks start..stop-1, warm-starting SMO.

    Every solve stops early once proven worse than the better of ``seed`` (the run's incumbent value when the
    chunks were dealt) and the chunk's best so far. Stops after the first subset at the trivial bound (paper
    sense: optimal) or past ``deadline`` (a :class:`~minlp_fs.stopping.Deadline`, a wall-clock instant valid
    in any process); at least one subset is always solved.
    """
    chunk = _Chunk(start)
    oracle = AlphaSubproblem(instance, backend=backend, tol=tol, cache=False)

    def worse_than():
        best = chunk.best_value
        return seed if best is None or (seed is not None and instance.better(seed, best)) else best

    if Opening.applies(oracle):   # the same Fits, most of them without a kernel matrix (module docstring)
        fits = opened_fits(Opening(oracle), start, stop, worse_than, REBUILD_EVERY)
    else:
        fits = _matrix_fits(oracle, start, stop, worse_than)
    with one_blas_thread():
        for rank, subset, fit, rebuilt, decided in fits:
            chunk.n_done += decided   # stopped early by their opening steps, never built
            chunk.n_stopped_early += decided
            if fit is not None:
                chunk.n_done += 1
                chunk.n_rebuilds += rebuilt
                if not fit.exact:  # proven worse than the chunk's incumbent: its solve stopped early
                    chunk.n_stopped_early += 1
                elif chunk.best_value is None or instance.better(fit.value, chunk.best_value):
                    chunk.best_rank, chunk.best_value = rank, fit.value
                    chunk.best_subset, chunk.best_alpha = subset, fit.alpha
                if fit.exact and instance.proves_optimal(fit.value):
                    chunk.hit_bound = True
                    break
            if deadline is not None and deadline.expired() and rank + 1 < stop:
                chunk.timed_out = True
                break
    return chunk


class Estimate(NamedTuple):
    """:func:`estimate_seconds`' answer: enumeration's estimated time, the subsets walked to measure it, and the best
    subset the walk solved exactly (its value, subset and alpha; all None if every solve stopped early)."""

    seconds: float
    walked: int
    value: float | None = None
    subset: tuple | None = None
    alpha: np.ndarray | None = None


def estimate_seconds(instance, seed: float | None, tol: float = DEFAULT_TOL, budget_s: float = 1.0) -> Estimate:
    """Seconds one process would take to enumerate all C(n, B) subsets with every solve stopped early against
    ``seed``: C(n, B) times the wall time per subset over SAMPLE_RANGES disjoint rank ranges of at most one chunk
    each, spread evenly over the revolving-door order (the first subset of each from a cold start and a base built
    from scratch, as every chunk's), each walked for at most budget_s / SAMPLE_RANGES seconds. The best subset the
    walk solved exactly comes with it (a solve not stopped early against ``seed`` may beat it): a caller can offer
    it as an incumbent."""
    total = math.comb(instance.n, instance.B)
    size = default_chunk_size(total)
    starts = sorted({total * k // SAMPLE_RANGES for k in range(SAMPLE_RANGES)})
    done, spent, best = 0, 0.0, None
    with one_blas_thread():
        for a, b in zip(starts, [*starts[1:], total]):   # disjoint: a few subsets cover all of a small order
            t0 = time.perf_counter()
            chunk = _enumerate_chunk(instance, a, min(b, a + size), "smo", tol, Deadline(budget_s / SAMPLE_RANGES),
                                     seed)
            spent += time.perf_counter() - t0
            done += chunk.n_done
            if chunk.best_value is not None and (best is None or instance.better(chunk.best_value, best.best_value)):
                best = chunk
    if best is None:
        return Estimate(total * spent / done, done)
    return Estimate(total * spent / done, done, best.best_value, tuple(best.best_subset), best.best_alpha)


def default_chunk_size(n_subsets: int) -> int:
    """Chunk length for C(n, B) subsets: depends on the count only, so results do not depend on n_jobs."""
    return min(MAX_CHUNK, max(MIN_CHUNK, math.ceil(n_subsets / TARGET_CHUNKS)))


@dataclass
class Enumeration(Method):
    """Certified optimum over all C(n, B) subsets (appendix app:cert), swap-updated and warm-started.

    ``backend="libsvm"`` re-fits every subset cold with libsvm (the paper's solver) for reference.
    An ``oracle`` passed to :meth:`solve` lends its KKT tolerance; solves run in worker processes
    with their own solver. A ``start`` (a subset, or a start by name) and the ``incumbent`` heuristic are
    solved first, and every solve stops early once proven worse than the better of their value and its
    chunk's best (SMO backend). The optimum is the same whatever they are; among subsets tied with theirs
    to within PRUNE_RTOL (relative), theirs is the one reported.
    """

    n_jobs: int = n_jobs_option()
    progress: bool = option(False, bool, doc="show a progress bar")
    time_limit: float | None = time_limit_option()
    backend: str = option("smo", str, choices=BACKENDS, doc="alpha-subproblem solver (libsvm: the paper's, cold)")
    chunk_size: int | None = option(None, int, low=1, none=True,
                                    doc="subsets per chunk (None: about C(n, B) / 64, within [64, 1000])")
    incumbent: str = option("auto", str,
                            doc="heuristic run first, whose value every solve stops early against ('none': only the "
                                f"start; 'auto': ls* above {AUTO_LS_FROM:,} subsets, else alpha-start)")

    name = "enumerate"
    uses_start = True
    certifies = True

    def check(self) -> None:
        super().check()
        check_incumbent("enumerate", self.incumbent, also=("none", "auto"))

    def heuristic(self, n_subsets: int) -> str:
        """The incumbent heuristic for C(n, B) = ``n_subsets`` (``auto``: see AUTO_LS_FROM)."""
        if self.incumbent != "auto":
            return self.incumbent
        return "ls*" if n_subsets > AUTO_LS_FROM else "alpha-start"

    def _search(self, run) -> Status:
        instance = run.instance
        run.keep_empty_interrupt = True
        total = math.comb(instance.n, instance.B)
        size = self.chunk_size or default_chunk_size(total)
        ranges = ((a, min(a + size, total)) for a in range(0, total, size))  # lazy: C(n,B) may be huge
        tol = run.oracle.tol if run.has_oracle else DEFAULT_TOL
        deadline = run.deadline if self.time_limit is not None else None
        inc = run.incumbent
        heuristic = self.heuristic(total)
        try:
            run.seed_incumbent(heuristic, tol)
        finally:
            run.n_svm_solves = run.seed_solves
        seed = inc.value   # fixed before the chunks are dealt: the same stops for any n_jobs
        tasks = (delayed(_enumerate_chunk)(instance, a, b, self.backend, tol, deadline, seed)
                 for a, b in ranges)
        in_process = (self.n_jobs != 1 and total > size and not inc.proves_optimal
                      and no_time_for_workers(deadline))   # workers would start after the deadline
        if inc.proves_optimal:   # the seed is at the trivial bound: nothing to enumerate
            chunks = (chunk for chunk in ())
        elif self.n_jobs == 1 or total <= size or in_process:
            chunks = (f(*args, **kw) for f, args, kw in tasks)
        else:  # processes by default (loky); a joblib.parallel_config(backend="dask") reaches a cluster
            chunks = Parallel(n_jobs=n_workers(self.n_jobs), return_as="generator")(tasks)

        status, n_done, n_rebuilds, n_chunks, best_rank, hit = Status.OPTIMAL, 0, 0, 0, None, inc.proves_optimal
        n_early = 0
        bar = tqdm(total=total, disable=not self.progress, unit="subset", desc=f"enumerate {instance.name}")
        try:
            for chunk in chunks:
                n_done += chunk.n_done
                n_rebuilds += chunk.n_rebuilds
                n_early += chunk.n_stopped_early
                n_chunks += 1
                bar.update(chunk.n_done)
                if chunk.best_value is not None and \
                        inc.offer(chunk.best_value, chunk.best_subset, chunk.best_alpha, f"rank {chunk.best_rank}"):
                    best_rank = chunk.best_rank
                if chunk.hit_bound:
                    hit = True
                    break
                if chunk.timed_out:
                    status = Status.TIME_LIMIT
                    break
        except (KeyboardInterrupt, SearchStopped) as stop:  # Ctrl-C, or the callback stopped the run
            status = getattr(stop, "status", Status.INTERRUPTED)
        finally:
            bar.close()
            with warnings.catch_warnings():  # joblib warns when it cancels the chunks we no longer need
                warnings.filterwarnings("ignore", message=".*tasks which were still being processed")
                chunks.close()

        complete = status == Status.OPTIMAL
        info = {"n_subsets": total, "n_done": n_done, "chunk_size": size, "n_chunks": n_chunks,
                "n_swaps": n_done - n_rebuilds, "n_rebuilds": n_rebuilds, "n_stopped_early": n_early,
                "argmin_rank": best_rank, "incumbent": heuristic, "incumbent_svm_solves": run.seed_solves,
                "stopped_at_trivial_bound": hit, "backend": self.backend, "n_jobs": self.n_jobs,
                "in_process": in_process}
        run.info.update(info)
        run.message = "" if complete else f"{status}: {n_done} of {total} subsets enumerated"
        run.n_svm_solves, run.certified = run.seed_solves + n_done, complete
        # unfinished: the paper sense keeps the trivial bound (Remark 1; what bnb reports there); the fit sense none
        run.bound = inc.value if complete and not hit else \
            (instance.trivial_bound if not complete and instance.sense == "paper" else None)
        return status
