"""The alpha-subproblem g(beta) = min_alpha f(alpha, beta) (problem (2) with Q = Q(beta)).

Accuracy is checked against a *certified* reference: a tight SMO solve whose optimality is proved
independently by weak duality. For any dual-feasible alpha, w = sum_i alpha_i y_i phi(x_i) and any b
give a primal point, so

    f(alpha) - g(beta) <= P(w, b) - D(alpha) = v'Kv - e'alpha + C sum_i max(0, 1 - y_i((Kv)_i + b))

with v = alpha * y (the best b is one of the hinge breakpoints b = y_i - (Kv)_i). libsvm cannot serve
as the tight reference: it stores Q in single precision, and tol = 1e-12 runs to its iteration limit.
"""
import itertools
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minlp_fs.alpha import DEFAULT_TOL, AlphaSubproblem, Fit, libsvm_solve, smo_solve
from minlp_fs.datasets import load_dataset, make_synthetic
from minlp_fs.errors import InputError, NotConvergedError
from minlp_fs.instance import make_instance
from minlp_fs.kernels import make_kernel
from minlp_fs.objective import dual_objective, feasibility_violation

BACKENDS = ("smo", "libsvm")
REL = 1e-6


def duality_gap(alpha, K, y, C):
    """P(w(alpha), b*) - D(alpha) >= f(alpha) - g: an upper bound on alpha's suboptimality."""
    v = alpha * y
    Kv = K @ v
    b = y - Kv
    hinge = np.maximum(0.0, 1.0 - y[None, :] * (Kv[None, :] + b[:, None])).sum(axis=1).min()
    return float(v @ Kv - alpha.sum() + C * hinge)


def certified_reference(K, y, C):
    """(value, gap) of a tight SMO solve; the gap certifies value - g <= gap."""
    alpha = smo_solve(K, y, C, tol=1e-9).alpha
    return dual_objective(alpha, K, y), duality_gap(alpha, K, y, C)


DATA_CASES = [("wholesale", "poly2"), ("diabetes", "poly3"), ("bcw", "rbf"), ("cleveland", "poly5"),
              ("parkinsons", "rbf"), ("german", "poly3"), ("bcd", "poly2"), ("ionosphere", "rbf"),
              ("sonar", "poly5")]
SYNTHETIC_CASES = [("synthetic", k) for k in ("poly2", "poly3", "poly5", "rbf")]


@lru_cache(maxsize=None)
def _instance(dataset, kernel, data_dir):
    if dataset == "synthetic":
        d = make_synthetic(m=150, n_informative=3, n_noise=5, seed=4)
        return make_instance(d.X, d.y, 3, kernel=kernel)
    d = load_dataset(dataset, data_dir)
    return make_instance(d.X, d.y, min(4, d.X.shape[1]), kernel=kernel, m=150, seed=1)


def case_instance(request, dataset, kernel):
    """The case's instance: a paper dataset reduced to m = 150 rows, or synthetic data (m = 150)."""
    data_dir = None if dataset == "synthetic" else request.getfixturevalue("data_dir")
    return _instance(dataset, kernel, data_dir)


def case_subsets(inst, k=2):
    rng = np.random.default_rng(inst.n)
    return [tuple(sorted(rng.choice(inst.n, inst.B, replace=False).tolist())) for _ in range(k)]


CASES = [pytest.param(c, id="-".join(c)) for c in DATA_CASES + SYNTHETIC_CASES]


@pytest.mark.parametrize("case", CASES)
def test_default_tol_is_accurate_and_backends_agree(request, case):
    inst = case_instance(request, *case)
    oracles = {b: AlphaSubproblem(inst, backend=b) for b in BACKENDS}
    for subset in case_subsets(inst):
        K = inst.gram(subset)
        ref, gap = certified_reference(K, inst.y, inst.C)
        assert 0 <= gap <= 1e-8 * abs(ref)
        fits = {b: o.solve(subset) for b, o in oracles.items()}
        for b, fit in fits.items():
            assert feasibility_violation(fit.alpha, inst.y, inst.C) < 1e-8, b
            assert fit.value == dual_objective(fit.alpha, K, inst.y)
            assert fit.value >= ref - gap - 1e-9 * abs(ref), b  # never below the optimum
            assert fit.value == pytest.approx(ref, rel=REL), b
        assert fits["smo"].value == pytest.approx(fits["libsvm"].value, rel=REL)


@pytest.mark.parametrize("case", CASES[:3] + CASES[-4:])
def test_warm_start_gives_the_cold_value(request, case):
    inst = case_instance(request, *case)
    first, second = case_subsets(inst)
    cold = AlphaSubproblem(inst, cache=False)
    start = cold.solve(first).alpha
    kept = start.copy()
    warm = cold.solve(second, warm_start=start)
    np.testing.assert_array_equal(start, kept)  # the warm start is not modified
    assert warm.value == pytest.approx(cold.solve(second).value, rel=REL)
    assert feasibility_violation(warm.alpha, inst.y, inst.C) < 1e-8


def test_smo_warm_start_from_the_optimum_does_no_work(small_poly_instance):
    inst = small_poly_instance
    K = inst.gram([0, 1, 2])
    cold = smo_solve(K, inst.y, inst.C, tol=1e-8)
    alpha = cold.alpha
    assert cold.iterations > 0 and not cold.stopped_early
    again = smo_solve(K, inst.y, inst.C, alpha0=alpha, tol=1e-8)
    assert again.iterations == 0 and not again.stopped_early
    np.testing.assert_array_equal(again.alpha, alpha)


def test_smo_reports_an_early_stop_in_its_result(small_poly_instance):
    inst = small_poly_instance
    K = inst.gram([0, 1, 2])
    full = smo_solve(K, inst.y, inst.C, tol=1e-8)
    g = dual_objective(full.alpha, K, inst.y)
    assert g < 0 and not full.stopped_early and full.value == pytest.approx(g, rel=1e-9)
    early = smo_solve(K, inst.y, inst.C, tol=1e-8, below=0.5 * g)   # f(alpha) < g/2 proves g < g/2
    assert early.stopped_early and early.iterations < full.iterations
    assert early.value < 0.5 * g and early.value == pytest.approx(dual_objective(early.alpha, K, inst.y), rel=1e-9)
    # a warm start that proves the bound at once: an early stop after 0 steps (the old negative-count
    # encoding returned -0 == 0 here, which read as an exact solve)
    at_once = smo_solve(K, inst.y, inst.C, alpha0=full.alpha, tol=1e-12, below=0.5 * g)
    assert at_once.stopped_early and at_once.iterations == 0


def test_smo_falls_back_on_an_infeasible_start(small_rbf_instance):
    inst = small_rbf_instance
    K = inst.gram([0, 1, 2])
    cold = smo_solve(K, inst.y, inst.C).alpha
    bad = np.where(inst.y > 0, 1.0, 0.0)  # y'a != 0
    kept = bad.copy()
    alpha = smo_solve(K, inst.y, inst.C, alpha0=bad).alpha
    np.testing.assert_array_equal(alpha, cold)
    np.testing.assert_array_equal(bad, kept)
    # out of the box: projected; here the projection breaks y'a = 0 and the start is dropped as well
    over = np.full(inst.m, 2 * inst.C)
    np.testing.assert_array_equal(smo_solve(K, inst.y, inst.C, alpha0=over).alpha, cold)


def test_smo_projects_a_slightly_outside_start(small_poly_instance, random_feasible_alpha):
    inst = small_poly_instance
    K = inst.gram([3, 4, 5])
    a0 = random_feasible_alpha(np.random.default_rng(0), inst.y, inst.C)
    a0[a0 == 0] = -1e-13  # tiny negative noise, projected to 0 without breaking the equality
    alpha = smo_solve(K, inst.y, inst.C, alpha0=a0).alpha
    assert feasibility_violation(alpha, inst.y, inst.C) < 1e-8
    ref, _ = certified_reference(K, inst.y, inst.C)
    assert dual_objective(alpha, K, inst.y) == pytest.approx(ref, rel=REL)


def test_counters_and_cache(small_poly_instance):
    inst = small_poly_instance
    oracle = AlphaSubproblem(inst)
    a = oracle.solve([2, 0, 1])
    assert isinstance(a, Fit) and a.subset == (0, 1, 2)
    assert (oracle.n_solves, oracle.n_cache_hits) == (1, 0)
    assert oracle.solve((1, 2, 0)) is a
    assert (oracle.n_solves, oracle.n_cache_hits) == (1, 1)
    assert oracle.cached([0, 2, 1]) is a and oracle.cached([0, 1, 3]) is None
    b = oracle.solve(np.array([3, 4, 5]))
    assert (oracle.n_solves, oracle.n_cache_hits) == (2, 1)
    assert b.value == dual_objective(b.alpha, inst.gram([3, 4, 5]), inst.y)
    oracle.solve_gram(inst.gram([0, 1, 2]))
    assert (oracle.n_solves, oracle.n_cache_hits) == (3, 1)
    assert oracle.solve([0, 1, 2]) is a  # solve_gram does not fill the cache

    plain = AlphaSubproblem(inst, cache=False)
    c, d = plain.solve([0, 1, 2]), plain.solve([0, 1, 2])
    assert c is not d and c.value == d.value
    assert (plain.n_solves, plain.n_cache_hits) == (2, 0) and plain.cached([0, 1, 2]) is None


def test_given_gram_is_used(small_poly_instance):
    inst = small_poly_instance
    oracle = AlphaSubproblem(inst, cache=False)
    K = inst.gram([0, 1, 2])
    assert oracle.solve([0, 1, 2], K=K).value == oracle.solve([0, 1, 2]).value
    assert oracle.solve([0, 1, 2], K=2 * K).value == pytest.approx(
        dual_objective(smo_solve(2 * K, inst.y, inst.C, tol=DEFAULT_TOL).alpha, 2 * K, inst.y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_give_the_serial_values(small_rbf_instance, backend):
    inst = small_rbf_instance
    subsets = [(i, j, k) for i in range(6) for j in range(i + 1, 6) for k in range(j + 1, 6)]
    serial = [AlphaSubproblem(inst, backend=backend).solve(s).value for s in subsets]
    oracle = AlphaSubproblem(inst, backend=backend)
    with ThreadPoolExecutor(max_workers=4) as pool:
        fits = list(pool.map(oracle.solve, subsets + subsets))
    assert [f.value for f in fits[:len(subsets)]] == serial
    assert oracle.n_solves + oracle.n_cache_hits == 2 * len(subsets)
    assert oracle.n_solves >= len(subsets)


@pytest.mark.parametrize("kw, message", [(dict(backend="cvxopt"), "unknown alpha-subproblem backend 'cvxopt'"),
                                         (dict(backend="SMO"), "choose one of smo, libsvm"),
                                         (dict(tol=0.0), "tol must be a number in \\(0, 1\\)"),
                                         (dict(tol=-1e-6), "tol must be a number"),
                                         (dict(tol="1e-6"), "tol must be a number")])
def test_bad_oracle_arguments(small_poly_instance, kw, message):
    with pytest.raises(InputError, match=message):
        AlphaSubproblem(small_poly_instance, **kw)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(4, 24), C=st.floats(0.05, 200.0),
       kernel=st.sampled_from(["poly2", "poly3", "poly5", "rbf"]))
def test_random_small_problems(seed, m, C, kernel, random_feasible_alpha):
    """SMO is below every random feasible alpha and equals the certified optimum and libsvm."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=m) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    K = make_kernel(kernel, gamma=float(rng.uniform(0.05, 2.0))).gram(rng.uniform(size=(m, 3)))
    alpha = smo_solve(K, y, C, tol=DEFAULT_TOL).alpha
    value = dual_objective(alpha, K, y)
    assert feasibility_violation(alpha, y, C) < 1e-8 * max(C, 1.0)
    slack = 1e-9 * C * m
    for _ in range(20):
        a = random_feasible_alpha(rng, y, C)
        assert value <= dual_objective(a, K, y) + slack
    ref, gap = certified_reference(K, y, C)
    assert gap <= 1e-8 * C * m
    assert value == pytest.approx(ref, rel=REL, abs=slack)
    assert value >= ref - gap - slack
    lib = libsvm_solve(K, y, C, tol=DEFAULT_TOL)
    assert feasibility_violation(lib, y, C) < 1e-8 * max(C, 1.0)
    assert dual_objective(lib, K, y) == pytest.approx(value, rel=REL, abs=slack)


def test_an_overflowed_gram_is_an_error_not_a_value(small_poly_instance):
    """An instance that bypassed make_instance's range check: the oracle refuses its non-finite values."""
    from dataclasses import replace

    from minlp_fs.kernels import PolynomialKernel
    from minlp_fs.objective import NonFiniteError

    inst = replace(small_poly_instance, kernel=PolynomialKernel(degree=5, gamma=1e70))
    for backend in ("smo", "libsvm"):
        with pytest.raises(NonFiniteError):
            AlphaSubproblem(inst, backend=backend).solve((0, 1, 2))


def test_an_smo_solve_at_its_iteration_limit_is_never_taken_as_exact(small_poly_instance, monkeypatch):
    """SMO stopped by max_iter (not at the KKT tolerance) is solved again by libsvm, and counted."""
    from functools import partial

    from minlp_fs.alpha import oracle as oracle_module

    inst = small_poly_instance
    subset = tuple(range(inst.B))
    exact = AlphaSubproblem(inst, backend="libsvm").solve(subset).value
    capped = smo_solve(inst.gram(subset), inst.y, inst.C, max_iter=2)
    assert capped.hit_iteration_limit and not capped.stopped_early
    monkeypatch.setattr(oracle_module, "smo_solve", partial(oracle_module.smo_solve, max_iter=2))
    oracle = AlphaSubproblem(inst)
    fit = oracle.solve(subset)
    assert fit.exact and oracle.n_fallbacks == 1
    assert fit.value == pytest.approx(exact, rel=1e-6)
    assert not smo_solve(inst.gram(subset), inst.y, inst.C).hit_iteration_limit


def test_a_step_budget_returns_the_feasible_alpha_reached(small_poly_instance):
    """solve_gram(max_steps=k): at most k SMO steps, the alpha reached returned as it is (a feasible point, where
    f >= g: what bnb's capped universe bounds rest on), never solved again by libsvm."""
    inst = small_poly_instance
    K = inst.gram(tuple(range(inst.B)))
    exact = dual_objective(AlphaSubproblem(inst, backend="libsvm").solve_gram(K)[0], K, inst.y)
    oracle = AlphaSubproblem(inst)
    alpha, exact_flag = oracle.solve_gram(K, max_steps=3)
    assert exact_flag and oracle.n_fallbacks == 0 and oracle.n_solves == 1
    assert feasibility_violation(alpha, inst.y, inst.C) < 1e-9
    assert dual_objective(alpha, K, inst.y) > exact + 1e-6   # 3 steps from 0 are not the optimum, but above it
    full, _ = oracle.solve_gram(K, max_steps=10_000_000)
    assert dual_objective(full, K, inst.y) == pytest.approx(exact, rel=1e-6)


def test_an_svm_dual_no_solver_converges_on_is_a_clear_error_not_an_answer(small_poly_instance, monkeypatch):
    """Raw (unscaled) columns make kernels of 1e10 and more: libsvm then runs to its iteration limit, which is
    an error naming the fix (scale the features), never an alpha, and never unbounded (review of the eighth
    session: CardinalitySVC(scaling='none') on raw breast-cancer data did not return)."""
    from functools import partial

    from minlp_fs.alpha import oracle as oracle_module

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 4000, size=(80, 3))
    y = np.where(rng.uniform(size=80) < 0.4, 1.0, -1.0)
    K = (0.1 * X @ X.T + 1.0) ** 3
    with pytest.raises(NotConvergedError, match="did not converge within 1,000 libsvm iterations.*Scale the features"):
        libsvm_solve(K, y, 10.0, max_iter=1000)
    # the oracle's fallback after SMO's own limit reports it the same way
    inst = small_poly_instance
    monkeypatch.setattr(oracle_module, "smo_solve", partial(oracle_module.smo_solve, max_iter=2))
    monkeypatch.setattr(oracle_module, "libsvm_solve", partial(oracle_module.libsvm_solve, max_iter=2))
    with pytest.raises(NotConvergedError):
        AlphaSubproblem(inst).solve(tuple(range(inst.B)))


def kkt_violation(alpha, K, y, C):
    """m(alpha) - M(alpha): max over I_up of -y grad minus min over I_low of -y grad (grad = Q alpha - e)."""
    minus_yg = -y * (y * (K @ (alpha * y)) - 1.0)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return minus_yg[up].max() - minus_yg[low].min()


def duplicated_problem(seed, m, kernel):
    """Rows on a 3 x 3 grid of inputs (many duplicates, some with both labels; the last row repeats the first,
    so that even 12 rows have one) and their Gram."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(m, 2)).astype(float)
    y = np.where(rng.uniform(size=m) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X[-1], y[-1] = X[0], y[0]
    return X, y, make_kernel(kernel, gamma=float(rng.uniform(0.1, 1.0))).gram(X)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(12, 60), C=st.floats(0.05, 50.0),
       kernel=st.sampled_from(["poly2", "poly3", "rbf"]))
@example(seed=60, m=60, C=10.0, kernel="poly3")   # libsvm cycles here (rows of both labels on 9 inputs)
def test_smo_over_duplicate_groups_is_the_full_optimum(seed, m, C, kernel, random_feasible_alpha):
    """The dual over groups of duplicate rows (per-variable bounds n_g C) gives the certified optimum of the
    full dual and libsvm's value to 1e-6 (where libsvm converges: on some of these grids, rows of both labels on
    one input, it does not within its iteration limit), with the full problem's KKT violation below tol: cold,
    warm (with and without the start's gradient) and stopped early."""
    from minlp_fs.alpha.row_groups import duplicate_groups

    X, y, K = duplicated_problem(seed, m, kernel)
    groups = duplicate_groups(X, y)
    assert len(groups[0]) < m and len(groups[0]) == len({(*x, c) for x, c in zip(X, y)})
    assert all((X[groups[0][groups[1]]] == X).all(axis=1)) and (y[groups[0][groups[1]]] == y).all()
    assert [np.flatnonzero(groups[1] == g)[0] for g in range(len(groups[0]))] == groups[0].tolist()  # ascending
    ref, gap = certified_reference(K, y, C)
    slack = 1e-9 * C * m
    try:
        lib = dual_objective(libsvm_solve(K, y, C, tol=DEFAULT_TOL), K, y)
    except NotConvergedError:
        lib = None
    rng = np.random.default_rng(seed)
    a0 = random_feasible_alpha(rng, y, C)
    grad0 = y * (K @ (a0 * y)) - 1.0
    for kw in ({}, {"alpha0": a0}, {"alpha0": a0, "grad0": grad0}):
        res = smo_solve(K, y, C, tol=DEFAULT_TOL, groups=groups, **kw)
        alpha = res.alpha
        assert not res.stopped_early and not res.hit_iteration_limit
        assert feasibility_violation(alpha, y, C) < 1e-8 * max(C, 1.0)
        assert kkt_violation(alpha, K, y, C) < DEFAULT_TOL + 1e-9 * C * m
        value = dual_objective(alpha, K, y)
        assert value == pytest.approx(ref, rel=REL, abs=slack) and value >= ref - gap - slack
        assert lib is None or value == pytest.approx(lib, rel=REL, abs=slack)
        assert res.value == pytest.approx(value, rel=1e-9, abs=slack)
    if ref < -slack:  # an early stop over the groups proves g < ref / 2 like the full solve would
        early = smo_solve(K, y, C, tol=DEFAULT_TOL, groups=groups, below=0.5 * ref)
        # SMO's tracked f(alpha) is below the bound; recomputed, it may sit on it to rounding
        assert early.stopped_early and early.value < 0.5 * ref
        assert dual_objective(early.alpha, K, y) < 0.5 * ref + 1e-12 * abs(ref)


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "rbf"])
@pytest.mark.parametrize("C", [0.5, 2.0])
def test_grouped_solves_reach_both_bounds(kernel, C):
    """Cases with alphas at 0, at C and strictly between: the grouped solve, the plain one and libsvm agree."""
    from minlp_fs.alpha.row_groups import duplicate_groups

    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(80, 2)).astype(float)
    y = np.where(X.sum(axis=1) + rng.normal(0, 0.7, 80) >= 3, 1.0, -1.0)
    K = make_kernel(kernel, gamma=0.5).gram(X)
    groups = duplicate_groups(X, y)
    assert len(groups[0]) == 21
    alpha = smo_solve(K, y, C, tol=1e-9, groups=groups).alpha
    assert (alpha == 0).any() and (alpha == C).any() and ((alpha > 0) & (alpha < C)).any()
    assert kkt_violation(alpha, K, y, C) < 1e-9 + 1e-12 * C * len(y)
    value = dual_objective(alpha, K, y)
    assert value == pytest.approx(dual_objective(smo_solve(K, y, C, tol=1e-9).alpha, K, y), rel=1e-9)
    assert value == pytest.approx(dual_objective(libsvm_solve(K, y, C, tol=1e-7), K, y), rel=REL)


def test_oracle_solves_over_duplicates_only_when_they_pay(small_poly_instance):
    from dataclasses import replace

    inst = small_poly_instance
    oracle = AlphaSubproblem(inst)
    assert oracle.groups((0, 1, 2)) is None  # continuous features: no look at the rows
    X = np.round(inst.X * 0.3)  # few distinct values per feature: many duplicate rows
    coarse = replace(inst, X=X)
    oracle = AlphaSubproblem(coarse)
    first, label = oracle.groups((0, 1))
    assert len(first) <= 0.75 * inst.m and label.shape == (inst.m,)
    for subset in [(0, 1), (0, 1, 2), (2, 4)]:
        fit = oracle.solve(subset)
        exact = AlphaSubproblem(coarse, backend="libsvm").solve(subset)
        assert fit.value == pytest.approx(exact.value, rel=REL)
        assert fit.value == dual_objective(fit.alpha, coarse.gram(subset), coarse.y)


def sorted_groups(X, y):
    """The groups of duplicate rows by a sort of the rows (np.unique): label[i] numbers the distinct rows (x_i, y_i),
    -0.0 as 0.0, in the order of their first row; first[g] the first row of group g (the reference)."""
    Z = np.ascontiguousarray(np.column_stack([X, y]), dtype=np.float64) + 0.0
    rows = Z.view(np.dtype((np.void, Z.dtype.itemsize * Z.shape[1]))).ravel()
    _, first, label = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[label.ravel()]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 90), n=st.integers(1, 6), levels=st.integers(1, 4),
       share=st.floats(0.0, 1.2), colliding=st.booleans())
def test_hashed_row_groups_are_the_sorted_ones(seed, m, n, levels, share, colliding):
    """RowKeys.groups(S, cap) is the sort's (first, label) of the rows (x_S, y) when they have at most cap distinct
    values, else None, with -0.0 and 0.0 alike (duplicate_groups: with no cap); and _more_distinct_rows_than, the
    enumeration walk's shortcut, is True exactly when there are more than cap (no hash collision here)."""
    from minlp_fs.alpha.row_groups import RowKeys, _more_distinct_rows_than, duplicate_groups

    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(m, n)).astype(float)
    X[rng.random((m, n)) < 0.2] *= -1.0   # -0.0 among the zeros
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    S = sorted(rng.choice(n, int(rng.integers(1, n + 1)), replace=False).tolist())
    first, label = sorted_groups(X[:, S], y)
    distinct = len(first)
    keys = RowKeys(X, y)
    cols = np.asarray(S, dtype=np.int64)
    for cap in (share * m, distinct - 1, distinct, 0, np.inf):
        got = keys.groups(S, cap)
        if distinct > cap:
            assert got is None
        else:
            assert np.array_equal(got[0], first) and np.array_equal(got[1], label)
        assert _more_distinct_rows_than(keys.bits, keys.labels, cols, 0, cols.size, float(cap), keys.table()) == (
            distinct > cap)
    whole = duplicate_groups(X[:, S], y)
    assert np.array_equal(whole[0], first) and np.array_equal(whole[1], label)


def test_row_groups_compare_rows_not_hashes(monkeypatch):
    """Rows whose hashes all collide (the row hash patched to a constant in the pass's Python body) are still told
    apart by their bits: the groups are the sort's, and the cap still stops the pass."""
    import minlp_fs.alpha.row_groups as rg

    rng = np.random.default_rng(7)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    keys = rg.RowKeys(X, y)
    cols = np.arange(2, dtype=np.int64)
    monkeypatch.setattr(rg, "_row_hash", lambda *args: np.uint64(1))
    ref_first, ref_label = sorted_groups(X, y)

    def run(cap):
        hashes, owner = keys.table(), np.empty(keys.table().size, dtype=np.int64)
        first, label = np.empty(40, dtype=np.int64), np.empty(40, dtype=np.int64)
        return rg._row_groups.py_func(keys.bits, keys.labels, cols, cap, hashes, owner, first, label), first, label

    count, first, label = run(np.inf)
    assert 1 < count == len(ref_first) < 40
    assert np.array_equal(first[:count], ref_first) and np.array_equal(label, ref_label)
    assert run(float(count - 1))[0] == -1


def test_oracle_groups_are_the_sorted_ones():
    """On data whose subsets straddle the GROUP_SHARE cap, the oracle's answer is the sort's groups or None
    exactly as the sort's count decides."""
    from minlp_fs.alpha.smo import GROUP_SHARE

    d = make_synthetic(m=80, n_informative=3, n_noise=3, seed=4)
    X = np.floor(d.X * 12) / 12   # 2 features: 8 to 110 distinct rows of 80 (cap 60)
    X[:, 0] = np.floor(d.X[:, 0] * 2)
    inst = make_instance(X, d.y, 2, "poly2")
    oracle = AlphaSubproblem(inst)
    seen = set()
    for S in itertools.combinations(range(inst.n), 2):
        got = oracle.groups(S)
        first, label = sorted_groups(inst.X[:, list(S)], inst.y)
        if len(first) <= GROUP_SHARE * inst.m:
            assert got is not None and np.array_equal(got[0], first) and np.array_equal(got[1], label)
        else:
            assert got is None
        seen.add(got is None)
    assert seen == {True, False}


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_grouped_early_stop_at_the_start_matches_the_full_problem(kernel):
    """A warm start that already proves the bound: the grouped solve stops before any step (no gather),
    with f(alpha) of the start, as the plain solve does; a bound it cannot prove at once is left to SMO."""
    from minlp_fs.alpha.row_groups import duplicate_groups

    X, y, K = duplicated_problem(5, 40, kernel)
    C = 2.0
    groups = duplicate_groups(X, y)
    opt = smo_solve(K, y, C, tol=1e-9)
    g = dual_objective(opt.alpha, K, y)
    grad0 = y * (K @ (opt.alpha * y)) - 1.0
    for kw in ({"below": 0.5 * g}, {"above": 1.5 * g}):
        for extra in ({}, {"grad0": grad0}):
            plain = smo_solve(K, y, C, alpha0=opt.alpha, tol=1e-12, **kw, **extra)
            grouped = smo_solve(K, y, C, alpha0=opt.alpha, tol=1e-12, groups=groups, **kw, **extra)
            assert plain.stopped_early and grouped.stopped_early and grouped.iterations == plain.iterations == 0
            np.testing.assert_array_equal(grouped.alpha, opt.alpha)
            assert grouped.value == pytest.approx(plain.value, rel=1e-12)
    later = smo_solve(K, y, C, tol=DEFAULT_TOL, groups=groups, below=0.5 * g)
    assert later.stopped_early and later.iterations > 0 and later.value < 0.5 * g



@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("newton", [False, True])
def test_an_early_stop_that_does_not_fire_leaves_smos_path_unchanged(kernel, grouped, newton):
    """Armed with bounds it cannot prove (above >= g, below <= g), SMO checks them all along (primal bounds
    with shrunk indices, every max(m, steps / 4) steps) yet takes the steps of the unarmed solve and returns
    its alpha bit for bit, over groups of duplicate rows too, with and without Newton steps on the face: ACSO*'s
    and LS's early stops then change no alpha that a method goes on with (degenerate duals have many optimal
    alphas)."""
    from minlp_fs.alpha.row_groups import duplicate_groups

    if grouped:
        X, y, K = duplicated_problem(3, 400, kernel)
        groups = duplicate_groups(X, y)
    else:
        rng = np.random.default_rng(3)
        X = rng.normal(size=(400, 6))
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=400) > 0, 1.0, -1.0)
        K, groups = make_kernel(kernel, gamma=0.5).gram(X), None
    C = 50.0
    start = smo_solve(K, y, C, tol=1e-3).alpha
    swap = make_kernel(kernel, gamma=0.6).gram(X) if not grouped else K * 1.1
    plain = smo_solve(swap, y, C, alpha0=start, tol=1e-7, groups=groups, newton=newton)
    g = dual_objective(plain.alpha, swap, y)
    smo_alone = plain if not newton else smo_solve(swap, y, C, alpha0=start, tol=1e-7, groups=groups, newton=False)
    assert smo_alone.iterations > 2 * len(y)
    for kw in ({"above": g + 1e-3 * abs(g)}, {"below": g - 1e-3 * abs(g)}, {"above": g + 1.0, "below": g - 1.0}):
        armed = smo_solve(swap, y, C, alpha0=start, tol=1e-7, groups=groups, newton=newton, **kw)
        assert not armed.stopped_early and armed.iterations == plain.iterations, kw
        np.testing.assert_array_equal(armed.alpha, plain.alpha)


def test_a_value_outside_the_range_of_every_optimum_is_an_error_and_an_absurd_C_is_refused():
    """g(S) lies in [-2C min(|I+|, |I-|), 0] (Remark 1). At C = 1e10 on 50 rows of BCD the solves lose their
    precision and returned f = +1.2e12 as an exact value (review of the eighth session): now a
    NotConvergedError naming C. At C = 1e300 the gradient's rounding exceeds its constant part: refused when
    the instance is made, instead of SMO running to its iteration limit."""
    from minlp_fs.errors import NotConvergedError
    bcd = load_dataset("bcd")
    inst = make_instance(bcd.X, bcd.y, B=2, C=1e10, m=50)
    with pytest.raises(NotConvergedError, match=r"outside \[-3\.8e\+11, 0\].*lower C"):
        AlphaSubproblem(inst).solve((5, 19))
    fit = AlphaSubproblem(make_instance(bcd.X, bcd.y, B=2, C=10.0, m=50)).solve((5, 19))
    assert inst.trivial_bound / 1e9 <= fit.value <= 0
    with pytest.raises(InputError, match="C=1e\\+300 is too large for double precision"):
        make_instance(bcd.X, bcd.y, B=2, C=1e300, m=50)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_better_than_stops_once_g_is_proven_better_and_says_which_stop(small_poly_instance, sense):
    """solve_gram(better_than=v): the solve also stops once duality proves g better than v (paper sense: the tracked
    f(alpha) < v; fit sense: -P(alpha) > v), and stats["value"] (what bnb's tightening tells the two stops apart by)
    is f at the alpha returned; a v beyond the optimum changes nothing. stats is filled for libsvm's alpha too."""
    from minlp_fs.objective import primal_point

    base = small_poly_instance
    inst = make_instance(base.X, base.y, B=base.B, kernel="poly2", sense=sense)
    K = inst.gram(tuple(range(inst.B)))
    oracle = AlphaSubproblem(inst, tol=1e-9)
    g = dual_objective(oracle.solve_gram(K)[0], K, inst.y)
    start = np.zeros(inst.m)
    f0 = dual_objective(start, K, inst.y)   # 0 at alpha = 0, far above g
    v = g + 0.5 * (f0 - g) if sense == "paper" else g - 0.5 * abs(g)   # a value g is better than
    stats = {}
    alpha, exact = oracle.solve_gram(K, start, better_than=v, stats=stats)
    assert not exact and feasibility_violation(alpha, inst.y, inst.C) < 1e-9
    assert stats["value"] == pytest.approx(dual_objective(alpha, K, inst.y), rel=1e-9, abs=1e-9)
    if sense == "paper":
        assert stats["value"] < v
    else:
        assert -primal_point(alpha, inst.y, inst.C, K @ (alpha * inst.y)).value > v
    beyond = g - 1.0 if sense == "paper" else g + 1.0   # g is not better than this: solved to the tolerance
    alpha, exact = oracle.solve_gram(K, start, better_than=beyond)
    assert exact and dual_objective(alpha, K, inst.y) == pytest.approx(g, rel=1e-7)
    stats = {}
    alpha, _ = AlphaSubproblem(inst, backend="libsvm").solve_gram(K, stats=stats)
    assert stats["value"] == dual_objective(alpha, K, inst.y)
