"""The reference alpha-subproblem backend: libsvm through scikit-learn on a precomputed kernel."""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import NotConvergedError, plain

#: libsvm's iteration limit: a last guard against a solve that never ends (instances refuse kernels far out of
#: scale up front, objective.check_kernel_range); ten times SMO's default, since libsvm needed 3.4e7 iterations
#: on a degenerate 58-row dual of duplicated rows (tests/test_alpha.py, duplicated_problem(347, 58, "poly2"))
MAX_ITER = 100_000_000


def libsvm_solve(K: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-7, max_iter: int = MAX_ITER) -> np.ndarray:
    """Optimal alpha of the SVM dual (3) for kernel matrix K, by libsvm's SMO (cold start).

    scikit-learn stores dual_coef_ = y_i alpha_i for the support vectors; alpha >= 0 is its modulus.
    Raises :class:`~minlp_fs.errors.NotConvergedError` when libsvm stops at ``max_iter`` iterations short of
    ``tol`` (its ``fit_status_``): such an alpha is no solution to report.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC  # here, not at import: scikit-learn takes about 1.5 s to import

    svc = SVC(C=C, kernel="precomputed", tol=tol, shrinking=True, cache_size=200, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # reported below, as an error
        svc.fit(K, y)
    if svc.fit_status_ != 0:
        top = float(np.max(np.abs(np.diagonal(K))))
        raise NotConvergedError(
            f"the SVM dual did not converge within {max_iter:,} libsvm iterations (KKT tolerance {plain(tol)}; "
            f"kernel entries up to {top:.3g}, C={plain(C)}): the kernel matrix is too ill-conditioned. Scale the "
            f"features to [0, 1] (the estimators' scaling='minmax', the default; minlp_fs.instance.scale), "
            f"or lower gamma or C")
    alpha = np.zeros(y.shape[0])
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return np.minimum(alpha, C)
