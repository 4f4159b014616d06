"""The reference alpha-subproblem backend: libsvm through scikit-learn on a precomputed kernel."""
from __future__ import annotations

import numpy as np


def libsvm_solve(K: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-7) -> np.ndarray:
    """Optimal alpha of the SVM dual (3) for kernel matrix K, by libsvm's SMO (cold start).

    scikit-learn stores dual_coef_ = y_i alpha_i for the support vectors; alpha >= 0 is its modulus.
    """
    from sklearn.svm import SVC  # here, not at import: scikit-learn takes about 1.5 s to import

    svc = SVC(C=C, kernel="precomputed", tol=tol, shrinking=True, cache_size=200)
    svc.fit(K, y)
    alpha = np.zeros(y.shape[0])
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return np.minimum(alpha, C)
