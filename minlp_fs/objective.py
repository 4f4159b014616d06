"""The one objective of DFS-SVM: f(alpha, beta) = 1/2 alpha' Q(beta) alpha - e' alpha (problem (4)).

Every value this package reports is computed by :func:`dual_objective` from (alpha, K), whatever
method or solver produced alpha and beta. Q(beta) = (y y') * K_beta, so alpha' Q alpha = v' K v with
v = alpha * y; only the support (alpha_i > 0) enters the quadratic form.

A non-finite value is never returned: :func:`dual_objective` raises :class:`NonFiniteError` instead,
and :func:`kernel_range` gives the bound on every kernel entry that instances check up front.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError, plain


class NonFiniteError(InputError):
    """A kernel entry or an objective value overflowed to inf or NaN."""


def dual_objective(alpha: np.ndarray, K: np.ndarray, y: np.ndarray) -> float:
    """f(alpha, beta) for the kernel matrix K = K_beta of the selected features."""
    alpha = np.asarray(alpha, dtype=float)
    v = alpha * y
    sv = np.flatnonzero(v)
    with np.errstate(over="ignore", invalid="ignore"):
        if 2 * sv.size > v.size:  # a dense product beats copying the support block
            value = float(0.5 * (v @ (K @ v)) - alpha.sum())
        else:
            v = v[sv]
            value = float(0.5 * (v @ K[np.ix_(sv, sv)] @ v) - alpha.sum())
    if not np.isfinite(value):
        raise NonFiniteError(f"the objective f(alpha, beta) is {value} (the kernel matrix or alpha has "
                             "non-finite entries); lower gamma, C or the data's scale (use --scaling minmax)")
    return value


def kernel_range(kernel, X: np.ndarray) -> float:
    """An upper bound of |k_S(x_i, x_h)| over every feature subset S and rows i, h of X (inf on overflow).

    Both kernels are phi(s) of a base s = sum_{j in S} t_j (see :mod:`minlp_fs.kernels`). With
    R = max_i ||x_i||^2 over all features: polynomial, |s| = |<x_S, z_S>| <= ||x|| ||z|| <= R
    (Cauchy-Schwarz, and a subset's norm is at most the full norm), and since gamma > 0, c >= 0,
    |phi(s)| <= phi(|s|) <= phi(R) whatever the data's signs; phi(R) is the largest diagonal entry of
    the full-feature Gram, so the bound is attained. Gaussian, 0 <= s <= ||x - z||^2 <= 4R and
    0 < phi <= phi(0) = 1. So max(|phi(R)|, |phi(0)|) bounds every entry when 4R is finite (the base
    matrices and their swap updates then stay finite too). The full-feature bound is the one needed:
    the alpha-start and RFE form the Gram of all n features.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        R = float(np.max(np.einsum("ij,ij->i", X, X)))
        if not np.isfinite(4.0 * R):
            return np.inf
        ends = np.abs(kernel.apply(np.array([R, 0.0])))
    return float(np.max(ends))


def check_kernel_range(kernel, X: np.ndarray, C: float, where: str = "the data") -> float:
    """The bound of :func:`kernel_range`, or a :class:`NonFiniteError` when it or m C times it overflows.

    m C max|K| bounds every entry of SMO's gradient Q alpha - e (alpha in [0, C]^m), so when it is
    finite no kernel entry or gradient of any subset can overflow; the optimum g itself lies in
    [-2C min(|I+|, |I-|), 0] (Remark 1), and :func:`dual_objective` refuses any other value that overflows.
    The same bound times the machine epsilon is the worst-case rounding of that gradient; beyond
    :data:`PRECISION_GUARD` the instance is refused too (an :class:`InputError`). The bound is a worst case over
    every subset and every alpha (the full-feature kernel, every alpha at C), which solves stay far from: BCD
    standardised, poly5, gamma 1, C 1 sits at 1.7 and solves to 1e-6 of libsvm, so the guard only catches
    absurd scales (raw BCD poly3: 1.9e7, where libsvm did not return; C = 1e300: 1e287, SMO ran to its limit).
    """
    bound = kernel_range(kernel, X)
    m = X.shape[0]
    p = kernel.params()
    shown = ", ".join(f"{k}={plain(v)}" for k, v in p.items() if k != "name")
    if not np.isfinite(bound) or not np.isfinite(m * C * bound):
        what = "overflow to inf" if not np.isfinite(bound) else f"reach {bound:.3g}, and m*C times that overflows"
        raise NonFiniteError(f"kernel values on {where} {what} ({p['name']}: {shown}; C={plain(C)}, m={m}): "
                             "no result would be meaningful; lower gamma or C, or scale the data "
                             "(--scaling minmax or standard)")
    if m * C * bound * np.finfo(float).eps > PRECISION_GUARD:
        raise InputError(f"C={plain(C)} is too large for double precision on {where} ({p['name']}: {shown}, m={m}): "
                         f"the SVM dual's gradient may reach m*C*max|K| = {m * C * bound:.3g}, whose rounding would "
                         f"exceed its constant part {PRECISION_GUARD:g} times; lower C or gamma, or scale the "
                         "features to [0, 1] (--scaling minmax)")
    return bound


#: check_kernel_range refuses an instance whose worst-case gradient rounding m C max|K| eps exceeds this
PRECISION_GUARD = 1e6


def trivial_bound(y: np.ndarray, C: float) -> float:
    """-2 C min(|I+|, |I-|): a lower bound of f over the whole feasible set (Remark 1).

    Since Q(beta) is PSD, f >= -e'alpha, and y'alpha = 0 with alpha <= C gives
    e'alpha <= 2 C min(|I+|, |I-|). A subset attaining it is globally optimal in the paper's
    sense and degenerate: every alpha of the minority class sits at C and a'Qa = 0.
    """
    n_pos = int(np.sum(y > 0))
    return -2.0 * C * min(n_pos, y.size - n_pos)


#: relative tolerance to which a value attaining the trivial bound is optimal (the accuracy of every value)
TRIVIAL_RTOL = 1e-6


def attains_trivial_bound(value: float, y: np.ndarray, C: float, rtol: float = TRIVIAL_RTOL,
                          bound: float | None = None) -> bool:
    """True when ``value`` equals the trivial bound to relative tolerance ``rtol`` (``bound``: it precomputed)."""
    bound = trivial_bound(y, C) if bound is None else bound
    return value <= bound + rtol * abs(bound)


def degenerate_advice(sense: str) -> str:
    """What to do about a result at the trivial bound: in the paper sense, the sense is the cause; in the fit
    sense even the best-fitting subset makes a one-class SVM, so the kernel or C is."""
    if sense == "paper":
        return "Use --sense fit for informative features."
    return ("Even the best-fitting subset gives it: the kernel cannot separate the classes at these parameters "
            "(try another gamma, C or scaling).")


def feasibility_violation(alpha: np.ndarray, y: np.ndarray, C: float) -> float:
    """Largest violation of y'alpha = 0 and 0 <= alpha <= C (0 for a feasible alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    return float(max(abs(alpha @ y), -alpha.min(initial=0.0), alpha.max(initial=0.0) - C, 0.0))


class PrimalPoint(NamedTuple):
    """The SVM primal point of a dual vector (:func:`primal_point`) and its primal value."""

    c: np.ndarray     # c = alpha * y: w = sum_i c_i phi(x_i) (representer theorem)
    b: float          # the bias
    xi: np.ndarray    # the smallest slacks making (w, b) feasible: xi_i = max(0, 1 - y_i ((K c)_i + b))
    value: float      # P(w, b, xi) = 1/2 c'Kc + C sum_i xi_i


#: the bias rules of :func:`primal_point`
BIAS_RULES = ("kkt", "hinge")


def primal_point(alpha: np.ndarray, y: np.ndarray, C: float, o: np.ndarray, bias: str = "kkt",
                 at_bound: float = 0.0) -> PrimalPoint:
    """The primal point (w, b, xi) that a dual vector ``alpha`` defines, and its value P(w, b, xi): the
    package's one implementation of the weak-duality bound g >= -P.

    The C-SVM primal is min P(w, b, xi) = 1/2 ||w||^2 + C sum_i xi_i s.t. y_i (w'phi(x_i) + b) >= 1 - xi_i,
    xi >= 0, and its optimum is -g, g = min_{alpha in Delta} f(alpha) the dual optimum (3) (strong
    duality). With c = alpha * y and w = sum_i c_i phi(x_i), ||w||^2 = c'Kc; ``o`` = K c (the decision
    values without bias, computed by the caller, who may know a cheaper way than a full K). For ANY
    vector alpha and ANY b the point with xi_i = max(0, 1 - y_i (o_i + b)) is feasible, so P >= -g and

        g >= -P(w, b, xi)   (weak duality),

    with equality at a dual optimum and its KKT bias. The bias:

    * ``"kkt"``: libsvm's rule, b = mean of y_i - o_i over the free alphas (``at_bound`` < alpha_i <
      C - ``at_bound``), else the midpoint of the interval the bounded ones allow (alpha_i = 0 needs
      y_i (o_i + b) >= 1, alpha_i = C needs y_i (o_i + b) <= 1; one end alone when the other is open).
      SMO's early stop (:func:`minlp_fs.alpha.smo._lower_bound`, compiled) mirrors this rule with
      ``at_bound`` = 0;
    * ``"hinge"``: the b minimising sum_i xi_i, a convex piecewise-linear function of b whose minimum is
      at a breakpoint p_k = y_k - o_k (1 - y_i (o_i + b) = y_i (p_i - b)); every breakpoint is evaluated
      with sorted prefix sums, O(m log m). The strongest bound for this w (the verifier's, in
      :mod:`minlp_fs.exact.certificate`).
    """
    if bias not in BIAS_RULES:
        raise InputError(f"bias must be one of {', '.join(BIAS_RULES)}; got {plain(bias)}")
    alpha = np.asarray(alpha, dtype=float)
    c = alpha * y
    if bias == "hinge":
        b = _hinge_bias(y - o, y)
    else:
        b = _kkt_bias(alpha, y, C, o, at_bound)
    xi = np.maximum(0.0, 1.0 - y * (o + b))
    return PrimalPoint(c, b, xi, float(0.5 * c @ o + C * xi.sum()))


def _kkt_bias(alpha, y, C, o, at_bound) -> float:
    """libsvm's bias (:func:`primal_point`, ``"kkt"``)."""
    free = (alpha > at_bound) & (alpha < C - at_bound)
    if free.any():
        return float(np.mean(y[free] - o[free]))
    at_zero, at_c = alpha <= at_bound, alpha >= C - at_bound
    lo = np.concatenate([(1 - o)[at_zero & (y > 0)], (-1 - o)[at_c & (y < 0)]])
    hi = np.concatenate([(1 - o)[at_c & (y > 0)], (-1 - o)[at_zero & (y < 0)]])
    lo_b = lo.max() if lo.size else (hi.min() if hi.size else 0.0)
    hi_b = hi.min() if hi.size else lo_b
    return float(0.5 * (lo_b + hi_b))


def _hinge_bias(p: np.ndarray, y: np.ndarray) -> float:
    """argmin over b of h(b) = sum_{y_i > 0} (p_i - b)^+ + sum_{y_i < 0} (b - p_i)^+ (convex, piecewise
    linear: its minimum is at a breakpoint p_k; every breakpoint evaluated with sorted prefix sums)."""
    pos, neg = np.sort(p[y > 0]), np.sort(p[y < 0])
    suffix = np.concatenate([np.cumsum(pos[::-1])[::-1], [0.0]])     # sum of pos[i:]
    prefix = np.concatenate([[0.0], np.cumsum(neg)])                  # sum of neg[:j]
    i = np.searchsorted(pos, p, side="right")
    j = np.searchsorted(neg, p, side="left")
    h = (suffix[i] - p * (pos.size - i)) + (p * j - prefix[j])
    return float(p[np.argmin(h)])


def svm_primal(instance, K: np.ndarray, alpha: np.ndarray, bias: str = "kkt") -> PrimalPoint:
    """:func:`primal_point` of ``alpha`` for a binary instance and the subset's Gram K: (c, b, xi, value),
    value = -f(alpha) for an exact dual optimum (strong duality), >= -g for any alpha. The KKT bias
    counts alpha_i within 1e-8 C of a bound as at it (alphas of other solvers). Warm-starts fit-sense
    models; minus its value is the multiclass early stop's per-class bound."""
    alpha = np.asarray(alpha, dtype=float)
    return primal_point(alpha, instance.y, instance.C, K @ (alpha * instance.y), bias, at_bound=1e-8 * instance.C)


def stacked_objective(alphas: np.ndarray, K: np.ndarray, Y: np.ndarray) -> float:
    """sum_k f(alpha_k, beta) for a stack of alphas (rows) and their labels Y (K x m), one Gram K_beta.

    The objective of a multiclass instance (:mod:`minlp_fs.multiclass`): K one-vs-rest duals that
    share beta; each term is :func:`dual_objective`.
    """
    alphas = np.asarray(alphas, dtype=float)
    if alphas.shape != np.shape(Y):
        raise InputError(f"a multiclass alpha must be a stack of shape {np.shape(Y)} (one row per class); "
                         f"got shape {alphas.shape}")
    return float(sum(dual_objective(a, K, y) for a, y in zip(alphas, Y)))
