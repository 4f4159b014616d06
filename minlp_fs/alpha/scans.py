"""Exact scans of a float array for SMO's working-set selection, written to run at vector speed.

``scan_max`` and ``scan_min`` keep eight running extrema (independent chains the CPU overlaps) and combine
them; the maximum of a set of floats does not depend on the order it is taken in, so the result is the one
of a left-to-right loop (for arrays without NaN, which SMO's values never are: its KKT values are finite or
-inf). ``last_index`` finds the last position holding a value, testing eight at a time from the end. So
``last_index(v, n, scan_max(v, n))`` is the position that the loop ``if v[p] >= best: best, i = v[p], p``
picks (the last one on ties), and likewise with ``scan_min`` for ``<=``; SMO's selections use these to take
the same steps as that loop, bit for bit, at a fraction of its cost (:mod:`minlp_fs.alpha.smo`).
``kth_smallest`` selects in place, for the hinge bias of SMO's primal bound (:func:`~.smo._hinge_lower_bound`).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _scan_top(v, n, sign):  # pragma: no cover - compiled
    """max over p < n of sign * v[p] (sign = 1.0 or -1.0: exact products), -inf when n = 0."""
    g0 = g1 = g2 = g3 = g4 = g5 = g6 = g7 = -np.inf
    p = 0
    while p + 8 <= n:
        x0, x1, x2, x3 = sign * v[p], sign * v[p + 1], sign * v[p + 2], sign * v[p + 3]
        x4, x5, x6, x7 = sign * v[p + 4], sign * v[p + 5], sign * v[p + 6], sign * v[p + 7]
        g0 = x0 if x0 > g0 else g0
        g1 = x1 if x1 > g1 else g1
        g2 = x2 if x2 > g2 else g2
        g3 = x3 if x3 > g3 else g3
        g4 = x4 if x4 > g4 else g4
        g5 = x5 if x5 > g5 else g5
        g6 = x6 if x6 > g6 else g6
        g7 = x7 if x7 > g7 else g7
        p += 8
    while p < n:
        x = sign * v[p]
        g0 = x if x > g0 else g0
        p += 1
    g0 = g1 if g1 > g0 else g0
    g2 = g3 if g3 > g2 else g2
    g4 = g5 if g5 > g4 else g4
    g6 = g7 if g7 > g6 else g6
    g0 = g2 if g2 > g0 else g0
    g4 = g6 if g6 > g4 else g4
    return g4 if g4 > g0 else g0


@njit(cache=True, nogil=True)
def scan_max(v, n):  # pragma: no cover - compiled
    """max(v[:n]), -inf when n = 0."""
    return _scan_top(v, n, 1.0)


@njit(cache=True, nogil=True)
def scan_min(v, n):  # pragma: no cover - compiled
    """min(v[:n]) (up to the sign of a zero), +inf when n = 0."""
    return -_scan_top(v, n, -1.0)


@njit(cache=True, nogil=True)
def last_index(v, n, x):  # pragma: no cover - compiled
    """The largest p < n with v[p] == x, or -1."""
    p = n
    while p >= 8:
        if (v[p - 1] == x) | (v[p - 2] == x) | (v[p - 3] == x) | (v[p - 4] == x) | (v[p - 5] == x) \
                | (v[p - 6] == x) | (v[p - 7] == x) | (v[p - 8] == x):
            break
        p -= 8
    for q in range(p - 1, -1, -1):
        if v[q] == x:
            return q
    return -1


@njit(cache=True, nogil=True)
def kth_smallest(a, k):  # pragma: no cover - compiled
    """The k-th smallest entry of ``a`` (k = 0: the least), by Hoare's selection with a median-of-three pivot,
    reordering ``a`` in place: O(len(a)) expected, no allocation (numpy's ``partition`` copies; 2x slower at
    m = 351). Entries must not be NaN."""
    lo, hi = 0, a.shape[0] - 1
    while hi > lo:
        x, mid, z = a[lo], a[(lo + hi) >> 1], a[hi]
        if x > mid:
            x, mid = mid, x
        if mid > z:
            mid = z
        pivot = max(x, mid)   # the median of the three
        i, j = lo, hi
        while i <= j:   # afterwards a[lo..j] <= pivot <= a[i..hi] and every entry strictly between equals it
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return a[k]
    return a[k]
