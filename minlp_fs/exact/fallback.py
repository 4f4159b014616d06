"""bnb's fallback to enumeration (``BranchAndBound(fallback_share=...)``, what ``certify --method auto`` runs).

Where bnb's bounds prune, it certifies orders of magnitude faster than enumeration (Parkinsons poly3 B = 11: 6,465
of 705,432 subsets); where they do not, it may not finish while enumeration takes minutes (the Gaussian kernel's
fit sense on German, m = 1000: bnb stopped at 600 s with gaps of 98-99 % at B = 6-9, where enumeration, at 2.2 ms
per subset, takes 5-48 min; benchmarks/RESULTS.md, certified grid). Which case holds is not known before the
search, so the search hedges:

1. bnb for FIRST_S seconds: the instances where its bounds work finish here, most of them in well under a second.
2. Enumeration's time E is estimated (:func:`~minlp_fs.solvers.enumeration.estimate_seconds`: ESTIMATE_S seconds
   on rank ranges spread over the order, every solve stopped early against bnb's incumbent); the best subset the
   walk solved is offered as the incumbent (paper sense: one at the trivial bound ends the search in step 3).
3. bnb again, started from its incumbent, for ``fallback_share`` x E seconds (a new search: at most FIRST_S of
   step 1's work is done again).
4. Enumeration of every subset (:class:`~minlp_fs.solvers.enumeration.Enumeration`, its own incumbent heuristic
   started from the incumbent) with what is left of the time limit.

So an instance costs at most about FIRST_S + ESTIMATE_S + (1 + share) E, and bnb's time wherever bnb finishes
within share x E. The answer is a certified optimum either way (each phase is an exact method); an unfinished
run reports the tightest bound its phases proved (every one holds for every subset), and stops at the first
phase a Ctrl-C or the time limit ends. The switch depends on the clock: the tree and the solve counts may differ
from run to run, the optimum does not. The result's trace holds each phase's answer as the phase ends, and
``info["phases"]`` each phase's method, status, time and solves.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..alpha import DEFAULT_TOL
from ..result import Status
from ..solvers.enumeration import Enumeration, estimate_seconds

#: seconds of the first bnb search (step 1)
FIRST_S = 2.0
#: seconds spent estimating enumeration's time (step 2)
ESTIMATE_S = 1.0


def _left(deadline, seconds: float | None) -> float | None:
    """``seconds`` capped by what is left of ``deadline`` (None: no limit either way)."""
    left = deadline.remaining()
    if left is None:
        return seconds
    return max(left, 1e-3) if seconds is None else max(min(seconds, left), 1e-3)


def search_with_fallback(method, run) -> Status:
    """The steps of the module docstring for a :class:`~minlp_fs.exact.bnb.BranchAndBound` with ``fallback_share``."""
    inst, inc, deadline = run.instance, run.incumbent, run.deadline
    oracle = run.oracle if run.has_oracle else None   # lends its KKT tolerance to every phase
    tol = DEFAULT_TOL if oracle is None else oracle.tol
    phases, bound = [], None
    run.info.update(phases=phases)

    def phase(name, solver, start, seconds=None):
        """Run one exact method; offer its answer, keep its bound if it is the tightest; its Result."""
        nonlocal bound
        res = replace(solver, time_limit=_left(deadline, seconds)).solve(inst, start=start, oracle=oracle)
        if res.objective is not None:
            inc.offer(res.objective, res.features, res.alpha, name)
        if res.bound is not None and (bound is None or inst.score(res.bound) > inst.score(bound)):
            bound = run.bound = res.bound   # run.bound: what a Ctrl-C between the phases returns
        phases.append({"method": name, "status": str(res.status), "certified": res.certified,
                       "wall_time_s": res.wall_time_s, "svm_solves": res.n_svm_solves, "objective": res.objective})
        run.n_svm_solves = (run.n_svm_solves or 0) + res.n_svm_solves
        return res

    def start():   # the later phases start from the incumbent (the user's start while there is none)
        return run.requested_start if inc.subset is None else list(inc.subset)

    def done(res) -> bool:   # complete (optimal, or within bnb's gap_tol), stopped by Ctrl-C, or out of time
        return res.status in (Status.OPTIMAL, Status.INTERRUPTED) or deadline.expired()

    bnb = replace(method, fallback_share=None)
    res = phase("bnb", bnb, run.requested_start, FIRST_S)
    if not done(res):
        estimate = estimate_seconds(inst, inc.value, tol, _left(deadline, ESTIMATE_S))
        run.n_svm_solves += estimate.walked
        run.info.update(enumeration_estimate_s=estimate.seconds, enumeration_subsets=math.comb(inst.n, inst.B))
        if estimate.value is not None:
            inc.offer(estimate.value, estimate.subset, estimate.alpha, "estimate")
        if not deadline.expired():
            again = bnb if inc.subset is None else replace(bnb, incumbent="none")   # the incumbent is its start
            res = phase("bnb", again, start(), method.fallback_share * estimate.seconds)
        if not done(res):
            res = phase("enumerate", Enumeration(n_jobs=method.n_jobs, progress=method.progress), start())
    complete = res.status == Status.OPTIMAL
    # certified: the incumbent (the phase's answer, or an earlier phase's equal to it within rounding) is the bound
    run.bound = inc.value if res.certified else res.bound if complete else bound
    run.certified, run.message = res.certified, res.message
    run.info.update(completed_by=phases[-1]["method"] if complete else None)
    return res.status if res.status in (Status.OPTIMAL, Status.INTERRUPTED) else Status.TIME_LIMIT
