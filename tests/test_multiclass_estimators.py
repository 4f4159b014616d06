"""The estimators on three classes with string labels: one shared subset (the sum of the one-vs-rest
duals), the final SVC one-vs-one on the original labels, probabilities, Pipeline and cross-validation."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from minlp_fs import CardinalitySVC, KernelFeatureSelector, KernelFeatureSelectorCV
from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.selector import _instance
from minlp_fs.methods import get_method
from minlp_fs.multiclass import MulticlassInstance

NAMES = np.array(["red", "green", "blue"])


@pytest.fixture(scope="module")
def three_classes():
    """The class is the argmax of columns 0-2 (squared, so the boundary is nonlinear); columns 3-6 are noise."""
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, size=(90, 7))
    y = NAMES[np.argmax(X[:, :3] ** 2, axis=1)]
    return X, y


def test_selector_takes_string_labels_of_three_classes(three_classes):
    X, y = three_classes
    sel = KernelFeatureSelector(3, method="enumerate").fit(X, y)
    np.testing.assert_array_equal(sel.classes_, ["blue", "green", "red"])
    assert sel.selected_features_.tolist() == [0, 1, 2]      # the informative columns
    assert sel.result_.alpha.shape == (3, 90) and sel.result_.certified
    heur = KernelFeatureSelector(3, method="ls*").fit(X, y)
    assert heur.objective_ <= sel.objective_ + 1e-6 * abs(sel.objective_)  # fit sense (max g): never above the optimum


def test_classifier_predicts_names_with_svc_on_the_selection(three_classes):
    X, y = three_classes
    clf = CardinalitySVC(3, method="ls*", gamma=1.0, probability=True).fit(X, y)
    assert clf.n_features_ == 3 and set(clf.predict(X)) <= set(NAMES)
    cols = clf.support_
    ref = SVC(kernel="poly", degree=3, gamma=1.0, coef0=1.0, C=10.0).fit(clf.scaler_.transform(X[:, cols]), y)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(clf.scaler_.transform(X[:, cols])))
    assert clf.score(X, y) > 0.9
    assert clf.decision_function(X).shape == (90, 3)
    proba = clf.predict_proba(X)
    assert proba.shape == (90, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(clf.classes_[proba.argmax(axis=1)] == y) > 0.85


def test_pipeline_cross_validation_and_cv_selector(three_classes):
    X, y = three_classes
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on ordinary multiclass data
        scores = cross_val_score(make_pipeline(CardinalitySVC(3, gamma=1.0)), X, y, cv=3)
    assert scores.min() > 0.75
    cv = KernelFeatureSelectorCV([2, 3, 4], cv=3, gamma=1.0).fit(X, y)
    assert cv.n_features_ in (3, 4) and {0, 1, 2} <= set(cv.selected_features_)
    assert cv.estimator_.predict(X[:, cv.support_]).dtype.kind == "U"


def test_selection_value_is_the_sum_of_one_vs_rest_duals(three_classes):
    """objective_ is the multiclass instance's value of the subset: the sum of the three binary duals."""
    X, y = three_classes
    sel = KernelFeatureSelector(2, method="rfe2").fit(X, y)
    inst, _ = _instance(sel, X, y, 2)
    assert isinstance(inst, MulticlassInstance)
    parts = sum(AlphaSubproblem(p).solve(sel.selected_features_).value for p in inst.parts)
    assert sel.objective_ == pytest.approx(parts, rel=1e-6)
    assert get_method("enumerate").solve(inst).objective >= sel.objective_ - 1e-6 * abs(sel.objective_)


def test_clear_errors(three_classes):
    X, y = three_classes
    with pytest.raises(ValueError, match="Unknown label type"):
        KernelFeatureSelector(2).fit(X, np.linspace(0, 1, 90))
    with pytest.raises(ValueError, match="binary only"):
        KernelFeatureSelector(2, method="scip").fit(X, y)
