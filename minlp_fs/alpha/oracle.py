"""The alpha-subproblem g(beta) = min_{alpha in Delta} f(alpha, beta) (problem (3) with Q = Q(beta)).

:class:`AlphaSubproblem` is the single place where methods obtain g: it builds K_beta, solves the
dual with a backend (warm-started SMO by default, libsvm as the reference), recomputes the value
from alpha with :func:`minlp_fs.objective.dual_objective`, caches it by subset and counts solves.
Thread-safe: independent candidates may be solved from a thread pool (both backends release the GIL).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, NotConvergedError, plain
from ..objective import NonFiniteError, dual_objective
from ..options import check_value
from .libsvm import libsvm_solve
from .neighbours import GaussianTables, NeighbourGrams
from .row_groups import RowKeys
from .smo import GROUP_SHARE, feasible_start, smo_solve

BACKENDS = ("smo", "libsvm")
#: relative slack (of the trivial bound) of the range check of every exact value (AlphaSubproblem._check_range)
RANGE_RTOL = 1e-9
#: KKT tolerance (max violation m(a) - M(a)). Measured against solves at 1e-9 on the nine datasets x
#: four kernels: worst relative value error 1.4e-7 at 1e-5 (1.2e-6 at 1e-4), so 1e-5 meets the 1e-6
#: accuracy the package promises while taking 2-4x fewer SMO iterations than 1e-6 on hard duals.
DEFAULT_TOL = 1e-5


#: relative margin by which a subset must be proven worse than the incumbent before a solve stops
#: early (well above the 1e-6 accuracy of the values, so an early stop never changes a decision)
PRUNE_RTOL = 1e-6


def check_diagonal(diagonal: np.ndarray) -> None:
    """A kernel matrix is PSD, so |K_ih| <= max(K_ii, K_hh): an O(m) look at its diagonal bounds every entry
    (instances bound it up front too: objective.check_kernel_range); a non-finite one is a NonFiniteError."""
    if not np.isfinite(diagonal).all():
        raise NonFiniteError("the kernel matrix has non-finite entries (its values overflow); "
                             "lower gamma or C, or scale the data")


@dataclass(frozen=True)
class Fit:
    """An alpha-subproblem solution: subset, g(beta) and its optimal alpha.

    ``exact`` is False for a solve stopped early (see :meth:`AlphaSubproblem.solve`'s ``worse_than``):
    the subset is then proven worse than the given incumbent, ``alpha`` is feasible but not optimal and
    ``value`` = f(alpha, beta) (as SMO tracked it) is only an upper bound of g.
    """

    subset: tuple
    value: float
    alpha: np.ndarray
    exact: bool = True


class AlphaSubproblem:
    """Exact solver of g(beta) for one instance, with a solve counter and a cache by subset."""

    def __new__(cls, instance, *args, **kwargs):
        """The oracle the instance names (``instance.oracle_class``: a multiclass instance's
        :class:`~minlp_fs.multiclass.oracle.MulticlassSubproblem`), else this class: every method builds
        its oracle here, so none needs to know about classes."""
        if cls is AlphaSubproblem:
            cls = getattr(instance, "oracle_class", cls)
        return super().__new__(cls)

    def __init__(self, instance, backend: str = "smo", tol: float = DEFAULT_TOL, cache: bool = True):
        if backend not in BACKENDS:
            raise InputError(f"unknown alpha-subproblem backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        check_value("alpha-subproblem", "tol", tol, float, low=0, high=1, low_open=True, high_open=True)
        self.instance = instance
        self.backend = backend
        self.tol = tol
        self._cache: dict[tuple, Fit] | None = {} if cache else None
        #: subset -> (s, fit stopped early): sign * g > s is proven (an early stop of ``solve``)
        self._worse: dict[tuple, tuple[float, Fit]] = {}
        self._lock = threading.Lock()
        self.n_solves = 0
        self.n_cache_hits = 0
        self.n_stopped_early = 0
        #: SMO solves that hit the iteration limit and were solved again by libsvm
        self.n_fallbacks = 0
        self._tables = GaussianTables(instance) if instance.kernel.multiplicative else None
        #: distinct values per feature: a subset has at least max_j of them distinct rows
        self._n_values = None
        self._last_groups = (None, None)
        self._row_keys = None

    def solve_gram(self, K: np.ndarray, warm_start: np.ndarray | None = None,
                   worse_than: float | None = None, grad0: np.ndarray | None = None,
                   stats: dict | None = None, groups: tuple | None = None,
                   max_steps: int | None = None, better_than: float | None = None) -> tuple[np.ndarray, bool]:
        """(alpha, exact) for a given kernel matrix, counted as one solve, not cached.
        ``grad0`` = Q warm_start - e if known (SMO backend); ``stats`` receives ``value``, SMO's tracked f(alpha)
        (f computed at libsvm's alpha);
        ``groups``: the duplicate rows of the subset (:meth:`groups`; SMO backend). ``max_steps`` (SMO backend):
        at most that many SMO steps, for a caller that only needs a feasible alpha (weak-duality bounds hold at
        any): the alpha reached is returned as it is, not solved again by libsvm.

        With ``worse_than`` (an incumbent value; SMO backend only), the solve stops as soon as duality
        proves g worse than it in the instance's sense by more than PRUNE_RTOL (relative): exact = False.
        With ``better_than`` (a value; SMO backend only), it also stops, exact = False, as soon as duality proves g
        better than it (paper sense: f(alpha) below it; fit sense: -P(alpha) above it), for a caller that only asks
        on which side of the incumbent g lies; ``stats["value"]`` (SMO's tracked f) then tells which stop it was.
        """
        inst = self.instance
        exact = True
        check_diagonal(np.diagonal(K))
        if self.backend == "libsvm":
            alpha = libsvm_solve(K, inst.y, inst.C, tol=self.tol)
        else:
            above, below = self.stop_bounds(worse_than)
            if better_than is not None:
                above, below = (above, better_than) if inst.sign > 0 else (better_than, below)
            smo = smo_solve(K, inst.y, inst.C, alpha0=warm_start, tol=self.tol, above=above, below=below,
                            grad0=grad0, groups=groups, **({} if max_steps is None else {"max_iter": max_steps}))
            alpha, exact = smo.alpha, not smo.stopped_early
            if smo.hit_iteration_limit and max_steps is None:  # not converged: never taken as exact; libsvm instead
                alpha = libsvm_solve(K, inst.y, inst.C, tol=self.tol)
                with self._lock:
                    self.n_fallbacks += 1
            elif stats is not None:
                stats["value"] = smo.value
        if stats is not None and "value" not in stats:   # libsvm's alpha
            stats["value"] = dual_objective(alpha, K, inst.y)
        self.count(exact)
        return alpha, exact

    def solve(self, subset, warm_start: np.ndarray | None = None, K: np.ndarray | None = None,
              worse_than: float | None = None, neighbours=None, grad0: np.ndarray | None = None) -> Fit:
        """g(beta) for the subset, with its alpha. ``K`` (the subset's Gram) may be passed if known, and with it
        ``grad0`` = Q warm_start - e (SMO backend).

        ``worse_than``: the caller only needs the subset if it can beat this incumbent value; the
        solve may then stop early with a non-``exact`` Fit. Such a proof is remembered: a later call
        whose ``worse_than`` it already covers (an incumbent at least as good, as after an LS move,
        whose N1 shares n subsets with the previous centre's) returns that Fit without solving.
        ``neighbours``: a :class:`~minlp_fs.alpha.neighbours.NeighbourGrams` of a centre; when the
        subset is a single swap or removal of it, K and the warm start's gradient come from it in one pass.
        """
        key = tuple(sorted(int(j) for j in subset))
        if self._cache is not None:
            hit = self._cache.get(key)
            if hit is None and worse_than is not None:
                proven = self._worse.get(key)
                if proven is not None and proven[0] >= self.instance.sign * self._threshold(worse_than):
                    hit = proven[1]
            if hit is not None:
                with self._lock:
                    self.n_cache_hits += 1
                return hit
        if K is None:
            grad0 = None
        if K is None and neighbours is not None and self.backend == "smo":
            warm_start = feasible_start(warm_start, self.instance.y, self.instance.C)
            K, grad0 = neighbours.fill(key, warm_start) or (None, None)
        if K is None:
            K = self.instance.gram(key)
        stats = {}
        alpha, exact = self.solve_gram(K, warm_start, worse_than, grad0, stats, self.groups(key))
        # an exact value by the one objective; a fit stopped early keeps SMO's tracked f(alpha), a
        # bound that no method reports (saves an O(m^2) product on every pruned candidate)
        value = dual_objective(alpha, K, self.instance.y) if exact else stats["value"]
        if exact:
            self._check_range(key, value)
        fit = Fit(key, value, alpha, exact)
        if self._cache is not None:
            if exact:
                self._cache[key] = fit
            else:
                proven = self.instance.sign * self._threshold(worse_than)
                with self._lock:
                    if key not in self._worse or self._worse[key][0] < proven:
                        self._worse[key] = (proven, fit)
        return fit

    def _check_range(self, key: tuple, value: float) -> None:
        """g(S) lies in [-2C min(|I+|, |I-|), 0] (Remark 1; alpha = 0 is feasible with f = 0): an exact value
        outside it by more than RANGE_RTOL of the trivial bound is a solve that lost its precision (C far too
        large for the data's scale), never an answer (a NotConvergedError naming C)."""
        low = self.instance.trivial_bound
        slack = RANGE_RTOL * abs(low)
        if not low - slack <= value <= slack:
            raise NotConvergedError(
                f"the SVM dual of features {list(key)} gave f = {value:.6g}, outside [{low:.6g}, 0] where every "
                f"optimum lies (Remark 1): the solve lost its precision at C={plain(self.instance.C)}; lower C")

    def groups(self, key: tuple) -> tuple | None:
        """The groups of the subset's duplicate rows (:meth:`.row_groups.RowKeys.groups`) when SMO would solve over
        them (at most GROUP_SHARE * m of them), else None; the distinct values per feature rule most subsets out
        without looking at the rows."""
        inst = self.instance
        if self.backend != "smo" or not key:
            return None
        if self.distinct_values()[list(key)].max() > GROUP_SHARE * inst.m:
            return None
        last = self._last_groups   # one read: another thread may replace the pair (solves from a thread pool)
        if last[0] == key:   # asked twice in a row (enumeration's opened solves, then the solve)
            return last[1]
        groups = self.row_keys().groups(key, GROUP_SHARE * inst.m)
        self._last_groups = (key, groups)
        return groups

    def row_keys(self) -> RowKeys:
        """The instance's rows as bits, to count a subset's distinct rows (:meth:`groups`); built once."""
        if self._row_keys is None:
            self._row_keys = RowKeys(self.instance.X, self.instance.y)
        return self._row_keys

    def distinct_values(self) -> np.ndarray:
        """Distinct values of each feature: a subset whose features have more than GROUP_SHARE * m of them for
        some feature is never solved over groups (:meth:`groups`)."""
        if self._n_values is None:
            self._n_values = np.array([np.unique(self.instance.X[:, j]).size for j in range(self.instance.n)])
        return self._n_values

    def stop_bounds(self, worse_than: float | None) -> tuple[float, float]:
        """(above, below) of :func:`~.smo.smo_solve`'s early stop for an incumbent value (none: (inf, -inf))."""
        if worse_than is None:
            return np.inf, -np.inf
        if self.instance.sign > 0:
            return self._threshold(worse_than), -np.inf
        return np.inf, self._threshold(worse_than)

    def count(self, exact: bool) -> None:
        """One more solve (stopped early unless ``exact``), for a solve made outside :meth:`solve_gram`."""
        with self._lock:
            self.n_solves += 1
            self.n_stopped_early += not exact

    def _threshold(self, worse_than: float) -> float:
        """The value g must be proven beyond (worse than ``worse_than`` by PRUNE_RTOL, relative)."""
        return worse_than + self.instance.sign * PRUNE_RTOL * max(abs(worse_than), 1.0)

    def neighbour_grams(self, centre) -> NeighbourGrams | None:
        """Grams of ``centre``'s single swaps and removals (None with the libsvm backend), for ``solve``."""
        if self.backend != "smo":
            return None
        return NeighbourGrams(self.instance, centre, self._tables)

    def cached(self, subset) -> Fit | None:
        """The cached fit of a subset, if it was solved already."""
        if self._cache is None:
            return None
        return self._cache.get(tuple(sorted(int(j) for j in subset)))
