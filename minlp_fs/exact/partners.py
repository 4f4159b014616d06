"""The partner sums of the fit sense's fixed-alpha child bounds, in compiled loops (issue 12).

Both fixed-alpha bounds of polynomial kernels (the pair bound of :mod:`.bounds`, degree 2; the degree shares of
:mod:`.shares`, other degrees) bound child t of a split by ``order`` (positions 0 .. p - 1 of the order; child t takes
position t and r = need - 1 features of its pool P_t = positions t + 1 .. p - 1) by a head of its own plus

    the r largest over k in P_t of  item_tk = own_k + 2 Q_tk + top_{r-1}{Q_kl : l in P_t - k},

Q symmetric >= 0 (the shares' pair terms Q; the pair bound's D / 2, for which own_k + D_tk + 1/2 top_{r-1}{D_kl}
is the same item). Sorting a copy of Q's pool per child costs O(p^2 log p) a child, O(p^3 log p) a split (Sonar's
fit sense, p up to 60: a fifth of the search's CPU in numpy's calls). Here row k's top_{r-1} over the pools
P_t - k is kept while t goes down (each step adds l = t + 1 to the pool), and each child's r largest items by
insertion: O(p^2 r) a split, no sort and no copy. The Gaussian kernel's chord bound (:mod:`.chords`) takes each
child's r largest w_tk over its pool by the same :func:`top_sums` and keeps its pools' extremes by
:func:`keep_extremes`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..objective import NonFiniteError


@njit(cache=True, nogil=True)
def keep_extremes(buf, n_in, r, x, ascending) -> float:  # pragma: no cover - compiled
    """Keep in ``buf`` (sorted, ``n_in`` values, at most r) the r smallest (``ascending``) or largest values seen
    with x; returns what the kept values' sum changes by (the kept count becomes min(n_in + 1, r)). Also the
    chord bound's sorted buffers (:mod:`.chords`)."""
    if n_in < r:
        i = n_in
        change = x
    elif (x < buf[r - 1]) if ascending else (x > buf[r - 1]):
        i = r - 1
        change = x - buf[r - 1]
    else:
        return 0.0
    while i > 0 and ((buf[i - 1] > x) if ascending else (buf[i - 1] < x)):
        buf[i] = buf[i - 1]
        i -= 1
    buf[i] = x
    return change


@njit(cache=True, nogil=True)
def _items(own, Q, r: int):  # pragma: no cover - compiled
    """items[t, k] = own_k + 2 Q_tk + top_{r-1}{Q_kl : l > t, l != k} for k > t (module docstring); 0 for k <= t."""
    p = own.shape[0]
    items = np.zeros((p, p))
    top = np.empty(max(r - 1, 1))
    for k in range(p):
        count = 0
        for t in range(p - 2, -1, -1):       # the pool of t: l = t + 1 .. p - 1, l != k
            if r > 1 and t + 1 != k:
                keep_extremes(top, count, r - 1, Q[k, t + 1], False)
                count = min(count + 1, r - 1)
            if t < k:
                items[t, k] = own[k] + 2.0 * Q[t, k] + top[:count].sum()
    return items


@njit(cache=True, nogil=True)
def _top_sums(items, r: int, rows):  # pragma: no cover - compiled
    """For each t in ``rows``: the sum of the r largest items[t, k], k > t."""
    p = items.shape[1]
    out = np.empty(rows.shape[0])
    top = np.empty(r)
    for i in range(rows.shape[0]):
        t, count = rows[i], 0
        for k in range(t + 1, p):
            keep_extremes(top, count, r, items[t, k], False)
            count = min(count + 1, r)
        out[i] = top[:count].sum()
    return out


def partner_items(own: np.ndarray, Q: np.ndarray, r: int) -> np.ndarray:
    """[item_tk] of the module docstring (k > t; 0 elsewhere) for r = need - 1 >= 1, in the order's positions.
    A value that is not finite is refused (it would drop out of a sort or a comparison silently)."""
    own, Q = np.ascontiguousarray(own, dtype=float), np.ascontiguousarray(Q, dtype=float)
    if not (np.isfinite(own).all() and np.isfinite(Q).all()):
        raise NonFiniteError("bnb: a fixed-alpha bound's terms are not finite; the data or alpha must hold a "
                             "non-finite or overflowing value")
    return _items(own, Q, int(r))


def top_sums(items: np.ndarray, r: int, rows) -> np.ndarray:
    """For each child t in ``rows``: the sum of the r largest items[t, k] over its pool k > t."""
    return _top_sums(np.ascontiguousarray(items, dtype=float), int(r), np.asarray(rows, dtype=np.int64))
