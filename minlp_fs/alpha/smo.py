"""Warm-started SMO for the SVM dual (paper problem (3)) on a dense kernel matrix, compiled with numba.

Solves  min 1/2 a'Qa - e'a  s.t. y'a = 0, 0 <= a <= C,  with Q = (yy') * K, by sequential
minimal optimisation with the second-order working-set selection of Fan, Chen and Lin (2005)
and libsvm's shrinking heuristic (Chang and Lin, section 5.1), stopping when the maximal KKT
violation m(a) - M(a) is below ``tol`` on *all* indices (shrunk ones are restored and checked).

Any a in the dual polytope is a valid start, and the polytope does not depend on beta, so the
alpha of one feature subset warm-starts the next (a swap neighbour or the next subset of the
revolving-door enumeration). With the whole K at hand, the gradient Q a - e of shrunk indices is
recomputed exactly in O(m * |support|) when they are restored.

Newton steps on the face (``newton=True``, the default; :func:`_newton_face`): once the KKT gap is below
NEWTON_GAP and the free set has stayed the same over a shrinking period, one Newton step on that face (the
equality-constrained QP over the free variables, the others fixed), with an exact line search inside the box,
replaces SMO's slow tail of two-variable steps; SMO then continues to the same KKT tolerance. German's duals are
degenerate (about 550 of 1000 alphas at C and 27-61 free), and SMO spends most of its steps polishing a face it
has already found: German's median warm solve went from 2.7-5.6x to 4.2-8.3x faster than libsvm's (per kernel;
benchmarks/RESULTS.md, bench_alpha_german).
With ``newton=False`` the steps are SMO's alone, as described next.

Memory layout (speed only; the steps are those of libsvm's loop over its active indices, bit for bit): the
per-index values live in position order, the active indices first, and once shrinking drops an index the
active block of K is gathered into a work matrix (kept per thread), so that every step reads contiguous
memory; the selections take exact, order-free maxima (:mod:`minlp_fs.alpha.scans`) and the last position
attaining them, as the sequential loop does. On German's degenerate duals (10^5-10^6 steps per solve) this
took 2.1-3x less time per step than the loop through the index array (benchmarks/RESULTS.md,
bench_versions_grid).

Early stop (``above`` / ``below``): a caller that only needs to know whether g(beta) beats an
incumbent can stop as soon as duality decides it. f(alpha) >= g at every feasible alpha and SMO only
lowers f, so f < ``below`` proves g < ``below``; minus the SVM primal at alpha is <= g (weak
duality), so a primal bound > ``above`` proves g > ``above``. Neither changes which subset wins. Nor do
they change the path: the bound needs the gradient of the shrunk indices, which it recomputes alone
(:func:`_shrunk_gradient`; SMO overwrites them with its own reconstruction before it reads them), and a
grouped solve builds its start gradient as without the stop, so a solve that does not stop early takes
step for step the steps of the same solve without ``above`` / ``below`` and returns the same alpha, bit for
bit (on degenerate duals, as German's, another path may end at another optimal alpha).

Duplicate rows (``groups``): rows i, h with equal inputs on the subset and y_i = y_h have equal rows
of Q, so f depends on their alphas only through the group sums s_g = sum_{i in g} a_i: a'Qa = s'Q_G s
(Q_G: Q on one row per group), e'a = e's and y'a = y_G's, and the box 0 <= a_i <= C maps onto
0 <= s_g <= n_g C (each such s is the image of a_i = s_g / n_g). Hence g(beta) = min {1/2 s'Q_G s - e's :
y_G's = 0, 0 <= s_g <= n_g C}, solved by the same SMO with per-variable upper bounds U (libsvm's C_i),
and a_i = s_g / n_g is optimal. The KKT violation m(a) - M(a) is the same at a and at s (grad_i = grad_g
for every member, a_i < C iff s_g < n_g C, a_i > 0 iff s_g > 0), so ``tol`` keeps its meaning. German's
features are mostly categorical: 7 of its 24 leave between 70 and 900 distinct rows of 1000.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numba import njit

from .scans import kth_smallest, last_index, scan_max, scan_min

_TAU = 1e-12
#: SMO steps between two primal-bound checks of an early stop while no index is shrunk
_BOUND_EVERY = 8
#: SMO steps between two shrinking passes (libsvm: min(m, 1000)). Measured on German (m = 1000, warm starts
#: from swap neighbours, benchmarks/bench_alpha.py): 200 keeps the active set small for most of a solve
#: while the gradient reconstructions it costs stay rare; 1000 leaves a third of a typical solve unshrunk.
_SHRINK_EVERY = 200
#: the dual is solved over groups of duplicate rows when there are at most this share of m groups: the
#: gather of their Gram costs O(groups^2) and SMO's steps O(groups), so above it the gain is lost
#: (measured on German warm solves: over 769 groups of 1000 rows slower than the plain solve, over 753 faster)
GROUP_SHARE = 0.75
#: SMO steps between two primal-bound checks of an early stop while indices are shrunk: each costs the
#: shrunk indices' gradient, O(m * (m - |active|)), so they stay as rare as before shrinking became more
#: frequent (checked at every shrinking pass, LS on German poly2 B = 7 took 5.7 instead of 3.5 CPU s)
_RECONSTRUCT_EVERY = 1000
#: ... and at least steps / _RECONSTRUCT_GROWTH apart (geometric): on German's solves of 10^5-10^6 steps with
#: a few hundred active indices, checks every 1000 steps doubled the CPU time of a solve that the bound
#: does not stop; a stop comes at most 1 / _RECONSTRUCT_GROWTH of its steps late
_RECONSTRUCT_GROWTH = 4
#: KKT gap (m(a) - M(a)) below which a shrinking pass also tries a Newton step on the face (``newton_gap`` of
#: :func:`_smo`; :func:`_newton_face`); measured on German's all-rows solves (benchmarks/RESULTS.md, bench_alpha_german)
NEWTON_GAP = 1e-3
#: the most free variables a Newton step on the face takes (its dense system costs O(|free|^3))
NEWTON_MAX_FREE = 256
#: relative ridge of the Newton step's Cholesky factorisation (:func:`_newton_face`)
NEWTON_RIDGE = 1e-10
#: a Newton step is tried only when |free|^3 <= NEWTON_COST * (SMO steps since the last try) * (active variables):
#: measured, its Cholesky factorisation takes 0.009 / 0.034 / 0.164 ms at |free| = 50 / 100 / 200 (about 0.02 ns per
#: |free|^3) and an SMO step about 1 ns per active variable, so a try costs at most about the steps since the last
#: one. Per solve against SMO alone (random warm-started subsets, measured by hand in the sixteenth session): 1.0-5.3x
#: less time in sum on German, Ionosphere, Sonar, Cleveland, BCD, Parkinsons; 0.98x on Diabetes poly5; 10 and 50
#: alike, 1 loses most of it
NEWTON_COST = 50.0
#: a warm start whose |y'a| exceeds START_SLACK * C * m is replaced by 0 (feasible_start)
START_SLACK = 1e-9
#: the largest work matrix (elements) a thread keeps between solves: 2^24 = 128 MB, m <= 4096
WORK_KEEP = 1 << 24
_work = threading.local()


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
def _gather(K, rows, n, out):  # pragma: no cover - compiled
    """out[:n, :n] = K[rows[:n]][:, rows[:n]]."""
    for a in range(n):
        Ka = K[rows[a]]
        for b in range(n):
            out[a, b] = Ka[rows[b]]


@njit(cache=True, nogil=True)
def _set_masks(y, U, alpha, t, up, low):  # pragma: no cover - compiled
    """up[t] = 0 if t is in I_up(alpha) = {y_t = 1, a_t < U_t} | {y_t = -1, a_t > 0}, else -inf; low[t] likewise
    for I_low = {y_t = 1, a_t > 0} | {y_t = -1, a_t < U_t}. Added to -y_t grad_t (y_t grad_t), they make the
    selection loops branch-free in the index sets."""
    a = alpha[t]
    inside_c, above_0 = 0.0 if a < U[t] else -np.inf, 0.0 if a > 0 else -np.inf
    if y[t] > 0:
        up[t], low[t] = inside_c, above_0
    else:
        up[t], low[t] = above_0, inside_c


@njit(cache=True, nogil=True)
def _pick_max(work, n):  # pragma: no cover - compiled
    """(p, work[p]) for the last p < n attaining max(work[:n]); (-1, -inf) if that maximum is -inf."""
    best = scan_max(work, n)
    if best == -np.inf:
        return -1, -np.inf
    p = last_index(work, n, best)
    return p, work[p]


@njit(cache=True, nogil=True)
def _select_i(y, grad, up, low, n, work, svals):  # pragma: no cover - compiled
    """i = argmax over I_up (positions < n) of -y_t grad_t (the last on ties), and that maximum; (-1, -inf) if
    I_up is empty. Leaves y_t grad_t over I_low (else -inf) in ``svals`` for :func:`_select_j`."""
    for p in range(n):
        yg = y[p] * grad[p]
        work[p] = up[p] - yg
        svals[p] = low[p] + yg
    return _pick_max(work, n)


@njit(cache=True, nogil=True)
def _update_select_i(Ki, Kj, y, grad, up, low, n, ci, cj, work, svals):  # pragma: no cover - compiled
    """grad_t += y_t (K_it ci + K_jt cj) over the active positions (``Ki``, ``Kj``: rows i and j in position
    order), then :func:`_select_i` on the new grad."""
    for p in range(n):
        g = grad[p] + y[p] * (Ki[p] * ci + Kj[p] * cj)
        grad[p] = g
        yg = y[p] * g
        work[p] = up[p] - yg
        svals[p] = low[p] + yg
    return _pick_max(work, n)


@njit(cache=True, nogil=True)
def _select_j(Ki, kii, Kd, svals, n, gmax, work):  # pragma: no cover - compiled
    """libsvm's second-order choice of j for a given i (Fan, Chen and Lin 2005, WSS 2): over t in I_low
    with b_t = gmax + y_t grad_t > 0, the largest decrease b_t^2 / (K_ii + K_tt - 2 K_it) of the
    objective along the pair's direction (the last on ties); returns (j, max over I_low of y_t grad_t).
    ``Ki``: row i in position order, ``kii`` = K_ii, ``svals``: y_t grad_t over I_low from :func:`_select_i`."""
    for p in range(n):
        diff = gmax + svals[p]
        quad = kii + Kd[p] - 2.0 * Ki[p]
        quad = quad if quad > 0 else _TAU
        work[p] = -(diff * diff) / quad if diff > 0 else np.inf
    gmax2 = scan_max(svals, n)
    obj_min = scan_min(work, n)
    if obj_min == np.inf:
        return -1, gmax2
    return last_index(work, n, obj_min), gmax2


@njit(cache=True, nogil=True)
def _scatter(active, src, dst):  # pragma: no cover - compiled
    """dst[active[p]] = src[p]: an array in position order back in index order."""
    for p in range(active.shape[0]):
        dst[active[p]] = src[p]


@njit(cache=True, nogil=True)
def _positions_reset(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low):  # pragma: no cover - compiled
    """Position p = index p for every index (all active): the position arrays copied from the index ones."""
    for t in range(y.shape[0]):
        active[t] = t
        yp[t], Up[t], ap[t], gp[t], Kd[t] = y[t], U[t], alpha[t], grad[t], K[t, t]
        _set_masks(yp, Up, ap, t, up, low)


@njit(cache=True, nogil=True)
def _restore(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low):  # pragma: no cover - compiled
    """Every index active again: alpha back in index order, the exact gradient of every index, positions = indices."""
    _scatter(active, ap, alpha)
    _full_gradient(K, y, alpha, grad)
    _positions_reset(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low)


@njit(cache=True, nogil=True)
def _swap_positions(p, q, active, yp, Up, ap, gp, Kd, up, low):  # pragma: no cover - compiled
    """Exchange positions p and q of every position array."""
    active[p], active[q] = active[q], active[p]
    yp[p], yp[q] = yp[q], yp[p]
    Up[p], Up[q] = Up[q], Up[p]
    ap[p], ap[q] = ap[q], ap[p]
    gp[p], gp[q] = gp[q], gp[p]
    Kd[p], Kd[q] = Kd[q], Kd[p]
    up[p], up[q] = up[q], up[p]
    low[p], low[q] = low[q], low[p]


@njit(cache=True, nogil=True)
def _shrink(K, y, U, alpha, grad, tol, unshrunk, n, active, yp, Up, ap, gp, Kd, up, low,
            Kc, compact):  # pragma: no cover - compiled
    """Drop bounded indices that cannot enter a working set soon (libsvm's do_shrinking), in position order:
    a dropped index swaps positions with the last active one. Once the first index is dropped, the active
    block of K is gathered into ``Kc`` (position order, n x n); later drops move the last active row and
    column of ``Kc`` into the dropped one's. Returns (n, unshrunk, compact)."""
    g1 = -np.inf  # max over I_up of -y grad
    g2 = -np.inf  # max over I_low of y grad
    for p in range(n):
        if yp[p] > 0:
            if ap[p] < Up[p]:
                g1 = max(g1, -gp[p])
            if ap[p] > 0:
                g2 = max(g2, gp[p])
        else:
            if ap[p] < Up[p]:
                g2 = max(g2, -gp[p])
            if ap[p] > 0:
                g1 = max(g1, gp[p])
    m = y.shape[0]
    if not unshrunk and g1 + g2 <= 10.0 * tol:
        unshrunk = True
        _restore(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low)
        n, compact = m, False
    n_before = n
    p = 0
    while p < n:
        if ap[p] >= Up[p]:
            out = (-gp[p] > g1) if yp[p] > 0 else (-gp[p] > g2)
        elif ap[p] <= 0:
            out = (gp[p] > g2) if yp[p] > 0 else (gp[p] > g1)
        else:
            out = False
        if out:
            n -= 1
            if p != n:
                _swap_positions(p, n, active, yp, Up, ap, gp, Kd, up, low)
                if compact:
                    for b in range(n + 1):
                        Kc[p, b] = Kc[n, b]
                    for a in range(n + 1):
                        Kc[a, p] = Kc[a, n]
        else:
            p += 1
    if n < n_before and not compact:
        _gather(K, active, n, Kc)
        compact = True
    return n, unshrunk, compact


@njit(cache=True, nogil=True)
def _lower_bound(y, U, alpha, grad):  # pragma: no cover - compiled
    """-P(w, b, xi) <= g: minus the SVM primal at the point alpha defines (weak duality); the compiled
    mirror, for the hot loop, of :func:`minlp_fs.objective.primal_point` with ``bias="kkt"`` and
    ``at_bound=0`` (tests/test_primal_point.py checks that they agree).

    w = sum_i alpha_i y_i phi(x_i), bias -rho with rho the mean of y_i grad_i over the free alphas
    (libsvm's rule; the midpoint of the feasible interval when none is free), xi_i = max(0, y_i rho -
    grad_i). P = 1/2 alpha'Q alpha + sum_i U_i xi_i, and alpha'Q alpha = sum_i alpha_i (grad_i + 1).
    """
    m = y.shape[0]
    total, n_free = 0.0, 0
    lo, hi = -np.inf, np.inf
    for t in range(m):
        yg = y[t] * grad[t]
        if 0 < alpha[t] < U[t]:
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
            slack += U[t] * xi
    return -(0.5 * quad + slack)


@njit(cache=True, nogil=True)
def _hinge_lower_bound(y, C, alpha, grad, n_pos, work):  # pragma: no cover - compiled
    """-P(w, b*, xi) <= g with the bias b* that minimises the slack for alpha's w: the compiled mirror of
    :func:`minlp_fs.objective.primal_point` with ``bias="hinge"`` for a box [0, C] alike for every index
    (tests/test_primal_point.py checks that they agree). O(m): a selection, no sort.

    With grad = Q alpha - e, the decision values without bias are o_i = y_i (grad_i + 1), so
    xi_i(b) = max(0, 1 - y_i (o_i + b)) = max(0, y_i (p_i - b)) with p_i = -y_i grad_i. The slack
    s(b) = sum_{y_i > 0} (p_i - b)^+ + sum_{y_i < 0} (b - p_i)^+ is convex and piecewise linear, with right
    derivative #{i : p_i <= b} - |I+| and left derivative #{i : p_i < b} - |I+|; at b = the |I+|-th
    smallest p (``n_pos`` = |I+|, 1 <= n_pos < m) the first is >= 0 and the second <= n_pos - 1 - n_pos < 0,
    so that b minimises s. Any b gives a feasible primal point, so the bound is valid whatever the rounding
    of b; this b makes it the strongest for this w, never weaker than :func:`_lower_bound`'s libsvm bias.
    ``work``: m doubles, overwritten."""
    m = y.shape[0]
    quad = 0.0
    for t in range(m):
        quad += alpha[t] * (grad[t] + 1.0)
        work[t] = -y[t] * grad[t]
    b = kth_smallest(work, n_pos - 1)
    slack = 0.0
    for t in range(m):
        xi = -grad[t] - y[t] * b   # y_t (p_t - b) (work is reordered now)
        if xi > 0:
            slack += xi
    return -(0.5 * quad + C * slack)


@njit(cache=True, nogil=True)
def _dual_value(alpha, grad):  # pragma: no cover - compiled
    """f(alpha) = 1/2 alpha'Q alpha - e'alpha = 1/2 sum_i alpha_i (grad_i - 1), from grad = Q alpha - e: O(m)."""
    value = 0.0
    for t in range(alpha.shape[0]):
        value += 0.5 * alpha[t] * (grad[t] - 1.0)
    return value


@njit(cache=True, nogil=True)
def _decided_at_start(y, U, alpha, grad, above, below):  # pragma: no cover - compiled
    """(pruned, f(alpha)): the early-stop test :func:`_smo` makes before its first step."""
    value = _dual_value(alpha, grad)
    return value < below or (above < np.inf and _lower_bound(y, U, alpha, grad) > above), value


@njit(cache=True, nogil=True)
def _pair_step(opposite, ai, aj, ci, cj, gi, gj, kii, kjj, qij):  # pragma: no cover - compiled
    """The working pair's new (alpha_i, alpha_j): the exact minimiser of f along the pair's direction, clipped to
    its feasible segment (libsvm's update with bounds C_i = ``ci``, C_j = ``cj``; ``opposite``: y_i != y_j; ``gi``,
    ``gj``: the gradient; ``qij`` = y_i y_j K_ij)."""
    if opposite:
        quad = kii + kjj + 2.0 * qij
        if quad <= 0:
            quad = _TAU
        delta = (-gi - gj) / quad
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
        if diff > ci - cj:
            if ni > ci:
                ni = ci
                nj = ci - diff
        else:
            if nj > cj:
                nj = cj
                ni = cj + diff
    else:
        quad = kii + kjj - 2.0 * qij
        if quad <= 0:
            quad = _TAU
        delta = (gi - gj) / quad
        s = ai + aj
        ni, nj = ai - delta, aj + delta
        if s > ci:
            if ni > ci:
                ni = ci
                nj = s - ci
        else:
            if nj < 0:
                nj = 0.0
                ni = s
        if s > cj:
            if nj > cj:
                nj = cj
                ni = s - cj
        else:
            if ni < 0:
                ni = 0.0
                nj = s
    return ni, nj


@njit(cache=True, nogil=True)
def _free_positions(Up, ap, n, free):  # pragma: no cover - compiled
    """The active positions p < n with 0 < a_p < U_p into ``free[:k]``; returns k."""
    k = 0
    for p in range(n):
        if 0 < ap[p] < Up[p]:
            free[k] = p
            k += 1
    return k


@njit(cache=True, nogil=True)
def _cholesky_solve(L, b):  # pragma: no cover - compiled
    """x with L L' x = b (L lower triangular): forward, then back substitution."""
    k = b.shape[0]
    z = np.empty(k)
    for i in range(k):
        r = b[i]
        for j in range(i):
            r -= L[i, j] * z[j]
        z[i] = r / L[i, i]
    for i in range(k - 1, -1, -1):
        r = z[i]
        for j in range(i + 1, k):
            r -= L[j, i] * z[j]
        z[i] = r / L[i, i]
    return z


@njit(cache=True, nogil=True)
def _newton_face(Kx, yp, Up, ap, gp, n, up, low, F):  # pragma: no cover - compiled
    """One Newton step on the face of the active positions' free variables F = {p < n : 0 < a_p < U_p}
    (:func:`_free_positions`), the others fixed; returns f's change (<= 0; 0: no step).

    On the face, f(a + d) - f(a) = g_F'd + 1/2 d'Q_FF d with y_F'd = 0 (Q = yy' o K, g = Qa - e). Its minimiser
    is d = x - mu z with Q_FF x = -g_F, Q_FF z = y_F and mu = y_F'x / y_F'z (the KKT system's Schur complement),
    solved with the Cholesky factor of Q_FF + eps I (eps = NEWTON_RIDGE * max diag: Q_FF is singular on duplicate
    rows; no step if the factorisation fails). Then the exact line search along d inside the box: t = min(t_box,
    -g'd / d'Q_FF d) (t_box where the first free variable reaches a bound, which is set to it exactly), taken only
    when g'd < 0, so f decreases whatever the ridge. SMO continues from the new point (its KKT test, not this
    step, decides convergence), so the answer keeps the solve's tolerance; the step replaces SMO's slow tail of
    two-variable steps once the face is nearly the optimum's (German's all-rows duals: 27-61 free of 1000, the
    face within 0-19 indices of the optimum's at a KKT gap of 1e-3, benchmarks/RESULTS.md). gp is updated on
    the active positions (the shrunk ones are recomputed when restored, as after SMO's own steps)."""
    k = F.shape[0]
    if k < 2 or k > NEWTON_MAX_FREE:
        return 0.0
    Q = np.empty((k, k))
    yF = np.empty(k)
    top = 0.0
    for a in range(k):
        yF[a] = yp[F[a]]
        Ka = Kx[F[a]]
        for b in range(k):
            Q[a, b] = yp[F[a]] * yp[F[b]] * Ka[F[b]]
        top = max(top, Q[a, a])
    ridged = Q.copy()
    for a in range(k):
        ridged[a, a] += NEWTON_RIDGE * top
    try:
        L = np.linalg.cholesky(ridged)
    except Exception:   # not positive definite in floating point: leave the face to SMO
        return 0.0
    gF = gp[F]
    x = _cholesky_solve(L, -gF)
    z = _cholesky_solve(L, yF)
    yz = yF @ z                          # y'(Q + eps I)^-1 y > 0; guarded against underflow all the same
    if not yz > 0.0:
        return 0.0
    d = x - (yF @ x) / yz * z
    slope = gF @ d
    curve = d @ (Q @ d)
    if not slope < 0.0:
        return 0.0
    t = -slope / curve if curve > 0.0 else np.inf
    hit = -1
    for a in range(k):
        pa = F[a]
        if d[a] > 0.0 and (Up[pa] - ap[pa]) / d[a] < t:
            t, hit = (Up[pa] - ap[pa]) / d[a], a
        elif d[a] < 0.0 and -ap[pa] / d[a] < t:
            t, hit = -ap[pa] / d[a], a
    if not (0.0 < t < np.inf):
        return 0.0
    step = np.empty(k)
    for a in range(k):
        pa = F[a]
        new = ap[pa] + t * d[a]
        if a == hit:
            new = Up[pa] if d[a] > 0.0 else 0.0
        new = min(max(new, 0.0), Up[pa])
        step[a] = new - ap[pa]
        ap[pa] = new
    change = step @ gF + 0.5 * (step @ (Q @ step))
    for a in range(k):
        c = yF[a] * step[a]
        Ka = Kx[F[a]]
        for p in range(n):
            gp[p] += yp[p] * Ka[p] * c
        _set_masks(yp, Up, ap, F[a], up, low)
    return change


@njit(cache=True, nogil=True)
def _smo(K, y, U, alpha, grad, tol, max_iter, shrinking, above, below, Kc, newton_gap=0.0):  # pragma: no cover - compiled
    """SMO; returns (iterations, pruned, f(alpha) tracked), and the final alpha in ``alpha``. Pruned: stopped once
    the optimum g is proven > ``above`` (by the primal bound, checked every _BOUND_EVERY steps, or about every
    max(min(m, _RECONSTRUCT_EVERY), steps / _RECONSTRUCT_GROWTH) once shrinking) or < ``below`` (f(alpha) >= g
    only decreases, tracked in O(1) per step). Pass +inf / -inf to solve to ``tol``. ``grad`` = Q alpha - e on
    entry; overwritten. ``Kc``: an m x m work matrix (the active block of K, gathered once shrinking drops an
    index).

    The work is done in position order: yp, Up, ap, gp, ... hold index active[p] at position p, the active
    indices first; position p = index p until the first index is dropped and after every restore. The
    selections then read contiguous memory, and they visit the active indices in the order of a loop over
    active[:n] (libsvm's), so the steps are those of that loop, bit for bit (tests/test_smo.py).

    ``newton_gap`` > 0: at a shrinking pass whose last KKT gap is below it, once per face (the free set), a Newton
    step on the face (:func:`_newton_face`); then the path is no longer the loop's, but it still ends at the KKT
    tolerance and depends neither on ``above`` nor on ``below``. 0 (the default): SMO's steps alone."""
    m = y.shape[0]
    active = np.arange(m)
    n = m
    unshrunk = False
    compact = False
    period = min(m, _SHRINK_EVERY)
    counter = period + 1
    check_period = min(m, _RECONSTRUCT_EVERY)
    next_check = check_period
    yp, Up, ap, gp = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    Kd, up, low = np.empty(m), np.empty(m), np.empty(m)
    work, svals = np.empty(m), np.empty(m)
    _positions_reset(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low)
    value = _dual_value(alpha, grad)
    i, gmax = _select_i(yp, gp, up, low, n, work, svals)
    it = 0
    pruned = False
    gap, face, kept, tried = np.inf, (-1, -1), (-1, -1), 0
    free = np.empty(m, dtype=np.int64)
    while it < max_iter:
        if value < below:
            pruned = True
            break
        counter -= 1
        # the primal bound costs O(m) while nothing is shrunk (positions = indices; check every BOUND_EVERY
        # steps), else a gradient reconstruction (check at the shrinking period only)
        if above < np.inf and n == m and it % _BOUND_EVERY == 0 and _lower_bound(yp, Up, ap, gp) > above:
            pruned = True
            break
        if counter == 0:
            counter = period
            if above < np.inf and n < m and it >= next_check:
                next_check = it + max(check_period, it // _RECONSTRUCT_GROWTH)
                # the shrunk indices' gradient alone (SMO overwrites it with its own reconstruction before
                # it reads it), so that the check leaves the path alone
                _scatter(active, ap, alpha)
                c = alpha * y
                for p in range(n, m):
                    gp[p] = yp[p] * np.dot(K[active[p]], c) - 1.0
                _scatter(active, gp, grad)
                if _lower_bound(y, U, alpha, grad) > above:
                    pruned = True
                    break
            if shrinking:
                n, unshrunk, compact = _shrink(K, y, U, alpha, grad, tol, unshrunk, n, active, yp, Up, ap, gp,
                                               Kd, up, low, Kc, compact)
            if gap < newton_gap:   # a face kept over a shrinking period, once, at a share of the steps' cost
                k = _free_positions(Up, ap, n, free)
                signature = (k, np.sum(active[free[:k]]))   # changes when the face does
                if signature == kept != face and k ** 3 <= NEWTON_COST * (it - tried) * n:
                    face, tried = signature, it
                    value += _newton_face(Kc if compact else K, yp, Up, ap, gp, n, up, low, free[:k])
                kept = signature
            i, gmax = _select_i(yp, gp, up, low, n, work, svals)
        Kx = Kc if compact else K
        j, gmax2 = (-1, -np.inf) if i < 0 else _select_j(Kx[i], Kd[i], Kd, svals, n, gmax, work)
        gap = gmax + gmax2
        if gap < tol or j < 0:
            if n == m:
                break
            _restore(K, y, U, alpha, grad, active, yp, Up, ap, gp, Kd, up, low)  # and check the shrunk ones
            n, compact, Kx = m, False, K
            i, gmax = _select_i(yp, gp, up, low, n, work, svals)
            j, gmax2 = (-1, -np.inf) if i < 0 else _select_j(Kx[i], Kd[i], Kd, svals, n, gmax, work)
            if gmax + gmax2 < tol or j < 0:
                break
            counter = 1
        it += 1
        ai, aj = ap[i], ap[j]
        qij = yp[i] * yp[j] * Kx[i, j]
        ni, nj = _pair_step(yp[i] != yp[j], ai, aj, Up[i], Up[j], gp[i], gp[j], Kd[i], Kd[j], qij)
        ap[i], ap[j] = ni, nj
        dai, daj = ni - ai, nj - aj
        value += gp[i] * dai + gp[j] * daj + 0.5 * (Kd[i] * dai * dai + Kd[j] * daj * daj) \
            + qij * dai * daj
        _set_masks(yp, Up, ap, i, up, low)
        _set_masks(yp, Up, ap, j, up, low)
        i, gmax = _update_select_i(Kx[i], Kx[j], yp, gp, up, low, n, yp[i] * dai, yp[j] * daj, work, svals)
    _scatter(active, ap, alpha)
    return it, pruned, value


@njit(cache=True, nogil=True)
def _grouped_smo(K, y, C, alpha, first, label, grad, have_grad, tol, max_iter, shrinking, above, below, Kc,
                 newton_gap):  # pragma: no cover - compiled
    """:func:`_smo` over the duplicate-row groups (first, label) of K's rows (the module docstring): (iterations,
    pruned, f tracked), alpha overwritten with the rows' alpha_i = s_g / n_g (C where the group is at its bound).
    ``grad``: Q alpha - e when ``have_grad``, else a work vector of size m. An early stop SMO would make before its
    first step is decided on the full problem, with no gather (alpha then unchanged); the groups' start gradient
    is then the one of a solve without the stop. ``Kc``: a work matrix of at least the groups' size."""
    m, G = y.shape[0], first.shape[0]
    if above < np.inf or below > -np.inf:
        if not have_grad:
            _full_gradient(K, y, alpha, grad)
        pruned, value = _decided_at_start(y, np.full(m, C), alpha, grad, above, below)
        if pruned:
            return 0, True, value
    counts, sums = np.zeros(G), np.zeros(G)
    for i in range(m):
        counts[label[i]] += 1.0
        sums[label[i]] += alpha[i]
    upper = C * counts
    for g in range(G):
        sums[g] = min(sums[g], upper[g])
    Kg, yg, gg = np.empty((G, G)), np.empty(G), np.empty(G)
    _gather(K, first, G, Kg)
    for g in range(G):
        yg[g] = y[first[g]]
    if have_grad:
        for g in range(G):
            gg[g] = grad[first[g]]
    else:
        _full_gradient(Kg, yg, sums, gg)
    iters, pruned, value = _smo(Kg, yg, upper, sums, gg, tol, max_iter, shrinking, above, below, Kc, newton_gap)
    for i in range(m):   # a group at its bound n_g C gives its rows C exactly (n_g C / n_g may round below C)
        g = label[i]
        alpha[i] = C if sums[g] >= upper[g] else min(sums[g] / counts[g], C)
    return iters, pruned, value


def _work_matrix(m: int) -> np.ndarray:
    """An m x m float array for :func:`_smo`'s active block: a view of this thread's kept buffer when m^2 <=
    WORK_KEEP (no new pages to fault in per solve), else a new array."""
    if m * m > WORK_KEEP:
        return np.empty((m, m))
    buf = getattr(_work, "buf", None)
    if buf is None or buf.size < m * m:
        buf = _work.buf = np.empty(m * m)
    return buf[:m * m].reshape(m, m)


@dataclass(frozen=True)
class SmoResult:
    """What :func:`smo_solve` returns.

    ``alpha``: optimal, or only feasible when ``stopped_early`` (the optimum g was proven above
    ``above`` or below ``below``) or when ``hit_iteration_limit`` (``max_iter`` steps without reaching
    the KKT tolerance: not a solution to trust); ``iterations``: SMO steps taken; ``value``: f(alpha) as
    SMO tracked it (O(1) per step; accurate to rounding drift).
    """

    alpha: np.ndarray
    iterations: int
    stopped_early: bool
    value: float
    hit_iteration_limit: bool = False


def solved_over(groups: tuple | None, m: int) -> bool:
    """Whether :func:`smo_solve` solves the dual of m rows over these duplicate-row ``groups`` (first, label): at most
    GROUP_SHARE * m of them (above it the gather costs more than the smaller dual saves)."""
    return groups is not None and len(groups[0]) <= GROUP_SHARE * m


def smo_solve(K: np.ndarray, y: np.ndarray, C: float, alpha0: np.ndarray | None = None,
              tol: float = 1e-7, max_iter: int = 10_000_000, shrinking: bool = True,
              above: float = np.inf, below: float = -np.inf,
              grad0: np.ndarray | None = None, groups: tuple | None = None, newton: bool = True) -> SmoResult:
    """Optimal alpha of the SVM dual for kernel matrix K, started from ``alpha0`` (or 0): a :class:`SmoResult`.

    ``alpha0`` must be feasible (y'a = 0, 0 <= a <= C); it is projected with :func:`feasible_start`.
    ``grad0``: Q alpha0 - e when the caller has it (:class:`~minlp_fs.alpha.neighbours.NeighbourGrams`);
    it is used only if ``alpha0`` needed no projection, and then overwritten.
    ``groups``: :func:`.row_groups.duplicate_groups` of the rows' inputs and labels; with at most GROUP_SHARE * m
    groups the dual is solved over the groups (see the module's docstring) and alpha_i = s_g / n_g is returned.
    ``newton``: Newton steps on the face once the KKT gap is below NEWTON_GAP (:func:`_newton_face`).
    """
    m = y.shape[0]
    newton_gap = NEWTON_GAP if newton else 0.0
    alpha = feasible_start(alpha0, y, C)
    K = np.ascontiguousarray(K, dtype=np.float64)
    if not K.flags.writeable:  # SMO reads K and its work matrix through one name, which needs one array type
        K = K.copy()
    y = np.ascontiguousarray(y, dtype=np.float64)
    have_grad = grad0 is not None and alpha0 is not None and np.array_equal(alpha, alpha0)
    if solved_over(groups, m):
        first, label = (np.ascontiguousarray(a, dtype=np.int64) for a in groups)
        grad = np.ascontiguousarray(grad0, dtype=np.float64) if have_grad else np.empty(m)
        iters, pruned, value = _grouped_smo(K, y, float(C), alpha, first, label, grad, have_grad, float(tol), max_iter,
                                            shrinking, float(above), float(below), _work_matrix(len(first)),
                                            newton_gap)
    else:
        if have_grad:
            grad = np.ascontiguousarray(grad0, dtype=np.float64)
        else:
            grad = np.empty(m)
            _full_gradient(K, y, alpha, grad)
        iters, pruned, value = _smo(K, y, np.full(m, float(C)), alpha, grad, float(tol), max_iter, shrinking,
                                    float(above), float(below), _work_matrix(m), newton_gap)
    return SmoResult(alpha, int(iters), bool(pruned), float(value),
                     hit_iteration_limit=not pruned and int(iters) >= max_iter)


def feasible_start(alpha0: np.ndarray | None, y: np.ndarray, C: float) -> np.ndarray:
    """A copy of ``alpha0`` projected onto the box [0, C], or 0 if y'a = 0 is violated by more than
    START_SLACK * C * m (or ``alpha0`` is None)."""
    m = y.shape[0]
    if alpha0 is None:
        return np.zeros(m)
    alpha = np.clip(np.asarray(alpha0, dtype=float), 0.0, C)
    return alpha if abs(alpha @ y) <= START_SLACK * C * m else np.zeros(m)
