"""Swap-neighbour Grams (alpha/neighbours.py) and the oracle's memory of early stops."""
import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem, smo_solve
from minlp_fs.alpha import neighbours as nb
from minlp_fs.alpha.smo import _full_gradient
from minlp_fs.datasets import make_synthetic
from minlp_fs.instance import make_instance
from minlp_fs.objective import dual_objective

KERNELS = ["poly1", "poly2", "poly3", "poly5", "rbf"]


def instance(kernel, sense="paper", m=50, B=3, seed=0):
    d = make_synthetic(m=m, n_informative=3, n_noise=4, seed=seed)
    return make_instance(d.X, d.y, B=B, kernel=kernel, sense=sense)


def feasible_alpha(inst):
    """A feasible alpha with free and bounded entries: the optimum of the centre (0, 1, 2)."""
    return AlphaSubproblem(inst).solve((0, 1, 2)).alpha


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("tables", [True, False])
def test_fill_gives_the_gram_of_the_neighbour_and_the_warm_gradient(kernel, tables, monkeypatch):
    if not tables:
        monkeypatch.setattr(nb, "TABLE_BYTES", 0)
    inst = instance(kernel)
    oracle = AlphaSubproblem(inst)
    grams = oracle.neighbour_grams((0, 1, 2))
    assert (grams.tables is not None) == (tables and kernel == "rbf")
    alpha = feasible_alpha(inst)
    for subset in [(0, 1, 3), (1, 2, 6), (0, 2, 5), (0, 1), (1, 2)]:  # swaps and removals
        K, grad = grams.fill(subset, alpha)
        K_ref = inst.gram(subset)
        np.testing.assert_allclose(K, K_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(grad, inst.y * (K_ref @ (alpha * inst.y)) - 1.0, rtol=1e-10, atol=1e-10)


def test_fill_refuses_subsets_that_are_not_one_swap():
    grams = AlphaSubproblem(instance("rbf")).neighbour_grams((0, 1, 2))
    alpha = feasible_alpha(instance("rbf"))
    assert grams.swap_of((0, 1, 3)) == (2, 3) and grams.swap_of((0, 2)) == (1, None)
    for other in [(0, 1, 2), (0, 4, 5), (3, 4, 5), (0,), (0, 1, 2, 3), (0, 1, 3, 4)]:
        assert grams.swap_of(other) is None and grams.fill(other, alpha) is None


def test_libsvm_backend_has_no_neighbour_grams():
    assert AlphaSubproblem(instance("poly2"), backend="libsvm").neighbour_grams((0, 1, 2)) is None


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
def test_smo_from_the_given_gradient_equals_smo_from_scratch(kernel):
    inst = instance(kernel)
    grams = AlphaSubproblem(inst).neighbour_grams((0, 1, 2))
    alpha0 = feasible_alpha(inst)
    K, grad = grams.fill((0, 1, 5), alpha0)
    exact = np.empty_like(grad)
    _full_gradient(K, inst.y, alpha0.copy(), exact)
    # the filled gradient is SMO's own to rounding (the summation order differs, so not bit for bit) ...
    np.testing.assert_allclose(grad, exact, rtol=1e-12, atol=1e-12)
    r0 = smo_solve(K, inst.y, inst.C, alpha0=alpha0, tol=1e-8)
    # ... SMO given its own gradient takes exactly the same steps as SMO computing it ...
    r1 = smo_solve(K, inst.y, inst.C, alpha0=alpha0, tol=1e-8, grad0=exact)
    assert r1.iterations == r0.iterations
    np.testing.assert_array_equal(r1.alpha, r0.alpha)
    wrong = smo_solve(K, inst.y, inst.C, alpha0=alpha0, tol=1e-8, grad0=exact + 1.0)
    assert wrong.iterations != r0.iterations  # grad0 is really used, not recomputed
    # ... and given the filled one it reaches the same optimum (a rounding-level difference may break a tie
    # in the working-set choice differently, so the step count can differ on another BLAS/CPU)
    r2 = smo_solve(K, inst.y, inst.C, alpha0=alpha0, tol=1e-8, grad0=grad)
    assert r2.iterations > 0 and not r2.stopped_early
    assert dual_objective(r2.alpha, K, inst.y) == pytest.approx(dual_objective(r0.alpha, K, inst.y), rel=1e-9)
    np.testing.assert_allclose(r2.alpha, r0.alpha, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_a_proven_early_stop_is_remembered_for_looser_incumbents_only(sense):
    inst = instance("poly2", sense=sense)
    exact = AlphaSubproblem(inst).solve((3, 4, 5)).value
    oracle = AlphaSubproblem(inst)
    start = oracle.solve((0, 1, 2)).alpha
    # an incumbent 5% better than the subset's value: the solve stops early, proving it worse
    incumbent = exact - inst.sign * 0.05 * abs(exact)
    first = oracle.solve((3, 4, 5), warm_start=start, worse_than=incumbent)
    assert not first.exact and oracle.n_solves == 2
    assert first.value >= exact - 1e-9 * abs(exact)  # f(alpha) bounds g from above
    # a still better incumbent is covered by the proof: no new solve
    again = oracle.solve((3, 4, 5), warm_start=start, worse_than=incumbent - inst.sign * 1.0)
    assert again is first and oracle.n_solves == 2
    # an incumbent the proof does not cover needs a solve, here an exact one
    fit = oracle.solve((3, 4, 5), warm_start=start, worse_than=exact + inst.sign * 0.05 * abs(exact))
    assert fit.exact and oracle.n_solves == 3 and fit.value == pytest.approx(exact, rel=1e-6)
