"""Proven bounds of branch-and-bound nodes for problem (4) (appendix app:proofs, Proposition 1).

Every method minimises the *score* sign * g(S) (``Instance.score``: g in the paper sense, -g in the
fit sense), where g(S) = min_{alpha in Delta} f(alpha, S) is the SVM dual optimum (3) of subset S and
f(alpha, S) = 1/2 alpha' Q_S alpha - e'alpha the one objective (:mod:`minlp_fs.objective`). A node is a
family of B-subsets; a *bound* of a node is a number every subset's score is >= to. A node whose bound
is >= the incumbent's score holds no strictly better subset and is pruned.

These bounds are proven here:

* **trivial** (paper sense, any kernel; Remark 1): g(S) >= -2C min(|I+|, |I-|).
* **probe** (:func:`probe_bounds`; paper sense, polynomial kernels with c >= 0): g is monotone
  nondecreasing, S subset of T implies g(S) <= g(T). Proof: K_T - K_S is PSD (appendix app:proofs:
  by Observation 1 (c = 0 after adding the constant feature sqrt(c/gamma)) the difference expands
  into a sum of products of kernels with nonnegative coefficients, a kernel by Proposition
  app-product), so f(alpha, S) <= f(alpha, T) for every alpha, and the minimum over the same
  polytope Delta keeps the order. A subset S = I u R of a node contains every probe I + {j}, j in R,
  so g(S) >= max_{j in R} g(I + j) >= the |R|-th smallest g(I + j) over any W containing R.
  Any lower bound of g(I + j) may stand for it: the search solves the probes of inner nodes to a
  loose KKT tolerance and uses the weak-duality bound of :func:`primal_lower_bound` (hinge bias), re-solving
  tightly only those whose bracket [-P, f] straddles the incumbent (paper_probes.PaperProbes._tighten).
  (In the fit sense monotonicity only gives g(S) <= g(I u F), used as is by the search.)
* **fixed-alpha pair** (:class:`FixedAlphaQuadratic`, :func:`pair_bounds`; fit sense, degree-2 polynomial
  kernels with c >= 0): with v = alpha * y and u = X'v, V = X' diag(v) X (over the rows),
  K_S = (gamma G_S + c)^2 entrywise expands to c^2 + 2 c gamma G_S + gamma^2 G_S o G_S, and
  v'(G_S o G_S)v = sum_{j,k in S} V_jk^2. So f(alpha, S) = 1/2 v'K_S v - e'alpha is exactly quadratic
  in the indicator of S: f(alpha, I u R) = f(alpha, I) + sum_{j in R} g_j + sum_{j<k in R} D_jk with
  g_j = f(alpha, I + {j}) - f(alpha, I) and D_jk = gamma^2 V_jk^2 >= 0 (independent of I). Splitting
  each pair's D_jk evenly between j and k, for |R| = r inside a pool P:
  sum_{j<k in R} D_jk = 1/2 sum_{j in R} sum_{k in R - j} D_jk <= 1/2 sum_{j in R} top_{r-1}{D_jk : k in P - j},
  hence f(alpha, I u R) <= f(alpha, I) + (sum of the r largest h_j over P), h_j = g_j + 1/2 top_{r-1}(D_j.).
  A child T = I + {j_t} with pool P = order[t+1:] has g_k(T) = g_k + D_{j_t k}, so its bound is
  f(alpha, I) + g_{j_t} + the r largest of g_k + D_{j_t k} + 1/2 top_{r-1}{D_kl : l in P - k}.
* **fixed-alpha degree shares** (:mod:`.shares`; fit sense, polynomial kernels of any degree with c >= 0):
  every monomial of f(alpha, .) in beta has a nonnegative coefficient; charging each to the features of
  its support in proportion to their exponents gives shares e_j with f(alpha, I u R) <= f(alpha, I) +
  sum_{j in R} e_j (each monomial inside R is charged wholly to R), and the parts of degree >= 2 of each
  share charged to its r - 1 best partners only (for degree 2 the pair bound). Degrees other than 2 use it
  alone: the marginal bound f(alpha, I + j) + the r largest gains f(alpha, U) - f(alpha, U - k) (supermodularity
  of alpha' Q_S alpha), which the search used to take the smaller of, counts each monomial whole in every gain
  (e_k <= gain_k) and was the smaller for 0 of 221 children on Cleveland poly5 B = 6 and 0 of 23,126 on Sonar
  poly3 B = 6 (benchmarks/RESULTS.md, bench_bnb_fit_bmax) while costing about 12 % of the search's CPU.

* **fixed-alpha chords** (:mod:`.chords`; fit sense, Gaussian kernels): each term c_ih exp(-gamma s_ih) of
  f(alpha, .) is convex in the one number s_ih, which lies between the sums of the need smallest and largest
  d_ihj over the pool; the chord (c_ih > 0) or a tangent (c_ih < 0) bounds it by an affine function of beta,
  so f(alpha, I u R) <= kappa + the r largest w_j.

The Gaussian kernel is not monotone (appendix counterexample): in the paper sense only the trivial bound is
used there, and the tree enumerates the leaves; in the fit sense g(I u F) bounds nothing, and the chords
alone bound the children.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..alpha.smo import _hinge_lower_bound
from ..kernels import GaussianKernel, PolynomialKernel
from ..multiclass import machines
from ..objective import primal_point
from . import tree
from .chords import GaussianChords
from .partners import partner_items, top_sums
from .shares import FixedAlphaShares, share_bounds


def primal_lower_bound(K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray) -> float:
    """A lower bound of g = min_{alpha in Delta} f(alpha) for kernel matrix K from ANY feasible alpha:
    -P(w, b, xi) of :func:`~minlp_fs.objective.primal_point` with the hinge-minimising bias (the strongest for
    alpha's w; SMO's own early stop keeps libsvm's, cheaper at every check). Exact (to the solve's accuracy) at
    the optimum; with alpha from a solve at KKT tolerance 1e-3 it was within 3e-4 relative of g on Cleveland's
    probes (libsvm's bias). Computed by primal_point's compiled mirror :func:`~minlp_fs.alpha.smo._hinge_lower_bound`
    (a selection instead of primal_point's sorts; tests/test_primal_point.py: the same value to 1e-12 relative): 8 us
    instead of 64 us per probe at m = 195 (Parkinsons), where bnb's paper sense takes one per probe."""
    y = np.ascontiguousarray(y, dtype=float)
    alpha = np.ascontiguousarray(alpha, dtype=float)
    n_pos = int(np.count_nonzero(y > 0))
    if not 0 < n_pos < y.size:   # one class: the compiled selection needs both
        return -primal_point(alpha, y, float(C), K @ (alpha * y), bias="hinge").value
    return float(_hinge_lower_bound(y, float(C), alpha, y * (K @ (alpha * y)) - 1.0, n_pos, np.empty(y.size)))


def instance_lower_bound(instance, K: np.ndarray, alpha: np.ndarray) -> float:
    """:func:`primal_lower_bound` of the instance's value g: a multiclass instance sums the bounds of its
    one-vs-rest machines (g = sum_k g_k and each g_k >= -P_k by weak duality)."""
    return float(sum(primal_lower_bound(K, part.y, part.C, a) for part, a in machines(instance, alpha)))


def monotone(kernel) -> bool:
    """True when g is monotone nondecreasing in the subset: polynomial kernels with c >= 0."""
    return isinstance(kernel, PolynomialKernel) and kernel.coef0 >= 0


def fixed_alpha(kernel) -> bool:
    """True when the fit sense has fixed-alpha bounds of a node's children (:func:`fit_child_bounds`):
    polynomial kernels with c >= 0 (pair, degree shares) and Gaussian kernels (chords)."""
    return monotone(kernel) or isinstance(kernel, GaussianKernel)


def bnb_bounds(kernel, sense: str) -> bool:
    """True when bnb prunes with more than the trivial bound: polynomial kernels with c >= 0 (probes, g(I u F)
    and the fixed-alpha bounds), and the Gaussian kernel in the fit sense (its chords)."""
    return monotone(kernel) or (sense == "fit" and fixed_alpha(kernel))


def probe_bounds(scores: dict, order, need: int, inherited: float) -> list:
    """Score bounds of the children t = 0 .. len(order) - need of a split by ``order`` (:func:`.tree.split`): child
    t marks ``order[t]`` and then ``need - 1`` features of ``order[t+1:]``.

    ``scores[j]``: a lower bound of the score of probe P_j (its exact score, or the incumbent's score
    when the probe's solve stopped early proving it worse). Child t's subsets mark order[t] and
    need - 1 others of order[t+1:], so their score is >= max(scores[order[t]], the need-th smallest
    score over order[t:]) (module docstring, probe bound) and >= the parent's bound ``inherited``.
    One pass from the last child, keeping the need smallest scores of the suffix sorted: O(|F| need), where a sort
    per child cost 6 % of a paper-sense search (Parkinsons poly2 B = 6).
    """
    values = [scores[j] for j in order]
    if any(s != s for s in values):   # NaN: the comparisons would be False and the bound wrong
        raise ValueError("a probe's score bound is not a number")
    smallest = sorted(values[len(values) - need + 1:])   # the suffix after the last child
    bounds = []
    for t in range(len(values) - need, -1, -1):
        bisect.insort(smallest, values[t])
        del smallest[need:]
        bounds.append(max(inherited, values[t], smallest[need - 1]))
    return bounds[::-1]


class FixedAlphaQuadratic:
    """f(alpha, S) of a degree-2 polynomial kernel as the quadratic in the indicator of S inside a universe U
    (module docstring, pair bound): f(alpha, S) = const + sum_{j in S} lin_j + sum_{j<k in S} W_jk with
    lin_j = c gamma u_j^2 + W_jj / 2, W = gamma^2 V o V, const = c^2 (sum v)^2 / 2 - e'alpha;
    O(m |U|^2) once, then no kernel matrix."""

    def __init__(self, instance, alpha: np.ndarray, universe):
        k = instance.kernel
        self.position = {int(j): i for i, j in enumerate(universe)}
        self.W, self.lin, self.const = 0.0, 0.0, 0.0
        for part, a in machines(instance, alpha):     # multiclass: f(A, S) = sum_k f(alpha_k, S), term by term
            sv = np.flatnonzero(a > 0)
            v = a[sv] * part.y[sv]
            Xu = part.X[np.ix_(sv, list(universe))]
            u = Xu.T @ v
            V = Xu.T @ (Xu * v[:, None])
            W = k.gamma ** 2 * V * V
            self.W = self.W + W
            self.lin = self.lin + k.coef0 * k.gamma * u * u + 0.5 * np.diagonal(W)
            self.const += 0.5 * k.coef0 ** 2 * float(v.sum()) ** 2 - float(a.sum())

    def index(self, subset) -> np.ndarray:
        return np.array([self.position[int(j)] for j in subset], dtype=int)

    def value(self, subset) -> float:
        i = self.index(subset)
        W = self.W[np.ix_(i, i)]
        return float(self.const + self.lin[i].sum() + 0.5 * (W.sum() - np.trace(W)))

    def gains(self, fixed, free) -> np.ndarray:
        """f(alpha, I + {j}) - f(alpha, I) for j in ``free`` (in its order)."""
        j, i = self.index(free), self.index(fixed)
        return self.lin[j] + self.W[np.ix_(j, i)].sum(axis=1)


def pair_bounds(quad: FixedAlphaQuadratic, fixed, order, need: int) -> list:
    """Upper bounds of f(alpha, S) >= g(S) over each child t of the split of (I, F, need) by ``order``
    (module docstring, pair bound): f(alpha, I) + g_t + the need - 1 largest of
    g_k + D_tk + 1/2 top_{need-2}{D_kl : l in order[t+1:] - k} over k in order[t+1:] (the items of
    :mod:`.partners` with Q = D / 2)."""
    gain = quad.gains(fixed, order)
    heads = quad.value(fixed) + gain[:len(order) - need + 1]
    if need == 1:
        return heads.tolist()
    o = quad.index(order)
    items = partner_items(gain, 0.5 * quad.W[np.ix_(o, o)], need - 1)
    return (heads + top_sums(items, need - 1, np.arange(len(heads)))).tolist()


def quadratic(kernel) -> bool:
    """True when the pair bound applies: degree-2 polynomial kernels with c >= 0."""
    return monotone(kernel) and kernel.degree == 2


def _fit_basis(instance, alpha: np.ndarray, fixed, free, need: int):
    """What the fit-sense order and bounds of (I, F) at ``alpha`` rest on: Gaussian, the chords of
    :mod:`.chords`; degree 2, the fixed-alpha quadratic on U = I u F; other degrees, the degree shares of
    :mod:`.shares` (their pair terms only if need > 1)."""
    if isinstance(instance.kernel, GaussianKernel):
        return GaussianChords(instance, alpha, fixed, free)
    if quadratic(instance.kernel):
        return FixedAlphaQuadratic(instance, alpha, tree.universe(fixed, free))
    return FixedAlphaShares(instance, alpha, fixed, free, pairs=need > 1)


def _order(basis, fixed, free, need: int) -> list:
    if isinstance(basis, GaussianChords):
        gain = basis.gains(need)
        return sorted(free, key=lambda j: (-gain[j], j))
    if isinstance(basis, FixedAlphaQuadratic):
        gain = basis.gains(fixed, free)
        D = basis.W[np.ix_(basis.index(free), basis.index(free))].copy()
        np.fill_diagonal(D, -np.inf)
        score = gain + 0.5 * -np.sort(-D, axis=1)[:, :need - 1].sum(axis=1) if need > 1 else gain
        return [j for _, j in sorted(zip(-score, free))]
    share = basis.shares(need)
    return sorted(free, key=lambda j: (-share[j], j))


def _child_bounds(basis, fixed, need: int, order, settled: float | None = None) -> list:
    if isinstance(basis, GaussianChords):
        bounds = basis.child_bounds(order, need)
    elif isinstance(basis, FixedAlphaQuadratic):
        bounds = pair_bounds(basis, fixed, order, need)
    else:
        bounds = share_bounds(basis, order, need, enough=None if settled is None else -settled)
    return [-b for b in bounds]


def fit_order(instance, alpha: np.ndarray, fixed, free, need: int) -> list:
    """The order the fit sense splits a node by: largest estimated gain first (degree 2: g_j plus half the
    need - 1 largest pair terms of j; other degrees: its degree share with its need - 1 best partners,
    :meth:`.shares.FixedAlphaShares.shares`; Gaussian: w_j of the node's own chord bound)."""
    return _order(_fit_basis(instance, alpha, fixed, free, need), fixed, free, need)


def fit_child_bounds(instance, alpha: np.ndarray, fixed, free, need: int, order) -> list:
    """Score bounds (-f terms) of the children of the split of (I, F, need) by ``order`` from one feasible
    alpha: degree 2, the pair bound; other polynomial degrees, the degree-share bound
    (:func:`.shares.share_bounds`); Gaussian, the chord bound (:mod:`.chords`). Shared by the search and the
    verifier."""
    return _child_bounds(_fit_basis(instance, alpha, fixed, free, need), fixed, need, order)


def fit_split(instance, alpha: np.ndarray, fixed, free, need: int, settled: float | None = None) -> tuple:
    """(:func:`fit_order`, :func:`fit_child_bounds` in that order) from one fixed-alpha basis (built once).
    ``settled``: a score, the search's prune threshold (the incumbent's, less the relative gap): the exact head's pair
    terms are computed only for the children they could bring to it (:func:`.shares.share_bounds`, ``enough``), so
    whether a child's bound reaches ``settled`` is the same as with every head; None: every child gets its head (the
    bounds of :func:`fit_child_bounds`, which the verifier recomputes)."""
    basis = _fit_basis(instance, alpha, fixed, free, need)
    order = _order(basis, fixed, free, need)
    return order, _child_bounds(basis, fixed, need, order, settled)


def relaxed_gram(instance, fixed, free, need: int) -> np.ndarray:
    """Kernel matrix at the fractional beta: 1 on I, min(1, RELAX * need / |F|) on F (0 elsewhere).

    Its SVM dual optimum is a feasible alpha (the polytope does not depend on beta), so the fixed-alpha
    bounds hold at it; it is the alpha of a "typical" subset of the node (need of the |F| features
    half-weighted), far tighter for the node's B-subsets than the alpha of the universe (measured:
    benchmarks/RESULTS.md, bench_bnb)."""
    k = instance.kernel
    weights = np.concatenate([np.ones(len(fixed)), np.full(len(free), min(1.0, RELAX * need / len(free)))])
    # sum_j w_j t_j(x, z) of the columns scaled by sqrt(w): the base is A A' of one matrix (one symmetric BLAS product,
    # half the work of (A w) A')
    return k.apply(k.base(instance.X[:, [*fixed, *free]] * np.sqrt(weights)))


#: the relaxed beta's weight on the free features, as a multiple of need / |F| (measured 1 and 1.5 on
#: Ionosphere, Sonar, German poly2 fit: 1.5 as good or better)
RELAX = 1.5
