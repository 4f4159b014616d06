"""Select exactly B features for a kernel SVM, scikit-learn's way: :class:`KernelFeatureSelector`, and
what every estimator of the package shares (parameters, their checks, the instance and the method of
a fit, the warnings). The classifier on the selected features is :mod:`minlp_fs.estimators`
(``CardinalitySVC``); the choice of B by cross-validation :mod:`minlp_fs.selection_cv`.

:class:`KernelFeatureSelector` solves problem (4) of the paper,

    min_{alpha, beta}  sign * f(alpha, beta),  f = 1/2 sum_ih a_i a_h y_i y_h k_beta(x_i, x_h) - sum_i a_i,
    s.t. y'alpha = 0, 0 <= alpha <= C, sum_j beta_j = B, beta binary,

with any registered method (``get_method(method)``) and keeps the B selected columns. The selection
kernel is the SVC's: ``poly`` (gamma <x, z>_beta + coef0)^degree or ``rbf`` exp(-gamma ||x - z||^2_beta).

Sense. ``sense="fit"`` (the default here) maximises g(beta) = min_alpha f(alpha, beta), i.e. selects
the features whose SVM fits best; ``sense="paper"`` minimises it as problem (4) is written, which
prefers features whose SVM fits *worst*, down to the trivial bound -2C min(|I+|, |I-|) (Remark 1), where
the SVM predicts one class. A degenerate fit emits :class:`DegenerateSelectionWarning`, and every
paper-sense fit its subclass :class:`PaperSenseWarning` (the issue-15 report: paper-sense selections at
chance level that were not degenerate went unflagged).

Conventions (scikit-learn's ``feature_selection`` module): ``__init__`` only stores parameters;
fitted attributes end in ``_``. Constant columns carry no information (the package's instances
reject them): the method selects among the non-constant columns, and constant columns fill the
selection only when ``n_features`` exceeds the number of non-constant ones. When ``n_features`` is
at least the number of columns every column is kept with a warning, as ``SelectKBest`` does.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler
from sklearn.utils import ClassifierTags, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from .alpha import AlphaSubproblem
from .instance import make_instance
from .kernels import make_kernel
from . import large_m as large_mode
from .methods import get_method, method_class
from .options import Opt
from .result import Incumbent

KERNELS = ("poly", "rbf")
GAMMA_RULES = ("scale", "auto")
_SCALERS = {"minmax": MinMaxScaler, "standard": StandardScaler, "none": FunctionTransformer}


class DegenerateSelectionWarning(UserWarning):
    """The fitted SVM is degenerate: it attains the trivial bound or predicts one class."""


class PaperSenseWarning(DegenerateSelectionWarning):
    """An estimator runs in the paper sense: it selects the worst-fitting features by construction."""


def _paper_sense_warning(est) -> None:
    """Emitted by every estimator's fit with ``sense="paper"`` (whatever the fit turns out to be)."""
    warnings.warn(f"{type(est).__name__} runs in the paper sense (problem (4) as written): it minimises "
                  "g(beta) and so selects the worst-fitting features by construction; use sense='fit' to "
                  "select the features whose SVM fits best", PaperSenseWarning, stacklevel=3)


class _CardinalityParams:
    """The parameters shared by both estimators (documented on each class)."""

    def __init__(self, n_features=5, *, kernel="poly", degree=3, gamma=0.1, coef0=1.0, C=10.0,
                 method="ls*", sense="fit", scaling="minmax", random_state=None, n_jobs=1,
                 time_limit=None, method_params=None, verbose=0, large_m="auto",
                 large_m_rows=large_mode.DEFAULT_ROWS):
        self.n_features = n_features
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.C = C
        self.method = method
        self.sense = sense
        self.scaling = scaling
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.time_limit = time_limit
        self.method_params = method_params
        self.verbose = verbose
        self.large_m = large_m
        self.large_m_rows = large_m_rows


_PARAMS_DOC = """
    Parameters
    ----------
    n_features : int, default=5
        B, the exact number of features to select. At or above the number of columns of X, every
        column is kept with a warning (``SelectKBest``'s convention) and no method runs.
    kernel : {"poly", "rbf"}, default="poly"
        ``poly``: (gamma <x, z> + coef0)^degree; ``rbf``: exp(-gamma ||x - z||^2), as in ``SVC``.
    degree : int, default=3
        Degree of the polynomial kernel (ignored by ``rbf``).
    gamma : float or {"scale", "auto"}, default=0.1
        Kernel coefficient (the paper's 0.1). ``"scale"``: 1 / (n_features * var(scaled X)) with the
        variance over every non-constant scaled column (the selection is not known beforehand);
        ``"auto"``: 1 / n_features. The value used is ``gamma_``.
    coef0 : float, default=1.0
        Constant c of the polynomial kernel, >= 0 (ignored by ``rbf``).
    C : float, default=10.0
        Box constraint of the SVM, > 0.
    method : str, default="ls*"
        Any registered method (``minlp_fs.methods.method_names()``): heuristics such as
        ``"ls"``, ``"ls*"``, ``"acso"``, ``"rfe1"``, ``"alpha-start"``, ``"enumerate"`` or a solver adapter.
        Start-dependent methods start from their default (the alpha-start).
    sense : {"fit", "paper"}, default="fit"
        ``"fit"`` maximises g(beta) (features whose SVM fits best); ``"paper"`` minimises it as problem
        (4) is written, which tends to select uninformative features.
    scaling : {"minmax", "standard", "none"}, default="minmax"
        Column scaling fitted on the training data.
    random_state : int, RandomState instance or None, default=None
        Seed of randomised methods (passed as their ``seed`` option); None keeps the method's default
        seed, so fits are reproducible. Ignored by deterministic methods.
    n_jobs : int or None, default=1
        Workers, for methods with an ``n_jobs`` option (ignored by the others); None means 1, -1 every CPU,
        -2 all but one (joblib's convention).
    time_limit : float or None, default=None
        Seconds, for methods with a ``time_limit`` option (an error for the others).
    method_params : dict or None, default=None
        Further options of the method (``get_method(method, **method_params)``).
    verbose : int, default=0
        > 0 shows a progress bar of the selection (its incumbent's improvements; with
        ``n_features="auto"`` the cross-validated path); 0 is silent.
    large_m : {"auto", True, False}, default="auto"
        Large-m mode (:mod:`minlp_fs.large_m`): the method searches a stratified sample of
        ``large_m_rows`` rows, and the chosen subset's value is then computed exactly on all rows by
        libsvm without an m x m matrix. "auto": on above 3,000 rows (and above ``large_m_rows``) of the
        data being fitted (with cross-validation: each split's training rows, then all rows for the
        final fit); ``large_m_`` says which mode the fit ran.
    large_m_rows : int, default=2000
        Rows of the sample searched in large-m mode (>= 2).
"""


#: numeric parameters checked by the package's one option checker (:mod:`minlp_fs.options`), in its
#: message format; time_limit and n_jobs are forwarded to the method, which declares them the same way
_NUMERIC_PARAMS = {"n_features": Opt(int, low=1), "time_limit": Opt(float, low=0, low_open=True, none=True),
                   "n_jobs": Opt(int, nonzero=True, none=True)}


def _check_params(est) -> None:
    """Parameter checks of scikit-learn's kind, done in fit (C, degree, coef0, sense and scaling are
    checked by :func:`~minlp_fs.instance.make_instance` with the package's own messages)."""
    for key, spec in _NUMERIC_PARAMS.items():
        spec.check(type(est).__name__, key, getattr(est, key))
    large_mode.check_params(type(est).__name__, est.large_m, est.large_m_rows)
    if est.kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}; got {est.kernel!r}")
    g = est.gamma
    if isinstance(g, str) and g not in GAMMA_RULES or isinstance(g, bool) or \
            not isinstance(g, (str, numbers.Real)):
        raise ValueError(f"gamma must be a number > 0, 'scale' or 'auto'; got {g!r}")
    if not isinstance(est.verbose, (numbers.Integral, np.bool_)) or est.verbose < 0:
        raise ValueError(f"verbose must be an integer >= 0 or a bool; got {est.verbose!r}")
    if est.method_params is not None and not isinstance(est.method_params, dict):
        raise ValueError(f"method_params must be a dict of method options or None; got {est.method_params!r}")


def _seed(est) -> int:
    """The integer seed of ``random_state`` (0 for None, the package's default seed). A RandomState moves
    on at every call: draw it once per fit and pass the integer on (scikit-learn's rule)."""
    rs = est.random_state
    if rs is None:
        return 0
    if isinstance(rs, numbers.Integral) and not 0 <= rs <= np.iinfo(np.uint32).max:
        raise ValueError(f"random_state must be None, an integer in [0, 2**32 - 1] or a RandomState; got {rs!r}")
    return int(rs) if isinstance(rs, numbers.Integral) else int(check_random_state(rs).randint(np.iinfo(np.int32).max))


def _method(est, seed: int):
    """The configured method: method_params plus ``seed`` (the fit's :func:`_seed`, when random_state is
    set), n_jobs and time_limit where it has them."""
    options = dict(est.method_params or {})
    clash = sorted({"seed", "n_jobs", "time_limit"} & set(options))
    if clash:
        raise ValueError(f"set {', '.join(clash)} through the estimator's random_state, n_jobs and "
                         "time_limit parameters, not method_params")
    known = method_class(est.method).options()
    if "seed" in known and est.random_state is not None:
        options["seed"] = seed
    if "n_jobs" in known:
        options["n_jobs"] = _method_jobs(est.n_jobs)
    if est.time_limit is not None:
        if "time_limit" not in known:
            raise ValueError(f"method {est.method!r} has no time limit; use time_limit=None")
        options["time_limit"] = float(est.time_limit)
    return get_method(est.method, **options)


def _method_jobs(n_jobs) -> int:
    """The estimator's n_jobs (joblib's convention, as scikit-learn's: None 1, -1 every CPU, -k all but k - 1) as
    the methods take it (>= 1 or -1)."""
    if n_jobs is None:
        return 1
    if n_jobs < -1:
        from .workers import cpu_count

        return max(1, cpu_count() + 1 + n_jobs)
    return n_jobs


def _instance(est, X, y, B):
    """The DFS-SVM instance of X (non-constant columns only) with gamma resolved; and gamma."""
    poly = est.kernel == "poly"
    kw = {"degree": est.degree, "coef0": est.coef0} if poly else {}
    numeric = not isinstance(est.gamma, str)
    inst = make_instance(X, y, B, kernel=est.kernel, C=est.C, gamma=float(est.gamma) if numeric else None,
                         sense=est.sense, scaling=est.scaling, name=type(est).__name__, **kw)
    if numeric:
        return inst, float(est.gamma)
    gamma = 1.0 / B if est.gamma == "auto" else 1.0 / (B * float(inst.X.var()))
    return inst.with_params(kernel=make_kernel(est.kernel, gamma=gamma, **kw)), gamma


def _all_features(inst):
    """The Result of the only B = n subset: one exact SVM fit, certified (nothing to choose)."""
    oracle = AlphaSubproblem(inst)
    fit = oracle.solve(range(inst.n))
    incumbent = Incumbent(inst)
    incumbent.offer(fit.value, fit.subset, fit.alpha, source="all-features")
    return incumbent.result("all-features", "optimal", oracle.n_solves, certified=True,
                            message="every non-constant column kept: no selection to make")


def _ranking(n_in, varying, selected, order):
    """1 for the selected; then, if the method eliminated exactly the unselected non-constant
    columns in ``order``, the last eliminated gets 2, the first the largest rank (as RFE);
    columns not ranked otherwise (all of them without such an order; constant ones) share the next."""
    ranking = np.ones(n_in, dtype=int)
    unselected = set(range(n_in)) - set(int(j) for j in selected)
    ranked = [int(varying[j]) for j in (order or [])]
    eliminated = unselected & set(int(j) for j in varying)
    if ranked and set(ranked) == eliminated and len(ranked) == len(eliminated):
        for rank, j in enumerate(reversed(ranked), start=2):
            ranking[j] = rank
        unselected -= set(ranked)
    ranking[sorted(unselected)] = ranking.max() + 1
    return ranking


def _check_targets(y) -> None:
    """Class labels (not continuous values, not multilabel): two classes, or K >= 3 with one subset
    shared by the K one-vs-rest machines (:mod:`minlp_fs.multiclass`)."""
    check_classification_targets(y)


def _select(est, X, y):
    """Fit the selection on validated X, y; set the selector's fitted attributes on ``est``."""
    _check_params(est)
    n_in = X.shape[1]
    varying = np.flatnonzero(np.ptp(X, axis=0) > 0)
    if varying.size == 0:
        raise ValueError("every column of X is constant: there are no features to select from")
    keep_all = est.n_features >= n_in
    if keep_all:
        warnings.warn(f"n_features={est.n_features} is not below the {n_in} features of X: every feature "
                      "is kept and no selection is made (SelectKBest's convention)", UserWarning)
    B = min(est.n_features, varying.size)
    names = getattr(est, "feature_names_in_", None)
    inst, est.gamma_ = _instance(est, X[:, varying], y, B)
    if names is not None:
        inst = inst.with_params(feature_names=tuple(str(names[j]) for j in varying))
    est.large_m_ = large_mode.use_large_m(est.large_m, est.large_m_rows, inst.m)
    if B == varying.size:
        result = large_mode.all_features(inst) if est.large_m_ else _all_features(inst)
    else:
        with tqdm(disable=not est.verbose, desc=f"{est.method} n_features={B}", unit=" improvements") as bar:
            def progress(point):
                bar.set_postfix_str(f"f={point.value:.6g} ({point.source})")
                bar.update()
            seed = _seed(est)
            if est.large_m_:
                result = large_mode.select(inst, _method(est, seed), est.large_m_rows, seed, callback=progress)
            else:
                result = _method(est, seed).solve(inst, callback=progress)
    if not result.ok:
        raise RuntimeError(f"method {est.method!r} returned no selection ({result.status}): {result.message}")
    constant = np.setdiff1d(np.arange(n_in), varying)
    selected = np.sort(np.concatenate([varying[result.features],
                                       constant[:min(est.n_features, n_in) - B]])).astype(int)
    est.classes_ = np.unique(y)
    est.result_ = result
    est.objective_ = float(result.objective)
    est.selected_features_ = selected
    est.support_ = np.zeros(n_in, dtype=bool)
    est.support_[selected] = True
    est.ranking_ = _ranking(n_in, varying, selected, result.info.get("elimination_order"))
    return result.degenerate


def _degenerate_warning(est, reason: str) -> None:
    warnings.warn(f"the fitted SVM is degenerate ({reason}): it predicts one class. "
                  f"Use sense='fit' (now {est.sense!r}) or a larger C (now {est.C!r}).",
                  DegenerateSelectionWarning, stacklevel=3)


_TRIVIAL = "its objective attains the trivial bound -2C min(|I+|, |I-|): every minority alpha at C"


class _SupportSelector(SelectorMixin):
    """What both selectors share: the mask from ``support_`` and the tags of a supervised selector of any
    number of classes."""

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.classifier_tags = ClassifierTags(multi_class=True)
        return tags


class KernelFeatureSelector(_SupportSelector, _CardinalityParams, BaseEstimator):
    __doc__ = """Select exactly ``n_features`` features for a kernel SVM (DFS-SVM, problem (4)).
    """ + _PARAMS_DOC + """
    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features_in_,)
        Mask of the selected features.
    selected_features_ : ndarray of int
        Indices of the selected features, sorted.
    ranking_ : ndarray of int, shape (n_features_in_,)
        1 for the selected features. When the method reports the order in which it eliminated the
        other features (``result_.info["elimination_order"]``: RFE1/RFE2, the alpha-start), the last
        eliminated gets 2 and the first the largest rank, as in ``RFE`` (unselected constant columns
        rank last); otherwise every unselected feature gets 2.
    objective_ : float
        f(alpha, beta) at the selection (problem (4)), recomputed by the package's objective.
    result_ : minlp_fs.result.Result
        The method's full result (status, alpha, trace, timing, ...); its feature indices refer to
        the non-constant columns.
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted. Two: the smaller is mapped to -1, the larger to +1. Three or more: one
        subset shared by the one-vs-rest machines, its value the sum of their duals
        (:mod:`minlp_fs.multiclass`); ``result_.alpha`` is then the stack of their alphas.
    gamma_ : float
        The kernel coefficient used.
    large_m_ : bool
        True when large-m mode ran (``result_.info["large_m"]`` then has its sample's size, seed and value).
    n_features_in_, feature_names_in_ :
        As in every scikit-learn estimator.
    """

    def fit(self, X, y):
        """Select the features of X for labels y (two or more classes)."""
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        _check_targets(y)
        degenerate = _select(self, X, y)
        if self.sense == "paper":
            _paper_sense_warning(self)
        if degenerate:
            _degenerate_warning(self, _TRIVIAL)
        return self
