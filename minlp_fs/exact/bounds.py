"""Proven bounds of branch-and-bound nodes for problem (4) (appendix app:proofs, Proposition 1).

Every method minimises the *score* sign * g(S) (``Instance.score``: g in the paper sense, -g in the
fit sense), where g(S) = min_{alpha in Delta} f(alpha, S) is the SVM dual optimum (3) of subset S and
f(alpha, S) = 1/2 alpha' Q_S alpha - e'alpha the one objective (:mod:`minlp_fs.objective`). A node is a
family of B-subsets; a *bound* of a node is a number every subset's score is >= to. A node whose bound
is >= the incumbent's score holds no strictly better subset and is pruned.

Three bounds are proven here:

* **trivial** (paper sense, any kernel; Remark 1): g(S) >= -2C min(|I+|, |I-|).
* **probe** (:func:`probe_bound`; paper sense, polynomial kernels with c >= 0): g is monotone
  nondecreasing, S subset of T implies g(S) <= g(T). Proof: K_T - K_S is PSD (appendix app:proofs:
  by Observation 1 (c = 0 after adding the constant feature sqrt(c/gamma)) the difference expands
  into a sum of products of kernels with nonnegative coefficients, a kernel by Proposition
  app-product), so f(alpha, S) <= f(alpha, T) for every alpha, and the minimum over the same
  polytope Delta keeps the order. A subset S = I u R of a node contains every probe I + {j}, j in R,
  so g(S) >= max_{j in R} g(I + j) >= the |R|-th smallest g(I + j) over any W containing R.
  (In the fit sense monotonicity only gives g(S) <= g(I u F), used as is by the search.)
* **fixed-alpha marginal** (:func:`marginal_bound`; fit sense, polynomial kernels with c >= 0): for
  ANY feasible alpha, g(S) <= f(alpha, S) (g is a minimum over alpha). At fixed alpha,
  F(S) = alpha' Q_S alpha is supermodular and nondecreasing (Proposition 1), so for the node's
  subsets S = I u R, R subset of F, |R| = r, with U = I u F and delta_j = F(U) - F(U - {j}):
  F(S) = F(I) + sum_t [F(I u {s_1..s_t}) - F(I u {s_1..s_{t-1}})] and each increment is at most
  delta_{s_t} (supermodularity: I u {s_1..s_{t-1}} lies inside U - {s_t}). Hence
  F(S) <= min(F(U), F(I) + sum of the r largest delta_j), an upper bound of g over the whole node
  from one alpha and |U| fixed-alpha evaluations, with no QP.

The Gaussian kernel has neither property (appendix counterexample); there only the trivial bound
(paper sense) is used, and the tree enumerates the leaves.
"""
from __future__ import annotations

import numpy as np

from ..heuristics.screening import FixedAlpha
from ..kernels import PolynomialKernel
from . import tree


def monotone(kernel) -> bool:
    """True when g is monotone nondecreasing in the subset: polynomial kernels with c >= 0."""
    return isinstance(kernel, PolynomialKernel) and kernel.coef0 >= 0


def probe_bound(scores: dict, order, t: int, need: int, inherited: float) -> float:
    """Score bound of the child that marks ``order[t]`` and then ``need - 1`` features of ``order[t+1:]``.

    ``scores[j]``: a lower bound of the score of probe P_j (its exact score, or the incumbent's score
    when the probe's solve stopped early proving it worse). The child's subsets mark order[t] and
    need - 1 others of order[t+1:], so their score is >= max(scores[order[t]], the need-th smallest
    score over order[t:]) (module docstring, probe bound) and >= the parent's bound ``inherited``.
    """
    tail = sorted(scores[j] for j in order[t:])
    return max(inherited, scores[order[t]], tail[need - 1])


def marginal_gains(instance, alpha: np.ndarray, fixed, free, deadline=None) -> tuple:
    """At a fixed alpha, with U = I u F: ({j: f(alpha, I + {j})}, f(alpha, U), {j: f(alpha, U) - f(alpha, U - {j})}), j in F."""
    fa = FixedAlpha(instance, alpha, deadline)
    universe = tree.universe(fixed, free)
    f_all = fa.value(universe)
    removed = fa.removal_values(universe)
    return fa.addition_values(fixed, free), f_all, {j: f_all - removed[j] for j in free}


def marginal_bound(f_take: float, f_all: float, gains: dict, r: int, pool) -> float:
    """Upper bound of f(alpha, S) >= g(S) over the S = T u R, R subset of ``pool``, |R| = r.

    ``f_take`` = f(alpha, T); the bound is f(alpha, T) + the r largest gains in ``pool`` (module
    docstring, marginal bound with I = T; in f's terms, f = F/2 - e'alpha, the constant cancels in the
    increments), and at most f(alpha, U). ``gains`` must come from :func:`marginal_gains` at a U
    containing every such S: gains at a larger U are larger (supermodularity), so one call bounds every
    child of a node, and the bound holds in all their descendants.
    """
    pooled = sorted((gains[j] for j in pool), reverse=True)[:r]
    return min(f_all, f_take + float(sum(pooled)))
