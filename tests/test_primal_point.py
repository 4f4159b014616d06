"""The weak-duality bound g >= -P(w, b, xi) has one implementation, objective.primal_point: the compiled
mirror in SMO's early stop, bnb's probe bound, the verifier's bound and svm_primal agree with it."""
import itertools

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.alpha.smo import _hinge_lower_bound, _lower_bound
from minlp_fs.errors import InputError
from minlp_fs.exact.bounds import primal_lower_bound
from minlp_fs.exact.certificate import dual_lower_bound
from minlp_fs.instance import make_instance
from minlp_fs.objective import primal_point, svm_primal


def _instance(seed, kernel, m=30, n=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    y = np.where(X[:, 0] + rng.normal(size=m) > 0, 1, -1)
    y[:2] = (1, -1)
    return make_instance(X, y, B=2, kernel=kernel, C=2.0)


def _alphas(inst, K, rng, random_feasible_alpha):
    """Alphas of every kind: the optimum, random feasible ones (some at 0 and C), one with no free entry,
    an infeasible one, and zero."""
    S = (0, 1)
    out = [AlphaSubproblem(inst, tol=1e-9).solve(S, K=K).alpha, np.zeros(inst.m)]
    out += [random_feasible_alpha(rng, inst.y, inst.C, zero_share=share) for share in (0.0, 0.3, 0.8)]
    bounded = np.where(rng.random(inst.m) < 0.5, inst.C, 0.0)
    out += [bounded, rng.uniform(0, inst.C, inst.m)]
    return out


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_the_compiled_bound_mirrors_primal_point(kernel, random_feasible_alpha):
    """smo._lower_bound (SMO's early stop) is -primal_point(bias="kkt", at_bound=0).value at any alpha; bnb's
    primal_lower_bound is the hinge rule's, never below it."""
    inst = _instance(0, kernel)
    K = inst.gram((0, 1))
    y, C = inst.y, inst.C
    rng = np.random.default_rng(1)
    for alpha in _alphas(inst, K, rng, random_feasible_alpha):
        o = K @ (alpha * y)
        ours = -primal_point(alpha, y, C, o).value
        compiled = _lower_bound(y, np.full(inst.m, C), np.ascontiguousarray(alpha), y * o - 1.0)
        assert compiled == pytest.approx(ours, rel=1e-12, abs=1e-12)
        hinge = -primal_point(alpha, y, C, o, bias="hinge").value
        assert primal_lower_bound(K, y, C, alpha) == pytest.approx(hinge, rel=1e-12, abs=1e-12)
        assert hinge >= ours - 1e-10 * max(1.0, abs(ours))


@pytest.mark.parametrize("kernel", ["poly2", "poly5", "rbf"])
@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_hinge_bound_mirrors_primal_point(kernel, seed, random_feasible_alpha):
    """smo._hinge_lower_bound (the opening's early stop in the paper sense) is -primal_point(bias="hinge").value
    at any alpha, ties among the breakpoints included (alpha = 0: every p_i = y_i)."""
    inst = _instance(seed, kernel)
    K = inst.gram((0, 1))
    y, C = inst.y, inst.C
    n_pos = int((y > 0).sum())
    for alpha in _alphas(inst, K, np.random.default_rng(seed), random_feasible_alpha):
        o = K @ (alpha * y)
        ours = -primal_point(alpha, y, C, o, bias="hinge").value
        compiled = _hinge_lower_bound(y, C, np.ascontiguousarray(alpha), y * o - 1.0, n_pos, np.empty(inst.m))
        assert compiled == pytest.approx(ours, rel=1e-12, abs=1e-10)
        assert compiled >= _lower_bound(y, np.full(inst.m, C), np.ascontiguousarray(alpha), y * o - 1.0) - 1e-10


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "rbf"])
def test_every_rule_bounds_g_and_the_hinge_bias_is_the_strongest(kernel, random_feasible_alpha):
    inst = _instance(2, kernel)
    oracle = AlphaSubproblem(inst, tol=1e-10)
    rng = np.random.default_rng(3)
    y, C = inst.y, inst.C
    for S in itertools.combinations(range(inst.n), 2):
        K = inst.gram(S)
        g = oracle.solve(S, K=K).value
        for alpha in _alphas(inst, K, rng, random_feasible_alpha):
            o = K @ (alpha * y)
            kkt, hinge = primal_point(alpha, y, C, o), primal_point(alpha, y, C, o, bias="hinge")
            assert -kkt.value <= g + 1e-9 * max(1.0, abs(g))
            assert -hinge.value <= g + 1e-9 * max(1.0, abs(g))
            assert hinge.value <= kkt.value + 1e-12 * max(1.0, kkt.value)
            # the verifier's bound is the hinge rule's, from the support's columns only
            assert dual_lower_bound(inst, S, alpha) == pytest.approx(-hinge.value, rel=1e-10, abs=1e-10)
            # the point is the one it describes
            np.testing.assert_allclose(hinge.xi, np.maximum(0.0, 1.0 - y * (o + hinge.b)), atol=0)
            assert hinge.value == pytest.approx(0.5 * hinge.c @ K @ hinge.c + C * hinge.xi.sum(), rel=1e-12)
        optimum = oracle.solve(S, K=K).alpha
        assert -svm_primal(inst, K, optimum).value == pytest.approx(g, rel=1e-6, abs=1e-6)   # strong duality


def test_svm_primal_counts_near_bound_alphas_as_bounded():
    """svm_primal's KKT bias treats alpha within 1e-8 C of a bound as at it (alphas of other solvers)."""
    inst = _instance(4, "poly2")
    K = inst.gram((0, 1))
    alpha = AlphaSubproblem(inst, tol=1e-10).solve((0, 1), K=K).alpha
    nudged = np.where(alpha == 0.0, 1e-12 * inst.C, alpha)
    o = K @ (nudged * inst.y)
    assert svm_primal(inst, K, nudged).b == primal_point(nudged, inst.y, inst.C, o, at_bound=1e-8 * inst.C).b


def test_an_unknown_bias_rule_is_an_input_error():
    with pytest.raises(InputError, match="bias must be one of kkt, hinge"):
        primal_point(np.zeros(2), np.array([1.0, -1.0]), 1.0, np.zeros(2), bias="mean")


def test_primal_lower_bound_of_one_class_is_primal_points(random_feasible_alpha):
    """primal_lower_bound computes by the compiled selection, which needs both classes; with one class (no
    hinge breakpoint split) it is primal_point's hinge rule itself."""
    inst = _instance(5, "poly3")
    K = inst.gram((0, 1))
    for label in (1.0, -1.0):
        y = np.full(inst.m, label)
        alpha = np.random.default_rng(0).uniform(0, inst.C, inst.m)
        expected = -primal_point(alpha, y, inst.C, K @ (alpha * y), bias="hinge").value
        assert primal_lower_bound(K, y, inst.C, alpha) == expected
