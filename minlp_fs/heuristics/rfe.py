"""Recursive feature elimination scored by the objective f (paper section 5.1, after Guyon et al. 2002).

From all n features, discard one feature at a time until B remain: the feature whose removal
yields the best f in the instance's sense (the paper's: the smallest f of problem (4)).

* ``RFE1`` ranks the removals with alpha fixed at the exact SVM solution of the current subset
  (one SVM fit per step; the kernel RFE of Guyon et al.): it is one step of the fixed-alpha greedy
  of :mod:`.greedy`, re-anchored at a fresh alpha after every removal.
* ``RFE2`` re-fits the SVM for every candidate removal (|S| fits per step, on a thread pool with
  ``n_jobs``, each warm-started from the current alpha) and keeps the removal of best g (ties: the
  smallest feature index), by :func:`~.refit.best_refit`: a fit proven worse than the best of the
  previous chunks stops early, which changes no decision.

Neither takes a start. ``info["elimination_order"]`` lists the removed features, first removed
first (a scikit-learn ``ranking_`` follows from it). Every fixed-alpha ranking checks the time limit
(:class:`~.screening.FixedAlpha` with the run's deadline). If the time limit or Ctrl-C stops the
elimination early, the remaining removals are made at the current alpha in one ranking pass
(:func:`~.greedy.ranked_removal`: one evaluation per kept feature, so the finish stays short even
on 10^5 features), so a feasible B-subset is always returned (status ``time_limit`` / ``interrupted``).
"""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from ..blas import on_one_blas_thread
from ..methods import Method
from ..options import n_jobs_option, time_limit_option
from ..result import Status
from ..stopping import SearchStopped
from .greedy import ranked_removal
from .refit import best_refit
from .screening import FixedAlpha


@dataclass
class _RFE(Method):
    time_limit: float | None = time_limit_option()

    @abstractmethod
    def _eliminate(self, run, kept, fit):
        """(feature to remove, exact fit of the subset without it)."""

    @on_one_blas_thread
    def _search(self, run):
        instance, oracle = run.instance, run.oracle
        kept, order = list(range(instance.n)), []
        fit = oracle.solve(kept)
        try:
            while len(kept) > instance.B:
                run.deadline.check()
                j, fit = self._eliminate(run, kept, fit)
                kept.remove(j)
                order.append(j)
        except (SearchStopped, KeyboardInterrupt):  # stopped early: the remaining removals at the current alpha
            n_rest = len(kept) - instance.B
            step = ranked_removal(FixedAlpha(instance, fit.alpha), instance.B, start=kept)
            fit = oracle.solve(step.subset, warm_start=fit.alpha)
            self._finish(run, fit, order + step.order, n_rest)
            raise
        self._finish(run, fit, order, 0)
        return Status.CONVERGED

    def _finish(self, run, fit, order, n_rest: int) -> None:
        run.incumbent.offer(fit.value, fit.subset, fit.alpha, source=self.name)
        run.info.update(elimination_order=order, finished_at_fixed_alpha=n_rest)


@dataclass
class RFE1(_RFE):
    """RFE with the removals ranked at the current subset's alpha (one SVM fit per step)."""

    name = "rfe1"

    def _eliminate(self, run, kept, fit):
        j = ranked_removal(FixedAlpha(run.instance, fit.alpha, run.deadline), len(kept) - 1, start=kept).order[0]
        rest = [e for e in kept if e != j]
        return j, run.oracle.solve(rest, warm_start=fit.alpha)


@dataclass
class RFE2(_RFE):
    """RFE with every candidate removal re-fitted exactly (|S| SVM fits per step, ``n_jobs`` threads)."""

    name = "rfe2"
    n_jobs: int = n_jobs_option()

    def _eliminate(self, run, kept, fit):
        instance, oracle = run.instance, run.oracle
        removals = _Removals(kept)
        screen = FixedAlpha(instance, fit.alpha, run.deadline)

        def scores(cands):  # cands: a _Removals, kept - {j} for each j of its kept, in that order
            return screen.removals(cands.kept).values(cands.kept).tolist()

        best, timed_out = best_refit(instance, oracle, centre=fit, candidates=removals, scores=scores, fraction=1.0,
                                     n_jobs=self.n_jobs, deadline=run.deadline,
                                     neighbours=oracle.neighbour_grams(kept))
        if timed_out:  # the step's re-fits were cut: stop here (the finish ranks at the current alpha)
            run.deadline.check()
        return next(j for j in kept if j not in best.subset), best


class _Removals(Sequence):
    """The subsets kept - {j}, j in kept, built on access (a list of them is O(|kept|^2) memory)."""

    def __init__(self, kept):
        self.kept = tuple(kept)

    def __len__(self):
        return len(self.kept)

    def __getitem__(self, t):
        t = range(len(self.kept))[t]  # IndexError past the end (iteration stops there), negatives count back
        return self.kept[:t] + self.kept[t + 1:]
