"""Every bound of minlp_fs.exact.bounds against exact values of every subset (enumeration), on small
random instances drawn by hypothesis, for every kernel and both senses."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.alpha.smo import smo_solve
from minlp_fs.exact import tree
from minlp_fs.exact.bounds import (FixedAlphaQuadratic, fit_child_bounds, fit_order, monotone, primal_lower_bound,
                                   probe_bounds, relaxed_gram)
from minlp_fs.heuristics.screening import FixedAlpha

from bnb_helpers import KERNELS, random_instance, value_table

POLY = ("poly2", "poly3", "poly5")
seeds = st.integers(0, 10_000)


def tol(v):
    return 1e-6 * max(1.0, abs(v))


@pytest.mark.parametrize("kernel", KERNELS)
def test_monotone_exactly_for_polynomial_kernels(kernel):
    inst = random_instance(0, 20, 4, 2, kernel, "paper")
    assert monotone(inst.kernel) == kernel.startswith("poly")


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds)
@settings(max_examples=8, deadline=None)
def test_g_is_monotone_for_polynomial_kernels(kernel, seed):
    inst = random_instance(seed, 24, 5, 2, kernel, "paper")
    g = value_table(inst)
    for S in g:
        for j in set(range(inst.n)) - set(S):
            T = tuple(sorted((*S, j)))
            assert g[S] <= g[T] + tol(g[T])


def test_gaussian_kernel_is_not_monotone():
    """Why rbf gets no probe bound: a random instance where adding a feature lowers g."""
    found = False
    for seed in range(20):
        g = value_table(random_instance(seed, 24, 4, 2, "rbf", "paper"))
        found |= any(g[S] > g[tuple(sorted((*S, j)))] + 1e-3 for S in g for j in range(4)
                     if j not in S and len(S) < 4)
        if found:
            break
    assert found


@pytest.mark.parametrize("kernel", KERNELS)
@given(seed=seeds)
@settings(max_examples=5, deadline=None)
def test_trivial_bound_below_every_subset(kernel, seed):
    inst = random_instance(seed, 20, 4, 2, kernel, "paper")
    assert all(v >= inst.trivial_bound - tol(v) for v in value_table(inst).values())


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds, data=st.data())
@settings(max_examples=8, deadline=None)
def test_probe_bound_holds_for_every_child_subset(kernel, seed, data):
    """Paper sense (where bnb uses it): probe scores g(I + j), any order; each child's subsets score
    >= its probe bound."""
    n, B = 6, 3
    inst = random_instance(seed, 24, n, B, kernel, "paper")
    g = value_table(inst)
    k = data.draw(st.integers(0, B - 1))
    fixed = tuple(sorted(data.draw(st.permutations(range(n)))[:k]))
    free = tuple(j for j in range(n) if j not in fixed)
    need = B - k
    order = data.draw(st.permutations(free))
    scores = {j: inst.score(g[tree.probe_set(fixed, j)]) for j in free}
    inherited = inst.trivial_bound
    bounds = probe_bounds(scores, order, need, inherited)
    assert len(bounds) == len(free) - need + 1
    for t, f_t, F_t in tree.split(fixed, free, need, order):
        bound = bounds[t]
        # the definition: max(inherited, scores[order[t]], the need-th smallest score over order[t:])
        assert bound == max(inherited, scores[order[t]], sorted(scores[j] for j in order[t:])[need - 1])
        for R in itertools.combinations(F_t, need - 1):
            S = tuple(sorted((*f_t, *R)))
            assert inst.score(g[S]) >= bound - tol(bound)


@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_degree2_fixed_alpha_value_is_the_quadratic_in_the_indicator(seed, data, random_feasible_alpha):
    """FixedAlphaQuadratic (closed form, no kernel matrix) equals f(alpha, S) of the one objective, and its
    gains are f(alpha, I + j) - f(alpha, I)."""
    n = 7
    inst = random_instance(seed, 24, n, 3, "poly2", "fit")
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    perm = data.draw(st.permutations(range(n)))
    k = data.draw(st.integers(0, n - 1))
    universe = tuple(sorted(perm[:data.draw(st.integers(k + 1, n))]))
    fixed, free = tuple(sorted(perm[:k])), tuple(j for j in universe if j not in perm[:k])
    quad = FixedAlphaQuadratic(inst, alpha, universe)
    for S in (fixed, universe, tuple(sorted((*fixed, free[0])))):
        assert quad.value(S) == pytest.approx(inst.objective(alpha, S), rel=1e-9, abs=1e-9)
    fa = FixedAlpha(inst, alpha)
    expected = [fa.value(tuple(sorted((*fixed, j)))) - fa.value(fixed) for j in free]
    assert np.allclose(quad.gains(fixed, free), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kernel", KERNELS)
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_fit_child_bounds_hold_for_every_child_subset(kernel, seed, data, random_feasible_alpha):
    """Fit sense, the bounds the search and the verifier use (pair bound for degree 2, degree shares for other
    degrees, chords for the Gaussian kernel):
    at a random feasible alpha, the relaxed alpha or the universe's, every S of child t has
    -g(S) >= -f(alpha, S) >= the child's score bound, in the search's order or any other."""
    n, B = 7, 4
    inst = random_instance(seed, 24, n, B, kernel, "fit")
    g = value_table(inst, sizes=[B])
    k = data.draw(st.integers(0, B - 1))
    perm = data.draw(st.permutations(range(n)))
    fixed, free, need = tuple(sorted(perm[:k])), tuple(sorted(perm[k:])), B - k
    which = data.draw(st.sampled_from(["random", "relaxed", "universe"]))
    if which == "random":
        alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    elif which == "relaxed":
        alpha = AlphaSubproblem(inst).solve_gram(relaxed_gram(inst, fixed, free, need))[0]
    else:
        alpha = AlphaSubproblem(inst).solve(tree.universe(fixed, free)).alpha
    order = fit_order(inst, alpha, fixed, free, need) if data.draw(st.booleans()) else data.draw(st.permutations(free))
    assert sorted(order) == list(free)
    bounds = fit_child_bounds(inst, alpha, fixed, free, need, order)
    assert len(bounds) == len(free) - need + 1
    for (t, f_t, F_t), bound in zip(tree.split(fixed, free, need, order), bounds):
        for R in itertools.combinations(F_t, need - 1):
            S = tuple(sorted((*f_t, *R)))
            if kernel != "rbf":   # the chords bound g over the scaled alphas s alpha (f itself: test_chords.py)
                assert -inst.objective(alpha, S) >= bound - tol(bound)
            assert inst.score(g[S]) >= bound - tol(bound)


@pytest.mark.parametrize("kernel", KERNELS)
@given(seed=seeds, tol_exp=st.integers(1, 5))
@settings(max_examples=8, deadline=None)
def test_primal_lower_bound_is_below_g_at_any_alpha(kernel, seed, tol_exp, random_feasible_alpha):
    """Weak duality: -P(alpha) <= g for a random feasible alpha and for SMO at a loose tolerance (the
    paper-sense probes of inner nodes); at the optimum it meets g."""
    inst = random_instance(seed, 30, 4, 2, kernel, "paper")
    S = (0, 2)
    K = inst.gram(S)
    g = AlphaSubproblem(inst, tol=1e-9).solve(S).value
    rough = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    loose = smo_solve(K, inst.y, inst.C, tol=10.0 ** -tol_exp).alpha
    for alpha in (rough, loose):
        assert primal_lower_bound(K, inst.y, inst.C, alpha) <= g + tol(g)
    assert primal_lower_bound(K, inst.y, inst.C, AlphaSubproblem(inst, tol=1e-9).solve(S).alpha) == \
        pytest.approx(g, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("kernel", KERNELS)
def test_smo_stop_before_any_step_is_reported_as_pruned(kernel):
    """A warm start already proving the subset worse stops at step 0, reported as stopped early (not exact)."""
    inst = random_instance(3, 30, 4, 2, kernel, "fit")
    oracle = AlphaSubproblem(inst)
    good = oracle.solve((0, 1))
    K = inst.gram((2, 3))
    f0 = inst.objective(good.alpha, (2, 3))
    smo = smo_solve(K, inst.y, inst.C, alpha0=good.alpha, below=f0 + 1.0)
    assert smo.stopped_early and smo.iterations == 0
    alpha, exact = oracle.solve_gram(K, good.alpha, worse_than=f0 + 10.0)
    assert not exact
