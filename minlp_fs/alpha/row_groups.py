"""Duplicate rows of a subset: the groups :func:`~.smo.smo_solve` solves the dual over.

Rows i, h with equal inputs on a subset S and y_i = y_h have equal rows of Q_S, and the dual over such groups is
the dual over the rows (:mod:`.smo`'s module docstring). :meth:`~.oracle.AlphaSubproblem.groups` asks, for each
subset it solves, for the groups (first, label) of the rows (x_S, y): label[i] numbers the distinct rows in the
order of their first occurrence, first[g] is the first row of group g (ascending, so the groups' Gram is gathered
in memory order). :meth:`RowKeys.groups` finds them in one compiled pass over the rows' bit patterns (hashed, each
hash hit confirmed by comparing the rows, so the answer is exact: tests/test_alpha.py checks it against a sort of
the rows), and stops as soon as more than a cap of groups is found, where the groups would not be used. It replaced
a hashed count of the distinct rows followed by np.unique's sort where the count did not exceed the cap: on
Cleveland, whose categorical features make a third of its paper-sense probes' subsets repeat rows, 84 us a subset
by the sort, about 7 us by the pass (m = 297). Enumeration's compiled walk (:mod:`minlp_fs.solvers.opened_walk`) asks
only whether there are more than the cap (:func:`_more_distinct_rows_than`, whose False it confirms by the oracle's
groups).
"""
from __future__ import annotations

import numpy as np
from numba import njit


def duplicate_groups(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, label) for :func:`~.smo.smo_solve`: label[i] numbers the distinct pairs (x_i, y_i) (rows of
    ``X``, exactly equal, -0.0 as 0.0) in the order of their first row, first[g] is the first row of group g,
    ascending."""
    X = np.asarray(X, dtype=np.float64).reshape(len(y), -1)
    return RowKeys(X, y).groups(range(X.shape[1]), np.inf)


class RowKeys:
    """The rows of an instance as bits: ``bits[j, i]`` is the int64 bit pattern of X[i, j] + 0.0 (-0.0 and 0.0
    alike, as :func:`duplicate_groups` counts them), ``labels[i]`` y_i's."""

    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.bits = np.ascontiguousarray((np.asarray(X, dtype=np.float64) + 0.0).T).view(np.int64)
        self.labels = (np.asarray(y, dtype=np.float64) + 0.0).view(np.int64)

    def table(self) -> np.ndarray:
        """Scratch space to count in: 2^ceil(log2(2 m)) slots (a caller's own: the count overwrites it)."""
        return np.empty(1 << max(1, int(2 * self.labels.size - 1).bit_length()), dtype=np.uint64)

    def groups(self, columns, cap: float) -> tuple[np.ndarray, np.ndarray] | None:
        """:func:`duplicate_groups` of the rows (x_S, y), S = ``columns``, or None when they take more than ``cap``
        distinct values (the pass stops there)."""
        cols = np.asarray(columns, dtype=np.int64)
        m = self.labels.size
        hashes = self.table()
        owner, first, label = np.empty(hashes.size, dtype=np.int64), np.empty(m, dtype=np.int64), np.empty(m, np.int64)
        count = _row_groups(self.bits, self.labels, cols, float(cap), hashes, owner, first, label)
        return None if count < 0 else (first[:count].copy(), label)


@njit(cache=True, nogil=True)
def _mix(z):  # pragma: no cover - compiled
    """splitmix64's finaliser (every input bit moves every output bit: +-1 labels and signed data whose rows
    differ by their signs alone do not collide, as they did with one multiply-xor per word)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _row_hash(bits, labels, cols, first, stop, i):  # pragma: no cover - compiled
    """The hash of row i's (x_S, y_i), S = cols[first:stop], never 0 (0 marks an empty slot)."""
    h = _mix(np.uint64(labels[i]))
    for p in range(first, stop):
        h = _mix(h ^ np.uint64(bits[cols[p], i]))   # h mixed, the word not: no two words cancel
    return np.uint64(1) if h == 0 else h


@njit(cache=True, nogil=True)
def _more_distinct_rows_than(bits, labels, cols, first, stop, cap, table):  # pragma: no cover - compiled
    """True once more than ``cap`` distinct hashes of the rows (x_S, y_i), S = cols[first:stop], are counted
    (an open-addressing table of hashes). Equal rows hash alike, so the hashes are at most as many as the
    distinct rows: True proves more than ``cap`` distinct rows; False is not a proof (a collision may merge
    two). O(m |S|), no sort."""
    m = labels.shape[0]
    mask = np.uint64(table.shape[0] - 1)
    table[:] = 0
    count = 0
    for i in range(m):
        h = _row_hash(bits, labels, cols, first, stop, i)
        slot = h & mask
        while table[slot] != 0 and table[slot] != h:
            slot = (slot + np.uint64(1)) & mask
        if table[slot] == 0:
            table[slot] = h
            count += 1
            if count > cap:
                return True
    return False


@njit(cache=True, nogil=True)
def _same_row(bits, labels, cols, a, b):  # pragma: no cover - compiled
    """Whether rows a and b are equal on (x_S, y), S = cols, bit for bit."""
    if labels[a] != labels[b]:
        return False
    for p in range(cols.shape[0]):
        if bits[cols[p], a] != bits[cols[p], b]:
            return False
    return True


@njit(cache=True, nogil=True)
def _row_groups(bits, labels, cols, cap, hashes, owner, first, label):  # pragma: no cover - compiled
    """The groups of the rows (x_S, y), S = cols, in one pass: label[i] the group of row i, first[g] its first row;
    returns the number of groups, or -1 once it would exceed ``cap``. An open-addressing table of the rows' hashes
    (``hashes``, 0 = empty) and the group each slot holds (``owner``); a row joins a group only when its bits equal
    the group's first row's, so a collision costs a comparison, never a wrong group."""
    m = labels.shape[0]
    mask = np.uint64(hashes.shape[0] - 1)
    hashes[:] = 0
    count = 0
    for i in range(m):
        h = _row_hash(bits, labels, cols, 0, cols.shape[0], i)
        slot = h & mask
        while True:
            if hashes[slot] == 0:
                if count + 1 > cap:
                    return -1
                hashes[slot], owner[slot] = h, count
                first[count], label[i] = i, count
                count += 1
                break
            g = owner[slot]
            if hashes[slot] == h and _same_row(bits, labels, cols, first[g], i):
                label[i] = g
                break
            slot = (slot + np.uint64(1)) & mask
    return count
