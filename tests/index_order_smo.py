"""The index-order SMO that :func:`minlp_fs.alpha.smo._smo` replaced (commit 911c174), kept as the reference
its steps must follow bit for bit (tests/test_smo_positions.py). The pair's update, the masks, the gradient and the
primal bound are the package's own functions (the arithmetic both share, unchanged from 911c174).

It loops over ``active[:n_active]``, the active indices in libsvm's order, reading K, alpha and the gradient
through that index array; selections keep the last index attaining the extremum. The position-order SMO
visits the same indices in the same order through contiguous copies, with order-free scans.
"""
import numpy as np
from numba import njit

from minlp_fs.alpha.smo import (_BOUND_EVERY, _RECONSTRUCT_EVERY, _RECONSTRUCT_GROWTH, _SHRINK_EVERY, _TAU,
                                _full_gradient, _lower_bound, _pair_step, _set_masks)


@njit(cache=True, nogil=True)
def _shrunk_gradient(K, y, alpha, grad, active, n_active):  # pragma: no cover - compiled
    """grad_t = (Q alpha - e)_t for the shrunk indices t in active[n_active:] only (K symmetric: row t); the
    active ones keep SMO's incremental values."""
    m = y.shape[0]
    c = alpha * y
    for p in range(n_active, m):
        t = active[p]
        Kt = K[t]
        grad[t] = y[t] * np.dot(Kt, c) - 1.0


@njit(cache=True, nogil=True)
def _select_i(y, grad, up, active, n_active):  # pragma: no cover - compiled
    """i = argmax over I_up of -y_t grad_t (the last on ties), and that maximum; (-1, -inf) if I_up is empty."""
    gmax = -np.inf
    i = -1
    for p in range(n_active):
        t = active[p]
        v = up[t] - y[t] * grad[t]
        if v >= gmax:
            gmax = v
            i = t
    return (i, gmax) if gmax > -np.inf else (-1, -np.inf)


@njit(cache=True, nogil=True)
def _update_select_i(K, y, grad, up, active, n_active, i, j, ci, cj):  # pragma: no cover - compiled
    """grad_t += y_t (K_it ci + K_jt cj) over the active indices, fused with :func:`_select_i` on the new grad."""
    gmax = -np.inf
    inext = -1
    Ki, Kj = K[i], K[j]
    for p in range(n_active):
        t = active[p]
        g = grad[t] + y[t] * (Ki[t] * ci + Kj[t] * cj)
        grad[t] = g
        v = up[t] - y[t] * g
        if v >= gmax:
            gmax = v
            inext = t
    return (inext, gmax) if gmax > -np.inf else (-1, -np.inf)


@njit(cache=True, nogil=True)
def _select_j(K, Kd, y, grad, low, active, n_active, i, gmax):  # pragma: no cover - compiled
    """libsvm's second-order choice of j for a given i (Fan, Chen and Lin 2005, WSS 2): over t in I_low
    with b_t = gmax + y_t grad_t > 0, the largest decrease b_t^2 / (K_ii + K_tt - 2 K_it) of the
    objective along the pair's direction (the last on ties); returns (j, max over I_low of y_t grad_t)."""
    gmax2 = -np.inf
    j = -1
    obj_min = np.inf
    if i < 0:
        return j, gmax2
    Ki = K[i]
    kii = Kd[i]
    for p in range(n_active):
        t = active[p]
        s = low[t] + y[t] * grad[t]
        if s > gmax2:
            gmax2 = s
        diff = gmax + s
        if diff > 0:
            quad = kii + Kd[t] - 2.0 * Ki[t]
            if quad <= 0:
                quad = _TAU
            obj = -(diff * diff) / quad
            if obj <= obj_min:
                obj_min = obj
                j = t
    return j, gmax2


@njit(cache=True, nogil=True)
def _shrink(y, U, alpha, grad, active, n_active, tol, K, unshrunk):  # pragma: no cover - compiled
    """Drop bounded indices that cannot enter a working set soon (libsvm's do_shrinking)."""
    g1 = -np.inf  # max over I_up of -y grad
    g2 = -np.inf  # max over I_low of y grad
    for p in range(n_active):
        t = active[p]
        if y[t] > 0:
            if alpha[t] < U[t]:
                g1 = max(g1, -grad[t])
            if alpha[t] > 0:
                g2 = max(g2, grad[t])
        else:
            if alpha[t] < U[t]:
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
        if alpha[t] >= U[t]:
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
def _smo(K, y, U, alpha, grad, tol, max_iter, shrinking, above, below):  # pragma: no cover - compiled
    """SMO; returns (iterations, pruned, f(alpha) tracked). Pruned: stopped once the optimum g is proven > ``above``
    (by the primal bound, checked every _BOUND_EVERY steps, or about every max(min(m, _RECONSTRUCT_EVERY),
    steps / _RECONSTRUCT_GROWTH) once shrinking) or < ``below`` (f(alpha) >= g only
    decreases, tracked in O(1) per step). Pass +inf / -inf to solve to ``tol``."""
    m = y.shape[0]
    active = np.arange(m)
    n_active = m
    unshrunk = False
    period = min(m, _SHRINK_EVERY)
    counter = period + 1
    check_period = min(m, _RECONSTRUCT_EVERY)
    next_check = check_period
    Kd = np.empty(m)
    up, low = np.empty(m), np.empty(m)
    value = 0.0  # f(alpha) = 1/2 sum_i alpha_i (grad_i - 1)
    for t in range(m):
        value += 0.5 * alpha[t] * (grad[t] - 1.0)
        Kd[t] = K[t, t]
        _set_masks(y, U, alpha, t, up, low)
    i, gmax = _select_i(y, grad, up, active, n_active)
    it = 0
    while it < max_iter:
        if value < below:
            return it, True, value
        counter -= 1
        # the primal bound costs O(m) while nothing is shrunk (check every BOUND_EVERY steps), else a
        # gradient reconstruction (check at the shrinking period only)
        if above < np.inf and n_active == m and it % _BOUND_EVERY == 0 \
                and _lower_bound(y, U, alpha, grad) > above:
            return it, True, value
        if counter == 0:
            counter = period
            if above < np.inf and n_active < m and it >= next_check:
                next_check = it + max(check_period, it // _RECONSTRUCT_GROWTH)
                _shrunk_gradient(K, y, alpha, grad, active, n_active)
                if _lower_bound(y, U, alpha, grad) > above:
                    return it, True, value
            if shrinking:
                n_active, unshrunk = _shrink(y, U, alpha, grad, active, n_active, tol, K, unshrunk)
            i, gmax = _select_i(y, grad, up, active, n_active)
        j, gmax2 = _select_j(K, Kd, y, grad, low, active, n_active, i, gmax)
        if gmax + gmax2 < tol or j < 0:
            if n_active == m:
                break
            _full_gradient(K, y, alpha, grad)  # restore the shrunk indices and check them
            for t in range(m):
                active[t] = t
            n_active = m
            i, gmax = _select_i(y, grad, up, active, n_active)
            j, gmax2 = _select_j(K, Kd, y, grad, low, active, n_active, i, gmax)
            if gmax + gmax2 < tol or j < 0:
                break
            counter = 1
        it += 1
        ai, aj = alpha[i], alpha[j]
        qij = y[i] * y[j] * K[i, j]
        ni, nj = _pair_step(y[i] != y[j], ai, aj, U[i], U[j], grad[i], grad[j], Kd[i], Kd[j], qij)
        alpha[i], alpha[j] = ni, nj
        dai, daj = ni - ai, nj - aj
        value += grad[i] * dai + grad[j] * daj + 0.5 * (Kd[i] * dai * dai + Kd[j] * daj * daj) \
            + qij * dai * daj
        _set_masks(y, U, alpha, i, up, low)
        _set_masks(y, U, alpha, j, up, low)
        i, gmax = _update_select_i(K, y, grad, up, active, n_active, i, j, y[i] * dai, y[j] * daj)
    return it, False, value
