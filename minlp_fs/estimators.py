"""The classifier with an exact cardinality constraint: :class:`CardinalitySVC`, an SVC on exactly B
features selected by DFS-SVM.

``fit`` selects the features with a :class:`~minlp_fs.selector.KernelFeatureSelector` (problem (4) for
the given B) or, with ``n_features="auto"``, a :class:`~minlp_fs.selection_cv.KernelFeatureSelectorCV`
(B chosen by cross-validation), and then trains ``sklearn.svm.SVC`` with the same kernel, C, gamma,
coef0 and degree on exactly those columns, scaled as in the selection. This module is the one place that
chooses between the two selectors. The selectors and the warnings are re-exported here, so that
``from minlp_fs.estimators import KernelFeatureSelector`` names every estimator of the package in one place.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from . import large_m as large_mode
from .instance import encode_labels
from .selection_cv import KernelFeatureSelectorCV
from .selector import (
    _PARAMS_DOC, _SCALERS, _TRIVIAL, DegenerateSelectionWarning, KernelFeatureSelector, PaperSenseWarning,
    _CardinalityParams, _check_targets, _degenerate_warning, _paper_sense_warning,
)

__all__ = ["CardinalitySVC", "DegenerateSelectionWarning", "KernelFeatureSelector", "KernelFeatureSelectorCV",
           "PaperSenseWarning"]

#: folds of the Platt scaling (libsvm's choice for SVC(probability=True))
PLATT_FOLDS = 5


class CardinalitySVC(ClassifierMixin, _CardinalityParams, BaseEstimator):
    __doc__ = """Kernel SVC on exactly ``n_features`` features chosen by DFS-SVM (problem (4)).

    ``fit`` selects the features with a :class:`KernelFeatureSelector` of the same parameters (with
    ``n_features="auto"``: a :class:`~minlp_fs.selection_cv.KernelFeatureSelectorCV` with its default
    grid and 5-fold CV at this C and gamma), scales the selected columns (scaling fitted on the training
    data, applied again in ``predict``) and trains ``SVC(kernel, C, gamma=gamma_, coef0, degree)`` on
    them. Any number of classes: with three or more the selection is the one subset shared by the
    one-vs-rest machines (:mod:`minlp_fs.multiclass`), and the final classifier is that same
    scikit-learn ``SVC`` on the selected columns, which is one-vs-one internally (its
    ``decision_function`` has the one-vs-rest shape of ``SVC(decision_function_shape="ovr")``).
    """ + _PARAMS_DOC.replace("""    n_features : int, default=5
        B,""", """    n_features : int or "auto", default=5
        "auto": chosen by cross-validation (``KernelFeatureSelectorCV``). Otherwise B,""").replace(
        """    method : str, default="ls*"
        Any registered method""", """    method : str or None, default=None
        None: the selector's own default, ``"ls*"`` for an integer ``n_features`` and ``"ls"`` for
        ``"auto"`` (``KernelFeatureSelectorCV``: LS matched LS*'s held-out accuracy on the nine
        datasets at 7-32x less CPU; benchmarks/RESULTS.md, bench_selectors). Otherwise any registered method""") + """
    probability : bool, default=False
        Enable ``predict_proba`` and ``predict_log_proba``: Platt scaling, a sigmoid fitted to the
        SVC's decision values predicted out of fold (``CalibratedClassifierCV(SVC, method="sigmoid",
        cv=5, ensemble=False)``, what ``SVC(probability=True)`` did with libsvm's internal 5-fold CV;
        scikit-learn 1.9 deprecates that parameter for this). Stratified folds without shuffling
        (deterministic), fewer than 5 when a class has fewer than 5 examples.
        The probabilities may disagree with ``predict`` near the boundary, as ``SVC``'s do.

    Attributes
    ----------
    selector_ : KernelFeatureSelector or KernelFeatureSelectorCV
        The fitted selector.
    n_features_ : int
        The number of features selected (``n_features``, or the one chosen by CV).
    support_, selected_features_, ranking_, objective_, result_, gamma_, large_m_ :
        As on the selector (with ``n_features="auto"``, ``ranking_`` is 1 for the selected, 2 otherwise).
    scaler_ : transformer
        The scaling of the selected columns.
    svc_ : sklearn.svm.SVC
        The SVC on the scaled selected columns, trained on labels -1/+1 (two classes) or on the
        original labels (three or more).
    calibrator_ : sklearn.calibration.CalibratedClassifierCV
        With ``probability=True`` only: the Platt scaling of that SVC.
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted; with two, ``decision_function`` > 0 means ``classes_[1]``.
    n_features_in_, feature_names_in_ :
        As in every scikit-learn estimator.

    A :class:`DegenerateSelectionWarning` is emitted when the fitted SVM is degenerate: the selection's
    objective attains the trivial bound (every minority alpha at C, Remark 1), or the SVC predicts a
    single class on its training data; a :class:`PaperSenseWarning` (a subclass) on every fit in the
    paper sense.
    """

    def __init__(self, n_features=5, *, kernel="poly", degree=3, gamma=0.1, coef0=1.0, C=10.0,
                 method=None, sense="fit", scaling="minmax", random_state=None, n_jobs=1,
                 time_limit=None, method_params=None, verbose=0, large_m="auto",
                 large_m_rows=large_mode.DEFAULT_ROWS, probability=False):
        super().__init__(n_features, kernel=kernel, degree=degree, gamma=gamma, coef0=coef0, C=C,
                         method=method, sense=sense, scaling=scaling, random_state=random_state,
                         n_jobs=n_jobs, time_limit=time_limit, method_params=method_params, verbose=verbose,
                         large_m=large_m, large_m_rows=large_m_rows)
        self.probability = probability

    def _fit_selector(self, X, y):
        """The fitted selector of ``n_features`` (an int, or "auto" for the cross-validated one), with this
        estimator's parameters (``method=None``: the selector's own default method)."""
        auto = isinstance(self.n_features, str) and self.n_features == "auto"
        selector = KernelFeatureSelectorCV if auto else KernelFeatureSelector
        names = set(selector._get_param_names()) - ({"n_features"} if auto else set())
        params = {k: v for k, v in self.get_params().items() if k in names and not (k == "method" and v is None)}
        return selector(**params).fit(X, y)

    def fit(self, X, y):
        """Select ``n_features`` features of X, then train the SVC on them."""
        Xv, y = validate_data(self, X, y, ensure_min_samples=2)
        _check_targets(y)
        k = self.n_features
        if not (isinstance(k, str) and k == "auto") and (isinstance(k, (bool, np.bool_)) or
                                                         not isinstance(k, numbers.Integral) or k < 1):
            raise ValueError(f"n_features must be an integer >= 1 or 'auto'; got {k!r}")
        if not isinstance(self.probability, (bool, np.bool_)):
            raise ValueError(f"probability must be True or False; got {self.probability!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateSelectionWarning)
            self.selector_ = sel = self._fit_selector(X, y)
        for name in ("classes_", "support_", "selected_features_", "objective_", "result_", "gamma_", "large_m_"):
            setattr(self, name, getattr(sel, name))
        self.n_features_ = int(self.support_.sum())
        self.ranking_ = getattr(sel, "ranking_", np.where(self.support_, 1, 2))
        self.scaler_ = _SCALERS[self.scaling]().fit(Xv[:, self.support_])
        Z = self.scaler_.transform(Xv[:, self.support_])
        svc = SVC(kernel=self.kernel, C=self.C, gamma=self.gamma_, coef0=self.coef0, degree=self.degree)
        signs = encode_labels(y, y.shape[0])[0] if self.classes_.size == 2 else y
        if self.probability:
            folds = min(PLATT_FOLDS, int(np.unique(signs, return_counts=True)[1].min()))
            if folds < 2:
                raise ValueError("probability=True needs at least 2 examples of each class (Platt scaling "
                                 "fits its sigmoid out of fold)")
            self.calibrator_ = CalibratedClassifierCV(svc, method="sigmoid", cv=StratifiedKFold(folds),
                                                      ensemble=False).fit(Z, signs)
            # with ensemble=False the calibrator's one classifier is the SVC trained on all of Z: it is svc_
            self.svc_ = self.calibrator_.calibrated_classifiers_[0].estimator
        else:
            self.svc_ = clone(svc).fit(Z, signs)
        if self.sense == "paper":
            _paper_sense_warning(self)
        if self.result_.degenerate:
            _degenerate_warning(self, _TRIVIAL)
        elif np.unique(self.svc_.predict(Z)).size < 2:
            _degenerate_warning(self, "it predicts a single class on its training data")
        return self

    def _transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.scaler_.transform(X[:, self.support_])

    def decision_function(self, X):
        """Signed distance to the separating surface; positive means ``classes_[1]``. Three or more
        classes: ``SVC``'s (n_samples, n_classes) one-vs-rest shaped values (its votes of the one-vs-one
        machines plus their confidences); :meth:`predict` takes the vote, which gives a tie to the first of the
        tied classes, so on a tied vote the largest value may belong to another class (``SVC`` with
        ``break_ties=False``)."""
        Z = self._transform(X)
        return self.svc_.decision_function(Z)

    def predict(self, X):
        """The predicted labels (original values)."""
        check_is_fitted(self)
        if self.classes_.size > 2:  # SVC's one-vs-one vote, on labels it was trained on
            return self.svc_.predict(self._transform(X))
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    def _calibrator(self):
        """The Platt calibrator, or SVC's NotFittedError when the fit was made with probability=False."""
        check_is_fitted(self)
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("predict_proba is not available: this CardinalitySVC was fitted with "
                                 "probability=False; fit it again with probability=True")
        return self.calibrator_

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Platt-scaled probabilities of the classes, columns in the order of ``classes_`` (three or more:
        one sigmoid per class, one-vs-rest, normalised; ``CalibratedClassifierCV``'s multiclass rule)."""
        calibrator = self._calibrator()
        return calibrator.predict_proba(self._transform(X))

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
