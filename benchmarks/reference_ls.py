"""A straightforward plain LS (Algorithm 1), for the speed comparison in bench_heuristics.py only.

Every neighbour's kernel matrix is rebuilt from scratch by scikit-learn's pairwise kernels on the
selected columns and fitted cold by libsvm (``SVC(kernel="precomputed")``); nothing is cached,
screened or warm-started. The decisions are those of :class:`minlp_fs.heuristics.local_search.LocalSearch`
with ``refit_fraction=1``: scan N1 in the order (j_out, j_in) ascending, keep the first neighbour with
the best value, move while it is strictly better than the centre, stop at the trivial bound in the
paper sense.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from minlp_fs.alpha import DEFAULT_TOL, libsvm_solve
from minlp_fs.objective import dual_objective


def gram_from_scratch(instance, subset) -> np.ndarray:
    Xs = instance.X[:, list(subset)]
    p = instance.kernel.params()
    if p["name"] == "rbf":
        return rbf_kernel(Xs, gamma=p["gamma"])
    return polynomial_kernel(Xs, degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])


def straightforward_ls(instance, start) -> tuple:
    """(final subset, its value, number of SVM fits) of plain LS from ``start``."""

    def g(subset):
        K = gram_from_scratch(instance, subset)
        return dual_objective(libsvm_solve(K, instance.y, instance.C, tol=DEFAULT_TOL), K, instance.y)

    centre = tuple(sorted(start))
    value, fits = g(centre), 1
    while not (instance.sense == "paper" and instance.is_degenerate(value)):
        best = None
        for j_out in centre:
            for j_in in range(instance.n):
                if j_in in centre:
                    continue
                cand = tuple(sorted(set(centre) - {j_out} | {j_in}))
                v = g(cand)
                fits += 1
                if best is None or instance.better(v, best[0]):
                    best = (v, cand)
        if best is None or not instance.better(best[0], value):
            break
        value, centre = best
    return centre, value, fits
