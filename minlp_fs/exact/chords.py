"""Chord bound of a fit-sense node at a fixed alpha, Gaussian kernel (issue 12).

Fit sense (maximise g): for ANY feasible alpha, g(S) <= f(alpha, S) = 1/2 v'K_S v - e'alpha, v = alpha * y
(g is a minimum over alpha). A node (I, F, need) holds the S = I u R, R subset of F, |R| = r = need.
With K_S(i, h) = exp(-gamma s_ih(S)), s_ih(S) = sum_{j in S} d_ihj, d_ihj = (x_ij - x_hj)^2 >= 0, and
c_ih = v_i v_h, a_ih = s_ih(I), t_ih(R) = sum_{j in R} d_ihj:

    f(alpha, I u R) = 1/2 sum_i v_i^2 + sum_{i<h} c_ih phi_ih(t_ih(R)) - e'alpha,   phi_ih(t) = exp(-gamma (a_ih + t)).

Neither monotone nor submodular in R (the appendix's counterexample), but every phi_ih is convex and
decreasing in the one number t, and t_ih(R) lies in [lo_ih, hi_ih], the sums of the r smallest and the r
largest d_ihj over any pool P containing R. So each term has an affine upper bound in t:

* c_ih > 0: the chord of the convex phi over [lo, hi] lies above it there,
  phi(t) <= phi(lo) + sigma (t - lo), sigma = (phi(hi) - phi(lo)) / (hi - lo) (sigma = 0 when hi = lo);
* c_ih < 0: the tangent of the convex phi at any tau lies below it everywhere,
  phi(t) >= phi(tau) + sigma (t - tau), sigma = -gamma phi(tau); times c_ih < 0 it bounds c_ih phi(t) above.
  tau = r * mean(d_ih. over P), in [lo, hi] (the value at beta = r / |P| on P: where alpha is fitted).

Since t_ih(R) = sum_{j in R} d_ihj is linear in R's indicator, summing the terms gives

    f(alpha, I u R) <= kappa + sum_{j in R} w_j <= kappa + (sum of the r largest w_j over P),
    kappa = 1/2 sum_i v_i^2 + sum_{i<h} c_ih (phi_ih(p_ih) - sigma_ih p_ih) - e'alpha,   w_j = sum_{i<h} c_ih sigma_ih d_ihj,

with p_ih the chord's lo or the tangent's tau. With r = 0 or |P| = r (one subset) lo = hi and the bound is
f(alpha, S) itself. A multiclass instance sums its one-vs-rest machines (f(A, S) = sum_k f(alpha_k, S)):
the sum of their affine bounds is affine (kappa = sum_k kappa_k, w = sum_k w_k), bounded over |R| = r by
the r largest summed w_j. Only rows with alpha_i > 0 enter (the other terms are 0), and rows equal on
I u F count once with the sum of their v (their K_S entries are 1 for every S inside I u F).

**Scaling** (:meth:`GaussianChords.child_bounds`): s alpha is feasible for 0 <= s <= s_max = min_i C / alpha_i
(the box; y'(s alpha) = s y'alpha = 0), and f(s alpha, S) = s^2 q(S) - s L with q(S) = 1/2 v'K_S v and L = e'alpha.
The affine bound gives q(S) <= Q = (the bound above) + L over the child, so
g(S) <= min_{0 <= s <= s_max} s^2 Q - s L, at s = min(s_max, L / (2Q)): never above the bound at s = 1, and
below 0 = f(0, S) where the chords are loose (a child bounded at +10^5 by the chords has g <= -L^2 / (4Q)).
It moved no node's prune on the instances measured (Ionosphere B = 5, Sonar B = 4, Cleveland and Parkinsons
B = 6: the same nodes; the chords prune where they are tight, s ~ 1 there),
but it makes the anytime bound of an unfinished search a number of the problem's scale.

Per child t of a split by an order (I_t = I + order[t], P_t = order[t+1:], r = need - 1), the pools are the
order's suffixes, so one backward pass per pair (:func:`_chord_block`, compiled) gives every child's lo, hi,
tau and affine terms, and one matrix product every child's w. Pairs are taken in blocks of
:data:`PAIR_BLOCK`, so the memory is O(PAIR_BLOCK x |F|), never O(m^2 |F|).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..multiclass import machines
from .partners import keep_extremes, top_sums

#: pairs of rows per block (bounds the memory to two PAIR_BLOCK x |F| arrays)
PAIR_BLOCK = 1 << 14


@njit(cache=True, nogil=True)
def _chord_block(Xi, Xp, rows, cols, v, gamma, r, count, d, slope, kappa):
    """The pairs (rows[p], cols[p]) of one block: their distances over the order's columns into ``d``
    (d[p, k] = (Xp[i, k] - Xp[h, k])^2), and for each child t < ``count`` (fixed part a_ih + d[p, t], pool
    d[p, t+1:], r of it) the affine bound of the module docstring: c_ih sigma into ``slope[p, t]`` and
    c_ih (phi(point) - sigma point) added to ``kappa[t]``. lo, hi and tau come from one backward pass over
    the pool (two sorted buffers of the r smallest and largest values)."""
    width = Xp.shape[1]
    small = np.empty(max(r, 1))
    large = np.empty(max(r, 1))
    for p in range(len(rows)):
        i, h = rows[p], cols[p]
        c = v[i] * v[h]
        a = 0.0
        for k in range(Xi.shape[1]):
            a += (Xi[i, k] - Xi[h, k]) ** 2
        for k in range(width):
            d[p, k] = (Xp[i, k] - Xp[h, k]) ** 2
        n_in, lo, hi, total = 0, 0.0, 0.0, 0.0
        for k in range(width, 0, -1):          # pool d[p, k:] (empty at k = width) is the pool of child t = k - 1
            if k < width:
                x = d[p, k]
                total += x
                if r > 0:
                    lo += keep_extremes(small, n_in, r, x, True)
                    hi += keep_extremes(large, n_in, r, x, False)
                    n_in = min(n_in + 1, r)
            t = k - 1
            if t >= count:
                continue
            base = a + d[p, t]
            if c > 0.0:                         # chord over [lo, hi]
                f_lo = np.exp(-gamma * (base + lo))
                sigma = 0.0
                if hi > lo:
                    sigma = (np.exp(-gamma * (base + hi)) - f_lo) / (hi - lo)
                slope[p, t] = c * sigma
                kappa[t] += c * (f_lo - sigma * lo)
            else:                               # tangent at tau = r * mean of the pool
                tau = r * total / (width - k) if k < width else 0.0
                f_tau = np.exp(-gamma * (base + tau))
                slope[p, t] = -c * gamma * f_tau
                kappa[t] += c * (f_tau + gamma * f_tau * tau)


class GaussianChords:
    """The affine bounds of the module docstring at one feasible alpha, for the children of a node's split."""

    def __init__(self, instance, alpha: np.ndarray, fixed, free):
        self.fixed, self.free = list(fixed), list(free)
        self.gamma = float(instance.kernel.gamma)
        self.parts = []
        universe = sorted((*self.fixed, *self.free))
        svms = machines(instance, alpha)            # multiclass: f(A, S) = sum_k f(alpha_k, S), term by term
        for part, a in svms:
            sv = np.flatnonzero(a > 0)
            X, v = part.X[sv], a[sv] * part.y[sv]
            _, first, group = np.unique(X[:, universe], axis=0, return_index=True, return_inverse=True)
            V = np.bincount(group.ravel(), weights=v, minlength=len(first))     # rows equal on I u F: one row
            keep = V != 0
            self.parts.append((X[first[keep]], V[keep], 0.5 * float(V @ V) - float(a.sum())))
        self.linear = sum(float(a.sum()) for _, a in svms)       # L = e'alpha, and s_max (module docstring, scaling)
        self.s_max = min((float(np.min(np.broadcast_to(part.C, a.shape)[a > 0] / a[a > 0])) for part, a in svms
                          if np.any(a > 0)), default=1.0)

    def _pairs(self, m: int):
        """The pairs i < h of m rows, in blocks of PAIR_BLOCK."""
        i, h = np.triu_indices(m, 1)
        for lo in range(0, len(i), PAIR_BLOCK):
            yield i[lo:lo + PAIR_BLOCK], h[lo:lo + PAIR_BLOCK]

    def gains(self, need: int) -> dict:
        """{j: w_j} of the node's own affine bound (pool F, r = need): the order's estimated gains. Computed as
        the one child of a split by (z, *F) with z a zero column (its fixed part I, its pool F)."""
        return dict(zip(self.free, self._affine([None, *self.free], need + 1, 1)[1][0, 1:]))

    def _affine(self, order, need: int, count: int):
        """(kappa, w) of the first ``count`` children of the split by ``order`` (None: a zero column)."""
        r = need - 1
        kappa = np.zeros(count)
        w = np.zeros((count, len(order)))
        for X, v, base in self.parts:
            kappa += base
            Xp = np.column_stack([np.zeros(len(v)) if j is None else X[:, j] for j in order])
            Xi = np.ascontiguousarray(X[:, self.fixed])
            for rows, cols in self._pairs(len(v)):
                d = np.empty((len(rows), len(order)))
                slope = np.empty((len(rows), count))
                _chord_block(Xi, Xp, rows, cols, v, self.gamma, r, count, d, slope, kappa)
                w += slope.T @ d
        return kappa, w

    def child_bounds(self, order, need: int, scaled: bool = True) -> list:
        """Upper bounds of g(S) over each child t of the split of (I, F, need) by ``order``: kappa_t + the
        need - 1 largest w_tj over order[t+1:], a bound of f(alpha, S) (``scaled=False``), then the least over
        the scaled alphas s alpha (module docstring, scaling)."""
        r, count = need - 1, len(order) - need + 1
        kappa, w = self._affine(list(order), need, count)
        tops = top_sums(w, r, np.arange(count)) if r > 0 else np.zeros(count)
        return [self._scaled(float(b)) if scaled else float(b) for b in kappa[:count] + tops]

    def _scaled(self, bound: float) -> float:
        """min over 0 <= s <= s_max of s^2 Q - s L, Q = ``bound`` + L (module docstring, scaling)."""
        L, s_max = self.linear, self.s_max
        Q = bound + L
        s = s_max if Q <= 0 else min(s_max, L / (2.0 * Q))
        return min(bound, s * s * Q - s * L)
