"""Warm-started SMO for the SVM dual (problem (2)) on a dense kernel matrix, compiled with numba.

Solves  min 1/2 a'Qa - e'a  s.t. y'a = 0, 0 <= a <= C,  with Q = (yy') * K, by sequential
minimal optimisation with the second-order working-set selection of Fan, Chen and Lin (2005),
the rule libsvm uses, stopping when the maximal KKT violation m(a) - M(a) is below ``tol``.

Any a in the dual polytope is a valid start, and the polytope does not depend on beta, so the
alpha of one feature subset warm-starts the next (a swap neighbour or the next subset of the
revolving-door enumeration). Only the starting gradient Q a - e costs O(m * |support|).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_TAU = 1e-12


@njit(cache=True, nogil=True)
def _smo(K, y, C, alpha, grad, tol, max_iter):  # pragma: no cover - compiled
    m = y.shape[0]
    it = 0
    while it < max_iter:
        # i: maximal violating index in I_up (libsvm's select_working_set)
        gmax = -np.inf
        i = -1
        for t in range(m):
            if y[t] > 0:
                if alpha[t] < C and -grad[t] >= gmax:
                    gmax = -grad[t]
                    i = t
            else:
                if alpha[t] > 0 and grad[t] >= gmax:
                    gmax = grad[t]
                    i = t
        gmax2 = -np.inf
        j = -1
        obj_min = np.inf
        for t in range(m):
            if y[t] > 0:
                if alpha[t] > 0:
                    if grad[t] >= gmax2:
                        gmax2 = grad[t]
                    diff = gmax + grad[t]
                    if diff > 0 and i >= 0:
                        quad = K[i, i] + K[t, t] - 2.0 * K[i, t]
                        if quad <= 0:
                            quad = _TAU
                        obj = -(diff * diff) / quad
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
            else:
                if alpha[t] < C:
                    if -grad[t] >= gmax2:
                        gmax2 = -grad[t]
                    diff = gmax - grad[t]
                    if diff > 0 and i >= 0:
                        quad = K[i, i] + K[t, t] - 2.0 * K[i, t]
                        if quad <= 0:
                            quad = _TAU
                        obj = -(diff * diff) / quad
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
        if gmax + gmax2 < tol or j < 0:
            break
        it += 1
        ai, aj = alpha[i], alpha[j]
        qij = y[i] * y[j] * K[i, j]
        if y[i] != y[j]:
            quad = K[i, i] + K[j, j] + 2.0 * qij
            if quad <= 0:
                quad = _TAU
            delta = (-grad[i] - grad[j]) / quad
            diff = ai - aj
            ni, nj = ai + delta, aj + delta
            if diff > 0:
                if nj < 0:
                    nj = 0.0
                    ni = diff
            else:
                if ni < 0:
                    ni = 0.0
                    nj = -diff
            if diff > 0:
                if ni > C:
                    ni = C
                    nj = C - diff
            else:
                if nj > C:
                    nj = C
                    ni = C + diff
        else:
            quad = K[i, i] + K[j, j] - 2.0 * qij
            if quad <= 0:
                quad = _TAU
            delta = (grad[i] - grad[j]) / quad
            s = ai + aj
            ni, nj = ai - delta, aj + delta
            if s > C:
                if ni > C:
                    ni = C
                    nj = s - C
            else:
                if nj < 0:
                    nj = 0.0
                    ni = s
            if s > C:
                if nj > C:
                    nj = C
                    ni = s - C
            else:
                if ni < 0:
                    ni = 0.0
                    nj = s
        dai, daj = ni - ai, nj - aj
        alpha[i], alpha[j] = ni, nj
        yi_dai, yj_daj = y[i] * dai, y[j] * daj
        for t in range(m):
            grad[t] += y[t] * (K[i, t] * yi_dai + K[j, t] * yj_daj)
    return it


def smo_solve(K: np.ndarray, y: np.ndarray, C: float, alpha0: np.ndarray | None = None,
              tol: float = 1e-7, max_iter: int = 10_000_000) -> tuple[np.ndarray, int]:
    """Optimal alpha of the SVM dual for kernel matrix K, started from ``alpha0`` (or 0).

    Returns (alpha, iterations). ``alpha0`` must be feasible (y'a = 0, 0 <= a <= C); it is
    projected onto the box, and dropped for 0 if the equality is violated by more than 1e-9 * C.
    """
    m = y.shape[0]
    if alpha0 is None:
        alpha = np.zeros(m)
    else:
        alpha = np.clip(np.asarray(alpha0, dtype=float), 0.0, C)
        if abs(alpha @ y) > 1e-9 * C * m:
            alpha = np.zeros(m)
    grad = -np.ones(m)
    sv = np.flatnonzero(alpha > 0)
    if sv.size:
        grad += y * (K[:, sv] @ (alpha[sv] * y[sv]))
    K = np.ascontiguousarray(K, dtype=np.float64)
    iters = _smo(K, np.ascontiguousarray(y, dtype=np.float64), float(C), alpha, grad, float(tol), max_iter)
    return alpha, int(iters)
