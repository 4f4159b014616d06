"""Large-m selection: search on a stratified sample of rows, then the value re-evaluated exactly on all rows.

Every exact method obtains g(beta) = min_alpha f(alpha, beta) (problem (3) with Q = Q(beta), the inner
problem of (4)) from the subset's m x m Gram K_beta (:class:`~minlp_fs.alpha.AlphaSubproblem`), and the
alpha-start forms the Gram of all n features: at m = 20,000 one such matrix is 3.2 GB, and a search
builds one per candidate. In large-m mode:

1. **Scaling** is fitted on all m rows (the instance of all rows is built as in the exact mode; no Gram).
2. **Search**: the configured method runs, unchanged, on that instance restricted to ``rows`` rows drawn
   by :func:`~minlp_fs.instance.stratified_rows` (both classes in proportion, seeded): every Gram it
   builds is rows x rows, whatever m is.
3. **Exact value** of the chosen subset beta* on all m rows: problem (3) is the C-SVC dual
   min 1/2 a'Qa - e'a s.t. y'a = 0, 0 <= a <= C, which ``sklearn.svm.SVC`` (libsvm) solves with the same
   kernel on X[:, beta*] while computing kernel columns on demand (an LRU cache of :data:`CACHE_MB` MB).
   Its ``dual_coef_`` holds y_i alpha_i on the support vectors (alpha = 0 elsewhere), so
   f(alpha, beta*) is computed by the package's one objective, :func:`~minlp_fs.objective.dual_objective`,
   with K_beta* of the support vectors as an operator (:class:`BlockedGram`: ``K @ v`` in blocks of
   ``BLOCK_ROWS`` rows, never materialised). libsvm stops at the same KKT tolerance as the oracle
   (:data:`~minlp_fs.alpha.oracle.DEFAULT_TOL`), so the value is exact to the package's accuracy.

The Result then describes beta* on all rows (objective, alpha of length m, degeneracy by the trivial
bound of all rows); the search's own value and status stay in ``info["large_m"]``. A search that proves
its subset optimal on the sample proves nothing on all rows: the status becomes ``converged``.

``large_m="auto"`` runs this mode when m > :data:`AUTO_ROWS` and m > ``rows``, m being the rows of the data
being fitted (:func:`use_large_m`): a cross-validation split decides on its training rows and the final fit
on all rows, so the splits of a set just above the threshold may run exact while the final fit samples
(the estimators' ``large_m_`` is the mode of their own fit). Peak memory is
O(rows^2 + BLOCK_ROWS x m + m n) plus libsvm's cache, instead of O(m^2) per candidate. The defaults come
from benchmarks/bench_rows.py (RESULTS.md, section "Rows"; n = 50, k = 10, default ``CardinalitySVC``,
CPU seconds since the shared machine's load inflated wall time 4-20x). Exact mode: 11 / 32 / 98 / 349 s
CPU at m = 1,000 / 2,000 / 3,000 / 5,000 on a make_classification set (peak resident memory 0.4 / 0.7 /
1.2 / 2.6 GB: one 8 m^2-byte Gram per candidate), 63 / 59 / 191 s at m = 1,000-3,000 on a nonlinear set.
Large-m mode with 2,000 sampled rows: 31-41 s and 49-91 s CPU at m = 3,000-20,000, 0.74-0.87 GB, flat in
m, with the exact mode's held-out accuracy where both ran above 2,000 rows (same subset at 3,000 and
5,000 on the first set; +0.04 points at 3,000 on the second). So ``AUTO_ROWS`` = 3,000: above it the
exact mode costs more than the sample's search (whose cost is the exact mode's at 2,000 rows) and over
1.2 GB.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.svm import SVC

from .alpha.oracle import DEFAULT_TOL, Fit
from .errors import InputError, plain
from .instance import stratified_class_rows, stratified_rows
from .kernels import GaussianKernel, PolynomialKernel
from .objective import dual_objective
from .options import Opt
from .result import Incumbent, Status

#: default sample size of the search (measured: benchmarks/bench_rows.py)
DEFAULT_ROWS = 2000
#: "auto" switches to large-m mode above this many rows (measured: benchmarks/bench_rows.py)
AUTO_ROWS = 3000
#: rows of K per block when K @ v is formed on the support vectors
BLOCK_ROWS = 256
#: libsvm's kernel cache (MB) in the exact re-evaluation (scikit-learn's default)
CACHE_MB = 200
_ROWS = Opt(int, low=2)


def check_params(owner: str, large_m, large_m_rows) -> None:
    """An InputError (a ValueError) naming the parameter unless ``large_m`` is "auto", True or False and
    ``large_m_rows`` an integer >= 2."""
    if not (isinstance(large_m, (bool, np.bool_)) or isinstance(large_m, str) and large_m == "auto"):
        raise InputError(f"{owner}: large_m must be 'auto', True or False; got {plain(large_m)}")
    _ROWS.check(owner, "large_m_rows", large_m_rows)


def use_large_m(large_m, large_m_rows: int, m: int) -> bool:
    """Whether m rows are searched in large-m mode: ``large_m`` itself, or for "auto" m > max(AUTO_ROWS, rows);
    m is the number of rows of the data a fit (or a CV split's path) searches, decided per fit."""
    if isinstance(large_m, str):
        return m > max(AUTO_ROWS, large_m_rows)
    return bool(large_m)


def sample_instance(instance, rows: int, seed: int):
    """The instance restricted to a stratified sample of min(rows, m) of its rows (scaling kept: fitted on
    all rows); its ``rows`` field holds the sampled rows' indices in the data (``instance.rows`` composed
    with the sample when the instance is itself a sample). A multiclass instance is sampled with every
    class in proportion (:func:`~minlp_fs.instance.stratified_class_rows`)."""
    if instance.n_classes > 2:
        picked = stratified_class_rows(instance.codes, min(rows, instance.m), seed)
        labels = {"codes": instance.codes[picked]}
    else:
        picked = stratified_rows(instance.y, min(rows, instance.m), seed)
        labels = {"y": instance.y[picked]}
    in_data = picked if instance.rows is None else np.asarray(instance.rows)[picked]
    return replace(instance, X=instance.X[picked], rows=in_data, **labels)


class BlockedGram:
    """K_beta of the rows of Z (columns already selected) as an operator for ``K @ v``: computed in
    blocks of ``BLOCK_ROWS`` rows by the kernel itself, so at most BLOCK_ROWS x len(Z) entries exist."""

    def __init__(self, kernel, Z: np.ndarray):
        self.kernel = kernel
        self.Z = np.ascontiguousarray(Z, dtype=float)
        self.shape = (self.Z.shape[0], self.Z.shape[0])

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        out = np.empty(self.shape[0])
        for start in range(0, self.shape[0], BLOCK_ROWS):
            stop = start + BLOCK_ROWS
            out[start:stop] = self.kernel.gram(self.Z[start:stop], None, self.Z) @ v
        return out


def _svc(kernel, C: float) -> SVC:
    """scikit-learn's SVC with exactly the instance's kernel (poly: (gamma <x,z> + coef0)^degree; rbf)."""
    if isinstance(kernel, PolynomialKernel):
        return SVC(kernel="poly", degree=kernel.degree, gamma=kernel.gamma, coef0=kernel.coef0, C=C,
                   tol=DEFAULT_TOL, cache_size=CACHE_MB)
    if isinstance(kernel, GaussianKernel):
        return SVC(kernel="rbf", gamma=kernel.gamma, C=C, tol=DEFAULT_TOL, cache_size=CACHE_MB)
    raise InputError(f"large-m mode needs a polynomial or Gaussian kernel (scikit-learn's SVC has them); "
                     f"got {kernel.name}")


def exact_fit(instance, subset) -> Fit:
    """g(beta) on all of the instance's rows without an m x m matrix: libsvm's dual solution, valued by
    :func:`~minlp_fs.objective.dual_objective` on the support vectors (see the module docstring). A
    multiclass instance: the sum of its one-vs-rest machines' values, alpha their K x m stack
    (:mod:`minlp_fs.multiclass`: g = sum_k g_k)."""
    key = instance.check_subset(subset)
    if instance.n_classes > 2:
        fits = [exact_fit(part, key) for part in instance.parts]
        return Fit(key, float(sum(f.value for f in fits)), np.stack([f.alpha for f in fits]))
    Z = instance.X[:, list(key)]
    svc = _svc(instance.kernel, instance.C).fit(Z, instance.y)
    sv = svc.support_
    alpha = np.zeros(instance.m)
    alpha[sv] = np.abs(svc.dual_coef_[0])
    # 0 < alpha_i by libsvm's definition of a support vector: dual_objective then takes K @ v, the operator's
    value = dual_objective(alpha[sv], BlockedGram(instance.kernel, Z[sv]), instance.y[sv])
    return Fit(key, value, alpha)


def select(instance, method, rows: int, seed: int, callback=None):
    """The large-m Result of ``method`` on ``instance`` (steps 1-3 of the module docstring)."""
    sample = sample_instance(instance, rows, seed)
    searched = method.solve(sample, callback=callback)
    if searched.ok and searched.status == Status.INTERRUPTED:  # Ctrl-C: no minutes-long fit on all rows
        searched.message = (f"interrupted: searched on {sample.m} of {instance.m} rows; its value is the "
                            "sample's (not re-evaluated on all rows)")
        return searched
    return exact_result(instance, searched, sample.m, seed) if searched.ok else searched


def exact_result(instance, searched, rows: int, seed: int):
    """``searched`` (a Result on a sample of ``rows`` of ``instance``'s rows) re-valued exactly on all rows (step 3),
    with ``info["large_m"]``: rows searched, seed, the search's objective and status, support vectors."""
    incumbent = Incumbent(instance)
    fit = exact_fit(instance, searched.features)
    incumbent.offer(fit.value, fit.subset, fit.alpha, source="exact on all rows")
    status = Status.CONVERGED if searched.status == Status.OPTIMAL else searched.status
    info = dict(searched.info)
    info["large_m"] = {"rows": rows, "seed": seed, "search_objective": searched.objective,
                       "search_status": str(searched.status), "n_support": int(np.count_nonzero(fit.alpha))}
    result = incumbent.result(searched.method, status, searched.n_svm_solves + 1,
                              message=f"searched on {rows} of {instance.m} rows; value exact on all rows",
                              info=info)
    result.wall_time_s += searched.wall_time_s
    return result


def all_features(instance):
    """The Result of the only subset when B = n (nothing to search), valued exactly on all rows as in step 3."""
    incumbent = Incumbent(instance)
    fit = exact_fit(instance, range(instance.n))
    incumbent.offer(fit.value, fit.subset, fit.alpha, source="all-features")
    return incumbent.result("all-features", "optimal", 1, certified=True,
                            message="every non-constant column kept: no selection to make",
                            info={"large_m": {"rows": instance.m, "n_support": int(np.count_nonzero(fit.alpha))}})
