"""The beta-step at fixed alpha (problem (5)) by greedy backward elimination (paper section 4).

At a fixed alpha_bar, with v = alpha_bar * y and K_S the Gram matrix of the features S,

    F(S) = v' K_S v                                   (section 4.2; F(S) >= 0, eq. (9))
    f(alpha_bar, S) = F(S)/2 - e'alpha_bar            (the objective of problem (3) at alpha_bar)

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

Senses. ``sign`` = +1 (the paper's sense, problem (3) as written) minimises f at alpha_bar, as
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

from ..errors import CapabilityError

COUNTEREXAMPLE = ("the paper's appendix 'Counterexamples to the super/submodularity of Gaussian "
                  "Kernels' shows F is neither sub- nor supermodular for the Gaussian kernel")


def F(fixed, S) -> float:
    """F(S) = v' K_S v = 2 (f(alpha_bar, S) + e'alpha_bar) at the fixed alpha of ``fixed``."""
    return 2.0 * (fixed.value(sorted(S)) + float(fixed.a.sum()))


def H(fixed, R) -> float:
    """H(R) = F([n]) - F([n] \\ R) of problem (11)."""
    removed = set(R)
    return F(fixed, range(fixed.instance.n)) - F(fixed, [j for j in range(fixed.instance.n) if j not in removed])


def _ground(fixed, start) -> list:
    return sorted(range(fixed.instance.n) if start is None else {int(j) for j in start})


def _gains(fixed, kept, f_kept, candidates, sign) -> dict:
    """{j: sign * (f(K) - f(K - j))} for j in candidates: half the H gain of removing j (sign = +1)."""
    base = fixed.base(kept)
    return {j: sign * (f_kept - fixed.value_of_base(base - fixed.term(j))) for j in candidates}


def plain_greedy(fixed, B: int, start=None, sign: float | None = None) -> tuple:
    """Remove features from ``start`` (default all n) until B remain, each time the one of largest
    ``sign``-gain (sign = +1: the smallest f at alpha_bar; -1: the largest), ties to the smallest index.

    Returns (kept subset as a sorted tuple, number of f evaluations, removal order).
    """
    sign = fixed.instance.sign if sign is None else sign
    kept = _ground(fixed, start)
    f_kept = fixed.value(kept)
    n_evals, order = 1, []
    while len(kept) > B:
        gains = _gains(fixed, kept, f_kept, kept, sign)
        n_evals += len(kept)
        j = min(kept, key=lambda e: (-gains[e], e))
        f_kept -= sign * gains[j]
        kept.remove(j)
        f_kept = fixed.value(kept) if False else f_kept
        order.append(j)
    return tuple(kept), n_evals, order
