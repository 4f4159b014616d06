"""f(A, S) = sum_k f(alpha_k, S) at a fixed stack A: the fixed-alpha evaluations of a multiclass instance.

:class:`StackedFixedAlpha` is what ``FixedAlpha(instance, A)`` returns for a
:class:`~minlp_fs.multiclass.MulticlassInstance` (LS*, ACSO, RFE1 and the alpha-start's
greedy all go through it). With the union support sv = {i : alpha_ki > 0 for some k}
and V = A[:, sv] o Y[:, sv] (one row v_k per class),

    f(A, S) = 1/2 sum_k v_k' phi( sum_{j in S} T_j[sv, sv] ) v_k - e'A,

one base matrix per subset shared by every class (the terms T_j do not depend on the labels), so the
greedy's base updates (base - T_j) are those of the binary case; the value of a base is
:func:`~minlp_fs.objective.stacked_objective`. Subset, removal and swap values (neighbourhood N1) are
the kernel's batched quadratic forms (``subset_quads``, ``removal_quads``,
:func:`~minlp_fs.heuristics.screening.swap_matrix`) of each class's v_k on the union support, summed.
Each value of f(A, S) counts as one evaluation (``n_evals``, the deadline's cadence), as in the binary
case, however many classes it sums: the multiclass oracle likewise counts one solve per subset.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..heuristics.screening import FixedAlpha, swap_matrix
from ..objective import stacked_objective


class StackedFixedAlpha(FixedAlpha):
    """Evaluate f(A, S) for many subsets S at one fixed K x m stack A (within ``deadline``)."""

    def __init__(self, instance, alpha: np.ndarray, deadline=None):
        self.instance = instance
        self.deadline = deadline
        self.n_evals = 0
        self.alpha = np.asarray(alpha, dtype=float)
        if self.alpha.shape != instance.Y.shape:
            raise InputError(f"a multiclass alpha must be a stack of shape {instance.Y.shape} (one row per "
                             f"class); got shape {self.alpha.shape}")
        self.sv = np.flatnonzero((self.alpha > 0).any(axis=0))
        self.X = instance.X[self.sv]
        self.y = instance.Y[:, self.sv]
        self.a = self.alpha[:, self.sv]
        self.kernel = instance.kernel
        self.v = self.a * self.y
        self.a_sum = float(self.a.sum())
        self._terms: dict[int, np.ndarray] = {}

    def value_of_base(self, base: np.ndarray, out: np.ndarray | None = None) -> float:
        """f(A, S) for the base matrix of S (on the union support); ``out`` is a scratch buffer of its shape."""
        self._count()
        return stacked_objective(self.a, self.kernel.apply(base, out=out), self.y)

    def values(self, subsets) -> np.ndarray:
        """[f(A, S) for S in subsets]: the kernel's ``subset_quads`` of each class's v_k, summed."""
        table = np.array([list(s) for s in subsets], dtype=np.intp).reshape(len(subsets), -1)
        return self._batched(lambda rows: sum(self.kernel.subset_quads(self.X, v, rows) for v in self.v), table)

    def removal_values_of_base(self, base: np.ndarray, removed) -> np.ndarray:
        """[f(A, S - {j}) for j in removed] given the base matrix of S: each class's ``removal_quads``, summed."""
        return self._batched(lambda js: sum(self.kernel.removal_quads(base, self.X, v, js) for v in self.v),
                             list(removed))

    def moment_table(self, ground):
        """None: the moments are per class (a stack of v), so removals go through the base matrix."""
        return None

    def _tick(self, k: int):
        """The ``tick`` of class k's swap matrix: class 0's blocks count the swaps (each swap value is one
        evaluation, as for the binary evaluator and for :meth:`values`, whatever the number of classes);
        the other classes' blocks only check the deadline."""
        if k == 0:
            return self._count
        return lambda evaluations: self.deadline is not None and self.deadline.check()

    def swap_values(self, subset) -> dict:
        """{(j_out, j_in): f(A, subset - j_out + j_in)} over N1: the classes' swap matrices, summed; each
        swap counted once."""
        chosen_set = set(subset)
        chosen = sorted(chosen_set)
        outside = [j for j in range(self.instance.n) if j not in chosen_set]
        table = sum(swap_matrix(self.kernel, self.X, v, chosen, outside, tick=self._tick(k)) for k, v in enumerate(self.v))
        table = table - self.a_sum
        return {(j_out, j_in): float(table[r, c]) for r, j_out in enumerate(chosen)
                for c, j_in in enumerate(outside)}
