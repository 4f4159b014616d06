"""ACSO and ACSO*: alternating convex-submodular optimisation (paper section 4.3, Algorithms 3 and 4).

Alternate the two subproblems of problem (4): at fixed beta the convex SVM dual (3) gives alpha^k
(exact, :class:`~minlp_fs.alpha.AlphaSubproblem`); at fixed alpha^k the beta-subproblem (5) is
min F(S), |S| = B, i.e. max H(R), |R| <= n - B (problem (11)), solved by Minoux's lazy greedy
(:mod:`.greedy`; H monotone submodular for polynomial kernels, Proposition 2).

* ``ACSO`` (Algorithm 3): beta~ = greedy(alpha*); refit; stop at the first non-improving step.
* ``ACSO*`` (Algorithm 4): at the centre's alpha^k, the greedy subset seeds a local search *at
  fixed alpha^k* (:func:`fixed_alpha_local_search`: best-improvement single swaps scored by
  f(alpha^k, .)); the best ``pool_size`` (#SolPool, default 100) distinct subsets it saw are
  re-fitted exactly unless already in the TabuList (on ``n_jobs`` threads, warm-started from
  alpha^k), added to the TabuList and the ExploredSolsList, and offered to the incumbent; the next
  centre is the best of the ExploredSolsList (removed from it). Stop after ``opt_window``
  (OptWindow, default 10) iterations in a row without improving the incumbent, when the
  ExploredSolsList is empty, at ``max_iter`` iterations or at ``time_limit`` seconds (checked
  while the alpha-start is built, between iterations and, within one, every few hundred fixed-alpha
  evaluations of the greedy and the pool search, and between chunks of re-fits of one fit per
  worker; ``info["stopped_by"]`` says which rule stopped the run, :class:`StoppedBy`). Each
  re-fit stops early once duality proves it worse than a reference no better than the incumbent
  (:meth:`ACSOStar._reference`); such a fit is finished only if it reaches the top of the
  ExploredSolsList: fewer SMO steps, the same decisions (:meth:`ACSOStar._pop_centre`). The paper's
  defaults (#SolPool = 100, OptWindow = 10) come from its parameter study (appendix). The start
  subset is put in the TabuList (it was fitted already).

Guarantees. In the paper's sense the greedy is a (1 - 1/e)-approximation of max H at alpha^k, and
g(beta~) <= f(alpha^k, beta~) bounds the refit from above. In the fit sense (maximise g) the step
maximises f(alpha^k, .), an *upper* bound of g, by the plain greedy (greedy minimisation of the
submodular H: no approximation guarantee, no laziness) — there ACSO/ACSO* are heuristics without
guarantee beyond the monotone incumbent (comparisons use ``instance.better``/``instance.score``).
For the Gaussian kernel F is neither sub- nor supermodular (appendix counterexample): both methods
refuse it unless ``allow_nonsubmodular=True``, which runs the plain greedy as a heuristic.

Both stop at once, in the paper sense, when a fit attains the trivial bound (globally optimal,
Remark 1; checked after every chunk of re-fits).

Deterministic: no randomness; every tie is broken by feature index (or subset tuple); ``n_jobs``
does not change the result. ``n_svm_solves`` includes the solves of the default alpha-start, not those of
the fits a chunk of n_jobs solved beside the first fit at the trivial bound and dropped
(``info["discarded_svm_solves"]``).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from enum import Enum

from ..alpha.oracle import PRUNE_RTOL
from ..blas import on_one_blas_thread
from ..errors import CapabilityError
from ..methods import Method
from ..options import n_jobs_option, option, time_limit_option
from ..result import Status
from ..stopping import SearchStopped
from ..workers import cpu_count
from .greedy import COUNTEREXAMPLE, greedy_step, uses_lazy
from .refit import CHUNK, refit
from .screening import FixedAlpha


class StoppedBy(str, Enum):
    """Why ACSO/ACSO* stopped (``info["stopped_by"]``), finer than the Result's status."""

    NO_IMPROVEMENT = "no_improvement"   # ACSO: the greedy step did not improve (Algorithm 3)
    OPT_WINDOW = "opt_window"           # ACSO*: OptWindow iterations without improvement
    EXHAUSTED = "exhausted"             # ACSO*: the ExploredSolsList is empty
    MAX_ITER = "max_iter"
    TRIVIAL_BOUND = "trivial_bound"     # paper sense: the incumbent is optimal (Remark 1)
    TIME_LIMIT = "time_limit"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    @property
    def status(self) -> Status:
        return Status(self.value) if self.value in ("time_limit", "interrupted") else Status.CONVERGED


def fixed_alpha_local_search(fixed, start, pool_size: int = 100, sign: float | None = None) -> tuple:
    """LS over N1 at fixed alpha: best-improvement swaps on sign * f(alpha_bar, S) until none improves.

    Returns (pool, final subset): the best ``pool_size`` distinct subsets seen (start, every scored
    neighbour), best first, ranked by (sign * f(alpha_bar, S), S). Each subset keeps the score of its
    first evaluation, so scores are a function of the subset and the strict descent cannot cycle.
    """
    sign = fixed.instance.sign if sign is None else float(sign)
    current = tuple(sorted(start))
    seen = {current: sign * fixed.value(current)}
    while True:
        best = None
        for (j_out, j_in), value in fixed.swap_values(current).items():
            subset = tuple(sorted((set(current) - {j_out}) | {j_in}))
            score = seen.setdefault(subset, sign * value)
            if best is None or (score, j_out, j_in) < best[0]:
                best = ((score, j_out, j_in), subset)
        if best is None or not best[0][0] < seen[current]:
            break
        current = best[1]
    pool = sorted(seen, key=lambda s: (seen[s], s))[:pool_size]
    return pool, current


def _check_kernel(method: str, instance, allow: bool) -> None:
    if not instance.kernel.submodular and not allow:
        raise CapabilityError(f"{method} needs a polynomial kernel: its beta-step is the submodular "
                              f"maximisation of Proposition 2, and {COUNTEREXAMPLE}. Use ls/ls* for "
                              f"kernel {instance.kernel.name!r}, or pass allow_nonsubmodular=True to run "
                              f"{method} with the plain greedy as a heuristic without guarantee")


@dataclass
class ACSO(Method):
    """Algorithm 3: greedy beta-step at alpha*, exact refit, stop at the first non-improvement."""

    name = "acso"
    uses_start = True
    time_limit: float | None = time_limit_option()
    max_iter: int | None = option(None, int, low=1, none=True, doc="most iterations (None: no limit)")
    allow_nonsubmodular: bool = option(False, bool, doc="run on a Gaussian kernel with the plain greedy, "
                                                         "as a heuristic without guarantee")

    @on_one_blas_thread
    def _search(self, run):
        _check_kernel(self.name, run.instance, self.allow_nonsubmodular)
        start = run.oracle.solve(run.start())
        run.incumbent.offer(start.value, start.subset, start.alpha, source="start")
        run.info.update(stopped_by=None, greedy="lazy" if uses_lazy(run.instance.kernel, run.instance.sign)
                        else "plain", iterations=0, n_evaluations=0)
        try:
            stopped_by = self._iterate(run, start)
        except SearchStopped as stop:
            run.info["stopped_by"] = StoppedBy(stop.status.value)
            raise
        except KeyboardInterrupt:
            run.info["stopped_by"] = StoppedBy.INTERRUPTED
            raise
        run.info["stopped_by"] = stopped_by
        return stopped_by.status

    def _stop(self, run, iteration):
        """Why to stop before an iteration (trivial bound, max_iter; past the deadline: SearchStopped), else None."""
        if run.incumbent.proves_optimal:
            return StoppedBy.TRIVIAL_BOUND
        run.deadline.check()
        if self.max_iter is not None and iteration >= self.max_iter:
            return StoppedBy.MAX_ITER
        return None

    def _iterate(self, run, current) -> StoppedBy:
        instance, info = run.instance, run.info
        while not (limit := self._stop(run, info["iterations"])):
            step = greedy_step(FixedAlpha(instance, current.alpha, run.deadline), instance.B)
            info["iterations"] += 1
            info["n_evaluations"] += step.n_evals
            fit = run.oracle.solve(step.subset, warm_start=current.alpha)
            if not instance.better(fit.value, current.value):
                return StoppedBy.NO_IMPROVEMENT
            current = fit
            run.incumbent.offer(fit.value, fit.subset, fit.alpha, source="greedy")
        return limit


@dataclass
class ACSOStar(ACSO):
    """Algorithm 4: greedy + fixed-alpha LS pool, exact refits, TabuList, ExploredSolsList, OptWindow."""

    name = "acso*"
    pool_size: int = option(100, int, low=1, doc="subsets of the fixed-alpha LS re-fitted per iteration (#SolPool)")
    opt_window: int = option(10, int, low=1, doc="iterations without improvement before stopping (OptWindow)")
    n_jobs: int = n_jobs_option()

    def _refit(self, run, subsets, alpha, reference: float | None = None) -> tuple[list, float | None]:
        """Fits in the given order, in chunks of one per worker (the same fits as one batch: each is
        warm-started from ``alpha``); stops after a chunk past the deadline or with an exact fit at the
        trivial bound (paper sense). With ``reference`` (a value I no better than the incumbent, the same
        for the whole call), each fit may stop early once proven worse than I. Returns (fits, key): sign * g > key
        for every fit stopped early (the oracle's threshold I + sign * PRUNE_RTOL max(|I|, 1), times sign)."""
        chunk = self.n_jobs if self.n_jobs > 0 else cpu_count()
        key = None if reference is None else run.instance.score(reference) + PRUNE_RTOL * max(abs(reference), 1.0)
        fits = []
        for lo in range(0, len(subsets), chunk):
            if fits and run.deadline.expired():
                break
            new = refit(run.oracle, subsets[lo:lo + chunk], warm_start=alpha, n_jobs=self.n_jobs,
                        worse_than=reference)
            optimal = [i for i, fit in enumerate(new) if fit.exact and run.instance.proves_optimal(fit.value)]
            if optimal:  # cut after the first: the same fits for any n_jobs (earlier chunks were checked); the
                # chunk's later fits were solved beside it and are dropped, their solves not counted (Run.result)
                run.info["discarded_svm_solves"] = run.info.get("discarded_svm_solves", 0) + len(new) - optimal[0] - 1
                return fits + new[:optimal[0] + 1], key
            fits += new
        return fits, key

    def _pop_centre(self, run, explored: list, fits: dict):
        """The best fit of the ExploredSolsList, removed from it, solved exactly.

        A fit stopped early by :meth:`_refit` is proven worse than its iteration's reference I
        (:meth:`_reference`, no better than the incumbent; sign * g > sign * I + margin, the oracle's
        threshold t): it enters the heap with the key sign * t, a
        strict lower bound of its score sign * g. Popping such an entry solves it exactly, warm-started
        from the same alpha as before with no early stop (the very solve Algorithm 4 would have made,
        :meth:`~minlp_fs.alpha.AlphaSubproblem.solve` without ``worse_than``), and pushes it back with
        its exact score. The decision is unchanged: when an exact entry (s*, S*) is popped, every
        other entry's key is >= (s*, S*), and a bound entry's true key (sign * g, S) is > its key
        (sign * t, S), so (s*, S*) is the minimum of the exact keys of every subset in the list, which
        is the entry Algorithm 4 pops. Fits proven worse and never popped are never solved to the end.
        A fit that completes with the early stop armed is the solve without it, step for step (the
        early stop does not change SMO's path: :mod:`minlp_fs.alpha.smo`), so its alpha, the next
        centre's if it is popped, is bit for bit Algorithm 4's.

        Most re-fits of a pool are worse than the incumbent and never popped: on German poly3 B = 10
        (m = 1000, degenerate duals of 10^5-10^6 SMO steps) the weak-duality bound proves most of them
        worse within a few thousand steps.
        """
        instance = run.instance
        while True:
            run.deadline.check()   # stopped fits share a key: finishing them one after another is checked too
            _, subset = heapq.heappop(explored)
            fit, warm = fits.pop(subset)
            if fit.exact:
                return fit
            fit = run.oracle.solve(subset, warm_start=warm)
            run.info["n_finished"] += 1
            fits[subset] = (fit, warm)
            heapq.heappush(explored, (instance.score(fit.value), subset))

    def _reference(self, run, explored: list, stale: int) -> float | None:
        """The value the re-fits of an iteration stop early against (None: solved to the end).

        Any reference gives Algorithm 4's decisions (:meth:`_pop_centre`) as long as it is no better than
        the incumbent (a fit proven worse then cannot improve it); it only sets which solves stop early
        and how many stopped fits are finished later. In the iteration that ends the run unless it improves
        the incumbent (OptWindow - 1 iterations without improvement so far) that is the incumbent: nothing
        else is made of a fit proven worse. Otherwise it is the OptWindow-th smallest key of the
        ExploredSolsList (once it holds that many entries; every entry's key is at least the
        incumbent's score): a fit proven worse enters with a key above those OptWindow entries, so it
        is popped, and finished, only after OptWindow other centres, each one iteration. The incumbent
        there instead would give every stopped fit a key below those of the exact entries (all worse
        than the incumbent), and the next pops would finish them one by one (on German poly2 B = 12:
        1185 solves instead of 861).
        """
        incumbent = run.incumbent.value
        if stale == self.opt_window - 1:
            return incumbent
        if len(explored) < self.opt_window:
            return None
        kth = heapq.nsmallest(self.opt_window, explored)[-1][0]
        return run.instance.sign * max(kth, run.instance.score(incumbent))

    def _parts(self, subsets: list, explored: list, stale: int):
        """(start, part): the parts an iteration's re-fits (the pool's best-screened first) are made in, each
        against :meth:`_reference` taken anew before it. While the ExploredSolsList holds fewer than
        OptWindow entries there is no reference: the next part is as many fits as it lacks, solved to the
        end; after that, parts of CHUNK fits, each part's reference at least as tight as the one before, as
        the exact keys of the previous parts enter the list. Algorithm 4's decisions do not depend on the
        references (any no better than the incumbent, :meth:`_pop_centre`), nor the parts on ``n_jobs``.
        With one reference for the whole pool, every re-fit of the first iteration ran to the end (on
        German poly3 B = 7: 101 solves, 41 of the run's 46 CPU s), and a pool's later re-fits stopped
        only against the keys of the previous iterations. A generator: ``explored`` is read as it grows."""
        lo = 0
        while lo < len(subsets):
            lacking = 0 if stale == self.opt_window - 1 else self.opt_window - len(explored)
            part = subsets[lo:lo + (lacking if lacking > 0 else CHUNK)]
            yield lo, part
            lo += len(part)

    def _iterate(self, run, centre) -> StoppedBy:
        instance, info, incumbent = run.instance, run.info, run.incumbent
        tabu, explored, fits = {centre.subset}, [], {}
        stale = 0
        info["n_refits"] = 0
        info["n_finished"] = 0  # fits stopped early, then finished as they reached the top of the ExploredSolsList
        while not (limit := self._stop(run, info["iterations"])):
            fixed = FixedAlpha(instance, centre.alpha, run.deadline)
            step = greedy_step(fixed, instance.B)
            pool, _ = fixed_alpha_local_search(fixed, step.subset, self.pool_size)
            new = [s for s in pool if s not in tabu]
            improved = cut = False
            for lo, part in self._parts(new, explored, stale):
                if lo and run.deadline.expired():  # between the parts as between two chunks of _refit
                    cut = True
                    break
                refits, proven_key = self._refit(run, part, centre.alpha, self._reference(run, explored, stale))
                for fit in refits:
                    tabu.add(fit.subset)
                    info["n_refits"] = len(tabu) - 1
                    fits[fit.subset] = (fit, centre.alpha)
                    if fit.exact:
                        heapq.heappush(explored, (instance.score(fit.value), fit.subset))
                        source = "greedy" if fit.subset == step.subset else "pool"
                        improved |= incumbent.offer(fit.value, fit.subset, fit.alpha, source=source)
                    else:  # proven worse than the reference, no better than the incumbent: no offer can win;
                        # its key is a bound (_pop_centre)
                        heapq.heappush(explored, (proven_key, fit.subset))
                if len(refits) < len(part) or incumbent.proves_optimal:  # _refit's own stops (a fit at the trivial
                    cut = not incumbent.proves_optimal                     # bound, the deadline), or a part ending
                    break                                                  # with a fit at the trivial bound
            info["iterations"] += 1
            info["n_evaluations"] += step.n_evals
            if cut:  # the deadline cut the pool: a time limit, not OptWindow (its re-fits were not all made)
                raise SearchStopped(Status.TIME_LIMIT)
            stale = 0 if improved else stale + 1
            if stale >= self.opt_window:
                return StoppedBy.OPT_WINDOW
            if not explored:
                return StoppedBy.EXHAUSTED
            centre = self._pop_centre(run, explored, fits)
        return limit
