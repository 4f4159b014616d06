"""f(alpha_bar, beta) at a fixed alpha: the cheap screening score of LS*, ACSO and RFE1.

With alpha fixed, only the support rows sv = {i : alpha_i > 0} enter f, and

    f(alpha_bar, S) = 1/2 v' phi( sum_{j in S} T_j[sv, sv] ) v - e'alpha_bar,   v = alpha_bar * y

(problem (5) plus the constant -e'alpha_bar). This is F(S)/2 - e'alpha_bar with F of section 4.2.
Values are computed by :func:`minlp_fs.objective.dual_objective` on the support-restricted arrays, so
they are the same numbers as everywhere else. Swap and removal scores reuse one base matrix of the
current subset and update it per candidate in O(|sv|^2).

Every evaluation goes through :meth:`FixedAlpha.value_of_base`, which checks the ``deadline`` (a
:class:`~minlp_fs.stopping.Deadline`) every :data:`CHECK_EVERY` evaluations, so one screening pass or
greedy elimination over 10^5 features stops soon after a time limit (``SearchStopped``).
"""
from __future__ import annotations

import numpy as np

from ..objective import dual_objective

#: evaluations between two checks of the deadline
CHECK_EVERY = 256


class FixedAlpha:
    """Evaluate f(alpha_bar, S) for many subsets S at one fixed alpha_bar (within ``deadline``)."""

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
        self._terms: dict[int, np.ndarray] = {}

    def term(self, j: int) -> np.ndarray:
        """T_j restricted to the support (cached)."""
        t = self._terms.get(j)
        if t is None:
            t = self._terms[j] = self.kernel.feature_term(self.X, j)
        return t

    def base(self, subset) -> np.ndarray:
        return self.kernel.base(self.X, list(subset))

    def value_of_base(self, base: np.ndarray, out: np.ndarray | None = None) -> float:
        """f(alpha_bar, S) for the base matrix of S; ``out`` is a scratch buffer of its shape."""
        self.n_evals += 1
        if self.deadline is not None and self.n_evals % CHECK_EVERY == 0:
            self.deadline.check()
        return dual_objective(self.a, self.kernel.apply(base, out=out), self.y)

    def _addition_values(self, base: np.ndarray, candidates) -> dict:
        """{j: f(alpha_bar, base + T_j)} reusing two scratch buffers (no allocation per j)."""
        moved, gram = np.empty_like(base), np.empty_like(base)
        values = {}
        for j in candidates:
            np.add(base, self.term(j), out=moved)
            values[j] = self.value_of_base(moved, out=gram)
        return values

    def value(self, subset) -> float:
        """f(alpha_bar, subset)."""
        return self.value_of_base(self.base(subset))

    def swap_values(self, subset) -> dict:
        """{(j_out, j_in): f(alpha_bar, subset - j_out + j_in)} over the neighbourhood N1 (B(n-B) swaps)."""
        chosen = set(subset)
        outside = [j for j in range(self.instance.n) if j not in chosen]
        base = self.base(subset)
        scores = {}
        for j_out in sorted(chosen):
            added = self._addition_values(base - self.term(j_out), outside)
            scores.update({(j_out, j_in): v for j_in, v in added.items()})
        return scores
