"""The package's vectorised exp (minlp_fs.exponential): within one ulp of the correctly rounded value, its edges, and
every Gaussian matrix built with it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.exponential import HIGH, LOW, exp
from minlp_fs.kernels import GaussianKernel

#: exp in extended precision rounded to double: the correctly rounded value but for ties within 2^-11 ulp (x86's
#: 80-bit long double); where long double is double, libm's value
REFERENCE_IS_EXTENDED = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def reference(x):
    return np.exp(np.asarray(x, dtype=np.longdouble)).astype(np.float64)


def ulps(ours, ref):
    return np.abs(ours - ref) / np.spacing(np.abs(ref))


@pytest.mark.parametrize("low, high", [(-3.0, 0.0), (-40.0, 0.0), (LOW, HIGH), (-1e-8, 1e-8), (-1.0, 1.0)])
def test_within_one_ulp_of_the_correctly_rounded_exp(low, high):
    x = np.random.default_rng(7).uniform(low, high, 200_000)
    ours, ref = exp(x), reference(x)
    assert ulps(ours, ref).max() <= 1.0
    if REFERENCE_IS_EXTENDED:  # the one-ulp bound is not reached by every value: most are correctly rounded
        assert np.mean(ours == ref) > 0.9


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=LOW, max_value=HIGH))
def test_within_one_ulp_anywhere_in_the_domain(x):
    assert ulps(exp(np.array([x])), reference([x]))[0] <= 1.0


def test_the_edges_of_the_domain():
    """exp(0) = 1 exactly (the Gram's diagonal); below LOW 0, above HIGH inf, NaN stays NaN: a non-finite exponent
    still reaches the callers' finiteness checks."""
    x = np.array([0.0, -0.0, LOW, np.nextafter(LOW, -np.inf), -745.2, -np.inf, HIGH, np.nextafter(HIGH, np.inf),
                  np.inf, np.nan, 1e-300, -1e-300])
    out = exp(x)
    assert out[0] == 1.0 and out[1] == 1.0 and out[10] == 1.0 and out[11] == 1.0
    assert 0.0 < out[2] < 4e-308 and ulps(out[2:3], reference(x[2:3]))[0] <= 1.0
    assert np.all(out[3:6] == 0.0)
    assert np.isfinite(out[6]) and ulps(out[6:7], reference(x[6:7]))[0] <= 1.0
    assert np.all(out[7:9] == np.inf)
    assert np.isnan(out[9])


def test_in_place_any_layout_and_shape():
    x = -np.random.default_rng(1).random((37, 53)) * 5
    want = exp(x)
    assert want.shape == x.shape
    same = x.copy()
    assert exp(same, out=same) is same and np.array_equal(same, want)
    fortran = np.asfortranarray(x)
    assert np.array_equal(exp(fortran), want)
    out = np.empty((53, 37)).T
    assert exp(x, out=out) is out and np.array_equal(out, want)
    assert np.array_equal(exp(x[:, ::2]), want[:, ::2])  # strided input


def test_every_gaussian_matrix_uses_it():
    """apply, the compiled Gram, a neighbour's fill and the removal values agree with exp of their exponents."""
    kernel = GaussianKernel(gamma=0.3)
    X = np.random.default_rng(2).normal(size=(41, 6))
    S = [0, 2, 3, 5]
    base = kernel.base(X, S)
    assert np.array_equal(kernel.apply(base), exp(base * -kernel.gamma))
    K = kernel.gram(X, S)
    assert np.allclose(K, exp(base * -kernel.gamma), rtol=1e-14, atol=0)
    m = X.shape[0]
    y = np.where(np.arange(m) % 2, 1.0, -1.0)
    Kn, grad = np.empty((m, m)), np.empty(m)
    kernel.fill_neighbour(base, X[:, 3].copy(), X[:, 1].copy(), y, np.zeros(m), Kn, grad)
    swapped = kernel.base(X, [0, 1, 2, 5])
    assert np.allclose(Kn, exp(swapped * -kernel.gamma), rtol=1e-14, atol=0)
    v = np.random.default_rng(3).normal(size=m)
    removal = kernel.removal_quads(base, X, v, [2])[0]
    assert removal == pytest.approx(0.5 * v @ exp((base - kernel.feature_term(X, 2)) * -kernel.gamma) @ v,
                                    rel=1e-13)
