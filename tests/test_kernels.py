"""Masked kernels (paper problem (3)): Gram matrices against scikit-learn, the O(m^2) swap update,
weights, the derivative of phi, and make_kernel's names, overrides and errors."""
import numpy as np
import pytest
from numba import njit
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from minlp_fs.errors import InputError
from minlp_fs.exponential import exp_span
from minlp_fs.kernels import GaussianKernel, PolynomialKernel, make_kernel

RNG = np.random.default_rng(12345)
X = RNG.uniform(size=(30, 8))
Z = RNG.uniform(size=(11, 8))
SUBSETS = [[0], [2, 5], [1, 3, 7], [0, 1, 2, 3, 4, 5, 6, 7], [6, 4, 0]]
POLY = [PolynomialKernel(2, 0.1, 1.0), PolynomialKernel(3, 0.5, 0.0), PolynomialKernel(5, 1.3, 2.5),
        PolynomialKernel(1, 2.0, 0.3)]
RBF = [GaussianKernel(0.1), GaussianKernel(1.0), GaussianKernel(7.5)]


def sklearn_gram(kernel, A, B=None):
    if isinstance(kernel, PolynomialKernel):
        return polynomial_kernel(A, B, degree=kernel.degree, gamma=kernel.gamma, coef0=kernel.coef0)
    return rbf_kernel(A, B, gamma=kernel.gamma)


@pytest.mark.parametrize("kernel", POLY + RBF, ids=str)
@pytest.mark.parametrize("subset", SUBSETS, ids=str)
def test_gram_equals_sklearn(kernel, subset):
    S = np.array(subset)
    np.testing.assert_allclose(kernel.gram(X, subset), sklearn_gram(kernel, X[:, S]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.gram(X, subset, Z), sklearn_gram(kernel, X[:, S], Z[:, S]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", POLY + RBF, ids=str)
def test_all_columns_by_default(kernel):
    np.testing.assert_allclose(kernel.gram(X), sklearn_gram(kernel, X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", POLY[:2] + RBF[:2], ids=str)
def test_feature_terms_sum_to_base(kernel):
    subset = [1, 4, 6]
    total = sum(kernel.feature_term(X, j) for j in subset)
    np.testing.assert_allclose(kernel.base(X, subset), total, atol=1e-12)
    cross = sum(kernel.feature_term(X, j, Z) for j in subset)
    np.testing.assert_allclose(kernel.base(X, subset, Z), cross, atol=1e-12)


@pytest.mark.parametrize("kernel", [POLY[0], POLY[2], RBF[1]], ids=str)
def test_swap_matches_recomputation(kernel):
    rng = np.random.default_rng(7)
    subset = [0, 3, 5]
    base = kernel.base(X, subset)
    for _ in range(300):
        j_out = subset[rng.integers(len(subset))]
        j_in = rng.choice([j for j in range(X.shape[1]) if j not in subset])
        assert kernel.swap(base, X, j_out, j_in) is base
        subset = [j for j in subset if j != j_out] + [int(j_in)]
    np.testing.assert_allclose(base, kernel.base(X, subset), rtol=0, atol=1e-10)
    np.testing.assert_allclose(kernel.apply(base), kernel.gram(X, subset), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kernel", POLY[:2] + RBF[:2], ids=str)
def test_weights(kernel):
    subset = [0, 2, 5, 7]
    np.testing.assert_allclose(kernel.base(X, subset, weights=np.ones(4)), kernel.base(X, subset), atol=1e-12)
    np.testing.assert_allclose(kernel.base(X, subset, Z, weights=np.ones(4)), kernel.base(X, subset, Z),
                               atol=1e-12)
    # sum_j w_j t_j(x, z) is the unweighted term of sqrt(w) * x and sqrt(w) * z
    w = np.array([0.2, 1.0, 0.0, 3.5])
    S = np.array(subset)
    sw = np.sqrt(w)
    np.testing.assert_allclose(kernel.apply(kernel.base(X, subset, weights=w)),
                               sklearn_gram(kernel, X[:, S] * sw), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.apply(kernel.base(X, subset, Z, weights=w)),
                               sklearn_gram(kernel, X[:, S] * sw, Z[:, S] * sw), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", POLY + RBF, ids=str)
def test_derivative_matches_finite_differences(kernel):
    base = kernel.base(X, [1, 2, 6])
    h = 1e-6
    fd = (kernel.apply(base + h) - kernel.apply(base - h)) / (2 * h)
    np.testing.assert_allclose(kernel.derivative(base), fd, rtol=1e-6, atol=1e-8)


def test_apply_does_not_modify_base_unless_asked():
    kernel = POLY[0]
    base = kernel.base(X, [0, 1])
    before = base.copy()
    K = kernel.apply(base)
    np.testing.assert_array_equal(base, before)
    assert kernel.apply(base, out=base) is base
    np.testing.assert_array_equal(base, K)


@pytest.mark.parametrize("name, degree", [("poly2", 2), ("poly3", 3), ("poly5", 5), ("poly7", 7),
                                          (" POLY3 ", 3)])
def test_make_kernel_polynomial_names(name, degree):
    k = make_kernel(name)
    assert isinstance(k, PolynomialKernel)
    assert (k.degree, k.gamma, k.coef0) == (degree, 0.1, 1.0)
    assert k.submodular is True
    assert k.name == f"poly{degree}"
    assert k.params() == {"name": f"poly{degree}", "degree": degree, "gamma": 0.1, "coef0": 1.0}


@pytest.mark.parametrize("name", ["rbf", "gaussian", "RBF"])
def test_make_kernel_gaussian(name):
    k = make_kernel(name)
    assert isinstance(k, GaussianKernel)
    assert k.gamma == 0.1 and k.submodular is False
    assert k.params() == {"name": "rbf", "gamma": 0.1}


def test_make_kernel_overrides():
    assert make_kernel("poly2", gamma=0.5, coef0=0.0, degree=4) == PolynomialKernel(4, 0.5, 0.0)
    assert make_kernel("poly3", gamma=np.float32(0.25), coef0=np.int64(2)) == PolynomialKernel(3, 0.25, 2.0)
    assert make_kernel("rbf", gamma=2) == GaussianKernel(2.0)
    k = GaussianKernel(0.3)
    assert make_kernel(k) is k


@pytest.mark.parametrize("args, message", [
    (dict(kernel="sigmoid"), "unknown kernel 'sigmoid'"),
    (dict(kernel="poly2x"), "unknown kernel"),
    (dict(kernel=3), "kernel must be a name"),
    (dict(kernel="poly2", gamma=0), "gamma must be a finite number > 0"),
    (dict(kernel="rbf", gamma=-1.0), "gamma must be a finite number > 0"),
    (dict(kernel="rbf", gamma=float("inf")), "gamma must be a finite number > 0"),
    (dict(kernel="poly2", gamma=float("nan")), "gamma must be a finite number > 0"),
    (dict(kernel="poly2", gamma="0.1"), "gamma must be a finite number > 0"),
    (dict(kernel="poly2", gamma=True), "gamma must be a finite number > 0"),
    (dict(kernel="poly0"), "polynomial degree must be an integer >= 1; got 0"),
    (dict(kernel="poly2", degree=0), "polynomial degree must be an integer >= 1; got 0"),
    (dict(kernel="poly2", degree=2.5), "polynomial degree must be an integer >= 1"),
    (dict(kernel="poly2", degree=True), "polynomial degree must be an integer >= 1"),
    (dict(kernel="poly3", coef0=-0.5), "coef0 (c) must be a finite number >= 0; got -0.5"),
    (dict(kernel="poly3", coef0=float("nan")), "coef0 (c) must be a finite number >= 0"),
    (dict(kernel="rbf", degree=2), "Gaussian kernel takes only gamma"),
    (dict(kernel="rbf", coef0=1.0), "Gaussian kernel takes only gamma"),
])
def test_make_kernel_errors(args, message):
    with pytest.raises(InputError) as info:
        make_kernel(**args)
    assert message in str(info.value)


def test_a_polynomial_kernel_states_its_degree_once():
    """'poly' alone silently meant degree 2 (review of the eighth session): it needs poly<d> or degree=
    (degree= overrides a poly<d> name, test_make_kernel_overrides)."""
    assert make_kernel("poly", degree=4).degree == 4 and make_kernel("poly3", degree=3).degree == 3
    with pytest.raises(InputError, match="'poly' needs its degree"):
        make_kernel("poly")


@njit(cache=True)
def _entrywise_poly(A, gamma, coef0, degree, out):
    for a in range(A.shape[0]):
        for b in range(A.shape[0]):
            s = 0.0
            for j in range(A.shape[1]):
                s += A[a, j] * A[b, j]
            t = gamma * s + coef0
            r = t
            for _ in range(degree - 1):
                r *= t
            out[a, b] = r


@njit(cache=True)
def _entrywise_rbf(A, gamma, out):
    for a in range(A.shape[0]):
        for b in range(A.shape[0]):
            s = 0.0
            for j in range(A.shape[1]):
                d = A[a, j] - A[b, j]
                s += d * d
            out[a, b] = -gamma * s if a != b else 0.0
    exp_span(out.reshape(-1), out.reshape(-1), np.empty(2 * out.size), 0, out.size)


def entrywise_gram(kernel, A):
    """K_ab by the entrywise formula, one entry at a time (compiled): sum_j a_j b_j (or (a_j - b_j)^2) over the
    columns in order, then the power by repeated multiplication (or the package's exp of -gamma s,
    :mod:`minlp_fs.exponential`, applied to the whole matrix of exponents)."""
    out = np.empty((len(A), len(A)))
    if isinstance(kernel, PolynomialKernel):
        _entrywise_poly(A, kernel.gamma, kernel.coef0, kernel.degree, out)
    else:
        _entrywise_rbf(A, kernel.gamma, out)
    return out


@pytest.mark.parametrize("kernel", POLY + RBF, ids=str)
def test_the_compiled_gram_is_the_entrywise_formula_bit_for_bit(kernel):
    """The row-wise compiled Gram (vectorised along rows) rounds as the entrywise formula does: SMO's path, and
    so every heuristic's decisions, depend on K to the last bit on degenerate duals."""
    A = np.vstack([X[:, [1, 3, 7, 2]] * 3.7, X[:2, [1, 3, 7, 2]]])  # duplicate rows too
    K = kernel.gram(A)
    np.testing.assert_array_equal(K, entrywise_gram(kernel, A))
    np.testing.assert_array_equal(K, K.T)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5, 6])
def test_the_compiled_powers_multiply_left_to_right_for_every_degree(degree):
    """kernels._power writes out degrees 2, 3 and 5 (so loops around it vectorise): apply, the removal values and the
    probes' matrices keep the bits of repeated multiplication t * t * ... * t, as for the other degrees."""
    from minlp_fs.exact.probe_gram import _poly_plus_outer
    from minlp_fs.kernels import _poly_removal_quads

    kernel = PolynomialKernel(degree=degree, gamma=0.3, coef0=0.7)
    base = kernel.base(X, [0, 2, 5])

    def power(s):
        t = kernel.gamma * s + kernel.coef0
        r = t.copy()
        for _ in range(degree - 1):
            r = r * t
        return r

    np.testing.assert_array_equal(kernel.apply(base), power(base))
    x = np.ascontiguousarray(X[:, 4])
    out = np.empty_like(base)
    _poly_plus_outer(base, x, kernel.gamma, kernel.coef0, degree, out)
    np.testing.assert_array_equal(out, power(base + np.outer(x, x)))
    v = np.linspace(-1.0, 1.0, len(X))
    quads = np.empty(2)
    _poly_removal_quads(base, np.ascontiguousarray(X[:, [0, 5]]), v, kernel.gamma, kernel.coef0, degree, quads)
    for t, j in enumerate([0, 5]):
        K = power(base - np.outer(X[:, j], X[:, j]))
        row = [sum(K[a, b] * v[b] for b in range(a + 1, len(X))) for a in range(len(X))]
        expected = 0.5 * sum(v[a] * (2.0 * row[a] + K[a, a] * v[a]) for a in range(len(X)))
        assert quads[t] == expected


@pytest.mark.parametrize("kernel", POLY + RBF, ids=str)
def test_without_is_phi_of_the_base_less_the_feature_bit_for_bit(kernel):
    """Kernel.without (the removal values' and the neighbour tables' "centre without j" matrices): bitwise
    apply(base - T_j), into ``out`` when given, ``base`` left as it is."""
    base = kernel.base(X, [0, 2, 5, 6])
    before = base.copy()
    for j in (0, 5):
        want = kernel.apply(base - kernel.feature_term(X, j))
        assert np.array_equal(kernel.without(base, X, j), want)
        out = np.empty_like(base)
        assert kernel.without(base, X, j, out=out) is out and np.array_equal(out, want)
    assert np.array_equal(base, before)
