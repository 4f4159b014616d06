"""Kernel matrices of a node's probes from one shared base (paper sense, polynomial kernels).

The probes of a node (I, F, need) are the subsets I + {j}, j in F (:mod:`.tree`). A polynomial kernel
is K_S = phi(sum_{j in S} x_j x_j') entrywise with phi(t) = (gamma t + c)^d, so with the base
G_I = X_I X_I' of the node (one BLAS product) each probe's matrix is
K_{I+j} = phi(G_I + x_j x_j'): one compiled pass over the upper triangle, O(m^2) per probe instead of
the O(m^2 |I + j|) of building K_{I+j} from its columns (the Gram build was about half of a paper-sense
search's time on Ionosphere and BCD: benchmarks/RESULTS.md, bench_bnb_paper). Same matrix as
``Instance.gram`` up to the rounding of a different summation order. The base costs one m x m product; nodes with
fewer than 4 probes to solve used to build each matrix from its columns instead, which stopped paying once the probes
were solved in compiled chunks from the base (:mod:`.probe_solves`): CPU s with the base from 4 probes / from 1,
Parkinsons paper poly2 B = 6 0.32 / 0.30, poly3 0.18 / 0.17, Ionosphere poly5 B = 4 0.37 / 0.36, Cleveland poly5
B = 6 0.062 / 0.060, BCD poly3 B = 6 0.32 / 0.31, Diabetes poly2 B = 4 0.113 / 0.117 (m = 768, 17 nodes).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from numba import njit

from ..kernels import _power


@njit(cache=True, nogil=True)
def _poly_plus_outer(base, x, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out = (gamma (base + x x') + coef0) ** degree, row by row over every entry. The base X_I X_I' is symmetric
    bit for bit (BLAS's product of a matrix with its own transpose) and x_a x_b = x_b x_a, so out is too; computing
    both triangles with contiguous writes takes a third of the time of the upper triangle mirrored (m = 297: 20
    against 59-75 us for degrees 2, 3 and 5), whose strided writes kept the loop from vectorising."""
    m = base.shape[0]
    for a in range(m):
        xa = x[a]
        for b in range(m):
            out[a, b] = _power(gamma * (base[a, b] + xa * x[b]) + coef0, degree)


class ProbeGrams:
    """K_{I+j} of the probes of a node with fixed set ``fixed`` (module docstring); polynomial kernels only."""

    def __init__(self, instance, fixed):
        kernel = instance.kernel
        self.instance, self.fixed = instance, tuple(fixed)
        self.X, self.gamma, self.coef0, self.degree = instance.X, kernel.gamma, kernel.coef0, kernel.degree
        m = instance.X.shape[0]
        self.base = np.ascontiguousarray(kernel.base(instance.X, list(fixed))) if fixed else np.zeros((m, m))

    @cached_property
    def columns(self) -> np.ndarray:
        """X' (row j: feature j's column), contiguous: the x of each probe's pass."""
        return np.ascontiguousarray(self.X.T, dtype=float)

    def gram(self, j: int) -> np.ndarray:
        out = np.empty_like(self.base)
        _poly_plus_outer(self.base, self.columns[j], float(self.gamma), float(self.coef0), int(self.degree), out)
        return out
