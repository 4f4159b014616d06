"""Kernel matrix and warm-start gradient of a swap neighbour in one compiled pass (LS's N1, Algorithm 1).

A neighbour S' = S - {j_out} + {j_in} of a centre S has K' = phi(base_S - T_out + T_in)
(:mod:`minlp_fs.kernels`; a removal S - {j_out}, as in RFE, is the same with T_in = 0). SMO
warm-started from the centre's alpha first needs grad = Q' alpha - e, an O(m^2) product over K',
and its first duality check (the early stop of :func:`~minlp_fs.alpha.smo.smo_solve`) needs
nothing else. :class:`NeighbourGrams` writes K' and grad in one pass instead of building K' from
the B selected columns and multiplying afterwards:

* polynomial: from the centre's base matrix, entry phi(gamma (base_ab - x_out,a x_out,b +
  x_in,a x_in,b) + c): one read, a few multiplications;
* Gaussian: K' = exp(-gamma (D_S - d_out)) * exp(-gamma d_in), with the B "centre without j_out"
  matrices built once per centre and the per-feature matrices exp(-gamma d_j) once per instance
  (:class:`GaussianTables`, lazily, shared by every centre): one multiplication per entry instead
  of one exp. While the tables would exceed ``TABLE_BYTES`` the exp is computed per entry from D_S.

Entries agree with a Gram built from scratch to rounding (tests/test_neighbours.py: 1e-12 relative).
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

#: memory allowed for the Gaussian tables ((n + B) m^2 doubles); above it, one exp per entry
TABLE_BYTES = 256 * 2**20


# Full rows, written in order: measured 1.5-2x faster than the upper triangle with mirrored writes
# (strided column stores, and the scattered gradient updates keep the loop from vectorising), except
# where an exp per entry dominates (_fill_rbf).
# fastmath lets LLVM reassociate the row sums and fuse multiply-adds (differences of a few ulps):
# grad is a warm-start gradient, and the value of every fit is recomputed by the one objective.


@njit(cache=True, nogil=True, fastmath=True)
def _fill_poly(base, x_out, x_in, gamma, coef0, degree, y, ay, K, grad):  # pragma: no cover - compiled
    """K = (gamma (base - x_out x_out' + x_in x_in') + c)^d and grad = y * (K ay) - 1, one pass."""
    m = base.shape[0]
    for a in range(m):
        ia, oa = x_in[a], x_out[a]
        row = 0.0
        if degree == 2:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                K[a, b] = t * t
                row += K[a, b] * ay[b]
        elif degree == 3:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                K[a, b] = t * t * t
                row += K[a, b] * ay[b]
        else:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                r = t
                for _ in range(degree - 1):
                    r *= t
                K[a, b] = r
                row += r * ay[b]
        grad[a] = y[a] * row - 1.0


@njit(cache=True, nogil=True)
def _fill_rbf(base, x_out, x_in, gamma, y, ay, K, grad):  # pragma: no cover - compiled
    """K = exp(-gamma (base - d_out + d_in)) and grad = y * (K ay) - 1, one pass over the upper
    triangle (the exp dominates: half of them beats contiguous writes here)."""
    m = base.shape[0]
    acc = np.zeros(m)
    for a in range(m):
        ia, oa, ca = x_in[a], x_out[a], ay[a]
        K[a, a] = 1.0
        row = ca
        for b in range(a + 1, m):
            di = ia - x_in[b]
            do = oa - x_out[b]
            r = np.exp(-gamma * (base[a, b] - do * do + di * di))
            K[a, b] = r
            K[b, a] = r
            row += r * ay[b]
            acc[b] += r * ca
        acc[a] += row
    for t in range(m):
        grad[t] = y[t] * acc[t] - 1.0


@njit(cache=True, nogil=True, fastmath=True)
def _fill_product(P, Q, y, ay, K, grad):  # pragma: no cover - compiled
    """K = P * Q elementwise and grad = y * (K ay) - 1, one pass."""
    m = P.shape[0]
    for a in range(m):
        row = 0.0
        for b in range(m):
            K[a, b] = P[a, b] * Q[a, b]
            row += K[a, b] * ay[b]
        grad[a] = y[a] * row - 1.0


class GaussianTables:
    """exp(-gamma d_j) per feature j (d_j = squared differences of column j), built on first use."""

    def __init__(self, instance):
        self.instance = instance
        self._tables: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def fits(self, n_extra: int) -> bool:
        m, n = self.instance.m, self.instance.n
        return (n + n_extra) * m * m * 8 <= TABLE_BYTES

    def table(self, j: int) -> np.ndarray:
        with self._lock:
            if j not in self._tables:
                kern = self.instance.kernel
                self._tables[j] = kern.apply(kern.feature_term(self.instance.X, j))
            return self._tables[j]


class NeighbourGrams:
    """K' and Q' alpha - e of the single swaps and removals of one centre subset (thread-safe)."""

    def __init__(self, instance, centre, tables: GaussianTables | None = None):
        self.instance = instance
        self.centre = tuple(sorted(centre))
        kern = instance.kernel
        self.base = kern.base(instance.X, self.centre)
        self.gaussian = kern.name == "rbf"
        self.tables = tables if self.gaussian and tables is not None and tables.fits(len(self.centre)) else None
        self._without: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def swap_of(self, subset) -> tuple[int, int | None] | None:
        """(j_out, j_in) when ``subset`` is the centre with one feature swapped, (j_out, None) when it
        is the centre without one feature (RFE's removals), else None."""
        subset = set(subset)
        out, into = set(self.centre) - subset, subset - set(self.centre)
        if len(out) != 1 or len(into) > 1 or len(subset) + 1 - len(into) != len(self.centre):
            return None
        return out.pop(), (into.pop() if into else None)

    def _centre_without(self, j_out: int) -> np.ndarray:
        with self._lock:
            if j_out not in self._without:
                kern, X = self.instance.kernel, self.instance.X
                self._without[j_out] = kern.apply(self.base - kern.feature_term(X, j_out))
            return self._without[j_out]

    def fill(self, subset, alpha: np.ndarray):
        """(K', grad) for a single swap or removal and a feasible alpha, or None for other subsets."""
        swap = self.swap_of(subset)
        if swap is None:
            return None
        j_out, j_in = swap
        inst = self.instance
        m = inst.m
        K, grad = np.empty((m, m)), np.empty(m)
        y = inst.y
        ay = np.ascontiguousarray(alpha * y)
        x_out = np.ascontiguousarray(inst.X[:, j_out], dtype=float)
        # a removal is a swap with an all-zero column: its term vanishes for both kernels
        x_in = np.zeros(m) if j_in is None else np.ascontiguousarray(inst.X[:, j_in], dtype=float)
        kern = inst.kernel
        if self.tables is not None and j_in is not None:
            _fill_product(self._centre_without(j_out), self.tables.table(j_in), y, ay, K, grad)
        elif self.gaussian:
            _fill_rbf(self.base, x_out, x_in, kern.gamma, y, ay, K, grad)
        else:
            _fill_poly(self.base, x_out, x_in, kern.gamma, kern.coef0, kern.degree, y, ay, K, grad)
        return K, grad
