"""The screen -> re-fit step: exact re-fits of independent candidate subsets, in parallel and deterministic.

Each candidate's alpha-subproblem is an independent convex QP (paper sections 3.1 and 4.3). They are
solved on a thread pool (both backends release the GIL) with BLAS limited to one thread per worker,
so cores are not oversubscribed. Every candidate is warm-started from the same given alpha, and
results come back in input order, so the outcome is identical for any ``n_jobs``.
:func:`best_refit` keeps the best of such re-fits, stopping early those proven worse (LS, LS*, RFE2).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

from ..alpha.oracle import PRUNE_RTOL
from ..blas import one_blas_thread
from ..workers import n_workers


def refit(oracle, subsets, warm_start=None, n_jobs: int = 1, worse_than: float | None = None,
          neighbours=None) -> list:
    """Exact :class:`~minlp_fs.alpha.Fit` of each subset, in the order given.

    ``n_jobs`` = -1 means one worker per CPU (never more than the CPUs: :func:`~minlp_fs.workers.n_workers`). On Ctrl-C, queued candidates are cancelled.
    ``worse_than``: an incumbent value; a candidate proven worse stops early (``Fit.exact`` False).
    ``neighbours``: the centre's :class:`~minlp_fs.alpha.neighbours.NeighbourGrams` (its single swaps and removals).
    """
    subsets = [tuple(s) for s in subsets]
    workers = n_workers(n_jobs)
    workers = max(1, min(workers, len(subsets)))

    def fit(subset):
        return oracle.solve(subset, warm_start=warm_start, worse_than=worse_than, neighbours=neighbours)

    if workers == 1:  # one worker cannot oversubscribe the cores: no BLAS limit to set (and undo) per call
        return [fit(s) for s in subsets]
    with one_blas_thread():
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            return list(pool.map(fit, subsets))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


#: candidates re-fitted between two checks of the deadline and of the pruning bound
CHUNK = 8


def n_refit(n_candidates: int, fraction: float) -> int:
    """max(1, ceil(fraction * n_candidates)), at most n_candidates."""
    return min(n_candidates, max(1, math.ceil(fraction * n_candidates - 1e-9)))


def best_refit(instance, oracle, centre, candidates: list, scores, fraction: float, n_jobs: int,
               deadline=None, neighbours=None, improving_only: bool = False):
    """The best exact re-fit among the best ``fraction`` of ``candidates`` by their screening ``scores``
    (LS's N1 and N2 steps, RFE2's removals).

    ``scores(candidates)`` gives f(alpha_c, beta) at the centre's alpha_c; it is evaluated only when
    needed. Each re-fit may stop early once duality proves it worse than the best exact value of the
    previous chunks (``AlphaSubproblem.solve``'s ``worse_than``). Since g(beta) <= f(alpha_c, beta)
    (and SMO warm-started from alpha_c only decreases f), the screening value is an optimistic bound
    when g is maximised (fit sense): candidates are then re-fitted best-screened first, and the rest
    skipped once their bound falls below the best exact value found (by more than ``PRUNE_RTOL``).
    In the paper sense no chunk starts after a fit attaining the trivial bound (optimal, Remark 1).
    ``improving_only``: the caller moves only to a candidate strictly better than the centre, so the
    centre's value bounds the early stops and the skips from the first chunk on (a candidate proven
    worse than the centre is never returned; None if all are). None of these changes the outcome.
    Re-fits are warm-started from alpha_c (``neighbours``: the centre's
    :class:`~minlp_fs.alpha.neighbours.NeighbourGrams`), in chunks of ``CHUNK`` (independent of
    ``n_jobs``, so the same re-fits run for any ``n_jobs``; the first three of 1, 2 and 4 candidates,
    so that the reference tightens early) between which ``deadline`` (a
    :class:`~minlp_fs.stopping.Deadline`) is checked.
    An early stop does not change the alpha of a solve that completes (:mod:`minlp_fs.alpha.smo`),
    so the best fit is the same subset and value as without early stops; its alpha too, except where the
    oracle's cache differs: a subset stopped early is not cached as exact, so a later request re-solves it
    from that request's warm start where the run without stops would return the first solve's alpha (in a
    review's 70 small LS* runs: 11 such, the same subsets, values within 1e-11 relative).
    Ties go to the first candidate in the given order. Returns (best fit or None, timed_out).
    """
    k = n_refit(len(candidates), fraction)
    prune = instance.sign < 0 and len(candidates) > CHUNK
    order = list(range(len(candidates)))
    if k < len(candidates) or prune:
        values = scores(candidates)
        order = sorted(order, key=lambda t: instance.score(values[t]))[:k]
    best, timed_out = None, False
    lo = n_chunks = 0
    while lo < len(order):
        if deadline is not None and deadline.expired():
            timed_out = True
            break
        if best is not None and instance.proves_optimal(best[1].value):
            break
        reference = None if best is None else best[1].value
        if improving_only and (reference is None or instance.better(centre.value, reference)):
            reference = centre.value
        if prune and reference is not None and values[order[lo]] < reference - PRUNE_RTOL * abs(reference):
            break
        # chunks of 1, 2, 4, then CHUNK: the best-screened candidates first, each chunk's reference the
        # best exact value before it (German LS* poly3 B = 10: 70.8 CPU s with chunks of CHUNK, whose first
        # chunks of the N2 steps, with no reference, were 134 of 796 solves and 30 s; 41.3 s with chunks of 1)
        chunk = order[lo:lo + min(CHUNK, 1 << n_chunks)]
        lo, n_chunks = lo + len(chunk), n_chunks + 1
        fits = refit(oracle, [candidates[t] for t in chunk], warm_start=centre.alpha, n_jobs=n_jobs,
                     worse_than=reference, neighbours=neighbours)
        for t, fit in zip(chunk, fits):
            if not fit.exact:  # proven worse than the best of the previous chunks: its solve stopped early
                continue
            if best is None or (instance.score(fit.value), t) < (instance.score(best[1].value), best[0]):
                best = (t, fit)
    return (None if best is None else best[1]), timed_out
