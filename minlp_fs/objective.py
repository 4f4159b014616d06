"""The one objective of DFS-SVM: f(alpha, beta) = 1/2 alpha' Q(beta) alpha - e' alpha (problem (4)).

Every value this package reports is computed by :func:`dual_objective` from (alpha, K), whatever
method or solver produced alpha and beta. Q(beta) = (y y') * K_beta, so alpha' Q alpha = v' K v with
v = alpha * y; only the support (alpha_i > 0) enters the quadratic form.
"""
from __future__ import annotations

import numpy as np


def dual_objective(alpha: np.ndarray, K: np.ndarray, y: np.ndarray) -> float:
    """f(alpha, beta) for the kernel matrix K = K_beta of the selected features."""
    alpha = np.asarray(alpha, dtype=float)
    sv = np.flatnonzero(alpha > 0)
    v = alpha[sv] * y[sv]
    return float(0.5 * (v @ K[np.ix_(sv, sv)] @ v) - alpha.sum())


def trivial_bound(y: np.ndarray, C: float) -> float:
    """-2 C min(|I+|, |I-|): a lower bound of f over the whole feasible set (Remark 1).

    Since Q(beta) is PSD, f >= -e'alpha, and y'alpha = 0 with alpha <= C gives
    e'alpha <= 2 C min(|I+|, |I-|). A subset attaining it is globally optimal in the paper's
    sense and degenerate: every alpha of the minority class sits at C and a'Qa = 0.
    """
    n_pos = int(np.sum(y > 0))
    return -2.0 * C * min(n_pos, y.size - n_pos)


def attains_trivial_bound(value: float, y: np.ndarray, C: float, rtol: float = 1e-6) -> bool:
    """True when ``value`` equals the trivial bound to relative tolerance ``rtol``."""
    bound = trivial_bound(y, C)
    return value <= bound + rtol * abs(bound)


def feasibility_violation(alpha: np.ndarray, y: np.ndarray, C: float) -> float:
    """Largest violation of y'alpha = 0 and 0 <= alpha <= C (0 for a feasible alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    return float(max(abs(alpha @ y), -alpha.min(initial=0.0), alpha.max(initial=0.0) - C, 0.0))
