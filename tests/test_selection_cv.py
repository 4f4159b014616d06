"""KernelFeatureSelectorCV: scikit-learn's estimator checks, the warm-started path against cold runs and
enumeration (both senses), the selection rules, determinism, meta-estimators and the plot helper."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from minlp_fs import CardinalitySVC, KernelFeatureSelector, KernelFeatureSelectorCV, PaperSenseWarning, plot_cv_results
from minlp_fs.datasets import make_synthetic
from minlp_fs.selector import _instance
from minlp_fs.methods import get_method
from minlp_fs.selection_cv import selection_path
from sklearn_checks import expected_check_failures

FAST = "alpha-start"


@pytest.fixture(scope="module")
def synthetic():
    data = make_synthetic(m=80, n_informative=2, n_noise=4, seed=1)
    return data.X, data.y


@parametrize_with_checks([
    KernelFeatureSelectorCV([1, 2], cv=2, method=FAST),
    KernelFeatureSelectorCV(2, cv=2, method="ls", kernel="rbf", gamma="scale", select="1se"),
    CardinalitySVC("auto", method=FAST),
    CardinalitySVC(1, method=FAST, probability=True),
], expected_failed_checks=expected_check_failures)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


@pytest.mark.parametrize("sense", ["fit", "paper"])
def test_warm_path_matches_enumeration_and_is_never_worse_than_cold(sense):
    """Per B: the LS* path's value is at least as good as LS* started cold (the alpha-start), and the
    LS path's value is the enumerated optimum, on a small instance in both senses. (LS* itself misses
    the optimum at B = 6 of 7 here in the fit sense: N2 is empty at B = n - 1 and it re-fits 1 of 6 swaps.)"""
    data = make_synthetic(m=40, n_informative=2, n_noise=5, seed=3)
    ks = [1, 2, 3, 4, 5, 6]
    est = KernelFeatureSelector(6, method="ls*", sense=sense, gamma=1.0, random_state=0)
    path = selection_path(est, data.X, data.y, ks)
    ls_path = selection_path(est.set_params(method="ls"), data.X, data.y, ks)
    assert sorted(path) == ks
    for B in ks:
        inst, _ = _instance(est, data.X, data.y, B)
        cold = get_method("ls*", seed=0).solve(inst)
        best = get_method("enumerate").solve(inst)
        assert len(path[B].features) == B
        assert inst.score(path[B].objective) <= inst.score(cold.objective) + 1e-9
        assert ls_path[B].objective == pytest.approx(best.objective, rel=1e-6)
    assert path[1].info["path_start"] in ("default", "shrunk from n_features=2")
    assert path[6].info["path_start"] in ("default", "grown from n_features=5")


def test_path_grows_then_shrinks_with_the_best_exact_feature():
    """Start subsets: B = 1 cold, B > 1 the previous best plus the best addition; the backward pass
    keeps a shrunk start only where it found a better subset."""
    data = make_synthetic(m=40, n_informative=2, n_noise=4, seed=0)
    est = KernelFeatureSelector(3, method="ls", gamma=1.0)
    path = selection_path(est, data.X, data.y, [1, 3])
    inst, _ = _instance(est, data.X, data.y, 3)
    from minlp_fs.alpha import AlphaSubproblem
    oracle = AlphaSubproblem(inst)
    grown = list(path[1].features)
    for _ in range(2):
        fits = {j: oracle.solve(sorted(grown + [j])).value for j in range(inst.n) if j not in grown}
        grown.append(max(fits, key=lambda j: (fits[j], -j)))
    if path[3].info["path_start"] == "grown from n_features=1":
        assert path[3].info["start"] == sorted(grown)
    ticks = []
    selection_path(est, data.X, data.y, [1, 3], tick=lambda: ticks.append(1))
    assert len(ticks) == 4


def test_one_standard_error_rule_on_given_scores():
    """Means 0.80, 0.85, 0.86 over 3 splits with std 0.05 at the best: se = 0.0289, so B = 2 (0.85 >=
    0.831) is the smallest B within one standard error; 'best' takes B = 3."""
    mean = np.array([[0.80, 0.85, 0.86]])
    std = np.array([[0.01, 0.02, 0.05]])
    assert KernelFeatureSelectorCV(select="1se")._choose(mean, std, 3, [1, 2, 3]) == (0, 1)
    assert KernelFeatureSelectorCV(select="best")._choose(mean, std, 3, [1, 2, 3]) == (0, 2)
    # two grid points: the smallest B within the band over both; a tie in B goes to the better mean
    mean = np.array([[0.70, 0.84, 0.86], [0.845, 0.85, 0.80]])
    std = np.full((2, 3), 0.05)
    assert KernelFeatureSelectorCV(select="1se")._choose(mean, std, 3, [1, 2, 3]) == (1, 0)


def test_one_standard_error_rule_on_a_fit(synthetic):
    X, y = synthetic
    kw = dict(n_features=[1, 2, 3, 4], cv=3, gammas=[0.1, 1.0], method="ls", random_state=0)
    best = KernelFeatureSelectorCV(**kw).fit(X, y)
    one = KernelFeatureSelectorCV(select="1se", **kw).fit(X, y)
    res = one.cv_results_
    for key in ("mean_test_score", "std_test_score", "n_features"):
        np.testing.assert_array_equal(res[key], best.cv_results_[key])
    top = np.argmax(res["mean_test_score"])
    floor = res["mean_test_score"][top] - res["std_test_score"][top] / np.sqrt(3)
    assert one.n_features_ == res["n_features"][res["mean_test_score"] >= floor].min()
    assert best.n_features_ == res["n_features"][top] >= one.n_features_
    assert one.support_.sum() == one.n_features_ and one.transform(X).shape == (len(y), one.n_features_)


def test_joint_gamma_grid_finds_the_informative_pair(synthetic):
    """The ball in (x0, x1): gamma = 0.1 underfits, gamma = 1 with the two informative columns wins."""
    X, y = synthetic
    sel = KernelFeatureSelectorCV([1, 2, 3, 4], cv=3, gammas=[0.1, 1.0], method="ls").fit(X, y)
    assert len(sel.cv_results_["mean_test_score"]) == 8
    assert list(sel.cv_results_["gamma"]) == [0.1] * 4 + [1.0] * 4
    assert (sel.n_features_, sel.gamma_, sel.C_) == (2, 1.0, 10.0)
    np.testing.assert_array_equal(sel.get_support(indices=True), [0, 1])
    assert sel.objective_ == sel.path_[2].objective == sel.result_.objective
    assert sel.estimator_.score(X[:, sel.support_], y) > 0.8
    assert np.all(np.diff(sel.cv_results_["mean_objective"][:4]) > 0)     # fit sense: g grows with B


def test_deterministic_with_random_state(synthetic):
    X, y = synthetic
    fits = [KernelFeatureSelectorCV([1, 2, 3], cv=2, random_state=4).fit(X, y) for _ in range(2)]
    for key in ("mean_test_score", "mean_objective", "split1_test_score"):
        np.testing.assert_array_equal(fits[0].cv_results_[key], fits[1].cv_results_[key])
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)


def test_pipeline_and_grid_search(synthetic):
    X, y = synthetic
    pipe = Pipeline([("select", KernelFeatureSelectorCV([1, 2], cv=2, method=FAST, gamma=1.0)),
                     ("svc", SVC(kernel="poly", gamma=1.0, coef0=1.0))])
    grid = GridSearchCV(pipe, {"select__select": ["best", "1se"]}, cv=StratifiedKFold(2)).fit(X, y)
    assert len(grid.cv_results_["params"]) == 2
    chosen = grid.best_estimator_["select"]
    assert chosen.support_.sum() == chosen.n_features_ in (1, 2)
    search = GridSearchCV(CardinalitySVC("auto", method=FAST, gamma=1.0), {"C": [1.0, 10.0]}, cv=2).fit(X, y)
    assert search.best_estimator_.n_features_ == search.best_estimator_.selector_.n_features_
    assert search.score(X, y) > 0.7


def test_cardinality_svc_auto_uses_the_cv_selector(synthetic):
    X, y = synthetic
    clf = CardinalitySVC("auto", method="ls", gamma=1.0, random_state=0).fit(X, y)
    sel = KernelFeatureSelectorCV(method="ls", gamma=1.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.support_, sel.support_)
    assert clf.n_features_ == sel.n_features_ and clf.objective_ == sel.objective_
    np.testing.assert_array_equal(clf.ranking_, np.where(sel.support_, 1, 2))
    assert list(clf.selector_.cv_results_["n_features"]) == [1, 2, 3, 4, 5, 6]      # min(6 columns, 10)
    assert clf.score(X, y) > 0.8


def test_constant_columns_are_not_selected(synthetic):
    X, y = synthetic
    Xc = np.hstack([np.ones((len(y), 1)), X[:, :3]])
    sel = KernelFeatureSelectorCV([1, 2], cv=2, method="ls", gamma=1.0).fit(Xc, y)
    assert not sel.support_[0]
    full = KernelFeatureSelectorCV([4], cv=2, method="ls").fit(Xc, y)       # 3 non-constant for 4 slots
    assert full.support_.all() and full.result_.method == "all-features"


def test_paper_sense_warns(synthetic):
    X, y = synthetic
    with pytest.warns(PaperSenseWarning, match="worst-fitting features"):
        KernelFeatureSelectorCV([1], cv=2, method=FAST, sense="paper").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PaperSenseWarning)
        KernelFeatureSelectorCV([1], cv=2, method=FAST).fit(X, y)


def test_verbose_shows_progress(synthetic, capsys):
    X, y = synthetic
    KernelFeatureSelectorCV([1, 2], cv=2, method=FAST, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "KernelFeatureSelectorCV" in err and "12/12" in err          # (2 grid x splits + 1) x 2 passes x 2 B
    KernelFeatureSelectorCV([1, 2], cv=2, method=FAST).fit(X, y)
    assert capsys.readouterr().err == ""


def test_plot_cv_results(synthetic):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot
    X, y = synthetic
    sel = KernelFeatureSelectorCV([1, 2, 3], cv=2, method=FAST, gammas=[0.1, 1.0]).fit(X, y)
    ax = plot_cv_results(sel)
    assert len(ax.containers) == 2                                        # one errorbar per gamma
    np.testing.assert_array_equal(ax.containers[1].lines[0].get_xdata(), [1, 2, 3])
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"chosen: {sel.n_features_} (best)" in texts and "C=10.0, gamma=1.0" in texts
    matplotlib.pyplot.close(ax.figure)
    with pytest.raises(Exception, match="not fitted"):
        plot_cv_results(KernelFeatureSelectorCV())


@pytest.mark.parametrize("params, match", [
    ({"n_features": 0}, "n_features must be None, an integer >= 1 or a sequence"),
    ({"n_features": [0, 2]}, "n_features must be None, an integer >= 1 or a sequence"),
    ({"n_features": [1.5]}, "n_features must be None, an integer >= 1 or a sequence"),
    ({"n_features": "many"}, "n_features must be None, an integer >= 1 or a sequence"),
    ({"select": "median"}, "select must be one of best, 1se"),
    ({"Cs": []}, "Cs must be a non-empty sequence or None"),
    ({"gammas": 0.5}, "gammas must be a non-empty sequence or None"),
    ({"gammas": ["often"]}, "gamma must be a number > 0, 'scale' or 'auto'"),
    ({"Cs": [-1.0]}, "C must be a finite number > 0"),
    ({"kernel": "linear"}, "kernel must be one of poly, rbf"),
    ({"verbose": "loud"}, "verbose must be an integer >= 0 or a bool"),
    ({"random_state": -1}, r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"),
    ({"scoring": "neg_log_loss"}, "scoring='neg_log_loss' cannot score the SVCs of the cross-validation"),
])
def test_bad_parameters_raise_value_error(synthetic, params, match):
    X, y = synthetic
    with pytest.raises(ValueError, match=match):
        KernelFeatureSelectorCV(**{"cv": 2, "method": FAST, **params}).fit(X, y)


def test_dataframe_string_labels_clone_and_pickle(synthetic):
    pd = pytest.importorskip("pandas")
    import pickle

    from sklearn.base import clone
    X, y = synthetic
    names = [f"c{j}" for j in range(X.shape[1])]
    labels = np.where(y > 0, "outside", "inside")
    df = pd.DataFrame(X, columns=names)
    sel = KernelFeatureSelectorCV([1, 2], cv=2, method="ls", gamma=1.0).fit(df, labels)
    np.testing.assert_array_equal(sel.classes_, ["inside", "outside"])
    assert list(sel.get_feature_names_out()) == ["c0", "c1"] == sel.result_.feature_names
    assert set(sel.estimator_.predict(X[:5, sel.support_])) <= {"inside", "outside"}
    again = pickle.loads(pickle.dumps(sel))
    np.testing.assert_array_equal(again.transform(df), sel.transform(df))
    assert clone(sel).get_params() == sel.get_params() and not hasattr(clone(sel), "cv_results_")


def test_docstrings_describe_each_estimators_own_parameters():
    """The CV docstring is the selector's with n_features and verbose rewritten (text replacements)."""
    doc = KernelFeatureSelectorCV.__doc__
    assert "n_features : None, int or sequence of int" in doc and "B, the exact number" not in doc
    assert doc.count("verbose : int") == 1 and "one per grid point and split" in doc
    assert 'n_features : int or "auto"' in CardinalitySVC.__doc__ and "probability : bool" in CardinalitySVC.__doc__


def test_review_findings_of_the_eighth_session(synthetic):
    """A degenerate CV fit warns as the single selector does; a class too small for the folds is named (not
    "a single class"); the plot takes a CardinalitySVC(n_features="auto") and refuses other estimators;
    the progress bar's total counts the B that run (B at or above the columns: one)."""
    from minlp_fs import DegenerateSelectionWarning
    X, y = synthetic
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        KernelFeatureSelectorCV([1], cv=2, method=FAST, sense="paper", C=1e-4).fit(X, y)
    kinds = {type(w.message) for w in caught if issubclass(w.category, DegenerateSelectionWarning)}
    assert kinds == {PaperSenseWarning, DegenerateSelectionWarning}
    assert any("trivial bound" in str(w.message) for w in caught if w.category is DegenerateSelectionWarning)
    rare = y.copy()
    rare[:] = -1
    rare[:1] = 1
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The least populated class", UserWarning)   # scikit-learn's, before ours
        with pytest.raises(ValueError, match=r"lacks a class: class 1 has only 1 example\(s\) for 5 splits"):
            CardinalitySVC("auto", method=FAST).fit(X, rare)
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot
    ax = plot_cv_results(CardinalitySVC("auto", method=FAST).fit(X, y))
    assert ax.get_xlabel() == "number of features selected"
    matplotlib.pyplot.close(ax.figure)
    with pytest.raises(Exception, match="not fitted"):
        plot_cv_results(CardinalitySVC("auto", method=FAST))
    with pytest.raises(TypeError, match="plots a KernelFeatureSelectorCV"):
        plot_cv_results(KernelFeatureSelector(2, method=FAST).fit(X, y))


def test_progress_total_counts_the_bs_that_run(synthetic, capsys):
    X, y = synthetic
    KernelFeatureSelectorCV([1, X.shape[1], X.shape[1] + 3], cv=2, method=FAST, verbose=1).fit(X, y)
    assert "12/12" in capsys.readouterr().err          # (2 splits + 1) x 2 passes x 2 distinct B
