"""The one objective of DFS-SVM: f(alpha, beta) = 1/2 alpha' Q(beta) alpha - e' alpha (problem (4)).

Every value this package reports is computed by :func:`dual_objective` from (alpha, K), whatever
method or solver produced alpha and beta. Q(beta) = (y y') * K_beta, so alpha' Q alpha = v' K v with
v = alpha * y; only the support (alpha_i > 0) enters the quadratic form.

A non-finite value is never returned: :func:`dual_objective` raises :class:`NonFiniteError` instead,
and :func:`kernel_range` gives the bound on every kernel entry that instances check up front.
"""
from __future__ import annotations

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
    """
    bound = kernel_range(kernel, X)
    m = X.shape[0]
    if not np.isfinite(bound) or not np.isfinite(m * C * bound):
        p = kernel.params()
        shown = ", ".join(f"{k}={plain(v)}" for k, v in p.items() if k != "name")
        what = "overflow to inf" if not np.isfinite(bound) else f"reach {bound:.3g}, and m*C times that overflows"
        raise NonFiniteError(f"kernel values on {where} {what} ({p['name']}: {shown}; C={plain(C)}, m={m}): "
                             "no result would be meaningful; lower gamma or C, or scale the data "
                             "(--scaling minmax or standard)")
    return bound


def trivial_bound(y: np.ndarray, C: float) -> float:
    """-2 C min(|I+|, |I-|): a lower bound of f over the whole feasible set (Remark 1).

    Since Q(beta) is PSD, f >= -e'alpha, and y'alpha = 0 with alpha <= C gives
    e'alpha <= 2 C min(|I+|, |I-|). A subset attaining it is globally optimal in the paper's
    sense and degenerate: every alpha of the minority class sits at C and a'Qa = 0.
    """
    n_pos = int(np.sum(y > 0))
    return -2.0 * C * min(n_pos, y.size - n_pos)


def attains_trivial_bound(value: float, y: np.ndarray, C: float, rtol: float = 1e-6,
                          bound: float | None = None) -> bool:
    """True when ``value`` equals the trivial bound to relative tolerance ``rtol`` (``bound``: it precomputed)."""
    bound = trivial_bound(y, C) if bound is None else bound
    return value <= bound + rtol * abs(bound)


def feasibility_violation(alpha: np.ndarray, y: np.ndarray, C: float) -> float:
    """Largest violation of y'alpha = 0 and 0 <= alpha <= C (0 for a feasible alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    return float(max(abs(alpha @ y), -alpha.min(initial=0.0), alpha.max(initial=0.0) - C, 0.0))


def svm_primal(instance, K: np.ndarray, alpha: np.ndarray):
    """The kernelised primal point (c, b, xi) of a dual optimum alpha, and its value.

    c = alpha * y (representer theorem), b from the KKT conditions (mean over the free support
    vectors 0 < alpha_i < C, else the midpoint of the interval the bounded ones allow),
    xi_i = max(0, 1 - y_i((K c)_i + b)); value = 1/2 c'Kc + C sum xi, which equals -f(alpha) for an
    exact dual optimum (strong duality). Used to warm-start fit-sense models.
    """
    y, C = instance.y, instance.C
    c = alpha * y
    f = K @ c
    eps = 1e-8 * C
    free = (alpha > eps) & (alpha < C - eps)
    if free.any():
        b = float(np.mean(y[free] - f[free]))
    else:
        # alpha_i = 0 needs y_i(f_i + b) >= 1, alpha_i = C needs y_i(f_i + b) <= 1
        at_zero, at_c = alpha <= eps, alpha >= C - eps
        lo = np.concatenate([(1 - f)[at_zero & (y > 0)], (-1 - f)[at_c & (y < 0)]])
        hi = np.concatenate([(1 - f)[at_c & (y > 0)], (-1 - f)[at_zero & (y < 0)]])
        lo_b = lo.max() if lo.size else (hi.min() if hi.size else 0.0)
        hi_b = hi.min() if hi.size else lo_b
        b = float(0.5 * (lo_b + hi_b))
    xi = np.maximum(0.0, 1.0 - y * (f + b))
    return c, b, xi, float(0.5 * c @ f + C * xi.sum())


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
