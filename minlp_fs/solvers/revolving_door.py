"""The revolving-door order R(n, k) of the k-subsets of n elements (Knuth, TAOCP 7.2.1.3, Algorithm R).

R(n, k) = R(n-1, k) followed by the reverse of R(n-1, k-1) with element n-1 added to each: consecutive
subsets differ by one swap (j_out -> j_in), which is what lets enumeration update a kernel's base matrix
in O(m^2) per subset (:mod:`.enumeration`). :func:`unrank` gives the subset at any rank, so contiguous
rank ranges are independent chunks.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..errors import InputError
from ..options import check_value


def _check_nk(n: int, k: int) -> None:
    check_value("k-subsets", "n", n, int, low=0)
    check_value("k-subsets", "k", k, int)
    if not 0 <= k <= n:
        raise InputError(f"need 0 <= k <= n for k-subsets of n elements; got n={n}, k={k}")


def unrank(rank: int, n: int, k: int) -> tuple:
    """The subset (sorted tuple) at position ``rank`` of the revolving-door order R(n, k)."""
    _check_nk(n, k)
    total = math.comb(n, k)
    if not 0 <= rank < total:
        raise InputError(f"rank {rank} is out of range: R({n}, {k}) has {total} subsets")
    chosen = []
    while 0 < k < n:
        first = math.comb(n - 1, k)          # length of the R(n-1, k) part
        if rank >= first:                    # in the reversed R(n-1, k-1) part, with n-1 added
            chosen.append(n - 1)
            rank = math.comb(n - 1, k - 1) - 1 - (rank - first)
            k -= 1
        n -= 1
    chosen.extend(range(k))                  # k == n: the only subset is everything left
    return tuple(sorted(chosen))


@njit(cache=True, nogil=True)
def successor(c, t):  # pragma: no cover - compiled
    """Advance c[1..t] (an integer array, with sentinel c[t+1] = n) to the next subset: Knuth's Algorithm R,
    steps R3-R5. Returns the swap (j_out, j_in), or (-1, -1) after the last subset. Compiled: enumeration's
    runs of subsets (:mod:`.opened_walk`) advance it without leaving compiled code."""
    if t % 2:                                # R3, t odd: try to increase c_1
        if c[1] + 1 < c[2]:
            c[1] += 1
            return c[1] - 1, c[1]
        j, decrease = 2, True
    else:                                    # R3, t even: try to decrease c_1
        if c[1] > 0:
            c[1] -= 1
            return c[1] + 1, c[1]
        j, decrease = 2, False
    while j <= t:
        if decrease:                         # R4 (here c_j = c_{j-1} + 1)
            if c[j] >= j:
                out = c[j]
                c[j], c[j - 1] = c[j - 1], j - 2
                return out, j - 2
        elif c[j] + 1 < c[j + 1]:            # R5 (here c_{j-1} = j - 2)
            out = c[j - 1]
            c[j - 1] = c[j]
            c[j] += 1
            return out, c[j]
        j += 1
        decrease = not decrease
    return -1, -1


def revolving_door(n: int, k: int, start: int = 0, stop: int | None = None):
    """Yield the subsets of ranks start..stop-1 of R(n, k) as sorted tuples."""
    total = math.comb(n, k) if 0 <= k <= n else 0
    stop = total if stop is None else min(stop, total)
    for _, subset in swaps(n, k, start, stop):
        yield subset


def swaps(n: int, k: int, start: int, stop: int):
    """Yield (move, subset) for ranks start..stop-1: move is None first, then the swap (j_out, j_in)."""
    if start >= stop:
        return
    c = start_state(start, n, k)
    yield None, tuple(c[1:k + 1].tolist())
    for _ in range(start + 1, stop):
        j_out, j_in = successor(c, k)
        yield (int(j_out), int(j_in)), tuple(c[1:k + 1].tolist())


def start_state(rank: int, n: int, k: int) -> np.ndarray:
    """Algorithm R's state at ``rank``: [-1, c_1, ..., c_k, n] (c_1 < ... < c_k the subset) for :func:`successor`."""
    return np.array([-1, *unrank(rank, n, k), n], dtype=np.int64)
