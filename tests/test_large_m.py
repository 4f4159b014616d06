"""Large-m mode (minlp_fs/large_m.py): the mode switch, determinism, the exact re-evaluation against the
package's objective, parameter errors, and the guard that no Gram of all rows is built per candidate."""
import numpy as np
import pytest

from minlp_fs import CardinalitySVC, KernelFeatureSelector, KernelFeatureSelectorCV
from minlp_fs import large_m
from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.datasets import make_synthetic
from minlp_fs.errors import InputError
from minlp_fs.instance import make_instance
from minlp_fs.kernels import GaussianKernel, PolynomialKernel
from minlp_fs.objective import dual_objective, feasibility_violation

FAST = "alpha-start"
ROWS = 60


@pytest.fixture(scope="module")
def data():
    d = make_synthetic(m=240, n_informative=3, n_noise=5, seed=3)
    return d.X, d.y


@pytest.mark.parametrize("mode, rows, m, expected", [
    ("auto", 2000, large_m.AUTO_ROWS, False), ("auto", 2000, large_m.AUTO_ROWS + 1, True),
    ("auto", 9000, 8000, False), ("auto", 9000, 9001, True), (True, 2000, 10, True), (False, 2000, 10 ** 6, False),
])
def test_mode_switch(mode, rows, m, expected):
    assert large_m.use_large_m(mode, rows, m) is expected


def test_estimators_report_the_mode_and_auto_switches_above_the_threshold(data, monkeypatch):
    X, y = data
    assert KernelFeatureSelector(2, method=FAST).fit(X, y).large_m_ is False          # 240 rows: exact
    exact = KernelFeatureSelector(2, method=FAST, large_m=False).fit(X, y)
    assert exact.large_m_ is False and "large_m" not in exact.result_.info
    monkeypatch.setattr(large_m, "AUTO_ROWS", 100)
    auto = KernelFeatureSelector(2, method=FAST, large_m_rows=ROWS).fit(X, y)
    assert auto.large_m_ is True and auto.result_.info["large_m"]["rows"] == ROWS
    svc = CardinalitySVC(2, method=FAST, large_m=True, large_m_rows=ROWS).fit(X, y)
    assert svc.large_m_ is True and svc.selector_.large_m_ is True
    assert np.array_equal(svc.selected_features_, auto.selected_features_)


@pytest.mark.parametrize("kernel, params", [("poly3", {"gamma": 0.1, "coef0": 1.0}), ("rbf", {"gamma": 0.5})])
@pytest.mark.parametrize("subset", [(0, 1, 2), (1, 4, 6)])
def test_exact_fit_equals_the_package_objective(data, kernel, params, subset):
    X, y = data
    inst = make_instance(X, y, 3, kernel=kernel, C=10.0, sense="fit", **params)
    fit = large_m.exact_fit(inst, subset)
    reference = AlphaSubproblem(inst, tol=1e-9).solve(subset)
    assert fit.value == pytest.approx(reference.value, rel=1e-6)
    # libsvm's alpha is a feasible point whose value by the full Gram is the one reported
    assert feasibility_violation(fit.alpha, inst.y, inst.C) < 1e-9
    assert fit.value == pytest.approx(dual_objective(fit.alpha, inst.gram(subset), inst.y), rel=1e-12)


def test_blocked_gram_matches_the_gram(data, monkeypatch):
    X, _ = data
    monkeypatch.setattr(large_m, "BLOCK_ROWS", 7)          # 240 rows: the last block is partial
    v = np.random.default_rng(0).normal(size=X.shape[0])
    for kernel in (PolynomialKernel(degree=3, gamma=0.2, coef0=1.0), GaussianKernel(gamma=0.7)):
        op = large_m.BlockedGram(kernel, X[:, [0, 2, 5]])
        assert np.allclose(op @ v, kernel.gram(X, [0, 2, 5]) @ v, rtol=1e-12, atol=1e-9)


def test_large_m_result_is_valued_on_all_rows(data):
    X, y = data
    sel = KernelFeatureSelector(3, method="ls", large_m=True, large_m_rows=ROWS, random_state=1).fit(X, y)
    inst = make_instance(X, y, 3, kernel="poly3", gamma=0.1, coef0=1.0, C=10.0, sense="fit")
    assert sel.objective_ == pytest.approx(AlphaSubproblem(inst).solve(sel.selected_features_).value, rel=1e-6)
    info = sel.result_.info["large_m"]
    assert info["rows"] == ROWS and info["search_objective"] != sel.objective_
    assert sel.result_.alpha.shape == (X.shape[0],) and not sel.result_.certified
    with pytest.warns(UserWarning, match="every feature is kept"):                # B = n: nothing to search
        every = KernelFeatureSelector(8, large_m=True, large_m_rows=ROWS).fit(X, y)
    assert every.objective_ == pytest.approx(AlphaSubproblem(inst.with_params(B=8)).solve(range(8)).value, rel=1e-6)


def test_deterministic_with_seed(data):
    X, y = data

    def fit(seed):
        return KernelFeatureSelector(3, method="ls*", large_m=True, large_m_rows=ROWS, random_state=seed).fit(X, y)

    a, b = fit(4), fit(4)
    assert np.array_equal(a.selected_features_, b.selected_features_) and a.objective_ == b.objective_
    assert a.result_.info["large_m"] == b.result_.info["large_m"]
    inst = make_instance(X, y, 3)
    rows = [large_m.sample_instance(inst, ROWS, seed).rows for seed in (0, 0, 1)]
    assert np.array_equal(rows[0], rows[1]) and not np.array_equal(rows[0], rows[2])
    assert rows[0].size == ROWS and large_m.sample_instance(inst, 10 ** 6, 0).m == X.shape[0]


def test_a_random_state_is_drawn_once_per_fit(data, monkeypatch):
    """A RandomState moves on at every draw: the path samples the same rows for every B, the method gets
    that seed, and the reported seed is the one searched with (scikit-learn's draw-once rule)."""
    from minlp_fs import selection_cv

    X, y = data
    seen = []
    sample = large_m.sample_instance
    monkeypatch.setattr(large_m, "sample_instance", lambda inst, rows, seed: seen.append(seed) or sample(inst, rows, seed))
    sel = KernelFeatureSelector(3, method="ls*", large_m=True, large_m_rows=ROWS)
    path = selection_cv.selection_path(sel.set_params(random_state=np.random.RandomState(7)), X, y, [1, 2, 3])
    assert len(set(seen)) == 1 and len(seen) == 3 and all(r.ok for r in path.values())
    seen.clear()
    cv = KernelFeatureSelectorCV([1, 2], cv=2, method=FAST, large_m=True, large_m_rows=ROWS,
                                 random_state=np.random.RandomState(7)).fit(X, y)
    assert len(set(seen)) == 1 and cv.result_.info["large_m"]["seed"] == seen[0]


@pytest.mark.parametrize("params, message", [
    ({"large_m": "yes"}, "large_m must be 'auto', True or False; got 'yes'"),
    ({"large_m": 1}, "large_m must be 'auto', True or False; got 1"),
    ({"large_m": None}, "large_m must be 'auto', True or False"),
    ({"large_m_rows": 1}, "large_m_rows must be an integer >= 2; got 1"),
    ({"large_m_rows": 2.5}, "large_m_rows must be an integer >= 2; got 2.5"),
    ({"large_m_rows": True}, "large_m_rows must be an integer >= 2; got True"),
])
@pytest.mark.parametrize("cls", [KernelFeatureSelector, CardinalitySVC, KernelFeatureSelectorCV])
def test_bad_parameters_are_one_clear_error(data, cls, params, message):
    X, y = data
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cls(2, method=FAST, **params).fit(X, y)


def test_unsupported_kernel_is_refused():
    class Other:
        name = "other"

    with pytest.raises(InputError, match="large-m mode needs a polynomial or Gaussian kernel"):
        large_m._svc(Other(), 1.0)


@pytest.fixture
def sizes(monkeypatch):
    """Record the rows of every oracle and the shape of every kernel matrix built."""
    seen = {"oracle": [], "matrix": []}
    init = AlphaSubproblem.__init__

    def recording_init(self, instance, *args, **kwargs):
        seen["oracle"].append(instance.m)
        init(self, instance, *args, **kwargs)

    monkeypatch.setattr(AlphaSubproblem, "__init__", recording_init)
    for cls in (PolynomialKernel, GaussianKernel):
        for name in ("base", "apply"):
            original = getattr(cls, name)

            def recording(self, *args, _original=original, **kwargs):
                out = _original(self, *args, **kwargs)
                seen["matrix"].append(np.shape(out))
                return out

            monkeypatch.setattr(cls, name, recording)
    original_gram = PolynomialKernel.gram

    def recording_gram(self, X, subset=None, Z=None):
        out = original_gram(self, X, subset, Z)
        seen["matrix"].append(out.shape)
        return out

    for cls in (PolynomialKernel, GaussianKernel):
        monkeypatch.setattr(cls, "gram", recording_gram)
    monkeypatch.setattr(large_m, "BLOCK_ROWS", 16)
    return seen


@pytest.mark.parametrize("kernel", ["poly", "rbf"])
@pytest.mark.parametrize("method", ["ls*", "rfe1"])
def test_large_m_never_builds_a_matrix_of_all_rows(data, sizes, kernel, method):
    X, y = data
    m = X.shape[0]
    KernelFeatureSelector(3, kernel=kernel, method=method, large_m=True, large_m_rows=ROWS).fit(X, y)
    assert sizes["oracle"] and max(sizes["oracle"]) == ROWS
    assert sizes["matrix"] and all(min(s[:2]) <= ROWS for s in sizes["matrix"] if len(s) == 2)
    # the same recorder sees the m x m matrices of the exact mode: the guard can fail
    sizes["oracle"].clear()
    sizes["matrix"].clear()
    KernelFeatureSelector(3, kernel=kernel, method=method, large_m=False).fit(X, y)
    assert max(sizes["oracle"]) == m and (m, m) in sizes["matrix"]


def test_cv_searches_the_sample_and_values_the_choice_on_all_rows(data, sizes):
    X, y = data
    cv = KernelFeatureSelectorCV([1, 2], cv=2, method="ls", large_m=True, large_m_rows=ROWS, random_state=0).fit(X, y)
    assert cv.large_m_ is True and max(sizes["oracle"]) == ROWS
    assert all(min(s[:2]) <= ROWS for s in sizes["matrix"] if len(s) == 2)
    inst = make_instance(X, y, cv.n_features_, kernel="poly3", gamma=0.1, coef0=1.0, C=10.0, sense="fit")
    assert cv.objective_ == pytest.approx(large_m.exact_fit(inst, cv.selected_features_).value, rel=1e-9)
    assert cv.result_.info["large_m"]["rows"] == ROWS


def test_auto_decides_on_the_rows_each_fit_sees(data, monkeypatch):
    """large_m="auto" is decided on the rows of the data being fitted: each CV split's path on its training
    rows (120 of 240 here: exact), the final path on all rows (240: sampled); large_m_ is the final fit's."""
    X, y = data
    monkeypatch.setattr(large_m, "AUTO_ROWS", 150)
    sampled_from = []
    sample = large_m.sample_instance
    monkeypatch.setattr(large_m, "sample_instance",
                        lambda inst, rows, seed: sampled_from.append(inst.m) or sample(inst, rows, seed))
    cv = KernelFeatureSelectorCV([1, 2], cv=2, method=FAST, large_m_rows=ROWS).fit(X, y)
    assert cv.large_m_ is True and sampled_from == [X.shape[0]] * 2          # the final path's two B only
    sampled_from.clear()
    half = KernelFeatureSelector(2, method=FAST, large_m_rows=ROWS).fit(X[:120], y[:120])
    assert half.large_m_ is False and sampled_from == []


@pytest.mark.parametrize("labels", ["two", "three"])
def test_a_sample_of_a_sample_names_rows_of_the_data(data, labels):
    """``rows`` holds indices into the data (what exported models record as their provenance), also when
    the sampled instance was itself built from a sample of rows."""
    X, y = data
    y = y if labels == "two" else np.where(X[:, 0] > np.median(X[:, 0]), 2, y)
    inst = make_instance(X, y, 3, m=100, seed=1)
    sample = large_m.sample_instance(inst, ROWS, 0)
    assert sample.rows.size == ROWS and np.isin(sample.rows, inst.rows).all()
    position = np.searchsorted(inst.rows, sample.rows)
    np.testing.assert_array_equal(sample.X, inst.X[position])


def test_multiclass_large_m_samples_every_class_and_sums_the_exact_duals():
    """Three classes: the sample keeps every class in proportion, and the exact value on all rows is the sum
    of the one-vs-rest machines' values (minlp_fs.multiclass), as the multiclass oracle computes it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(150, 5))
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3])]
    inst = make_instance(X, labels, 2, kernel="poly2", sense="fit")
    sample = large_m.sample_instance(inst, 45, seed=0)
    assert sample.m == 45 and sample.n_classes == 3
    assert np.allclose(np.bincount(sample.codes) / 45, np.bincount(inst.codes) / 150, atol=0.03)
    fit = large_m.exact_fit(inst, (0, 1))
    assert fit.alpha.shape == (3, 150)
    assert fit.value == pytest.approx(AlphaSubproblem(inst, tol=1e-9).solve((0, 1)).value, rel=1e-6)
    sel = KernelFeatureSelector(2, method=FAST, large_m=True, large_m_rows=45).fit(X, labels)
    same = make_instance(X, labels, 2, kernel="poly3", gamma=0.1, coef0=1.0, C=10.0, sense="fit")  # the selector's
    assert sel.large_m_ and sel.objective_ == pytest.approx(large_m.exact_fit(same, sel.selected_features_).value)


def test_an_interrupted_search_is_not_re_fitted_on_all_rows(data, monkeypatch):
    """Ctrl-C during the sample's search: the sample's Result comes back at once, saying so (no fit on all
    rows, which takes minutes at m = 20,000)."""
    from minlp_fs.methods import get_method
    from minlp_fs.result import Status

    X, y = data
    inst = make_instance(X, y, 3, sense="fit")
    method = get_method("ls*")

    def interrupt(point):
        raise KeyboardInterrupt

    monkeypatch.setattr(large_m, "exact_fit", lambda *a: pytest.fail("re-fitted on all rows"))
    res = large_m.select(inst, method, ROWS, 0, callback=interrupt)
    assert res.status == Status.INTERRUPTED and res.ok and "not re-evaluated on all rows" in res.message
