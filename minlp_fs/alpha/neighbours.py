"""Kernel matrix and warm-start gradient of a swap neighbour in one compiled pass (LS's N1, Algorithm 1).

A neighbour S' = S - {j_out} + {j_in} of a centre S has K' = phi(base_S - T_out + T_in)
(:mod:`minlp_fs.kernels`; a removal S - {j_out}, as in RFE, is the same with T_in = 0). SMO
warm-started from the centre's alpha first needs grad = Q' alpha - e, an O(m^2) product over K',
and its first duality check (the early stop of :func:`~minlp_fs.alpha.smo.smo_solve`) needs
nothing else. :class:`NeighbourGrams` writes K' and grad in one pass instead of building K' from
the B selected columns and multiplying afterwards:

* by default, the kernel's own compiled pass from the centre's base matrix
  (:meth:`~minlp_fs.kernels.Kernel.fill_neighbour`), e.g. polynomial entry phi(gamma (base_ab -
  x_out,a x_out,b + x_in,a x_in,b) + c): one read, a few multiplications;
* a multiplicative kernel (phi(s + t) = phi(s) phi(t), the Gaussian): K' = phi(D_S - d_out) * phi(d_in),
  with the B "centre without j_out" matrices built once per centre and the per-feature matrices
  phi(d_j) once per instance (:class:`GaussianTables`, lazily, shared by every centre): one
  multiplication per entry instead of one exp. While the tables would exceed ``TABLE_BYTES`` the
  kernel's own pass computes the exp per entry from D_S.

Entries agree with a Gram built from scratch to rounding (tests/test_neighbours.py: 1e-12 relative).
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from ..fastmath import FASTMATH

#: memory allowed for the Gaussian tables ((n + B) m^2 doubles); above it, one exp per entry
TABLE_BYTES = 256 * 2**20


@njit(cache=True, nogil=True, fastmath=FASTMATH)
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
        self.tables = tables if kern.multiplicative and tables is not None and tables.fits(len(self.centre)) else None
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
                self._without[j_out] = self.instance.kernel.without(self.base, self.instance.X, j_out)
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
        if self.tables is not None and j_in is not None:
            _fill_product(self._centre_without(j_out), self.tables.table(j_in), y, ay, K, grad)
        else:
            inst.kernel.fill_neighbour(self.base, x_out, x_in, y, ay, K, grad)
        return K, grad
