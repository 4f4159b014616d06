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
  between iterations and, within one, between chunks of re-fits of one fit per worker). The paper's
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
does not change the result. ``n_svm_solves`` includes the solves of the default alpha-start.
"""
from __future__ import annotations

import heapq
import os
from dataclasses import dataclass

from ..alpha import AlphaSubproblem
from ..blas import on_one_blas_thread
from ..errors import CapabilityError
from ..methods import Method, check_options
from ..result import Incumbent
from .greedy import COUNTEREXAMPLE, greedy_step, uses_lazy
from .parallel import refit
from .screening import FixedAlpha
from .starts import resolve_start


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
    time_limit: float | None = None
    max_iter: int | None = None
    allow_nonsubmodular: bool = False

    def __post_init__(self):
        check_options(self)

    def _begin(self, instance, start, oracle, callback):
        _check_kernel(self.name, instance, self.allow_nonsubmodular)
        oracle = oracle if oracle is not None else AlphaSubproblem(instance)
        incumbent = Incumbent(instance, callback)
        solves0 = oracle.n_solves
        fit = oracle.solve(resolve_start(instance, start, oracle=oracle))
        incumbent.offer(fit.value, fit.subset, fit.alpha, source="start")
        return oracle, incumbent, solves0, fit

    def _out_of_time(self, incumbent) -> bool:
        return self.time_limit is not None and incumbent.elapsed() >= self.time_limit

    def _stop(self, incumbent, iteration):
        """Why to stop before an iteration ('trivial_bound', 'time_limit', 'max_iter'), else None."""
        if incumbent.proves_optimal:
            return "trivial_bound"
        if self._out_of_time(incumbent):
            return "time_limit"
        if self.max_iter is not None and iteration >= self.max_iter:
            return "max_iter"
        return None

    def _finish(self, instance, oracle, incumbent, solves0, stopped_by, info):
        status = {"time_limit": "time_limit", "interrupted": "interrupted"}.get(stopped_by, "converged")
        info = {"stopped_by": stopped_by, "greedy": "lazy" if uses_lazy(instance.kernel, instance.sign)
                else "plain", **info}
        return incumbent.result(self.name, status, oracle.n_solves - solves0, info=info)

    @on_one_blas_thread
    def solve(self, instance, start=None, oracle=None, callback=None):
        oracle, incumbent, solves0, current = self._begin(instance, start, oracle, callback)
        iteration, n_evals, stopped_by = 0, 0, "no_improvement"
        try:
            while not (limit := self._stop(incumbent, iteration)):
                step = greedy_step(FixedAlpha(instance, current.alpha), instance.B)
                iteration, n_evals = iteration + 1, n_evals + step.n_evals
                fit = oracle.solve(step.subset, warm_start=current.alpha)
                if not instance.better(fit.value, current.value):
                    break
                current = fit
                incumbent.offer(fit.value, fit.subset, fit.alpha, source="greedy")
            else:
                stopped_by = limit
        except KeyboardInterrupt:
            stopped_by = "interrupted"
        return self._finish(instance, oracle, incumbent, solves0, stopped_by,
                            {"iterations": iteration, "n_evaluations": n_evals})


@dataclass
class ACSOStar(ACSO):
    """Algorithm 4: greedy + fixed-alpha LS pool, exact refits, TabuList, ExploredSolsList, OptWindow."""

    name = "acso*"
    pool_size: int = 100
    opt_window: int = 10
    n_jobs: int = 1

    def _refit(self, instance, oracle, subsets, alpha, incumbent) -> list:
        """Exact fits in the given order, in chunks of one per worker (the same fits as one batch:
        each is warm-started from ``alpha``); stops after a chunk past the time limit or with a fit
        at the trivial bound (paper sense)."""
        chunk = self.n_jobs if self.n_jobs > 0 else (os.cpu_count() or 1)
        fits = []
        for lo in range(0, len(subsets), chunk):
            if fits and self._out_of_time(incumbent):
                break
            new = refit(oracle, subsets[lo:lo + chunk], warm_start=alpha, n_jobs=self.n_jobs)
            optimal = [i for i, fit in enumerate(new) if instance.proves_optimal(fit.value)]
            if optimal:  # cut after the first: the same fits for any n_jobs (earlier chunks were checked)
                return fits + new[:optimal[0] + 1]
            fits += new
        return fits

    @on_one_blas_thread
    def solve(self, instance, start=None, oracle=None, callback=None):
        oracle, incumbent, solves0, centre = self._begin(instance, start, oracle, callback)
        tabu, explored, fits = {centre.subset}, [], {}
        iteration, n_evals, stale, stopped_by = 0, 0, 0, "opt_window"
        try:
            while not (limit := self._stop(incumbent, iteration)):
                fixed = FixedAlpha(instance, centre.alpha)
                step = greedy_step(fixed, instance.B)
                pool, _ = fixed_alpha_local_search(fixed, step.subset, self.pool_size)
                new = [s for s in pool if s not in tabu]
                improved = False
                for fit in self._refit(instance, oracle, new, centre.alpha, incumbent):
                    tabu.add(fit.subset)
                    fits[fit.subset] = fit
                    heapq.heappush(explored, (instance.score(fit.value), fit.subset))
                    source = "greedy" if fit.subset == step.subset else "pool"
                    improved |= incumbent.offer(fit.value, fit.subset, fit.alpha, source=source)
                iteration, n_evals = iteration + 1, n_evals + step.n_evals
                stale = 0 if improved else stale + 1
                if stale >= self.opt_window:
                    break
                if not explored:
                    stopped_by = "exhausted"
                    break
                centre = fits.pop(heapq.heappop(explored)[1])
            else:
                stopped_by = limit
        except KeyboardInterrupt:
            stopped_by = "interrupted"
        return self._finish(instance, oracle, incumbent, solves0, stopped_by,
                            {"iterations": iteration, "n_evaluations": n_evals, "n_refits": len(tabu) - 1})
