"""g(S) = sum_k g_k(S) of a multiclass instance: the alpha-subproblem oracle of :mod:`minlp_fs.multiclass`.

:class:`MulticlassSubproblem` is what ``AlphaSubproblem(instance)`` returns for a
:class:`~minlp_fs.multiclass.MulticlassInstance`: the same interface (``solve`` -> :class:`Fit`,
``solve_gram``, ``neighbour_grams``, ``cached``, the counters), with the subset's Gram K_S built once
and the K one-vs-rest duals solved on it by one binary oracle each (the separable problem: one block of
the block-diagonal Hessian per class). A Fit's ``alpha`` is the K x m stack A, its ``value``
f(A, S) = sum_k f(alpha_k, S), each term by :func:`~minlp_fs.objective.dual_objective`; ``warm_start`` is such a
stack (row k warm-starts class k). One call counts as one solve (``n_solves``) whatever K.

Early stop (``worse_than``, an incumbent value t; SMO backend). Classes are solved in order; before
the solves, each class gets a bound of g_k(S) in the good direction from its (feasible) warm start a_k:
in the fit sense (max g) U_k = f(a_k, S) >= g_k(S) (g_k is a minimum over alpha); in the paper sense
(min g) L_k = max(-P_k, -2C min(|I+_k|, |I-_k|)) <= g_k(S), with P_k the primal value of a_k's primal
point (:func:`~minlp_fs.objective.svm_primal`; any primal point bounds the primal optimum -g_k from
above) and the trivial bound (Remark 1). Class k's solve stops early once duality proves g_k(S)
worse than t_k = t - (the exact values of classes < k) - (the bounds of classes > k) + sign PRUNE_RTOL
max(|t|, 1) (worse by the binary oracle's own margin beyond that). Then g(S) = sum_k g_k(S) is worse
than t by more than PRUNE_RTOL (relative), the binary oracle's promise, with a second margin of
PRUNE_RTOL covering the accuracy of the exact values (1e-7 relative, alpha/oracle.py). The classes
after k are not solved; their rows of the stack are their feasible warm starts. Such a Fit is not
``exact``: its value is f of that stack (SMO's tracked f for class k), an upper bound of g, and it is
not cached.
"""
from __future__ import annotations

import numpy as np

from ..alpha.oracle import DEFAULT_TOL, PRUNE_RTOL, AlphaSubproblem, Fit
from ..alpha.smo import feasible_start
from ..errors import InputError
from ..objective import dual_objective, svm_primal


class MulticlassSubproblem(AlphaSubproblem):
    """Exact g(S) = sum_k g_k(S) for a multiclass instance, with a solve counter and a cache by subset."""

    def __init__(self, instance, backend: str = "smo", tol: float = DEFAULT_TOL, cache: bool = True):
        super().__init__(instance, backend=backend, tol=tol, cache=cache)
        #: one binary oracle per one-vs-rest machine (uncached: this oracle caches the sum)
        self.parts = [AlphaSubproblem(part, backend=backend, tol=tol, cache=False) for part in instance.parts]

    def _warm(self, warm_start) -> list:
        """Row k of the stack for class k (None: a cold start for every class)."""
        inst = self.instance
        if warm_start is None:
            return [None] * inst.n_classes
        warm = np.asarray(warm_start, dtype=float)
        if warm.shape != (inst.n_classes, inst.m):
            raise InputError(f"a multiclass warm start must be a stack of {inst.n_classes} alphas of length "
                             f"{inst.m} (shape {(inst.n_classes, inst.m)}); got shape {warm.shape}")
        return list(warm)

    def _bounds(self, K: np.ndarray, starts: list) -> list:
        """Per class, a bound of g_k(S) in the good direction from its feasible start (module docstring)."""
        bounds = []
        for part, a in zip(self.parts, starts):
            inst = part.instance
            if inst.sign < 0:  # fit sense: g_k <= f(a, S)
                bounds.append(dual_objective(a, K, inst.y))
            else:  # paper sense: g_k >= -(a primal value), and the trivial bound
                bounds.append(max(-svm_primal(inst, K, a)[3], inst.trivial_bound))
        return bounds

    def _solve_stack(self, K: np.ndarray, warm_start, worse_than, grad0) -> tuple[np.ndarray, bool, float]:
        """(A, exact, value) on the Gram K, counted as one solve (module docstring: the early stop)."""
        warm = self._warm(warm_start)
        early = worse_than is not None and self.backend == "smo"
        if early:
            starts = [feasible_start(w, p.instance.y, p.instance.C) for p, w in zip(self.parts, warm)]
            bounds = self._bounds(K, starts)
            margin = self.instance.sign * PRUNE_RTOL * max(abs(worse_than), 1.0)
        alphas, values, exact = [], [], True
        for k, (part, w) in enumerate(zip(self.parts, warm)):
            threshold = worse_than - sum(values) - sum(bounds[k + 1:]) + margin if early else None
            stats = {}
            alpha, exact = part.solve_gram(K, w, threshold, grad0 if k == 0 else None, stats)
            alphas.append(alpha)
            values.append(dual_objective(alpha, K, part.instance.y) if exact else stats["value"])
            if not exact:  # proven worse: the other classes keep their starts
                for later, a in zip(self.parts[k + 1:], starts[k + 1:]):
                    alphas.append(a)
                    values.append(dual_objective(a, K, later.instance.y))
                break
        with self._lock:
            self.n_solves += 1
            self.n_stopped_early += not exact
            self.n_fallbacks = sum(p.n_fallbacks for p in self.parts)
        return np.stack(alphas), exact, float(sum(values))

    def solve_gram(self, K: np.ndarray, warm_start: np.ndarray | None = None,
                   worse_than: float | None = None, grad0: np.ndarray | None = None,
                   stats: dict | None = None) -> tuple[np.ndarray, bool]:
        """(A, exact): the K x m stack of the classes' alphas on the Gram K, counted as one solve.
        ``grad0``: Q_1 alpha_1 - e of the first class's (feasible) warm start, if known; ``worse_than``:
        stop early once proven worse than it (module docstring); ``stats`` receives ``value``."""
        alpha, exact, value = self._solve_stack(K, warm_start, worse_than, grad0)
        if stats is not None:
            stats["value"] = value
        return alpha, exact

    def solve(self, subset, warm_start: np.ndarray | None = None, K: np.ndarray | None = None,
              worse_than: float | None = None, neighbours=None) -> Fit:
        """g(S) and its stack A for the subset; ``K`` (the subset's Gram) may be passed if known,
        ``neighbours`` (from :meth:`neighbour_grams`) builds it for a single swap or removal of its centre;
        ``worse_than``: the early stop of the module docstring (a Fit that is not ``exact``)."""
        key = tuple(sorted(int(j) for j in subset))
        hit = self.cached(key)
        if hit is not None:
            with self._lock:
                self.n_cache_hits += 1
            return hit
        grad0 = None
        if K is None and neighbours is not None:
            warm = self._warm(warm_start)
            first = self.instance.parts[0]
            warm[0] = feasible_start(warm[0], first.y, first.C)  # the start grad0 is of
            warm_start = np.stack(warm) if warm_start is not None else None
            K, grad0 = neighbours.fill(key, warm[0]) or (None, None)
        if K is None:
            K = self.instance.gram(key)
        alpha, exact, value = self._solve_stack(K, warm_start, worse_than, grad0)
        fit = Fit(key, value, alpha, exact)
        if self._cache is not None and exact:
            self._cache[key] = fit
        return fit

    def neighbour_grams(self, centre):
        """The first class's :class:`~minlp_fs.alpha.neighbours.NeighbourGrams` of ``centre`` (the Gram of a
        neighbour is the same for every class; its gradient warm-starts the first class), or None."""
        return self.parts[0].neighbour_grams(centre)
