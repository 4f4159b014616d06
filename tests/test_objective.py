"""The one objective f(alpha, beta) = 1/2 alpha'Q(beta)alpha - e'alpha (problem (3)), the trivial
bound of Remark 1 and the feasibility measure, against independent numpy computations."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.kernels import make_kernel
from minlp_fs.objective import attains_trivial_bound, dual_objective, feasibility_violation, trivial_bound


def problem(seed, m=25, n=4, kernel="poly3"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, n))
    y = np.where(np.arange(m) % 3 == 0, 1.0, -1.0)
    rng.shuffle(y)
    return rng, make_kernel(kernel).gram(X), y


@pytest.mark.parametrize("kernel", ["poly2", "poly5", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dual_objective_equals_numpy(kernel, seed, random_feasible_alpha):
    rng, K, y = problem(seed, kernel=kernel)
    a = random_feasible_alpha(rng, y, C=10.0)
    Q = np.outer(y, y) * K
    expected = 0.5 * a @ Q @ a - np.ones(y.size) @ a
    assert dual_objective(a, K, y) == pytest.approx(expected, rel=1e-13, abs=1e-12)
    sv = np.flatnonzero(a > 0)
    assert sv.size < y.size
    assert dual_objective(a[sv], K[sv][:, sv], y[sv]) == pytest.approx(dual_objective(a, K, y), rel=1e-13)


def test_dual_objective_of_zero_and_of_lists(random_feasible_alpha):
    _, K, y = problem(0)
    assert dual_objective(np.zeros(y.size), K, y) == 0.0
    a = random_feasible_alpha(np.random.default_rng(1), y, 1.0)
    assert dual_objective(list(a), K, y) == dual_objective(a, K, y)
    assert isinstance(dual_objective(a, K, y), float)


def test_trivial_bound():
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    assert trivial_bound(y, 10.0) == -40.0
    assert trivial_bound(-y, 10.0) == -40.0
    assert trivial_bound(np.array([1.0, -1.0]), 0.5) == -1.0
    assert attains_trivial_bound(-40.0, y, 10.0)
    assert attains_trivial_bound(-40.0 * (1 - 1e-7), y, 10.0)
    assert not attains_trivial_bound(-40.0 * (1 - 1e-5), y, 10.0)
    assert attains_trivial_bound(-40.0 * (1 - 1e-5), y, 10.0, rtol=1e-4)


def test_trivial_bound_is_attained_by_a_zero_quadratic_form():
    """Remark 1: with a'Qa = 0 and every minority alpha at C the value is the bound."""
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    K = np.ones((5, 5))  # all points identical in feature space
    a = np.array([10.0, 10.0, 20.0 / 3, 20.0 / 3, 20.0 / 3])
    assert feasibility_violation(a, y, 10.0) < 1e-12
    assert dual_objective(a, K, y) == pytest.approx(trivial_bound(y, 10.0), rel=1e-14)


def test_feasibility_violation():
    y = np.array([1.0, 1.0, -1.0, -1.0])
    assert feasibility_violation(np.array([1.0, 2.0, 3.0, 0.0]), y, 5.0) == 0.0
    assert feasibility_violation(np.array([1.0, 2.0, 2.5, 0.0]), y, 5.0) == pytest.approx(0.5)
    assert feasibility_violation(np.array([-0.25, 0.0, 0.0, -0.25]), y, 5.0) == pytest.approx(0.25)
    assert feasibility_violation(np.array([6.0, 0.0, 6.0, 0.0]), y, 5.0) == pytest.approx(1.0)
    assert feasibility_violation(np.zeros(4), y, 5.0) == 0.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 30), C=st.floats(0.01, 1000.0),
       kernel=st.sampled_from(["poly2", "poly3", "rbf"]))
def test_every_feasible_alpha_is_above_the_trivial_bound(seed, m, C, kernel, random_feasible_alpha):
    """Remark 1: Q(beta) is PSD, so f >= -e'alpha >= -2C min(|I+|, |I-|) on the whole polytope."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=m) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    K = make_kernel(kernel).gram(rng.uniform(size=(m, 3)))
    a = random_feasible_alpha(rng, y, C, zero_share=0.0)
    assert feasibility_violation(a, y, C) <= 1e-9 * C * m
    bound = trivial_bound(y, C)
    assert dual_objective(a, K, y) >= bound - 1e-9 * abs(bound)


# --- non-finite values (issue 13, item 1) -------------------------------------------------------

def test_dual_objective_refuses_a_non_finite_value():
    from minlp_fs.objective import NonFiniteError

    y = np.array([1.0, -1.0])
    K = np.array([[np.inf, 0.0], [0.0, 1.0]])
    with pytest.raises(NonFiniteError, match=r"the objective f\(alpha, beta\) is (inf|nan)"):
        dual_objective(np.array([1.0, 1.0]), K, y)
    with pytest.raises(NonFiniteError):
        dual_objective(np.array([np.nan, 1.0]), np.eye(2), y)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), kernel=st.sampled_from(["poly2", "poly3", "poly5", "rbf"]),
       scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_kernel_range_bounds_every_subsets_entries_whatever_the_signs(seed, kernel, scale):
    """kernel_range >= |K_S| for random subsets S of signed data, and it is attained (full-feature diagonal)."""
    from minlp_fs.objective import kernel_range

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(7, 5)) * scale
    k = make_kernel(kernel, gamma=0.5)
    bound = kernel_range(k, X)
    for _ in range(5):
        S = np.flatnonzero(rng.uniform(size=5) < 0.6)
        if S.size:
            assert np.abs(k.gram(X, S)).max() <= bound * (1 + 1e-12)
    assert np.abs(k.gram(X)).max() == pytest.approx(bound, rel=1e-12)


def test_kernel_range_is_inf_on_overflow_and_check_names_the_kernel():
    from minlp_fs.objective import NonFiniteError, check_kernel_range, kernel_range

    X = np.full((4, 2), 1.0)
    assert kernel_range(make_kernel("poly5", gamma=1e70), X) == np.inf
    assert kernel_range(make_kernel("rbf"), X * 1e155) == np.inf  # squared distances overflow
    with pytest.raises(NonFiniteError, match=r"overflow to inf \(poly5: degree=5, gamma=1e\+70, coef0=1; C=10, m=4\)"):
        check_kernel_range(make_kernel("poly5", gamma=1e70), X, 10.0)
    with pytest.raises(NonFiniteError, match=r"reach 1e\+300, and m\*C times that overflows"):
        check_kernel_range(make_kernel("poly1", gamma=1e300, coef0=0.0), X[:, :1], 1e10)
    assert check_kernel_range(make_kernel("poly2"), X, 10.0) == pytest.approx(1.44)
