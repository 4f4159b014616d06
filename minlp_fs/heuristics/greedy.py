"""The beta-step at fixed alpha (problem (5)) by greedy backward elimination (paper section 4).

At a fixed alpha_bar, with v = alpha_bar * y and K_S the Gram matrix of the features S,

    F(S) = v' K_S v                                   (section 4.2; F(S) >= 0, eq. (9))
    f(alpha_bar, S) = F(S)/2 - e'alpha_bar            (the objective of problem (4) at alpha_bar)

so F is computed through :class:`~minlp_fs.heuristics.screening.FixedAlpha` as
F(S) = 2 (f(alpha_bar, S) + e'alpha_bar): the same objective code as everywhere. (We evaluate F by
its formula for every S, so F(empty) = c^d (y'alpha_bar)^2, which is the paper's F(empty) = 0 for a
feasible alpha_bar.) Problem (5) is min F(S) over |S| = B (problem (10)); with

    H(R) = lambda - F([n] \\ R),    lambda = F([n])                       (problem (11))

it becomes max H(R) over |R| <= n - B, and for polynomial kernels H is monotone, non-negative and
submodular (Propositions 1 and 2, proofs in the appendix). The greedy therefore *removes* features:
at each step the one with the largest marginal gain H(R + j) - H(R) = F(K) - F(K - j) (K = kept
set), i.e. the removal giving the smallest f at alpha_bar; it is a (1 - 1/e)-approximation of
max H (Nemhauser et al.), and Minoux's lazy greedy returns exactly the same set with fewer
evaluations, because by submodularity stale gains are upper bounds of the current ones.

Senses. ``sign`` = +1 (the paper's sense, problem (4) as written) minimises f at alpha_bar, as
above. ``sign`` = -1 (the fit sense) wants the *largest* f at alpha_bar: the greedy removes the
feature of smallest H gain. That minimises a submodular function greedily, for which stale gains
are upper bounds of no use (gains only shrink), so only :func:`plain_greedy` runs, and the step is a
heuristic without approximation guarantee. For the Gaussian kernel F is neither sub- nor
supermodular (appendix, "Counterexamples to the super/submodularity of Gaussian Kernels"):
:func:`lazy_greedy` refuses it, :func:`plain_greedy` still runs as a heuristic (the alpha-start on rbf).

Ties are broken by the smallest feature index, in both functions; gains are computed by the same
arithmetic in both, so they return bitwise the same choice.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

from ..errors import CapabilityError, InputError

COUNTEREXAMPLE = ("the paper's appendix 'Counterexamples to the super/submodularity of Gaussian "
                  "Kernels' shows F is neither sub- nor supermodular for the Gaussian kernel")


def F(fixed, S) -> float:
    """F(S) = v' K_S v = 2 (f(alpha_bar, S) + e'alpha_bar) at the fixed alpha of ``fixed``."""
    return 2.0 * (fixed.value(sorted(S)) + fixed.a_sum)


def H(fixed, R) -> float:
    """H(R) = F([n]) - F([n] \\ R) of problem (11)."""
    removed = set(R)
    return F(fixed, range(fixed.instance.n)) - F(fixed, [j for j in range(fixed.instance.n) if j not in removed])


def _ground(fixed, start, B) -> list:
    """The features to eliminate from (sorted), checked against the target size B."""
    ground = sorted(range(fixed.instance.n) if start is None else {int(j) for j in start})
    if not 1 <= B <= len(ground):
        raise InputError(f"the greedy keeps B features out of {len(ground)}; B = {B} is out of range")
    return ground


class Greedy(NamedTuple):
    """A greedy beta-step: the kept subset (sorted), the number of f evaluations (each one H
    evaluation, lambda included), and the features in the order they were removed."""

    subset: tuple
    n_evals: int
    order: list


def plain_greedy(fixed, B: int, start=None, sign: float | None = None) -> Greedy:
    """Remove features from ``start`` (default all n) until B remain, each time the one of largest
    gain sign * (f(K) - f(K - j)), ties to the smallest index. ``sign`` (default ``instance.sign``):
    +1 removes the feature whose removal gives the smallest f at alpha_bar (the largest H gain),
    -1 the one giving the largest f."""
    sign = fixed.instance.sign if sign is None else float(sign)
    kept = _ground(fixed, start, B)
    removals = fixed.removals(kept)
    f_kept = removals.value()
    n_evals, order = 1, []
    while len(kept) > B:
        values = dict(zip(kept, removals.values(kept).tolist()))
        n_evals += len(kept)
        j = min(kept, key=lambda e: (-(sign * (f_kept - values[e])), e))
        kept.remove(j)
        order.append(j)
        f_kept = values[j]
        removals.remove(j)
    return Greedy(tuple(kept), n_evals, order)


def ranked_removal(fixed, B: int, start=None, sign: float | None = None) -> Greedy:
    """Remove in one pass the features of ``start`` whose single removal has the largest gains
    sign * (f(K) - f(K - j)) until B remain (ties to the smallest index): |start| evaluations instead of
    :func:`plain_greedy`'s O(|start|^2), the same subset when one feature goes. A bounded finish for
    a search stopped by its time limit or Ctrl-C (RFE), where nothing may run long any more."""
    sign = fixed.instance.sign if sign is None else float(sign)
    kept = _ground(fixed, start, B)
    removals = fixed.removals(kept)
    f_kept = removals.value()
    values = dict(zip(kept, removals.values(kept).tolist()))
    order = sorted(kept, key=lambda e: (-(sign * (f_kept - values[e])), e))[:len(kept) - B]
    removed = set(order)
    return Greedy(tuple(e for e in kept if e not in removed), 1 + len(kept), order)


def lazy_greedy(fixed, B: int, start=None) -> Greedy:
    """Minoux's lazy greedy for max H (paper's sense): the same set as :func:`plain_greedy` with sign +1.

    A heap holds (-bound, j); by submodularity of H a stale gain bounds the current one from above,
    so the top entry, once recomputed for the current kept set (fresh), is the exact maximiser
    (ties: smallest j, as the heap orders equal keys by j). Polynomial kernels only.
    """
    if not fixed.kernel.submodular:
        raise CapabilityError(f"lazy greedy needs a submodular beta-step (polynomial kernel, Prop. 2); "
                              f"kernel {fixed.kernel.name!r} is not: {COUNTEREXAMPLE}. "
                              "Use plain_greedy, a heuristic without guarantee there")
    kept = _ground(fixed, start, B)
    removals = fixed.removals(kept)
    f_kept = removals.value()
    if len(kept) == B:
        return Greedy(tuple(kept), 1, [])
    values = dict(zip(kept, removals.values(kept).tolist()))
    n_evals, order, it = 1 + len(kept), [], 0
    heap = [(-(f_kept - values[j]), j) for j in kept]
    heapq.heapify(heap)
    fresh = dict.fromkeys(kept, 0)
    while len(kept) > B:
        while True:
            _, j = heapq.heappop(heap)
            if fresh[j] == it:
                break
            values[j], fresh[j] = float(removals.values([j])[0]), it
            n_evals += 1
            heapq.heappush(heap, (-(f_kept - values[j]), j))
        kept.remove(j)
        order.append(j)
        f_kept = values[j]
        removals.remove(j)
        it += 1
    return Greedy(tuple(kept), n_evals, order)


def uses_lazy(kernel, sign: float) -> bool:
    """The lazy greedy applies: a polynomial kernel in the paper's sense (maximising H)."""
    return kernel.submodular and sign > 0


def greedy_step(fixed, B: int, start=None, sign: float | None = None) -> Greedy:
    """The beta-step: lazy greedy where it is exact (:func:`uses_lazy`), plain greedy otherwise."""
    sign = fixed.instance.sign if sign is None else float(sign)
    if uses_lazy(fixed.kernel, sign):
        return lazy_greedy(fixed, B, start)
    return plain_greedy(fixed, B, start, sign)
