"""The degree-share bound of minlp_fs.exact.shares against exact values of every subset (enumeration at a
fixed alpha and SVM solves), on small random instances drawn by hypothesis, polynomial kernels, fit sense."""
import itertools
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.exact import tree
from minlp_fs.exact.bounds import FixedAlphaQuadratic, pair_bounds, relaxed_gram
from minlp_fs.exact.shares import FixedAlphaShares, _pair_quads, _Powers, share_bounds
from minlp_fs.instance import make_instance

from bnb_helpers import random_instance, random_node, value_table

POLY = ("poly2", "poly3", "poly5")
seeds = st.integers(0, 10_000)


def tol(v):
    return 1e-6 * max(1.0, abs(v))


def some_alpha(which, inst, fixed, free, need, rng, random_feasible_alpha):
    if which == "random":
        return random_feasible_alpha(rng, inst.y, inst.C)
    if which == "relaxed":
        return AlphaSubproblem(inst).solve_gram(relaxed_gram(inst, fixed, free, need))[0]
    return AlphaSubproblem(inst).solve(tree.universe(fixed, free)).alpha


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_shares_add_up_to_the_value_of_every_subset(kernel, seed, data, random_feasible_alpha):
    """Euler: f(alpha, I) + sum_{j in R} e_j(R) = f(alpha, I u R) for every R (shares computed with F = R), and the
    shares of a larger F are larger feature by feature (the allocation is monotone); f(alpha, I + j) in closed form."""
    n = 6
    inst = random_instance(seed, 20, n, 3, kernel, "fit")
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    fixed, free, _ = random_node(data, n, 3)
    whole = FixedAlphaShares(inst, alpha, fixed, free)
    assert whole.f_fixed == pytest.approx(inst.objective(alpha, fixed), rel=1e-9, abs=1e-9)
    for j, alone in zip(free, whole.alone):
        f_take = whole.f_fixed + alone
        assert f_take == pytest.approx(inst.objective(alpha, tree.probe_set(fixed, j)), rel=1e-9, abs=1e-9)
    single = FixedAlphaShares(inst, alpha, fixed, free, pairs=False)   # no pair terms: enough for need = 1
    assert single.Q is None
    assert list(single.shares(1).values()) == list(whole.alone) == list(whole.shares(1).values())   # e_j({j})
    order = data.draw(st.permutations(free))
    assert share_bounds(single, order, 1) == pytest.approx(share_bounds(whole, order, 1), rel=1e-12, abs=1e-12)
    if len(free) > 1:
        with pytest.raises(ValueError, match="need must be 1"):
            share_bounds(single, order, 2)
    for size in range(1, len(free) + 1):
        for R in itertools.combinations(free, size):
            part = FixedAlphaShares(inst, alpha, fixed, R)
            e_R = part.rest + part.Q.sum(axis=1)
            value = inst.objective(alpha, tree.universe(fixed, R))
            assert part.f_fixed + e_R.sum() == pytest.approx(value, rel=1e-9, abs=1e-9)
            e_F = whole.rest + whole.Q.sum(axis=1)
            assert np.all(e_R <= e_F[whole.index(R)] + 1e-9 * np.maximum(1.0, np.abs(e_F[whole.index(R)])))
            assert np.all(part.Q >= 0)


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_partner_shares_bound_every_subset_share(kernel, seed, data, random_feasible_alpha):
    """shares(need)[j] (rest_j + Q_jj + the need - 1 largest Q_jk over F) >= e_j(R) for every R of size need
    holding j."""
    n, B = 7, 4
    inst = random_instance(seed, 20, n, B, kernel, "fit")
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    fixed, free, need = random_node(data, n, B)
    bound = FixedAlphaShares(inst, alpha, fixed, free).shares(need)
    for R in itertools.combinations(free, need):
        part = FixedAlphaShares(inst, alpha, fixed, R)
        for j, e in zip(R, part.rest + part.Q.sum(axis=1)):
            assert e <= bound[j] + tol(bound[j])


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_share_bounds_hold_for_every_child_subset(kernel, seed, data, random_feasible_alpha):
    """At a random feasible alpha, the relaxed alpha or the universe's, in any order: every S of child t has
    g(S) <= f(alpha, S) <= the child's share bound, and that bound is at most f(alpha, U); with ``enough``, a child
    keeps a looser bound (no exact head) only where the head would not change whether it is at most ``enough``."""
    n, B = 7, 4
    inst = random_instance(seed, 24, n, B, kernel, "fit")
    g = value_table(inst, sizes=[B])
    fixed, free, need = random_node(data, n, B)
    which = data.draw(st.sampled_from(["random", "relaxed", "universe"]))
    alpha = some_alpha(which, inst, fixed, free, need, np.random.default_rng(seed), random_feasible_alpha)
    order = data.draw(st.permutations(free))
    shares = FixedAlphaShares(inst, alpha, fixed, free)
    full = share_bounds(shares, order, need)
    enough = data.draw(st.floats(min(full) - 1.0, max(full) + 1.0))
    bounds = share_bounds(shares, order, need, enough=enough)
    for bound, tight in zip(bounds, full):   # the head's terms of fewer rows may round otherwise in the last bits
        assert bound == pytest.approx(tight, rel=1e-12, abs=1e-12) or (
            tight < bound and (bound <= enough) == (tight <= enough))
    f_all = inst.objective(alpha, tree.universe(fixed, free))
    for (t, f_t, F_t), bound in zip(tree.split(fixed, free, need, order), bounds):
        for R in itertools.combinations(F_t, need - 1):
            S = tuple(sorted((*f_t, *R)))
            assert inst.objective(alpha, S) <= bound + tol(bound)
            assert g[S] <= bound + tol(bound)
        assert bound <= f_all + tol(f_all)


@pytest.mark.parametrize("kernel", ("poly3", "poly5"))
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_a_head_is_computed_only_where_it_could_reach_enough(kernel, seed, data, random_feasible_alpha):
    """The headed bound is at least f(alpha, I + j) + the partner items' sums (P_jk >= 0): a child whose floor is above
    ``enough`` gets no head (``head`` is asked for the other rows only), and every row asked for could reach it."""
    n, B = 8, 4
    inst = random_instance(seed, 24, n, B, kernel, "fit")
    fixed, free, need = random_node(data, n, B)
    if need < 2:
        return
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    order = list(data.draw(st.permutations(free)))
    shares = FixedAlphaShares(inst, alpha, fixed, free)
    full = share_bounds(shares, order, need)
    asked = []
    real_head = shares.head
    shares.head = lambda order_, rows: asked.extend(rows) or real_head(order_, rows)
    assert share_bounds(shares, order, need, enough=-np.inf) == share_bounds(shares, order, need, enough=np.inf)
    assert asked == []                         # no head reaches -inf; +inf: every partner bound is already below it
    enough = data.draw(st.floats(min(full) - 1.0, max(full) + 1.0))
    bounds = share_bounds(shares, order, need, enough=enough)
    for t in asked:                            # a row asked for keeps its headed bound, the tight one
        assert bounds[t] == pytest.approx(full[t], rel=1e-12, abs=1e-12)
    for t in set(range(len(bounds))) - set(asked):
        assert (bounds[t] <= enough) == (full[t] <= enough + 1e-12 * max(1.0, abs(enough)))


@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_degree2_share_bounds_are_the_pair_bounds(seed, data, random_feasible_alpha):
    """For degree 2 the share bound is the (proven, exact-quadratic) pair bound, term by term."""
    n, B = 8, 4
    inst = random_instance(seed, 20, n, B, "poly2", "fit")
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    fixed, free, need = random_node(data, n, B)
    order = list(data.draw(st.permutations(free)))
    shares = share_bounds(FixedAlphaShares(inst, alpha, fixed, free), order, need)
    pairs = pair_bounds(FixedAlphaQuadratic(inst, alpha, tree.universe(fixed, free)), fixed, order, need)
    assert np.allclose(shares, pairs, rtol=1e-9, atol=1e-9)


def test_multiclass_shares_add_up_over_the_machines():
    """A multiclass instance: f sums over the one-vs-rest machines, so do f(alpha, I) and the shares."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = np.array([0, 1, 2] * 10)
    inst = make_instance(X, y, B=2, kernel="poly3")
    fixed, free = (2,), (0, 1, 3, 4)
    alpha = AlphaSubproblem(inst).solve(tree.universe(fixed, free)).alpha
    shares = FixedAlphaShares(inst, alpha, fixed, free)
    assert shares.f_fixed == pytest.approx(inst.objective(alpha, fixed), rel=1e-9)
    assert shares.f_fixed + shares.rest.sum() + shares.Q.sum() == pytest.approx(
        inst.objective(alpha, tree.universe(fixed, free)), rel=1e-9)


@given(seed=seeds, m=st.sampled_from([3, 40, 200]), p=st.integers(0, 5), n_fixed=st.integers(0, 3),
       built=st.booleans())
@settings(max_examples=30, deadline=None)
def test_power_quads_by_the_symmetric_tensor_or_the_matrix_equal_the_definition(seed, m, p, n_fixed, built):
    """[y' a^p y] over Y's columns, a = c + gamma X_I X_I': by the symmetric tensor power of the rows (few monomials
    against m) or by a^p (already built, or many monomials), against the definition."""
    rng = np.random.default_rng(seed)
    XI, Y = rng.normal(size=(m, n_fixed)), rng.normal(size=(m, 3))
    c, gamma = 0.7, 0.3
    expected = np.einsum("ij,ij->j", Y, (c + gamma * XI @ XI.T) ** p @ Y)
    powers = _Powers(XI, rng.normal(size=(m, 2)), c, gamma)
    if built:
        powers.a(p)
    assert np.allclose(powers.quads(p, Y), expected, rtol=1e-9, atol=1e-9)


@given(seed=seeds, m=st.sampled_from([3, 40, 200]), d=st.sampled_from([2, 3, 5]), n_fixed=st.integers(0, 3))
@settings(max_examples=20, deadline=None)
def test_pair_quads_by_factors_or_by_the_matrix_equal_the_definition(seed, m, d, n_fixed):
    """Q's terms (v o x_j o x_k)' W (v o x_j o x_k), W = 1/2 sum_{t >= 2} binom(d, t) gamma^t base^(d-t) z^(t-2):
    by the Kronecker factors (few columns) or by W itself (many, all pairs or some), against the definition."""
    rng = np.random.default_rng(seed)
    Xf, XI, v = rng.normal(size=(m, 4)), rng.normal(size=(m, n_fixed)), rng.normal(size=m)
    c, gamma = 0.7, 0.3
    base, z = c + gamma * XI @ XI.T, Xf @ Xf.T
    terms = [(0.5 * comb(d, t) * gamma ** t, d - t, t - 2) for t in range(2, d + 1)]
    W = sum(s * base ** p * z ** q for s, p, q in terms)
    Xv = Xf * v[:, None]
    expected = np.array([[(Xv[:, j] * Xf[:, k]) @ W @ (Xv[:, j] * Xf[:, k]) for k in range(4)] for j in range(4)])
    assert np.allclose(_pair_quads(Xv, _Powers(XI, Xf, c, gamma), terms), expected, rtol=1e-9, atol=1e-9)
    for pairs in ((np.array([0, 3, 1, 2]), np.array([2, 3, 0, 2])),    # only some (j, k)
                  (np.array([3, 1, 3]), np.array([0, 2, 3]))):         # of some j only
        assert np.allclose(_pair_quads(Xv, _Powers(XI, Xf, c, gamma), terms, pairs), expected[pairs],
                           rtol=1e-9, atol=1e-9)
    const = [(0.25, 0, 0)]                             # W = 1/4 1 1' (the scalar path): 1/4 (1'y)^2
    by_const = np.array([[0.25 * (Xv[:, j] * Xf[:, k]).sum() ** 2 for k in range(4)] for j in range(4)])
    assert np.allclose(_pair_quads(Xv, _Powers(XI, Xf, c, gamma), const), by_const, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kernel", POLY)
@given(seed=seeds, data=st.data())
@settings(max_examples=10, deadline=None)
def test_head_pairs_bound_the_cross_monomials(kernel, seed, data, random_feasible_alpha):
    """e_j(R + j) <= f(alpha, I + j) - f(alpha, I) + sum_{k in R} (Q_jk + P_jk) (module docstring, exact head) for
    every R, with the shares of R + j computed exactly (F = R + j)."""
    n, B = 7, 4
    inst = random_instance(seed, 20, n, B, kernel, "fit")
    alpha = random_feasible_alpha(np.random.default_rng(seed), inst.y, inst.C)
    fixed, free, need = random_node(data, n, B)
    whole = FixedAlphaShares(inst, alpha, fixed, free)
    for j in free:
        others = [k for k in free if k != j]
        P = whole.head([j, *others], [0])[0, 1:]      # P_jk, k in others
        for R in itertools.combinations(range(len(others)), need - 1):
            part = FixedAlphaShares(inst, alpha, fixed, (j, *(others[k] for k in R)))
            e_j = part.rest[0] + part.Q[0].sum()
            i, ks = whole.index([j])[0], whole.index([others[k] for k in R])
            bound = whole.alone[i] + whole.Q[i, ks].sum() + P[list(R)].sum()
            assert e_j <= bound + tol(bound)


@pytest.mark.parametrize("degree", (2, 3, 5))
@pytest.mark.parametrize("scaling, coef0", [("standard", 1.0), ("none", 0.0), ("minmax", 0.0)])
@given(seed=seeds, data=st.data())
@settings(max_examples=6, deadline=None)
def test_share_bounds_hold_on_signed_data_and_without_a_constant(degree, scaling, coef0, seed, data,
                                                                 random_feasible_alpha):
    """The coefficients of f(alpha, .) are squares whatever the signs of x, and c = 0 is allowed (c >= 0): the
    child bounds hold with z-scored or unscaled signed data and with c = 0, at a random feasible alpha."""
    from minlp_fs.kernels import PolynomialKernel

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 6))
    y = np.where(X[:, 0] + rng.normal(size=20) > 0, 1, -1)
    y[:2] = (1, -1)
    inst = make_instance(X, y, B=3, kernel=PolynomialKernel(degree=degree, gamma=0.5, coef0=coef0),
                         scaling=scaling, sense="fit")
    fixed, free, need = random_node(data, 6, 3)
    alpha = random_feasible_alpha(rng, inst.y, inst.C)
    order = data.draw(st.permutations(free))
    bounds = share_bounds(FixedAlphaShares(inst, alpha, fixed, free), order, need)
    for (t, f_t, F_t), bound in zip(tree.split(fixed, free, need, order), bounds):
        for R in itertools.combinations(F_t, need - 1):
            value = inst.objective(alpha, tuple(sorted((*f_t, *R))))
            assert value <= bound + tol(bound)
