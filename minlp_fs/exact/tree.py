"""The branch-and-bound tree: nodes fix features in (I) or out, with a free set F (a set-enumeration tree).

A node (I, F, need) stands for the subsets it can still become. Two directions, one per sense, so
that the probes of :mod:`.bounds` are the QPs the search solves anyway:

* ``add`` (paper sense: min g, g nondecreasing): S = I u R, R subset of F, |R| = need = B - |I|;
  the node's *anchor* is I and the probe of j in F is I + {j} (S marks the features it takes).
* ``remove`` (fit sense: max g): S = (I u F) - E, E subset of F, |E| = need = |I u F| - B; the
  anchor is U = I u F and the probe of j is U - {j} (S marks the features it leaves out).

Splitting a node by an ``order`` of F (:func:`split`): child t marks order[t], leaves order[:t]
unmarked (``add``: dropped; ``remove``: fixed in) and keeps order[t+1:] free, for
t = 0 .. |F| - need. Every subset of the node marks a first feature in the order, so the children
partition the node (tests/exact/test_tree.py checks it against brute force). A node with need = 0 or
need = |F| holds exactly one subset, :func:`leaf_subset`.
"""
from __future__ import annotations


def root(n: int, B: int, add: bool) -> tuple:
    """(I, F, need) of the whole search space."""
    return (), tuple(range(n)), (B if add else n - B)


def anchor(fixed, free, add: bool) -> tuple:
    """The set the node's probes are one feature away from: I (add) or I u F (remove)."""
    return tuple(fixed) if add else tuple(sorted((*fixed, *free)))


def probe_set(fixed, free, j: int, add: bool) -> tuple:
    """I + {j} (add) or (I u F) - {j} (remove)."""
    if add:
        return tuple(sorted((*fixed, j)))
    return tuple(sorted(k for k in (*fixed, *free) if k != j))


def is_leaf(free, need: int) -> bool:
    return need == 0 or need == len(free)


def leaf_subset(fixed, free, need: int, add: bool) -> tuple:
    """The one subset of a node with need = 0 or need = |F|."""
    take_all = (need == len(free)) == add  # add: need = |F| takes F; remove: need = 0 keeps F
    return tuple(sorted((*fixed, *free))) if take_all else tuple(sorted(fixed))


def split(fixed, free, need: int, order, add: bool):
    """Yield (t, I_t, F_t) of the children by ``order`` (a permutation of F); each has need - 1."""
    order = tuple(order)
    if sorted(order) != sorted(free):
        raise ValueError(f"order {order} is not a permutation of the free set {tuple(free)}")
    for t in range(len(order) - need + 1):
        rest = tuple(sorted(order[t + 1:]))
        if add:
            yield t, tuple(sorted((*fixed, order[t]))), rest
        else:
            yield t, tuple(sorted((*fixed, *order[:t]))), rest
