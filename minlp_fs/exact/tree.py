"""The branch-and-bound tree: nodes fix features in (I) or out, with a free set F (a set-enumeration tree).

A node (I, F, need) stands for the subsets S = I u R, R subset of F, |R| = need = B - |I|; the features
outside I u F are fixed out. Its *universe* is U = I u F (every subset of the node lies inside it)
and the *probe* of j in F is I + {j} (every subset taking j contains it).

Splitting a node by an ``order`` of F (:func:`split`): child t takes order[t], drops order[:t] and
keeps order[t+1:] free, for t = 0 .. |F| - need. Every subset of the node has a first feature of R in
the order, so the children partition the node (tests/exact/test_tree.py checks it against brute
force). A node with need = 0 or need = |F| holds exactly one subset, :func:`leaf_subset`.

The children's universes are nested: child t's is U_t = I + order[t:], so U_t' is a subset of U_t for t < t'
(:class:`Siblings`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Node:
    """A node of the search (:mod:`.search`): (I, F, need), the score bound of its subsets and what its
    expansion starts from."""
    fixed: tuple
    free: tuple
    need: int
    bound: float                 # every subset of the node has score >= bound
    alpha: np.ndarray | None     # a feasible alpha (warm start): of I (paper), of the parent's universe (fit)
    lower: dict | None = None    # paper sense: {j: a lower bound of the score of probe I + j} for every free j (lazy
    #                              probes): the parent's probe scores, one dict shared by its children
    universe: tuple | None = None  # fit sense: (score bound, exact, alpha, None) of I u F when known (first child)
    relaxed: np.ndarray | None = None  # fit sense: the parent's relaxed alpha (warm start of the relaxed QP, of a leaf)
    siblings: Siblings | None = None   # fit sense: the universe bounds of its split's children, shared by them
    index: int = 0                     # its t in its parent's split


class Siblings:
    """The best universe bound found so far among the children of one split, shared by them (fit sense, monotone
    kernels: :mod:`.search`).

    Child t of a split by ``order`` (:func:`split`) has the universe U_t = I + order[t:], so every subset S of a later
    child t' > t lies in U_t, and a score bound of U_t's subsets bounds child t' too: g(S) <= g(U_t) (g is monotone
    nondecreasing) <= f(alpha, U_t) for any feasible alpha (weak duality), so score(S) >= -f(alpha, U_t) (for the
    verifier: f(alpha, S) <= f(alpha, U_t) too, the kernel matrices' difference being PSD). :meth:`offer` keeps the
    largest such bound with its child and its alpha; :meth:`bound` gives it to a later child only, so a child searched
    out of order (the parallel search's frontier) takes nothing from one after it."""

    def __init__(self):
        self.best: tuple | None = None   # (score bound, child t, alpha)

    def offer(self, t: int, score: float, alpha) -> None:
        if self.best is None or score > self.best[0]:
            self.best = (score, t, alpha)

    def bound(self, t: int) -> tuple | None:
        """(score bound, alpha) of the best universe of a child before t, None if none is known."""
        return None if self.best is None or self.best[1] >= t else (self.best[0], self.best[2])

    def copy(self) -> Siblings:
        twin = Siblings()
        twin.best = self.best
        return twin


def root(n: int, B: int) -> tuple:
    """(I, F, need) of the whole search space."""
    return (), tuple(range(n)), B


def universe(fixed, free) -> tuple:
    return tuple(sorted((*fixed, *free)))


def probe_set(fixed, j: int) -> tuple:
    return tuple(sorted((*fixed, j)))


def is_leaf(free, need: int) -> bool:
    return need == 0 or need == len(free)


def leaf_subset(fixed, free, need: int) -> tuple:
    """The one subset of a node with need = 0 (I) or need = |F| (I u F)."""
    return tuple(sorted(fixed)) if need == 0 else universe(fixed, free)


def split(fixed, free, need: int, order, only=None):
    """Yield (t, I_t, F_t) of the children by ``order`` (a permutation of F); each has need - 1. ``only``: the t
    wanted (the search builds the children it keeps only: Sonar's fit sense prunes most of about 50 per split)."""
    order = tuple(int(j) for j in order)
    if sorted(order) != sorted(free):
        raise ValueError(f"order {order} is not a permutation of the free set {tuple(free)}")
    for t in range(len(order) - need + 1) if only is None else only:
        yield t, tuple(sorted((*fixed, order[t]))), tuple(sorted(order[t + 1:]))
