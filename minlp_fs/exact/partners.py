"""The partner sums of the fit sense's fixed-alpha child bounds, in compiled loops (issue 12).

Both fixed-alpha bounds of polynomial kernels (the pair bound of :mod:`.bounds`, degree 2; the degree shares of
:mod:`.shares`, other degrees) bound child t of a split by ``order`` (positions 0 .. p - 1 of the order; child t takes
position t and r = need - 1 features of its pool P_t = positions t + 1 .. p - 1) by a head of its own plus

    the r largest over k in P_t of  item_tk = own_k + 2 Q_tk + top_{r-1}{Q_kl : l in P_t - k},

Q symmetric >= 0 (the shares' pair terms Q; the pair bound's D / 2, for which own_k + D_tk + 1/2 top_{r-1}{D_kl}
is the same item). Sorting a copy of Q's pool per child costs O(p^2 log p) a child, O(p^3 log p) a split (Sonar's
fit sense, p up to 60: a fifth of the search's CPU in numpy's calls). Here row k's top_{r-1} over the pools
P_t - k is kept while t goes down (each step adds l = t + 1 to the pool), and each child's r largest items by
insertion: O(p^2 r) a split, no sort and no copy.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _insert(top, count: int, size: int, x: float) -> int:  # pragma: no cover - compiled
    """Insert x into top[:count] (largest first, at most ``size`` kept); the new count."""
    if count == size:
        if x <= top[size - 1]:
            return count
        count -= 1
    i = count
    while i > 0 and top[i - 1] < x:
        top[i] = top[i - 1]
        i -= 1
    top[i] = x
    return count + 1


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
                count = _insert(top, count, r - 1, Q[k, t + 1])
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
            count = _insert(top, count, r, items[t, k])
        out[i] = top[:count].sum()
    return out


def partner_items(own: np.ndarray, Q: np.ndarray, r: int) -> np.ndarray:
    """[item_tk] of the module docstring (k > t; 0 elsewhere) for r = need - 1 >= 1, in the order's positions.
    A value that is not finite is refused (it would drop out of a sort or a comparison silently)."""
    own, Q = np.ascontiguousarray(own, dtype=float), np.ascontiguousarray(Q, dtype=float)
    if not (np.isfinite(own).all() and np.isfinite(Q).all()):
        raise FloatingPointError("bnb: a fixed-alpha bound's terms are not finite; the data or alpha must hold a "
                                 "non-finite or overflowing value")
    return _items(own, Q, int(r))


def top_sums(items: np.ndarray, r: int, rows) -> np.ndarray:
    """For each child t in ``rows``: the sum of the r largest items[t, k] over its pool k > t."""
    return _top_sums(np.ascontiguousarray(items, dtype=float), int(r), np.asarray(rows, dtype=np.int64))
