"""g(S) = sum_k g_k(S) of a multiclass instance: the alpha-subproblem oracle of :mod:`minlp_fs.multiclass`.

:class:`MulticlassSubproblem` is what ``AlphaSubproblem(instance)`` returns for a
:class:`~minlp_fs.multiclass.MulticlassInstance`: the same interface (``solve`` -> :class:`Fit`,
``solve_gram``, ``neighbour_grams``, ``cached``, the counters), with the subset's Gram K_S built once
and the K one-vs-rest duals solved on it by one binary oracle each (the separable problem: one block of
the block-diagonal Hessian per class). A Fit's ``alpha`` is the K x m stack A, its ``value``
f(A, S) = sum_k f(alpha_k, S), each term by :func:`~minlp_fs.objective.dual_objective`; ``warm_start`` is such a
stack (row k warm-starts class k). One call counts as one solve (``n_solves``) whatever K.

Early stop (``worse_than``, an incumbent value t; SMO backend). The sum must be proven worse than
T = t + sign PRUNE_RTOL max(|t|, 1). Classes are solved in order, class k with the target
T_k = T - (what classes < k hold) - sum_{j > k} E_j: its solve stops early once duality proves g_k(S)
worse than T_k (by the binary oracle's own margin beyond it), and then class k holds T_k; a class
solved exactly holds its value. The estimates E_j of the classes still to come are, in the paper sense
(min g), lower bounds L_j <= g_j(S): minus the primal value of the primal point of class j's warm start
(:func:`~minlp_fs.objective.svm_primal`; any primal point bounds the primal optimum -g_j from above),
or the trivial bound -2C min(|I+_j|, |I-_j|) when larger; in the fit sense, w_j T with w_j class j's
share of the last exact multiclass value (equal shares at first; the fit-sense bound f(a_j, S) >= g_j
of a warm start is far too loose to prove anything, measured). After the last class, if what the classes
hold adds up to T or worse, g(S) = sum_k g_k(S) is proven worse than t by more than PRUNE_RTOL
(relative), the binary oracle's promise, with a second margin of PRUNE_RTOL covering the accuracy of
the exact values (1e-7 relative, alpha/oracle.py): the Fit is not ``exact``, its value is f of the
stack (SMO's tracked f for the stopped classes), an upper bound of g in the paper sense, and it is not
cached. This always holds with the paper sense's bounds, so there the classes after a stop are not
solved (their rows of the stack are their feasible warm starts); with the fit sense's estimates it may not, and
then the stopped classes are solved on to their optimum one at a time, warm-started where they
stopped, until the classes add up to T or worse (a stop) or all are exact (an exact Fit). The
estimates only steer the work: every stop is a proof (with threads, the last exact solve, hence the
shares, may differ from run to run: whether a worse subset is stopped or solved may differ, never a
value, nor which subsets are worse).
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
        #: each class's share of the last exact value: the early stop's estimates (module docstring)
        self._shares = [1.0 / len(self.parts)] * len(self.parts)

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

    def _lower_bounds(self, K: np.ndarray, warm: list) -> list:
        """Per class, L_k <= g_k(S) (paper sense): minus the primal value of the warm start's primal point, or
        the trivial bound (module docstring)."""
        bounds = []
        for part, w in zip(self.parts, warm):
            inst = part.instance
            start = feasible_start(w, inst.y, inst.C)
            bounds.append(max(-svm_primal(inst, K, start).value, inst.trivial_bound))
        return bounds

    def _solve_stack(self, K: np.ndarray, warm_start, worse_than, grad0,
                     max_steps: int | None = None) -> tuple[np.ndarray, bool, float]:
        """(A, exact, value) on the Gram K, counted as one solve (module docstring: the early stop); ``max_steps``:
        each class's SMO steps at most (its alpha then only feasible: :meth:`AlphaSubproblem.solve_gram`)."""
        warm = self._warm(warm_start)
        early = worse_than is not None and self.backend == "smo"
        goal = worse_than + self.instance.sign * PRUNE_RTOL * max(abs(worse_than), 1.0) if early else None
        if early:
            estimates = self._lower_bounds(K, warm) if self.instance.sign > 0 else [goal * w for w in self._shares]
        alphas, values, held, stopped = [], [], [], []
        for k, (part, w) in enumerate(zip(self.parts, warm)):
            target = goal - sum(held) - sum(estimates[k + 1:]) if early else None
            stats = {}
            alpha, exact = part.solve_gram(K, w, target, grad0 if k == 0 else None, stats, max_steps=max_steps)
            alphas.append(alpha)
            values.append(dual_objective(alpha, K, part.instance.y) if exact else stats["value"])
            held.append(values[-1] if exact else target)
            if not exact:
                stopped.append(k)
                if self.instance.sign > 0:  # the estimates are bounds: proven; the later classes keep their starts
                    for j in range(k + 1, len(self.parts)):
                        later = self.parts[j].instance
                        alphas.append(feasible_start(warm[j], later.y, later.C))
                        values.append(dual_objective(alphas[-1], K, later.y))
                        held.append(estimates[j])  # g_j >= L_j: what the proof uses
                        stopped.append(j)          # not solved: solved on below if the proof fails
                    break

        def proven():
            return self.instance.sign * (sum(held) - goal) >= -1e-12 * max(abs(goal), 1.0)

        while stopped and not proven():  # the estimates were off: solve a stopped class on, check again
            k = stopped.pop(0)
            part = self.parts[k]
            alphas[k] = part.solve_gram(K, alphas[k], max_steps=max_steps)[0]
            values[k] = held[k] = dual_objective(alphas[k], K, part.instance.y)
        exact = not stopped
        if exact:
            total = sum(values)
            self._shares = [v / total for v in values] if total != 0 else self._shares
        with self._lock:
            self.n_solves += 1
            self.n_stopped_early += not exact
            self.n_fallbacks = sum(p.n_fallbacks for p in self.parts)
        return np.stack(alphas), exact, float(sum(values))

    def solve_gram(self, K: np.ndarray, warm_start: np.ndarray | None = None,
                   worse_than: float | None = None, grad0: np.ndarray | None = None,
                   stats: dict | None = None, max_steps: int | None = None) -> tuple[np.ndarray, bool]:
        """(A, exact): the K x m stack of the classes' alphas on the Gram K, counted as one solve.
        ``grad0``: Q_1 alpha_1 - e of the first class's (feasible) warm start, if known; ``worse_than``:
        stop early once proven worse than it (module docstring); ``stats`` receives ``value``; ``max_steps``: as
        :meth:`AlphaSubproblem.solve_gram`'s, per class."""
        alpha, exact, value = self._solve_stack(K, warm_start, worse_than, grad0, max_steps)
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
