"""Adding a kernel is one Kernel subclass: a test-only Laplacian kernel runs through every consumer.

k_beta(x, z) = exp(-gamma sum_j beta_j |x_j - z_j|) (PSD: a product of 1-D Laplacian kernels), written
with numpy only. Nothing outside this file names it: the enumeration oracle, the swap-neighbour tables
(multiplicative), the relaxation's exact Hessian, the Pyomo model and the one formulation all read it
through the Kernel interface.
"""
from dataclasses import dataclass

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.kernels import Kernel
from minlp_fs.objective import dual_objective
from builders import synthetic_instance


@dataclass(frozen=True)
class Laplacian(Kernel):
    gamma: float = 0.5
    name = "laplace"
    submodular = False
    multiplicative = True

    def feature_term(self, X, j, Z=None):
        z = X[:, j] if Z is None else Z[:, j]
        return np.abs(np.subtract.outer(X[:, j], z))

    def base(self, X, subset=None, Z=None, weights=None):
        cols = range(X.shape[1]) if subset is None else list(subset)
        w = np.ones(X.shape[1]) if weights is None else np.asarray(weights, float)
        first = self.feature_term(X, 0, Z)
        return sum((w[j] * self.feature_term(X, j, Z) for j in cols), np.zeros_like(first))

    def apply(self, base, out=None):
        return np.exp(-self.gamma * np.asarray(base, float))

    def derivative(self, base):
        return -self.gamma * np.exp(-self.gamma * base)

    def second_derivative(self, base):
        return self.gamma ** 2 * np.exp(-self.gamma * base)

    @property
    def affine(self):
        return -self.gamma, 0.0

    def outer(self, u, exp, power):
        return exp(u)

    def magnitude(self, X):
        return np.ones((X.shape[0], X.shape[0]))

    def monomials(self, n):
        return 1

    def fill_neighbour(self, base, x_out, x_in, y, ay, K, grad):
        K[...] = self.apply(base - np.abs(np.subtract.outer(x_out, x_out)) + np.abs(np.subtract.outer(x_in, x_in)))
        grad[...] = y * (K @ ay) - 1.0

    def _fused_gram(self, A, out):
        out[...] = self.apply(self.base(A))

    def _fused_swap(self, base, x_out, x_in):
        base += np.abs(np.subtract.outer(x_in, x_in)) - np.abs(np.subtract.outer(x_out, x_out))

    def params(self):
        return {"name": self.name, "gamma": self.gamma}


def _instance(sense="paper", m=12):
    return synthetic_instance(Laplacian(), sense, m=m, n_noise=3, data_seed=5)


def _direct_gram(inst, subset):
    A = inst.X[:, list(subset)]
    return np.exp(-0.5 * np.abs(A[:, None, :] - A[None, :, :]).sum(axis=2))


def test_gram_swap_and_neighbour_tables():
    inst = _instance(m=20)
    np.testing.assert_allclose(inst.gram((0, 3)), _direct_gram(inst, (0, 3)), rtol=1e-12)
    base = inst.kernel.base(inst.X, (0, 3))
    inst.kernel.swap(base, inst.X, 3, 4)
    np.testing.assert_allclose(inst.kernel.apply(base), _direct_gram(inst, (0, 4)), rtol=1e-12)
    oracle = AlphaSubproblem(inst)
    grams = oracle.neighbour_grams((0, 1, 2))
    assert grams.tables is not None                    # multiplicative: the per-feature tables are used
    alpha = oracle.solve((0, 1, 2)).alpha
    for subset in [(0, 1, 3), (1, 2)]:                 # a swap (tables) and a removal (the kernel's own fill)
        K, grad = grams.fill(subset, alpha)
        np.testing.assert_allclose(K, _direct_gram(inst, subset), rtol=1e-12)
        np.testing.assert_allclose(grad, inst.y * (K @ (alpha * inst.y)) - 1.0, rtol=1e-10, atol=1e-10)


def test_relaxation_hessian_matches_finite_differences():
    from minlp_fs.solvers.nlp import DualNLP

    inst = _instance(m=8)
    nlp = DualNLP(inst)
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(0, inst.C, inst.m), rng.uniform(0.2, 0.8, inst.n)])
    H = np.zeros((nlp.nx, nlp.nx))
    H[np.tril_indices(nlp.nx)] = nlp.hessian(x, np.zeros(nlp.ncon), 1.0)
    H = H + np.tril(H, -1).T
    eps = 1e-6
    for k in range(inst.m, nlp.nx):                    # the beta columns use phi' and phi''
        e = np.zeros(nlp.nx)
        e[k] = eps
        fd = (nlp.gradient(x + e) - nlp.gradient(x - e)) / (2 * eps)
        np.testing.assert_allclose(H[:, k], fd, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_pyomo_model_evaluates_to_our_objective(sense):
    pyo = pytest.importorskip("pyomo.environ")
    from minlp_fs.models import build_model, load_start

    inst = _instance(sense)
    fit = AlphaSubproblem(inst, tol=1e-9).solve((1, 3))
    beta = np.zeros(inst.n)
    beta[[1, 3]] = 1.0
    model = build_model(inst)
    load_start(model, fit.alpha, beta)
    expected = dual_objective(fit.alpha, _direct_gram(inst, (1, 3)), inst.y)
    assert pyo.value(model.objective) == pytest.approx(inst.sign * expected, rel=1e-6)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_ls_star_screens_and_reaches_the_enumerated_optimum(sense):
    """A kernel with no batched swap formula is screened one kernel matrix per swap (screening.swap_matrix)."""
    from minlp_fs.api import solve
    from minlp_fs.heuristics.screening import FixedAlpha

    inst = _instance(sense, m=20)
    alpha = AlphaSubproblem(inst).solve((0, 1)).alpha
    values = FixedAlpha(inst, alpha).swap_values((0, 1))
    for (j_out, j_in), value in values.items():
        subset = sorted({0, 1} - {j_out} | {j_in})
        K = _direct_gram(inst, subset)
        v = alpha * inst.y
        assert value == pytest.approx(0.5 * v @ K @ v - alpha.sum(), rel=1e-10, abs=1e-10)
    best = solve(inst, method="enumerate").objective
    assert solve(inst, method="ls*", start=(0, 1)).objective == pytest.approx(best, rel=1e-6)


def test_enumeration_solves_a_kernel_without_compiled_passes_on_its_matrices():
    """No ``compiled_phi``: enumeration's opened solves do not apply, and it enumerates on kernel matrices."""
    from minlp_fs.alpha.opening import Opening
    from minlp_fs.api import solve

    inst = _instance(m=20)
    assert Laplacian().compiled_phi is None and not Opening.applies(AlphaSubproblem(inst))
    res = solve(inst, method="enumerate")
    assert res.certified and res.info["n_done"] == res.info["n_subsets"]
