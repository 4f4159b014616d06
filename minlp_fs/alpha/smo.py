"""Warm-started SMO for the SVM dual (paper problem (3)) on a dense kernel matrix, compiled with numba.

Solves  min 1/2 a'Qa - e'a  s.t. y'a = 0, 0 <= a <= C,  with Q = (yy') * K, by sequential
minimal optimisation with the second-order working-set selection of Fan, Chen and Lin (2005)
and libsvm's shrinking heuristic (Chang and Lin, section 5.1), stopping when the maximal KKT
violation m(a) - M(a) is below ``tol`` on *all* indices (shrunk ones are restored and checked).

Any a in the dual polytope is a valid start, and the polytope does not depend on beta, so the
alpha of one feature subset warm-starts the next (a swap neighbour or the next subset of the
revolving-door enumeration). With the whole K at hand, the gradient Q a - e of shrunk indices is
recomputed exactly in O(m * |support|) when they are restored.

Early stop (``above`` / ``below``): a caller that only needs to know whether g(beta) beats an
incumbent can stop as soon as duality decides it. f(alpha) >= g at every feasible alpha and SMO only
lowers f, so f < ``below`` proves g < ``below``; minus the SVM primal at alpha is <= g (weak
duality), so a primal bound > ``above`` proves g > ``above``. Neither changes which subset wins.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_TAU = 1e-12
#: SMO steps between two primal-bound checks of an early stop while no index is shrunk
_BOUND_EVERY = 8


@njit(cache=True, nogil=True)
def _full_gradient(K, y, alpha, grad):  # pragma: no cover - compiled
    """grad = Q alpha - e for every index."""
    m = y.shape[0]
    for t in range(m):
        grad[t] = -1.0
    for s in range(m):
        if alpha[s] > 0:
            c = alpha[s] * y[s]
            for t in range(m):
                grad[t] += y[t] * K[s, t] * c


@njit(cache=True, nogil=True)
def _select(K, y, C, alpha, grad, active, n_active):  # pragma: no cover - compiled
    """libsvm's second-order working set (i, j) over the active indices, and the violation."""
    gmax = -np.inf
    i = -1
    for p in range(n_active):
        t = active[p]
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
    for p in range(n_active):
        t = active[p]
        if y[t] > 0:
            if alpha[t] > 0:
                if grad[t] >= gmax2:
                    gmax2 = grad[t]
                diff = gmax + grad[t]
            else:
                continue
        else:
            if alpha[t] < C:
                if -grad[t] >= gmax2:
                    gmax2 = -grad[t]
                diff = gmax - grad[t]
            else:
                continue
        if diff > 0 and i >= 0:
            quad = K[i, i] + K[t, t] - 2.0 * K[i, t]
            if quad <= 0:
                quad = _TAU
            obj = -(diff * diff) / quad
            if obj <= obj_min:
                obj_min = obj
                j = t
    return i, j, gmax + gmax2


@njit(cache=True, nogil=True)
def _shrink(y, C, alpha, grad, active, n_active, tol, K, unshrunk):  # pragma: no cover - compiled
    """Drop bounded indices that cannot enter a working set soon (libsvm's do_shrinking)."""
    g1 = -np.inf  # max over I_up of -y grad
    g2 = -np.inf  # max over I_low of y grad
    for p in range(n_active):
        t = active[p]
        if y[t] > 0:
            if alpha[t] < C:
                g1 = max(g1, -grad[t])
            if alpha[t] > 0:
                g2 = max(g2, grad[t])
        else:
            if alpha[t] < C:
                g2 = max(g2, -grad[t])
            if alpha[t] > 0:
                g1 = max(g1, grad[t])
    m = y.shape[0]
    if not unshrunk and g1 + g2 <= 10.0 * tol:
        unshrunk = True
        _full_gradient(K, y, alpha, grad)
        for t in range(m):
            active[t] = t
        n_active = m
    p = 0
    while p < n_active:
        t = active[p]
        if alpha[t] >= C:
            out = (-grad[t] > g1) if y[t] > 0 else (-grad[t] > g2)
        elif alpha[t] <= 0:
            out = (grad[t] > g2) if y[t] > 0 else (grad[t] > g1)
        else:
            out = False
        if out:
            n_active -= 1
            active[p], active[n_active] = active[n_active], active[p]
        else:
            p += 1
    return n_active, unshrunk


@njit(cache=True, nogil=True)
def _lower_bound(y, C, alpha, grad):  # pragma: no cover - compiled
    """-P(w, b, xi) <= g: minus the SVM primal at the point alpha defines (weak duality).

    w = sum_i alpha_i y_i phi(x_i), bias -rho with rho the mean of y_i grad_i over the free alphas
    (libsvm's rule; the midpoint of the feasible interval when none is free), xi_i = max(0, y_i rho -
    grad_i). P = 1/2 alpha'Q alpha + C sum xi, and alpha'Q alpha = sum_i alpha_i (grad_i + 1).
    """
    m = y.shape[0]
    total, n_free = 0.0, 0
    lo, hi = -np.inf, np.inf
    for t in range(m):
        yg = y[t] * grad[t]
        if 0 < alpha[t] < C:
            total += yg
            n_free += 1
        elif (alpha[t] <= 0) == (y[t] > 0):  # rho <= y_t grad_t
            hi = min(hi, yg)
        else:
            lo = max(lo, yg)
    if n_free > 0:
        rho = total / n_free
    elif np.isfinite(lo) and np.isfinite(hi):
        rho = 0.5 * (lo + hi)
    else:
        rho = lo if np.isfinite(lo) else (hi if np.isfinite(hi) else 0.0)
    quad, slack = 0.0, 0.0
    for t in range(m):
        quad += alpha[t] * (grad[t] + 1.0)
        xi = y[t] * rho - grad[t]
        if xi > 0:
            slack += xi
    return -(0.5 * quad + C * slack)


@njit(cache=True, nogil=True)
def _smo(K, y, C, alpha, grad, tol, max_iter, shrinking, above, below):  # pragma: no cover - compiled
    """SMO; returns (iterations, pruned, f(alpha) tracked). Pruned: stopped once the optimum g is proven > ``above``
    (by the primal bound, checked every _BOUND_EVERY steps, or every min(m, 1000) once shrinking) or < ``below`` (f(alpha) >= g only
    decreases, tracked in O(1) per step). Pass +inf / -inf to solve to ``tol``."""
    m = y.shape[0]
    active = np.arange(m)
    n_active = m
    unshrunk = False
    period = min(m, 1000)
    counter = period + 1
    value = 0.0  # f(alpha) = 1/2 sum_i alpha_i (grad_i - 1)
    for t in range(m):
        value += 0.5 * alpha[t] * (grad[t] - 1.0)
    it = 0
    while it < max_iter:
        if value < below:
            return it, True, value
        counter -= 1
        # the primal bound costs O(m) while nothing is shrunk (check every BOUND_EVERY steps), else a
        # gradient reconstruction (check at the shrinking period only)
        if above < np.inf and n_active == m and it % _BOUND_EVERY == 0 \
                and _lower_bound(y, C, alpha, grad) > above:
            return it, True, value
        if counter == 0:
            counter = period
            if above < np.inf and n_active < m:
                _full_gradient(K, y, alpha, grad)
                if _lower_bound(y, C, alpha, grad) > above:
                    return it, True, value
            if shrinking:
                n_active, unshrunk = _shrink(y, C, alpha, grad, active, n_active, tol, K, unshrunk)
        i, j, violation = _select(K, y, C, alpha, grad, active, n_active)
        if violation < tol or j < 0:
            if n_active == m:
                break
            _full_gradient(K, y, alpha, grad)  # restore the shrunk indices and check them
            for t in range(m):
                active[t] = t
            n_active = m
            i, j, violation = _select(K, y, C, alpha, grad, active, n_active)
            if violation < tol or j < 0:
                break
            counter = 1
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
        alpha[i], alpha[j] = ni, nj
        dai, daj = ni - ai, nj - aj
        value += grad[i] * dai + grad[j] * daj + 0.5 * (K[i, i] * dai * dai + K[j, j] * daj * daj) \
            + qij * dai * daj
        yi_dai, yj_daj = y[i] * dai, y[j] * daj
        for p in range(n_active):
            t = active[p]
            grad[t] += y[t] * (K[i, t] * yi_dai + K[j, t] * yj_daj)
    return it, False, value


def smo_solve(K: np.ndarray, y: np.ndarray, C: float, alpha0: np.ndarray | None = None,
              tol: float = 1e-7, max_iter: int = 10_000_000, shrinking: bool = True,
              above: float = np.inf, below: float = -np.inf,
              grad0: np.ndarray | None = None, stats: dict | None = None) -> tuple[np.ndarray, int]:
    """Optimal alpha of the SVM dual for kernel matrix K, started from ``alpha0`` (or 0).

    Returns (alpha, iterations), or (alpha, -max(iterations, 1)) when the solve stopped early because the
    optimum g is proven above ``above`` or below ``below`` (alpha is then feasible, not optimal).
    ``alpha0`` must be feasible (y'a = 0, 0 <= a <= C); it is projected with :func:`feasible_start`.
    ``grad0``: Q alpha0 - e when the caller has it (:class:`~minlp_fs.alpha.neighbours.NeighbourGrams`);
    it is used only if ``alpha0`` needed no projection, and then overwritten. ``stats``: a dict that
    receives ``value``, f(alpha) as SMO tracked it (O(1) per step; accurate to rounding drift).
    """
    m = y.shape[0]
    alpha = feasible_start(alpha0, y, C)
    K = np.ascontiguousarray(K, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if grad0 is not None and alpha0 is not None and np.array_equal(alpha, alpha0):
        grad = np.ascontiguousarray(grad0, dtype=np.float64)
    else:
        grad = np.empty(m)
        _full_gradient(K, y, alpha, grad)
    iters, pruned, value = _smo(K, y, float(C), alpha, grad, float(tol), max_iter, shrinking, float(above),
                                float(below))
    if stats is not None:
        stats["value"] = value
    return alpha, -max(int(iters), 1) if pruned else int(iters)  # -1, not -0, for a stop before any step


def feasible_start(alpha0: np.ndarray | None, y: np.ndarray, C: float) -> np.ndarray:
    """A copy of ``alpha0`` projected onto the box [0, C], or 0 if y'a = 0 is violated by more than
    1e-9 * C * m (or ``alpha0`` is None)."""
    m = y.shape[0]
    if alpha0 is None:
        return np.zeros(m)
    alpha = np.clip(np.asarray(alpha0, dtype=float), 0.0, C)
    return alpha if abs(alpha @ y) <= 1e-9 * C * m else np.zeros(m)
