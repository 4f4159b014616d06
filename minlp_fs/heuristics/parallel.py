"""Exact re-fits of independent candidate subsets, in parallel and deterministic.

Each candidate's alpha-subproblem is an independent convex QP (paper sections 3.1 and 4.3). They are
solved on a thread pool (both backends release the GIL) with BLAS limited to one thread per worker,
so cores are not oversubscribed. Every candidate is warm-started from the same given alpha, and
results come back in input order, so the outcome is identical for any ``n_jobs``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def _blas() -> ThreadpoolController:
    """Found once: ``threadpool_limits`` rescans the loaded libraries on every call (ms each)."""
    return ThreadpoolController()


def one_blas_thread():
    """Context manager limiting BLAS to one thread (parallelism is across independent solves)."""
    return _blas().limit(limits=1)


def refit(oracle, subsets, warm_start=None, n_jobs: int = 1, worse_than: float | None = None,
          neighbours=None) -> list:
    """Exact :class:`~minlp_fs.alpha.Fit` of each subset, in the order given.

    ``n_jobs`` < 0 means one worker per core. On Ctrl-C, queued candidates are cancelled.
    ``worse_than``: an incumbent value; a candidate proven worse stops early (``Fit.exact`` False).
    ``neighbours``: the centre's :class:`~minlp_fs.alpha.neighbours.NeighbourGrams` (single swaps).
    """
    subsets = [tuple(s) for s in subsets]
    workers = (os.cpu_count() or 1) if n_jobs < 0 else n_jobs
    workers = max(1, min(workers, len(subsets)))

    def fit(subset):
        return oracle.solve(subset, warm_start=warm_start, worse_than=worse_than, neighbours=neighbours)

    with one_blas_thread():
        if workers == 1:
            return [fit(s) for s in subsets]
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            return list(pool.map(fit, subsets))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
