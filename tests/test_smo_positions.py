"""The position-order SMO takes the index-order SMO's steps bit for bit (same iterations, alpha, tracked value,
early stops), so no heuristic's decision moves with it; and its scans are exact."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from index_order_smo import _smo as index_order_smo
from minlp_fs.alpha.scans import kth_smallest, last_index, scan_max, scan_min
from minlp_fs.alpha.smo import _full_gradient, _smo, _work_matrix, smo_solve
from minlp_fs.kernels import make_kernel
from minlp_fs.objective import dual_objective


def both(K, y, U, alpha0, tol=1e-5, above=np.inf, below=-np.inf, max_iter=10_000_000):
    """(iterations, pruned, value, alpha) of the index-order and the position-order SMO from alpha0."""
    out = []
    for solver, extra in ((index_order_smo, ()), (_smo, (_work_matrix(len(y)),))):
        alpha, grad = alpha0.copy(), np.empty(len(y))
        _full_gradient(K, y, alpha, grad)
        it, pruned, value = solver(K, y, U, alpha, grad, tol, max_iter, True, above, below, *extra)
        out.append((it, pruned, value, alpha))
    return out


def assert_same_steps(ref, new):
    assert new[:3] == ref[:3]
    np.testing.assert_array_equal(new[3], ref[3])


def problem(seed, m, kernel, duplicates):
    """A dual with many exact ties (rows on a 3 x 3 grid: duplicate rows, equal gradients) or a generic one."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(m, 2)).astype(float) if duplicates else rng.normal(size=(m, 5))
    y = np.where(X[:, 0] + rng.normal(size=m) > X[:, 0].mean(), 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return make_kernel(kernel, gamma=float(rng.uniform(0.1, 1.0))).gram(X), y


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(3, 260), C=st.floats(0.05, 100.0),
       kernel=st.sampled_from(["poly2", "poly3", "rbf"]), duplicates=st.booleans(),
       stop=st.sampled_from(["none", "above", "below", "both_loose"]))
def test_the_steps_are_those_of_the_index_order_smo(seed, m, C, kernel, duplicates, stop, random_feasible_alpha):
    """Random duals, cold or warm, with or without an early stop that fires or not: the same iterations,
    tracked value, early-stop verdict and alpha, bit for bit; per-variable bounds (grouped solves) too."""
    K, y = problem(seed, m, kernel, duplicates)
    rng = np.random.default_rng(seed)
    U = np.full(m, C) if seed % 3 else C * rng.integers(1, 4, size=m).astype(float)
    alpha0 = np.zeros(m) if seed % 2 else random_feasible_alpha(rng, y, float(U.min()))
    ref = both(K, y, U, alpha0)
    assert_same_steps(*ref)
    g = ref[0][2]
    kw = {"none": {}, "above": {"above": g - 1e-3 * abs(g) - 1e-6}, "below": {"below": g + 1e-3 * abs(g) + 1e-6},
          "both_loose": {"above": g + 1.0, "below": g - 1.0}}[stop]
    assert_same_steps(*both(K, y, U, alpha0, **kw))


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
def test_long_degenerate_solves_with_shrinking_and_restores_take_the_same_steps(kernel):
    """600 rows of 8 binary inputs (duplicate rows, a low-rank Gram: German's pattern), warm-started from a rough
    alpha of another gamma: 10^4-10^5 steps through many shrinking passes, restores and early-stop checks."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(600, 8)).astype(float)
    y = np.where(X[:, :3].sum(1) + rng.normal(size=600) > 1.5, 1.0, -1.0)
    start = smo_solve(make_kernel(kernel, gamma=0.1).gram(X), y, 10.0, tol=1e-1).alpha
    K, U = make_kernel(kernel, gamma=0.12).gram(X), np.full(600, 10.0)
    ref, new = both(K, y, U, start, tol=1e-7)
    assert ref[0] > 10_000
    assert_same_steps(ref, new)
    g = dual_objective(new[3], K, y)
    for kw in ({"above": g + 1e-4 * abs(g)}, {"above": g - 1e-4 * abs(g)}, {"below": g + 1e-4 * abs(g)}):
        assert_same_steps(*both(K, y, U, start, tol=1e-7, **kw))


def test_a_read_only_kernel_matrix_is_solved_as_a_writable_one():
    K, y = problem(5, 80, "poly2", duplicates=False)
    frozen = K.copy()
    frozen.setflags(write=False)
    a, b = smo_solve(K, y, 10.0), smo_solve(frozen, y, 10.0)
    assert a.iterations == b.iterations
    np.testing.assert_array_equal(a.alpha, b.alpha)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from([-np.inf, -1.0, -0.0, 0.0, 0.5, 2.0, np.inf]), max_size=40),
       n_cut=st.integers(0, 40))
def test_scans_are_the_left_to_right_loops(values, n_cut):
    """max, min and the last index of a value, with ties, signed zeros and infinities, over any prefix."""
    v = np.array(values, dtype=float)
    n = min(n_cut, len(v))
    best, i = -np.inf, -1
    for p in range(n):
        if v[p] >= best:
            best, i = v[p], p
    top = scan_max(v, n)
    assert top == best
    assert (last_index(v, n, top) if top > -np.inf else -1) == (i if best > -np.inf else -1)
    low, j = np.inf, -1
    for p in range(n):
        if v[p] <= low:
            low, j = v[p], p
    assert scan_min(v, n) == low
    if low < np.inf:
        assert last_index(v, n, low) == j
    assert last_index(v, n, 7.0) == -1


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from([-np.inf, -1.0, -0.0, 0.0, 0.5, 2.0, np.inf]),
                                 st.floats(-1e3, 1e3)), min_size=1, max_size=60),
       data=st.data())
def test_kth_smallest_is_the_sorted_arrays_entry(values, data):
    """Hoare's selection against a sort, with ties, signed zeros and infinities; it only reorders its array."""
    v = np.array(values, dtype=float)
    k = data.draw(st.integers(0, len(v) - 1))
    work = v.copy()
    assert kth_smallest(work, k) == np.sort(v)[k]
    np.testing.assert_array_equal(np.sort(work), np.sort(v))
