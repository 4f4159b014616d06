"""Local searches over feature swaps: LS (Algorithm 1) and LS* (Algorithm 2), paper section 3.

Both search beta with |beta| = B and evaluate a subset by its exact alpha-subproblem value g(beta)
(the SVM dual (2) solved by the oracle); every method minimises ``instance.score(g)``, so the same
code serves the paper sense (minimise g) and the fit sense (maximise g).

* N1(beta) = the B(n-B) single swaps of beta (one selected feature out, one unselected in).
* **N1 step** (:func:`n1_step`, shared by both): screen every candidate of N1 at the centre's alpha by
  f(alpha_centre, beta_hat) (:class:`FixedAlpha`, no SVM solve), re-fit exactly the best
  ``max(1, ceil(refit_fraction * |N1|))`` of them (warm-started from the centre's alpha, in parallel,
  deterministic for any ``n_jobs``), and return the best by the exact value; ties go to the first
  candidate in the order (j_out, j_in) ascending. ``refit_fraction = 1`` re-fits all of N1 (plain LS).
  When g is maximised (fit sense), f(alpha_centre, beta_hat) >= g(beta_hat) bounds each candidate, so
  re-fits go best-screened first and stop once no remaining bound can beat the best re-fit: fewer
  SVM solves, the same outcome.
* **LS**: from beta_in, move to the best N1 neighbour while it is strictly better than the centre.
* **LS***: LS phases joined by a tabu list of centres whose N1 was explored (never explored nor
  moved to again); after each phase, ``n_samples`` subsets of N2(beta) (s >= 2 swaps, s drawn
  uniformly in 2..min(B, n-B), the swapped features uniformly) are drawn with a seeded generator,
  deduplicated, and tabu ones dropped. The draws run compiled (:func:`sample_n2`) and take the same
  stream as numpy's ``Generator.integers`` / ``Generator.choice(replace=False)`` (same samples, same
  generator state after; a test checks it). *Our choice for N2*: they are screened at the phase's local
  optimum alpha like N1, and the best ``max(1, ceil(refit_fraction * #samples))`` are re-fitted
  exactly; the best re-fitted sample (even if worse) seeds the next phase. The paper's appendix
  screens N2 samples only (its count of SVM solves does not grow with #Samples); re-fitting the top
  fraction costs ceil(0.1 * 200) = 20 solves per phase at the paper's setting and ranks the samples
  by their true value, which is what Algorithm 2 compares. The search stops after ``opt_window``
  consecutive phases without improving the incumbent, when N2 offers no new subset, or at
  ``max_iter`` phases.

Both stop at once at a subset attaining the trivial bound in the paper sense (it is optimal, Remark 1).
``time_limit`` holds at every stage: while the alpha-start is built, inside a screening pass (every
few hundred evaluations) and between chunks of re-fits; Ctrl-C returns the incumbent with status
``interrupted`` (both by :meth:`~minlp_fs.methods.Method.solve`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..blas import on_one_blas_thread
from ..methods import Method
from ..options import n_jobs_option, option, seed_option, time_limit_option
from ..result import Status
from ..stopping import SearchStopped
from .refit import best_refit
from .screening import FixedAlpha


def n1_step(instance, oracle, centre, refit_fraction: float, n_jobs: int = 1, exclude=frozenset(),
            deadline=None, improving_only: bool = False):
    """The best exactly re-fitted neighbour in N1(centre) minus ``exclude`` (screen -> re-fit -> best).

    With ``improving_only``, only a neighbour strictly better than the centre is wanted (LS's move):
    candidates proven worse than the centre stop early. The screening pass checks ``deadline`` (a
    :class:`~minlp_fs.stopping.Deadline`; ``SearchStopped`` past it). Returns (fit or None, timed_out).
    """
    chosen = set(centre.subset)
    outside = [j for j in range(instance.n) if j not in chosen]
    swaps = [(j_out, j_in) for j_out in centre.subset for j_in in outside]
    subsets = [tuple(sorted(chosen - {j_out} | {j_in})) for j_out, j_in in swaps]
    keep = [t for t, s in enumerate(subsets) if s not in exclude]
    swaps, subsets = [swaps[t] for t in keep], [subsets[t] for t in keep]
    index = dict(zip(subsets, swaps))

    def scores(cands):
        screened = FixedAlpha(instance, centre.alpha, deadline).swap_values(centre.subset)
        return [screened[index[s]] for s in cands]

    return best_refit(instance, oracle, centre, subsets, scores, refit_fraction, n_jobs, deadline,
                      oracle.neighbour_grams(centre.subset), improving_only)


@njit(cache=True, nogil=True)
def _choice_indices(rng, pop, size):  # pragma: no cover - compiled
    """The positions ``rng.choice(pop, size, replace=False)`` returns, drawing the same stream.

    NumPy's algorithm (``Generator.choice`` without ``p``, ``shuffle=True``): for a population above
    10000 and ``size > pop // 50`` a tail Fisher-Yates shuffle of ``arange(pop)``; else Floyd's
    algorithm followed by a Fisher-Yates shuffle of the sample. Every draw is uniform in [0, j],
    ``rng.integers(0, j + 1)`` (a range of one value draws nothing, as in NumPy).
    """
    if pop > 10000 and size > pop // 50:
        idx = np.arange(pop)
        for i in range(pop - 1, max(pop - size, 1) - 1, -1):
            j = rng.integers(0, i + 1)
            idx[i], idx[j] = idx[j], idx[i]
        return idx[pop - size:].copy()
    idx = np.empty(size, np.int64)
    cap = 1
    while cap < 2 * size:
        cap *= 2
    mask = cap - 1
    table = np.full(cap, -1, np.int64)  # open-addressing set of the values taken so far
    for j in range(pop - size, pop):
        val = rng.integers(0, j + 1)
        loc = val & mask
        while table[loc] != -1 and table[loc] != val:
            loc = (loc + 1) & mask
        if table[loc] == -1:  # val not taken yet
            table[loc] = val
        else:  # take j instead (never taken: every value so far is below j)
            val = j
            loc = j & mask
            while table[loc] != -1:
                loc = (loc + 1) & mask
            table[loc] = j
        idx[j - pop + size] = val
    for i in range(size - 1, 0, -1):
        j = rng.integers(0, i + 1)
        idx[i], idx[j] = idx[j], idx[i]
    return idx


@njit(cache=True, nogil=True)
def _n2_draws(rng, chosen, outside, n_samples):  # pragma: no cover - compiled
    """Per N2 sample, s ~ U{2..top} and the swapped-out / swapped-in features (first s of each row)."""
    top = min(chosen.size, outside.size)
    sizes = np.empty(n_samples, np.int64)
    outs = np.empty((n_samples, top), np.int64)
    ins = np.empty((n_samples, top), np.int64)
    for k in range(n_samples):
        s = rng.integers(2, top + 1)
        sizes[k] = s
        outs[k, :s] = chosen[_choice_indices(rng, chosen.size, s)]
        ins[k, :s] = outside[_choice_indices(rng, outside.size, s)]
    return sizes, outs, ins


def sample_n2(subset, n: int, n_samples: int, rng: np.random.Generator) -> list:
    """``n_samples`` draws from N2(subset): s ~ U{2..min(B, n-B)} swaps, features uniform; deduplicated."""
    chosen = np.array(subset, dtype=np.int64)
    members = set(subset)
    outside = np.array([j for j in range(n) if j not in members], dtype=np.int64)
    if min(chosen.size, outside.size) < 2:
        return []
    sizes, outs, ins = _n2_draws(rng, chosen, outside, n_samples)
    seen = {}
    for s, out, new in zip(sizes.tolist(), outs.tolist(), ins.tolist()):
        seen.setdefault(tuple(sorted((members - set(out[:s])) | set(new[:s]))), None)
    return list(seen)


@dataclass
class _SwapSearch(Method):
    """Options and run loop shared by LS and LS*."""

    refit_fraction: float = option(1.0, float, low=0, high=1, low_open=True,
                                   doc="share of N1 re-fitted exactly (1 = every neighbour, as plain LS)")
    time_limit: float | None = time_limit_option()
    n_jobs: int = n_jobs_option()
    seed: int = seed_option()

    uses_start = True

    @on_one_blas_thread
    def _search(self, run):
        oracle, inc = run.oracle, run.incumbent
        subset = run.start()
        run.info["start"] = list(subset)
        centre = oracle.solve(subset)
        inc.offer(centre.value, centre.subset, centre.alpha, "start")
        return self._phases(run, centre)

    def _local_search(self, run, centre, tabu: set):
        """Moves to the best N1 neighbour while strictly better; returns the local optimum."""
        instance, info = run.instance, run.info
        while not instance.proves_optimal(centre.value):
            run.deadline.check()
            tabu.add(centre.subset)
            info["n1_steps"] = info.get("n1_steps", 0) + 1
            best, timed_out = n1_step(instance, run.oracle, centre, self.refit_fraction, self.n_jobs,
                                      exclude=tabu, deadline=run.deadline, improving_only=True)
            moved = best is not None and instance.better(best.value, centre.value)
            if moved:
                centre = best
                run.incumbent.offer(best.value, best.subset, best.alpha, "N1")
            if timed_out:
                raise SearchStopped(Status.TIME_LIMIT)
            if not moved:
                return centre
        return centre


@dataclass
class LocalSearch(_SwapSearch):
    """LS, Algorithm 1: steepest descent over N1 until no swap improves."""

    name = "ls"

    def _phases(self, run, centre):
        self._local_search(run, centre, set())
        return Status.CONVERGED


@dataclass
class LocalSearchStar(_SwapSearch):
    """LS*, Algorithm 2: LS phases with screening, a tabu list and N2 sampling between phases."""

    refit_fraction: float = option(0.1, float, low=0, high=1, low_open=True,
                                   doc="share of N1 and of the N2 samples re-fitted exactly")
    n_samples: int = option(200, int, low=0, doc="N2 samples drawn after each phase (#Samples)")
    opt_window: int = option(10, int, low=1, doc="phases without improvement before stopping (OptWindow)")
    max_iter: int | None = option(None, int, low=1, none=True, doc="most phases (None: no limit)")

    name = "ls*"

    def _phases(self, run, centre):
        instance, inc, info = run.instance, run.incumbent, run.info
        rng = np.random.default_rng(self.seed)
        tabu: set = set()
        stale = 0
        info["phases"] = 0
        while True:
            best_before = inc.value
            try:
                centre = self._local_search(run, centre, tabu)
            finally:
                info["phases"] += 1
                info["tabu"] = len(tabu)
            if instance.proves_optimal(centre.value):
                return Status.CONVERGED
            samples = [s for s in sample_n2(centre.subset, instance.n, self.n_samples, rng) if s not in tabu]
            if not samples:
                return Status.CONVERGED
            screen = FixedAlpha(instance, centre.alpha, run.deadline)
            best, timed_out = best_refit(instance, run.oracle, centre, samples,
                                         lambda cands: screen.values(cands).tolist(),
                                         self.refit_fraction, self.n_jobs, run.deadline)
            if best is not None:
                inc.offer(best.value, best.subset, best.alpha, "N2")
            if timed_out:
                raise SearchStopped(Status.TIME_LIMIT)
            stale = 0 if inc.value != best_before else stale + 1
            if stale >= self.opt_window or (self.max_iter is not None and info["phases"] >= self.max_iter):
                return Status.CONVERGED
            centre = best
