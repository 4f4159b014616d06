"""The Pyomo model of problem (3) evaluates to our own objective, in both senses and on a support."""
from functools import partial

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ", reason="Pyomo is a core dependency; absent here")

from minlp_fs.alpha import AlphaSubproblem  # noqa: E402
from minlp_fs.errors import InputError  # noqa: E402
from minlp_fs.instance import make_instance  # noqa: E402
from minlp_fs.models import build_model, load_start, model_size, read_solution  # noqa: E402
from minlp_fs.objective import dual_objective  # noqa: E402
from builders import synthetic_instance  # noqa: E402

KERNELS = ["poly2", "poly3", "rbf"]


_instance = partial(synthetic_instance, m=14, n_noise=3)


def _feasible_alpha(inst, rng, support=None):
    """A random alpha in Delta (y'alpha = 0, 0 <= alpha <= C), zero outside ``support``."""
    alpha = rng.uniform(0, inst.C, inst.m)
    if support is not None:
        mask = np.zeros(inst.m, bool)
        mask[support] = True
        alpha[~mask] = 0.0
    pos, neg = inst.y > 0, inst.y < 0
    sp, sn = alpha[pos].sum(), alpha[neg].sum()
    if sp > sn:
        alpha[pos] *= sn / sp
    else:
        alpha[neg] *= sp / sn
    return alpha


def _beta(inst, subset):
    beta = np.zeros(inst.n)
    beta[list(subset)] = 1.0
    return beta


@pytest.mark.parametrize("kernel", KERNELS)
def test_paper_objective_equals_dual_objective(kernel):
    inst = _instance(kernel)
    model = build_model(inst)
    rng = np.random.default_rng(1)
    for _ in range(3):
        subset = tuple(sorted(rng.choice(inst.n, inst.B, replace=False)))
        alpha = _feasible_alpha(inst, rng)
        load_start(model, alpha, _beta(inst, subset))
        expected = dual_objective(alpha, inst.gram(subset), inst.y)
        assert pyo.value(model.objective) == pytest.approx(expected, rel=1e-10, abs=1e-9)
        assert pyo.value(model.balance.body) == pytest.approx(0.0, abs=1e-9)
        assert pyo.value(model.budget.body) == inst.B


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_relaxation_uses_the_linear_in_beta_kernel(kernel):
    """Fractional beta: the objective is f with K = phi(sum_j beta_j T_j), the relaxation's kernel."""
    inst = _instance(kernel)
    model = build_model(inst, relax=True)
    rng = np.random.default_rng(2)
    beta = rng.uniform(0, 1, inst.n)
    alpha = _feasible_alpha(inst, rng)
    load_start(model, alpha, beta)
    K = inst.kernel.apply(inst.kernel.base(inst.X, weights=beta))
    assert pyo.value(model.objective) == pytest.approx(dual_objective(alpha, K, inst.y), rel=1e-10)
    assert all(model.beta[j].domain is pyo.UnitInterval for j in range(inst.n))


@pytest.mark.parametrize("kernel", KERNELS)
def test_fit_sense_primal_equals_minus_g_at_the_optimum(kernel):
    """Strong duality: at the exact alpha of a subset, the loaded primal point has value -g(beta)."""
    inst = _instance(kernel, sense="fit")
    model = build_model(inst)
    oracle = AlphaSubproblem(inst, tol=1e-9)
    for subset in [(0, 1), (2, 4)]:
        fit = oracle.solve(subset)
        load_start(model, fit.alpha, _beta(inst, subset))
        assert pyo.value(model.objective) == pytest.approx(-fit.value, rel=1e-6)
        lows = [pyo.value(model.margin[i].body) for i in range(inst.m)]
        assert min(lows) >= 1.0 - 1e-7          # the primal point is feasible
        alpha, beta = read_solution(model)
        assert np.allclose(alpha, fit.alpha, atol=1e-9) and np.array_equal(beta, _beta(inst, subset))


def test_sizes_and_sparsity():
    inst = _instance("poly2", m=10)
    X = inst.X
    size = model_size(build_model(inst))
    m, n = inst.m, inst.n
    # + the epigraph variable t; rows budget, balance, objective_bound, epigraph
    assert size["variables"] == m + n + 1 and size["constraints"] == 4
    assert size["pairs"] == m * (m + 1) // 2 and size["build_time"] > 0
    # one term per nonzero x_ij x_hj over i <= h: zeros of min-max scaled data are left out
    iu = np.triu_indices(m)
    expected = int(np.count_nonzero((X[:, None, :] * X[None, :, :])[iu]))
    assert size["terms"] == expected < size["pairs"] * n
    fit = model_size(build_model(inst.with_params(sense="fit")))
    # the same four rows (balance: the cut sum c = 0) and m margins
    assert fit["variables"] == m + 1 + m + n + 1 and fit["constraints"] == m + 4
    rbf = make_instance(X, inst.y, B=2, kernel="rbf", scaling="none")
    diffs = (X[:, None, :] - X[None, :, :])[iu]
    assert model_size(build_model(rbf))["terms"] == int(np.count_nonzero(diffs))


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_support_restriction(sense):
    inst = _instance("rbf", sense=sense)
    support = [0, 2, 3, 7, 8, 11]
    model = build_model(inst, support=support)
    assert sorted(model.rows) == support
    size = model_size(model)
    k = len(support)
    assert size["pairs"] == (k * (k + 1) // 2 if sense == "paper" else k * (k + 1) // 2 + (inst.m - k) * k)
    assert size["variables"] == (k + inst.n if sense == "paper" else k + 1 + inst.m + inst.n) + 1   # + t
    rng = np.random.default_rng(3)
    alpha = _feasible_alpha(inst, rng, support)
    subset = (1, 3)
    load_start(model, alpha, _beta(inst, subset))
    got, _ = read_solution(model)
    assert np.all(got[np.setdiff1d(np.arange(inst.m), support)] == 0)
    if sense == "paper":
        assert pyo.value(model.objective) == pytest.approx(dual_objective(alpha, inst.gram(subset), inst.y))
        assert np.allclose(got, alpha)


def test_load_start_sets_initial_values():
    inst = _instance("poly2")
    model = build_model(inst)
    alpha = _feasible_alpha(inst, np.random.default_rng(4))
    beta = _beta(inst, (1, 4))
    load_start(model, alpha, beta)
    assert [model.alpha[i].value for i in range(inst.m)] == pytest.approx(alpha.tolist())
    assert [model.beta[j].value for j in range(inst.n)] == beta.tolist()
    got_alpha, got_beta = read_solution(model)
    assert np.allclose(got_alpha, alpha) and np.array_equal(got_beta, beta)


def test_bad_input_is_reported():
    inst = _instance("poly2")
    with pytest.raises(InputError, match="support"):
        build_model(inst, support=[0, inst.m])
    model = build_model(inst)
    with pytest.raises(InputError, match="beta must be"):
        load_start(model, np.zeros(inst.m), np.zeros(inst.n + 1))
    with pytest.raises(InputError, match="not built by"):
        read_solution(pyo.ConcreteModel())
