"""The Gaussian kernel's chord bound (minlp_fs.exact.chords) against f(alpha, S) of every subset, beyond the
shared random instances of test_bounds: other gammas and scalings, need = 1 (an empty last pool), pair
blocks, a multiclass alpha, and where the bound must be exact."""
import copy
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.api import solve
from minlp_fs.exact import chords, tree
from minlp_fs.exact.bounds import fit_child_bounds, fit_order
from minlp_fs.exact.certificate import load, verify
from minlp_fs.exact.chords import GaussianChords
from minlp_fs.instance import make_instance

from bnb_helpers import random_instance, random_node, value_table


def tol(v):
    return 1e-9 * max(1.0, abs(v))


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.01, 0.1, 1.0, 10.0]),
       scaling=st.sampled_from(["minmax", "none"]), n=st.integers(2, 7), data=st.data())
@settings(max_examples=40, deadline=None)
def test_chord_bounds_hold_for_every_subset_of_every_child(seed, gamma, scaling, n, data, random_feasible_alpha):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(18, n))
    y = np.where(rng.random(18) < 0.5, 1, -1)
    y[:2] = (1, -1)
    B = data.draw(st.integers(1, n))
    inst = make_instance(X, y, B=B, kernel="rbf", gamma=gamma, sense="fit", scaling=scaling)
    alpha = random_feasible_alpha(rng, inst.y, inst.C)
    fixed, free, need = random_node(data, n, B)
    order = list(data.draw(st.permutations(free)))
    chords = GaussianChords(inst, alpha, fixed, free)
    bounds, scaled = chords.child_bounds(order, need, scaled=False), chords.child_bounds(order, need)
    assert len(bounds) == len(scaled) == len(free) - need + 1
    g = value_table(inst, sizes=[B])
    for (t, f_t, F_t), bound, low in zip(tree.split(fixed, free, need, order), bounds, scaled):
        subsets = [tuple(sorted((*f_t, *R))) for R in itertools.combinations(F_t, need - 1)]
        values = [inst.objective(alpha, S) for S in subsets]
        assert max(values) <= bound + tol(bound)          # the affine bound: f(alpha, S) itself
        assert max(g[S] for S in subsets) <= low + tol(low) and low <= bound + tol(bound) and low <= tol(0)
        if len(values) == 1:            # one subset (need = 1, or the pool is all of it): lo = hi, exact
            assert bound == pytest.approx(values[0], rel=1e-12, abs=1e-12)


def test_pair_blocks_do_not_change_the_bounds(monkeypatch):
    inst = random_instance(4, 40, 7, 4, "rbf", "fit")
    alpha = solve(inst, "ls").alpha
    whole = GaussianChords(inst, alpha, (1,), (0, 2, 3, 4, 5, 6)).child_bounds([6, 0, 5, 2, 4, 3], 3)
    monkeypatch.setattr(chords, "PAIR_BLOCK", 7)      # 780 pairs in 112 blocks, the last one partial
    blocked = GaussianChords(inst, alpha, (1,), (0, 2, 3, 4, 5, 6)).child_bounds([6, 0, 5, 2, 4, 3], 3)
    assert blocked == pytest.approx(whole, rel=1e-12)


def test_scaling_turns_a_loose_chord_bound_into_a_negative_one(random_feasible_alpha):
    """Far from the alpha's subset the chords are loose (here above 0, which every g is below: g <= f(0, S) = 0);
    the least bound over s alpha is negative and still above every g of the child."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 9))
    y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    y[:2] = (1, -1)
    inst = make_instance(X, y, B=5, kernel="rbf", gamma=1.0, sense="fit")
    g = value_table(inst, sizes=[5])
    alpha = random_feasible_alpha(np.random.default_rng(0), inst.y, inst.C)
    chords = GaussianChords(inst, alpha, (), tuple(range(9)))
    order = list(range(9))
    loose, scaled = chords.child_bounds(order, 5, scaled=False), chords.child_bounds(order, 5)
    assert max(loose) > 0 > max(scaled)
    for (t, f_t, F_t), low in zip(tree.split((), tuple(range(9)), 5, order), scaled):
        assert max(g[tuple(sorted((*f_t, *R)))] for R in itertools.combinations(F_t, 4)) <= low + tol(low)


def test_gains_are_the_node_bound_coefficients():
    """The order's gains w_j: the node's own affine bound, so kappa + the need largest gains bounds the node."""
    inst = random_instance(9, 30, 6, 3, "rbf", "fit")
    alpha = solve(inst, "ls").alpha
    basis = GaussianChords(inst, alpha, (), tuple(range(6)))
    kappa, w = basis._affine([None, *range(6)], 4, 1)
    assert dict(zip(range(6), w[0, 1:])) == basis.gains(3)
    best = max(inst.objective(alpha, S) for S in itertools.combinations(range(6), 3))
    assert best <= kappa[0] + np.sort(w[0, 1:])[-3:].sum() + tol(best)
    assert sorted(fit_order(inst, alpha, (), tuple(range(6)), 3)) == list(range(6))


def test_multiclass_chords_bound_the_summed_value():
    from test_multiclass import random_multiclass

    inst = random_multiclass(3, n=6, B=3, kernel="rbf", sense="fit")
    A = solve(inst, "ls").alpha
    order = [5, 1, 3, 0, 2]
    bounds = fit_child_bounds(inst, A, (4,), (0, 1, 2, 3, 5), 3, order)
    for (t, f_t, F_t), bound in zip(tree.split((4,), (0, 1, 2, 3, 5), 3, order), bounds):
        best = max(inst.objective(A, tuple(sorted((*f_t, *R)))) for R in itertools.combinations(F_t, 2))
        assert -best >= bound - tol(bound)          # score terms: -f >= the child's score bound


def test_bnb_prunes_the_gaussian_fit_sense_with_the_chords():
    """The search bounds Gaussian fit-sense children (it used to solve every leaf): fewer QPs than subsets,
    the enumeration's optimum, and a certificate the verifier proves without a QP."""
    inst = random_instance(2, 60, 10, 4, "rbf", "fit")
    g = value_table(inst, sizes=[4])
    res = solve(inst, "bnb", incumbent="none")
    assert res.certified and res.objective == pytest.approx(max(g.values()), rel=1e-6)
    assert res.info["pruned_marginal"] > 0 and res.info["leaves"] < len(g) // 4
    assert solve(inst, "bnb", marginal=False, incumbent="none").info["leaves"] == len(g)


@pytest.fixture(scope="module")
def gaussian_proof(tmp_path_factory):
    path = tmp_path_factory.mktemp("cert") / "rbf-fit.json"
    inst = random_instance(2, 60, 10, 4, "rbf", "fit")
    solve(inst, "bnb", incumbent="none", certificate=str(path))
    return load(path)


def test_a_gaussian_fit_certificate_is_proven_by_the_recomputed_chords(gaussian_proof):
    kinds = {r["kind"] for r in gaussian_proof["nodes"]}
    assert kinds == {"fit", "leaf"}            # no plain split: every expansion is bounded
    assert all(r["value"] is None for r in gaussian_proof["nodes"] if r["kind"] == "fit")   # no QP of I u F
    verdict = verify(gaussian_proof)
    assert verdict.proven and verdict.n_qps <= 1 and verdict.n_cheap > 0, verdict.reason


def test_a_gaussian_node_is_never_closed_by_its_universe(gaussian_proof):
    """g(I u F) bounds nothing for the Gaussian kernel: a node whose children were dropped (order None, as a
    polynomial node closed by g(I u F) is recorded) leaves the proof open, whatever the recorded value."""
    doc = copy.deepcopy(gaussian_proof)
    rec = next(r for r in doc["nodes"] if r["kind"] == "fit" and r["need"] > 1 and r["order"])
    rec["order"], rec["value"] = None, -1e9
    verdict = verify(doc)
    assert not verdict.proven and "chords only" in verdict.reason


def test_a_gaussian_node_with_another_alpha_is_rechecked(gaussian_proof):
    """The chords are recomputed at the recorded alpha: the root's alpha replaced by zero (feasible, f = 0
    everywhere: every child bound 0, above the optimum) closes no child, and the missing subtrees fail."""
    doc = copy.deepcopy(gaussian_proof)
    root = next(r for r in doc["nodes"] if r["kind"] == "fit" and not r["fixed"])
    root["alpha"] = {**root["alpha"], "index": [], "value": []}
    assert not verify(doc).proven
