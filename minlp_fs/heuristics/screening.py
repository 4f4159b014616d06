"""f(alpha_bar, beta) at a fixed alpha: the cheap screening score of LS*, ACSO and RFE1.

With alpha fixed, only the support rows sv = {i : alpha_i > 0} enter f, and

    f(alpha_bar, S) = 1/2 v' phi( sum_{j in S} T_j[sv, sv] ) v - e'alpha_bar,   v = alpha_bar * y

(problem (5) plus the constant -e'alpha_bar). This is F(S)/2 - e'alpha_bar with F of section 4.2.
Every value is q(S) - e'alpha_bar with q(S) = 1/2 v' K_S v computed in batches by the kernel
(:mod:`minlp_fs.kernels`: ``subset_quads`` for many subsets of one size, ``removal_quads`` for the
removals from one base matrix, ``swap_quads`` for the B(n-B) swaps of N1), so nothing here depends on
the kernel's form: a new kernel brings its formulas (or runs on the defaults, one kernel matrix per
value). The paper's kernels compute them without a kernel matrix per value: the polynomial kernel from
the moments of its monomials where a count of operations says that is cheaper (:mod:`minlp_fs.monomials`:
small subsets, the swap table, the greedy's removals through :class:`Removals`), else by one compiled pass
per subset or removal and the swap table by the binomial expansion; the Gaussian kernel by per-feature
factors over the upper triangle of the support's rows. All agree with the direct computation to rounding
(1e-10 of the quadratic form's scale, tested).

Every evaluation is counted by :meth:`FixedAlpha._count`, which checks the ``deadline`` (a
:class:`~minlp_fs.stopping.Deadline`: one clock reading) at every call, a batch being evaluated in chunks of at
most :data:`CHECK_EVERY` evaluations and :data:`CHECK_ENTRIES` kernel entries, so one screening pass or greedy
elimination over 10^5 features, or over a few costly ones at large m, stops soon after a time limit
(``SearchStopped``). (The check every 256 evaluations it replaced let German's alpha-start, 222 Gaussian
evaluations of 5 ms at m = 1,000, run 1.2 s past a 0.5 s limit.)
"""
from __future__ import annotations

import numpy as np

from ..objective import NonFiniteError, dual_objective

#: evaluations of a batch between two checks of the deadline at most
CHECK_EVERY = 256
#: ... and kernel entries (m^2 an evaluation): 4 evaluations a chunk at m = 1,000, 256 up to m = 128
CHECK_ENTRIES = 1 << 22


class FixedAlpha:
    """Evaluate f(alpha_bar, S) for many subsets S at one fixed alpha_bar (within ``deadline``)."""

    def __new__(cls, instance, *args, **kwargs):
        """The evaluator the instance names (``instance.fixed_alpha_class``: a multiclass instance's
        :class:`~minlp_fs.multiclass.screening.StackedFixedAlpha`, f at a fixed stack of alphas, one per
        class), else this class, so no method needs to know about classes."""
        if cls is FixedAlpha:
            cls = getattr(instance, "fixed_alpha_class", cls)
        return super().__new__(cls)

    def __init__(self, instance, alpha: np.ndarray, deadline=None):
        self.instance = instance
        self.deadline = deadline
        self.n_evals = 0
        self.alpha = np.asarray(alpha, dtype=float)
        self.sv = np.flatnonzero(self.alpha > 0)
        self.X = instance.X[self.sv]
        self.y = instance.y[self.sv]
        self.a = self.alpha[self.sv]
        self.kernel = instance.kernel
        self.v = self.a * self.y
        self.a_sum = float(self.a.sum())
        self._terms: dict[int, np.ndarray] = {}

    def term(self, j: int) -> np.ndarray:
        """T_j restricted to the support (cached)."""
        t = self._terms.get(j)
        if t is None:
            t = self._terms[j] = self.kernel.feature_term(self.X, j)
        return t

    def base(self, subset) -> np.ndarray:
        return self.kernel.base(self.X, list(subset))

    def _count(self, evaluations: int = 1) -> None:
        """Count evaluations and check the deadline."""
        self.n_evals += evaluations
        if self.deadline is not None:
            self.deadline.check()

    def _batched(self, quads, items) -> np.ndarray:
        """f = quads(chunk) - e'alpha_bar over ``items`` in chunks (module docstring; counted, the deadline
        checked between chunks); a non-finite value is a :class:`NonFiniteError`, as in dual_objective."""
        out = np.empty(len(items))
        size = max(1, min(CHECK_EVERY, CHECK_ENTRIES // self.X.shape[0] ** 2))
        for lo in range(0, len(items), size):
            chunk = items[lo:lo + size]
            out[lo:lo + len(chunk)] = quads(chunk)
            self._count(len(chunk))
        out -= self.a_sum
        if not np.isfinite(out).all():
            raise NonFiniteError("an objective value f(alpha, beta) at fixed alpha is not finite; lower gamma, "
                                 "C or the data's scale (use --scaling minmax)")
        return out

    def value_of_base(self, base: np.ndarray, out: np.ndarray | None = None) -> float:
        """f(alpha_bar, S) for the base matrix of S; ``out`` is a scratch buffer of its shape."""
        self._count()
        return dual_objective(self.a, self.kernel.apply(base, out=out), self.y)

    def values(self, subsets) -> np.ndarray:
        """[f(alpha_bar, S) for S in subsets], subsets of one size (the kernel's ``subset_quads``)."""
        table = np.array([list(s) for s in subsets], dtype=np.intp).reshape(len(subsets), -1)
        return self._batched(lambda rows: self.kernel.subset_quads(self.X, self.v, rows), table)

    def value(self, subset) -> float:
        """f(alpha_bar, subset)."""
        return float(self.values([list(subset)])[0])

    def removal_values_of_base(self, base: np.ndarray, removed) -> np.ndarray:
        """[f(alpha_bar, S - {j}) for j in removed] given the base matrix of S (the kernel's ``removal_quads``:
        no matrix per j)."""
        return self._batched(lambda js: self.kernel.removal_quads(base, self.X, self.v, js), list(removed))

    def moment_table(self, ground):
        """The kernel's moment table of the features ``ground`` at this alpha (``Kernel.moment_table``: a
        :class:`~minlp_fs.monomials.MomentTable` where it is cheaper than removals from a base matrix), or None."""
        return self.kernel.moment_table(self.X, self.v, ground)

    def removals(self, kept) -> "Removals":
        """f(alpha_bar, K) and its removals while K shrinks from ``kept`` (:class:`Removals`)."""
        return Removals(self, kept)

    def swap_values(self, subset) -> dict:
        """{(j_out, j_in): f(alpha_bar, subset - j_out + j_in)} over the neighbourhood N1 (B(n-B) swaps).

        All B(n-B) values at once by :func:`swap_matrix` (no kernel matrix per swap); keys in the
        order (j_out, j_in) ascending.
        """
        chosen_set = set(subset)
        chosen = sorted(chosen_set)
        outside = [j for j in range(self.instance.n) if j not in chosen_set]
        table = swap_matrix(self.kernel, self.X, self.v, chosen, outside, self._count)
        table -= self.a_sum
        return {(j_out, j_in): value for j_out, row in zip(chosen, table.tolist())
                for j_in, value in zip(outside, row)}


class Removals:
    """f(alpha_bar, K) and f(alpha_bar, K - j), j in K, while features leave K one at a time (the greedy
    eliminations at a fixed alpha, RFE's screening of its removals).

    From the moment table of the first K where the kernel has one and it is cheaper
    (:meth:`FixedAlpha.moment_table`: polynomial kernels, all the values of one K in one pass over its
    monomials, :func:`~minlp_fs.monomials.poly_table_removals`), else from K's base matrix
    (:meth:`FixedAlpha.removal_values_of_base`, kept up to date by ``Kernel.remove``). Either way a value
    does not depend on the batch it is asked in, and every value is counted (the deadline checked) as an
    evaluation of ``fixed``.
    """

    def __init__(self, fixed: FixedAlpha, kept):
        self.fixed = fixed
        self.kept = sorted(kept)
        self.table = fixed.moment_table(self.kept)
        self.base = fixed.base(self.kept) if self.table is None else None
        self._of_kept = None  # the table's (q(K), {j: q(K - j)}) for the current K

    def _table_values(self):
        if self._of_kept is None:
            total, rest = self.table.removals(self.kept)
            self._of_kept = (total, dict(zip(self.kept, rest.tolist())))
        return self._of_kept

    def value(self) -> float:
        """f(alpha_bar, K)."""
        if self.table is None:
            return self.fixed.value_of_base(self.base)
        return float(self.fixed._batched(lambda _: [self._table_values()[0]], [None])[0])

    def values(self, removed) -> np.ndarray:
        """[f(alpha_bar, K - j) for j in removed]."""
        if self.table is None:
            return self.fixed.removal_values_of_base(self.base, removed)
        return self.fixed._batched(lambda js: [self._table_values()[1][j] for j in js], list(removed))

    def remove(self, j: int) -> None:
        """K <- K - {j}."""
        self.kept.remove(j)
        if self.table is None:
            self.fixed.kernel.remove(self.base, self.fixed.X, j)
        self._of_kept = None


def swap_matrix(kernel, X: np.ndarray, v: np.ndarray, chosen, outside, tick=None) -> np.ndarray:
    """Q[r, c] = 1/2 v' K_{S - i + j} v for i = chosen[r], j = outside[c] (S = chosen), batched by the
    kernel's ``swap_quads`` (:mod:`minlp_fs.kernels`: the formulas and their proofs).

    ``tick(k)``, if given, is called as the table fills with the k values it has computed since the last call
    (the caller's evaluation count and deadline check: :meth:`FixedAlpha._count`); the calls add up to
    B (n - B). Rows of X and v = alpha_bar * y are the support's.
    """
    X = np.asarray(X, dtype=float)
    v = np.asarray(v, dtype=float)
    chosen, outside = list(chosen), list(outside)
    out = np.empty((len(chosen), len(outside)))
    if not out.size or not v.size:  # no swap, or alpha_bar = 0: every quadratic form is 0
        out[...] = 0.0
        return out
    kernel.swap_quads(X, v, chosen, outside, out, tick or (lambda k: None))
    return out
