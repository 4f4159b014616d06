"""KernelFeatureSelector and CardinalitySVC: scikit-learn's estimator checks, meta-estimators, pickling,
labels and feature names, the SelectKBest convention, degeneracy warnings and the two senses."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import polynomial_kernel
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from minlp_fs.datasets import make_synthetic
from minlp_fs.estimators import CardinalitySVC, DegenerateSelectionWarning, KernelFeatureSelector, PaperSenseWarning
from minlp_fs.selector import _method, _seed
from minlp_fs.methods import get_method
from minlp_fs.objective import dual_objective
from sklearn_checks import expected_check_failures

FAST = "alpha-start"


@pytest.fixture(scope="module")
def synthetic():
    data = make_synthetic(m=80, n_informative=2, n_noise=4, seed=1)
    return data.X, data.y, list(data.feature_names)


@pytest.fixture(scope="module")
def bcd_split():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


@parametrize_with_checks([
    KernelFeatureSelector(1, method=FAST),
    KernelFeatureSelector(1, method="rfe1", kernel="rbf", gamma="scale"),
    CardinalitySVC(1, method=FAST),
    CardinalitySVC(1, method="rfe1", kernel="rbf", gamma="auto", scaling="standard"),
], expected_failed_checks=expected_check_failures)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' random data often has no signal (one-class fits) and few columns (n_features kept)
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def test_selects_exactly_n_features_and_transforms(synthetic):
    X, y, _ = synthetic
    sel = KernelFeatureSelector(2, method=FAST).fit(X, y)
    assert sel.support_.sum() == 2 and sel.transform(X).shape == (80, 2)
    np.testing.assert_array_equal(sel.selected_features_, np.flatnonzero(sel.support_))
    assert sel.objective_ == sel.result_.objective
    assert set(sel.selected_features_) == {0, 1}          # the two informative columns


def test_ranking_follows_rfe_elimination_order(synthetic):
    X, y, _ = synthetic
    sel = KernelFeatureSelector(2, method="rfe1").fit(X, y)
    order = sel.result_.info["elimination_order"]
    assert sorted(sel.ranking_) == [1, 1, 2, 3, 4, 5]
    assert sel.ranking_[order[-1]] == 2 and sel.ranking_[order[0]] == 5
    ls = KernelFeatureSelector(2, method="ls").fit(X, y)
    assert "elimination_order" not in ls.result_.info
    np.testing.assert_array_equal(ls.ranking_, np.where(ls.support_, 1, 2))


def test_svc_uses_the_selection_kernel_and_scaling(synthetic):
    """The SVC's dual optimum on the selected, scaled columns is the selection's objective f."""
    X, y, _ = synthetic
    clf = CardinalitySVC(2, method=FAST, gamma=1.0).fit(X, y)
    Z = clf.scaler_.transform(X[:, clf.support_])
    np.testing.assert_allclose([Z.min(axis=0), Z.max(axis=0)], [[0, 0], [1, 1]])
    alpha = np.zeros(len(y))
    alpha[clf.svc_.support_] = np.abs(clf.svc_.dual_coef_[0])
    K = polynomial_kernel(Z, degree=3, gamma=1.0, coef0=1.0)
    assert dual_objective(alpha, K, y) == pytest.approx(clf.objective_, rel=1e-3)
    assert clf.score(X, y) > 0.8


def test_gamma_rules(synthetic):
    X, y, _ = synthetic
    assert CardinalitySVC(2, method=FAST, gamma="auto").fit(X, y).gamma_ == 0.5
    clf = CardinalitySVC(2, method=FAST, gamma="scale").fit(X, y)
    scaled = (X - X.min(axis=0)) / np.ptp(X, axis=0)
    assert clf.gamma_ == pytest.approx(1 / (2 * scaled.var())) and clf.svc_.gamma == clf.gamma_


def test_pipeline_and_grid_search(synthetic):
    X, y, _ = synthetic
    pipe = Pipeline([("select", KernelFeatureSelector(method=FAST)), ("svc", SVC(kernel="poly", gamma=1.0))])
    grid = GridSearchCV(pipe, {"select__n_features": [1, 2], "select__C": [1.0, 10.0]}, cv=3).fit(X, y)
    assert len(grid.cv_results_["params"]) == 4
    assert grid.best_estimator_["select"].support_.sum() == grid.best_params_["select__n_features"]
    grid = {"n_features": [1, 2], "C": [1.0, 10.0]}
    search = GridSearchCV(CardinalitySVC(method=FAST, gamma=1.0), grid, cv=3).fit(X, y)
    assert search.best_params_["n_features"] == 2 and search.best_estimator_.support_.sum() == 2
    assert search.score(X, y) > 0.8


def test_clone_and_pickle_round_trip(synthetic):
    X, y, _ = synthetic
    clf = CardinalitySVC(2, method=FAST, C=5.0, random_state=3)
    assert clone(clf).get_params() == clf.get_params() and not hasattr(clone(clf), "svc_")
    clf.fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    assert again.result_.features == clf.result_.features and not hasattr(clone(clf), "result_")


def test_dataframe_feature_names(synthetic):
    pd = pytest.importorskip("pandas")
    X, y, names = synthetic
    df = pd.DataFrame(X, columns=names)
    sel = KernelFeatureSelector(2, method=FAST).fit(df, y)
    assert list(sel.feature_names_in_) == names
    assert list(sel.get_feature_names_out()) == ["inf0", "inf1"] == sel.result_.feature_names
    clf = CardinalitySVC(2, method=FAST).fit(df, y)
    assert list(clf.feature_names_in_) == names and clf.result_.feature_names == ["inf0", "inf1"]
    np.testing.assert_array_equal(clf.predict(df), CardinalitySVC(2, method=FAST).fit(X, y).predict(X))


def test_string_labels_mapped_and_predicted_back(synthetic):
    X, y, _ = synthetic
    labels = np.where(y > 0, "outside", "inside")
    clf = CardinalitySVC(2, method=FAST, gamma=1.0).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["inside", "outside"])
    pred = clf.predict(X)
    assert set(pred) == {"inside", "outside"} and np.mean(pred == labels) > 0.8
    np.testing.assert_array_equal(pred == "outside", clf.decision_function(X) > 0)


@pytest.mark.parametrize("n_features", [6, 9])
def test_n_features_at_or_above_n_warns_and_keeps_all(synthetic, n_features):
    X, y, _ = synthetic
    with pytest.warns(UserWarning, match="every feature is kept"):
        sel = KernelFeatureSelector(n_features, method=FAST).fit(X, y)
    assert sel.support_.all() and sel.result_.method == "all-features" and (sel.ranking_ == 1).all()


def test_constant_columns_fill_only_slots_left(synthetic):
    X, y, _ = synthetic
    Xc = np.hstack([np.ones((len(y), 1)), X[:, :2], np.full((len(y), 1), 2.0)])   # columns 0, 3 constant
    sel = KernelFeatureSelector(2, method=FAST).fit(Xc, y)
    np.testing.assert_array_equal(sel.support_, [False, True, True, False])
    sel = KernelFeatureSelector(3, method=FAST).fit(Xc, y)       # 2 non-constant columns for 3 slots
    np.testing.assert_array_equal(sel.support_, [True, True, True, False])
    assert sel.result_.method == "all-features"


def test_degenerate_warning_in_paper_sense():
    """BCD, first 100 rows and 12 columns, poly2, B = 2, C = 10: the paper-sense optimum (enumerated)
    attains the trivial bound and the SVC predicts the majority class; the fit sense does not."""
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:100, :12], y[:100]
    args = dict(n_features=2, degree=2, C=10.0, method="enumerate")
    with pytest.warns(DegenerateSelectionWarning) as caught:
        clf = CardinalitySVC(sense="paper", **args).fit(X, y)
    kinds = [(type(w.message), "sense='fit'" in str(w.message)) for w in caught]
    assert kinds == [(PaperSenseWarning, True), (DegenerateSelectionWarning, True)]
    assert clf.result_.degenerate and clf.result_.certified
    np.testing.assert_array_equal(clf.predict(X), np.bincount(y).argmax())
    with pytest.warns(DegenerateSelectionWarning) as caught:
        KernelFeatureSelector(sense="paper", **args).fit(X, y)
    assert [type(w.message) for w in caught] == [PaperSenseWarning, DegenerateSelectionWarning]
    assert "worst-fitting features" in str(caught[0].message) and "trivial bound" in str(caught[1].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSelectionWarning)
        fit = CardinalitySVC(sense="fit", **args).fit(X, y)
    assert not fit.result_.degenerate and len(set(fit.predict(X))) == 2


@pytest.mark.parametrize("method", [FAST, "rfe1"])
def test_fit_sense_beats_paper_sense_on_bcd(bcd_split, method):
    X_train, X_test, y_train, y_test = bcd_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateSelectionWarning)
        acc = {sense: CardinalitySVC(5, method=method, sense=sense).fit(X_train, y_train)
               .score(X_test, y_test) for sense in ("fit", "paper")}
    assert acc["fit"] > acc["paper"] + 0.1 and acc["fit"] > 0.9


def test_method_options_pass_through(synthetic):
    X, y, _ = synthetic
    def method(e):                              # as a fit does: the seed drawn once, then the method
        return _method(e, _seed(e))

    est = KernelFeatureSelector(method="ls", random_state=4, time_limit=30, n_jobs=2)
    assert method(est) == get_method("ls", seed=4, time_limit=30.0, n_jobs=2)
    drawn = [method(est.set_params(random_state=np.random.RandomState(7))).seed for _ in range(2)]
    assert drawn[0] == drawn[1]
    assert method(KernelFeatureSelector(method="ls")) == get_method("ls", n_jobs=1)     # default seed
    from minlp_fs.workers import cpu_count   # joblib's -2: every CPU but one (the methods take >= 1 or -1)
    assert method(KernelFeatureSelector(method="ls", n_jobs=-2)).n_jobs == max(1, cpu_count() - 1)
    a = KernelFeatureSelector(2, method="ls", random_state=4, time_limit=30, n_jobs=2).fit(X, y)
    b = KernelFeatureSelector(2, method="ls", random_state=4, time_limit=30, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    star = KernelFeatureSelector(2, method="ls*", method_params={"n_samples": 3}).fit(X, y)
    assert star.support_.sum() == 2


@pytest.mark.parametrize("params, match", [
    ({"n_features": 0}, "n_features must be an integer >= 1 or 'auto'"),
    ({"n_features": 2.5}, "n_features must be an integer >= 1 or 'auto'"),
    ({"n_features": "all"}, "n_features must be an integer >= 1 or 'auto'; got 'all'"),
    ({"random_state": -1}, r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"),
    ({"method": "acso", "random_state": -1}, r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"),
    ({"verbose": "loud"}, "verbose must be an integer >= 0 or a bool"),
    ({"kernel": "linear"}, "kernel must be one of poly, rbf"),
    ({"gamma": "often"}, "gamma must be a number > 0, 'scale' or 'auto'"),
    ({"gamma": -1.0}, "gamma must be a finite number > 0"),
    ({"C": 0}, "C must be a finite number > 0"),
    ({"sense": "up"}, "unknown sense"),
    ({"scaling": "log"}, "unknown scaling"),
    ({"method": "magic"}, "unknown method 'magic'"),
    ({"method_params": {"bogus": 1}}, "has no option"),
    ({"method_params": {"seed": 1}}, "through the estimator's random_state"),
    ({"method": "alpha-start", "time_limit": 5}, "has no time limit"),
    ({"time_limit": -1}, "time_limit must be None or a number > 0; got -1"),
])
def test_bad_parameters_raise_value_error(synthetic, params, match):
    X, y, _ = synthetic
    with pytest.raises(ValueError, match=match):
        CardinalitySVC(**{"n_features": 2, "method": FAST, **params}).fit(X, y)


def test_bad_data_raise_value_error(synthetic):
    X, y, _ = synthetic
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        KernelFeatureSelector(2, method=FAST).fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="single class"):
        CardinalitySVC(2, method=FAST).fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="every column of X is constant"):
        KernelFeatureSelector(1, method=FAST).fit(np.ones((10, 3)), np.arange(10) % 2)


def test_predict_proba_platt_scaling(synthetic):
    X, y, _ = synthetic
    labels = np.where(y > 0, "outside", "inside")
    clf = CardinalitySVC(2, method=FAST, gamma=1.0, probability=True).fit(X, labels)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 2) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba))
    # column 1 is classes_[1]; the sigmoid is increasing in the decision value
    order = np.argsort(clf.decision_function(X))
    assert np.all(np.diff(proba[order, 1]) >= -1e-12)
    assert np.mean((proba[:, 1] > 0.5) == (clf.predict(X) == "outside")) > 0.9
    again = CardinalitySVC(2, method=FAST, gamma=1.0, probability=True).fit(X, labels)
    np.testing.assert_array_equal(again.predict_proba(X), proba)
    plain = CardinalitySVC(2, method=FAST, gamma=1.0).fit(X, labels)
    assert not hasattr(plain, "predict_proba") and not hasattr(plain, "calibrator_")
    from sklearn.exceptions import NotFittedError
    plain.set_params(probability=True)       # asked after a fit without it: SVC's NotFittedError, not a missing attribute
    for method in (plain.predict_proba, plain.predict_log_proba):
        with pytest.raises(NotFittedError, match="fitted with probability=False; fit it again"):
            method(X)
    plain.set_params(probability=False)
    np.testing.assert_array_equal(plain.decision_function(X), clf.decision_function(X))
    assert clf.svc_ is clf.calibrator_.calibrated_classifiers_[0].estimator   # one SVC on all rows, not two
    with pytest.raises(ValueError, match="probability must be True or False"):
        CardinalitySVC(2, method=FAST, probability="yes").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 examples of each class"):
        CardinalitySVC(1, method=FAST, probability=True).fit(X[:5], [0, 0, 0, 0, 1])


def test_paper_sense_warning_on_every_paper_fit_only(synthetic):
    X, y, _ = synthetic
    for est in (KernelFeatureSelector(2, method=FAST, sense="paper"), CardinalitySVC(2, method=FAST, sense="paper")):
        with pytest.warns(PaperSenseWarning, match="selects the worst-fitting features by construction"):
            est.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSelectionWarning)
        KernelFeatureSelector(2, method=FAST).fit(X, y)
        CardinalitySVC(2, method=FAST, gamma=1.0).fit(X, y)
    assert issubclass(PaperSenseWarning, DegenerateSelectionWarning)


def test_verbose_shows_the_incumbent_improvements(synthetic, capsys):
    X, y, _ = synthetic
    CardinalitySVC(2, method="ls", verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "ls n_features=2" in err and "improvements" in err and "f=" in err
    CardinalitySVC(2, method="ls").fit(X, y)
    assert capsys.readouterr().err == ""


def test_method_none_is_the_selectors_own_default(synthetic):
    """CardinalitySVC(method=None): LS* for an integer n_features, the CV selector's LS for "auto" (measured
    as accurate at a fraction of the CPU); an explicit method reaches either selector unchanged."""
    X, y, _ = synthetic
    assert CardinalitySVC(2).fit(X, y).selector_.method == "ls*"
    auto = CardinalitySVC("auto", verbose=0).set_params(n_jobs=1)
    assert auto.get_params()["method"] is None
    assert auto.fit(X, y).selector_.method == "ls" and auto.result_.method == "ls"
    assert CardinalitySVC("auto", method="rfe1").fit(X, y).selector_.method == "rfe1"


def test_raw_unscaled_data_with_scaling_none_is_refused_at_once():
    """Raw breast-cancer columns (up to about 4,000) make poly3 kernels near 1e19: with scaling='none' the
    fit ran for minutes in libsvm (review of the eighth session); now one InputError up front."""
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="too large for double precision.*scale the features to \\[0, 1\\]"):
        CardinalitySVC(n_features=3, scaling="none", method=FAST).fit(X, y)
