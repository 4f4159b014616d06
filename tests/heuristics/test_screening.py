"""Batched swap screening (screening.swap_matrix) against the direct computation, one kernel per swap."""
from dataclasses import dataclass

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.heuristics.screening import FixedAlpha, swap_matrix
from minlp_fs.kernels import SWAP_BLOCK, GaussianKernel, Kernel, PolynomialKernel
from minlp_fs.monomials import MomentTable, poly_monomial_quads
from minlp_fs.instance import make_instance
from minlp_fs.objective import dual_objective

KERNELS = ["poly1", "poly2", "poly3", "poly5", "rbf"]


def random_case(seed, kernel, sense, scaling="minmax", gamma=None):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(12, 40)), int(rng.integers(3, 11))
    X = rng.normal(size=(m, n)) * rng.uniform(0.5, 3.0, size=n)
    y = np.where(rng.uniform(size=m) < rng.uniform(0.25, 0.75), 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    inst = make_instance(X, y, B=int(rng.integers(1, n)), kernel=kernel, sense=sense, scaling=scaling,
                         gamma=gamma, C=float(rng.choice([0.5, 10.0])))
    if seed % 2:  # a real SVM solution: sparse support, some alpha at C
        alpha = AlphaSubproblem(inst).solve(sorted(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))).alpha
    else:  # every alpha_i > 0, feasible
        alpha = rng.uniform(0.1, 1.0, size=m)
        alpha[y < 0] *= alpha[y > 0].sum() / alpha[y < 0].sum()
        alpha *= 0.9 * inst.C / alpha.max()
    subset = tuple(sorted(rng.choice(n, inst.B, replace=False).tolist()))
    return inst, alpha, subset


def direct(inst, alpha, subset):
    """{(i, j): f(alpha, S - i + j)} from a Gram matrix per swap, and the scale 1/2|v|'|K||v| + e'alpha."""
    values, scale = {}, 0.0
    v = np.abs(alpha * inst.y)
    for i in subset:
        for j in range(inst.n):
            if j not in subset:
                K = inst.kernel.gram(inst.X, sorted(set(subset) - {i} | {j}))
                values[i, j] = dual_objective(alpha, K, inst.y)
                scale = max(scale, 0.5 * v @ np.abs(K) @ v + alpha.sum())
    return values, scale


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_swap_values_equal_the_direct_computation(kernel, sense):
    for seed in range(8):
        inst, alpha, subset = random_case(seed, kernel, sense)
        got = FixedAlpha(inst, alpha).swap_values(subset)
        want, scale = direct(inst, alpha, subset)
        assert list(got) == list(want)  # the order (j_out, j_in) ascending
        err = max(abs(got[k] - want[k]) for k in want)
        assert err <= 1e-10 * scale, (kernel, sense, seed, err, scale)


@pytest.mark.parametrize("gamma", [0.1, 1.0])
def test_degree_five_with_signed_data_has_no_cancellation_beyond_the_direct_formula(gamma):
    """Standard scaling makes the base entries signed, so the binomial terms of (P_i + gamma x_j x_j')^5
    alternate in sign; the values still agree to 1e-10 of the quadratic form's scale."""
    for seed in range(6):
        inst, alpha, subset = random_case(seed, "poly5", "paper", scaling="standard", gamma=gamma)
        got = FixedAlpha(inst, alpha).swap_values(subset)
        want, scale = direct(inst, alpha, subset)
        err = max(abs(got[k] - want[k]) for k in want)
        assert err <= 1e-10 * scale, (seed, gamma, err, scale)


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
def test_swap_matrix_edge_cases(kernel):
    inst, alpha, subset = random_case(3, kernel, "paper")
    X, v = inst.X, alpha * inst.y
    assert swap_matrix(inst.kernel, X, v, list(range(inst.n)), []).shape == (inst.n, 0)
    zero = swap_matrix(inst.kernel, X[:0], v[:0], [0], [1])  # alpha_bar = 0: an empty support
    assert zero.shape == (1, 1) and zero[0, 0] == 0.0
    assert FixedAlpha(inst, np.zeros(inst.m)).swap_values([0]) == {(0, j): 0.0 for j in range(1, inst.n)}


@pytest.mark.parametrize("kernel", ["poly1", "poly2", "poly3", "poly5"])
@pytest.mark.parametrize("scaling", ["minmax", "standard"])
def test_monomial_quadratic_form_equals_the_kernel_matrix(kernel, scaling):
    """The multinomial expansion (poly_monomial_quads) = 1/2 v'K v from the Gram matrix, for any subset size."""
    for seed in range(6):
        inst, alpha, subset = random_case(seed, kernel, "paper", scaling=scaling)
        v = alpha * inst.y
        for size in range(1, inst.n + 1):
            cols = list(range(size))
            K = inst.kernel.gram(inst.X, cols)
            want = 0.5 * v @ K @ v
            k, got = inst.kernel, np.empty(2)
            poly_monomial_quads(inst.X, v, np.array([cols, cols[::-1]]), k.gamma, k.coef0, k.degree, got)
            assert np.abs(got - want).max() <= 1e-10 * (0.5 * np.abs(v) @ np.abs(K) @ np.abs(v)), (seed, size)


def test_values_and_removal_values_by_either_route_agree_with_the_direct_value():
    """FixedAlpha.values (a polynomial kernel's subset_quads: a moment table for a batch of subsets of few
    features, monomials for small subsets of a large support, else one compiled pass per subset) and removal_values_of_base (one compiled pass per
    removal from the base matrix) give the direct value, for every kernel."""
    rng = np.random.default_rng(7)
    routes = set()
    for m, kernel in [(400, "poly2"), (400, "poly3"), (30, "poly3"), (30, "poly1"), (40, "rbf")]:
        n = 12
        X = rng.uniform(size=(m, n))
        y = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
        inst = make_instance(X, y, B=3, kernel=kernel)
        alpha = np.full(m, 1.0)
        alpha[y < 0] *= (y > 0).sum() / (y < 0).sum()
        alpha[::5] = 0.0  # a support smaller than m
        alpha[y < 0] *= alpha[y > 0].sum() / alpha[y < 0].sum()
        fixed = FixedAlpha(inst, alpha)
        for size in (1, 3, 6, n):
            subsets = [sorted(rng.choice(n, size, replace=False).tolist()) for _ in range(3)]
            if kernel != "rbf":
                g = len(set().union(*subsets))
                table = MomentTable.cheaper_for_subsets(fixed.sv.size, g, len(subsets), size, inst.kernel.degree)
                routes.add("table" if table else inst.kernel.by_monomials(fixed.sv.size, size))
            got = fixed.values(subsets)
            for kept, value in zip(subsets, got):
                want = dual_objective(alpha, inst.gram(kept), y)
                assert value == pytest.approx(want, rel=1e-12, abs=1e-10 * alpha.sum())
                # alone, a subset never takes the table (its cost includes every monomial of the ground)
                assert fixed.value(kept) == pytest.approx(value, rel=1e-13, abs=1e-12 * alpha.sum())
            kept = subsets[0]
            removals = fixed.removal_values_of_base(fixed.base(kept), kept)
            # a value does not depend on its batch (the lazy greedy evaluates one removal at a time)
            assert [fixed.removal_values_of_base(fixed.base(kept), [j])[0] for j in kept] == removals.tolist()
            for j, value in zip(kept, removals):
                rest = [e for e in kept if e != j]
                want = dual_objective(alpha, inst.gram(rest), y) if rest else -alpha.sum()
                assert value == pytest.approx(want, rel=1e-12, abs=1e-10 * alpha.sum())
    assert routes == {True, False, "table"}  # every route was exercised


@pytest.mark.parametrize("rows", [1, 3, "all"])
def test_gaussian_swap_table_by_blocks_of_rows_equals_the_direct_computation(rows, monkeypatch):
    """The Gaussian swap table over the upper triangle by blocks of one row, of three rows, and in one block (the
    whole square, weight 1): the direct values, both senses; one tick per block, adding up to B (n - B)."""
    from minlp_fs import kernels

    for seed in range(8):
        inst, alpha, subset = random_case(seed, "rbf", "paper" if seed % 4 < 2 else "fit")
        fixed = FixedAlpha(inst, alpha)
        m = fixed.X.shape[0]
        per = m if rows == "all" else rows
        monkeypatch.setattr(kernels, "SWAP_CACHE", per * inst.n * m)
        outside = [j for j in range(inst.n) if j not in subset]
        ticks = []
        table = swap_matrix(inst.kernel, fixed.X, fixed.v, list(subset), outside, ticks.append)
        assert len(ticks) == -(-m // per) and sum(ticks) == len(subset) * len(outside)
        want, scale = direct(inst, alpha, subset)
        got = table - alpha.sum()
        assert max(abs(got[r, c] - want[i, j]) for r, i in enumerate(subset) for c, j in enumerate(outside)) \
            <= 1e-10 * scale, (rows, seed)


@dataclass(frozen=True)
class _PlainPoly(PolynomialKernel):
    """The polynomial kernel without its batched formulas: the Kernel defaults (one matrix per value)."""

    removal_quads = Kernel.removal_quads
    subset_quads = Kernel.subset_quads
    swap_quads = Kernel.swap_quads


@dataclass(frozen=True)
class _PlainRbf(GaussianKernel):
    removal_quads = Kernel.removal_quads
    subset_quads = Kernel.subset_quads
    swap_quads = Kernel.swap_quads


@pytest.mark.parametrize("kernel, plain", [(PolynomialKernel(degree=3), _PlainPoly(degree=3)),
                                           (GaussianKernel(gamma=0.5), _PlainRbf(gamma=0.5))])
def test_kernel_defaults_and_batched_formulas_give_the_same_values(kernel, plain):
    """A new kernel with none of the batched formulas is screened by the Kernel defaults; they agree
    with the paper's kernels' batched overrides (values, removals from a base, swaps)."""
    for seed in range(4):
        inst, alpha, subset = random_case(seed, "poly3", "paper")
        values = {}
        for k in (kernel, plain):
            fixed = FixedAlpha(make_instance(inst.X, inst.y, B=inst.B, kernel=k, C=inst.C, scaling="none"), alpha)
            values[k] = (fixed.values([subset, tuple(range(len(subset)))]), dict(zip(subset, fixed.removal_values_of_base(fixed.base(subset), subset).tolist())),
                         fixed.swap_values(subset))
        (va, ra, sa), (vb, rb, sb) = values[kernel], values[plain]
        scale = 1.0 + np.abs(va).max()
        np.testing.assert_allclose(va, vb, rtol=0, atol=1e-10 * scale)
        assert ra.keys() == rb.keys() and max(abs(ra[j] - rb[j]) for j in ra) <= 1e-10 * scale
        assert sa.keys() == sb.keys() and max(abs(sa[k] - sb[k]) for k in sa) <= 1e-10 * scale


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
def test_removal_from_a_base_in_place_is_bitwise_the_subtraction_of_the_term(kernel):
    """Kernel.remove (the greedy's and the swap table's update) = base - T_j exactly, so decisions taken
    on it are those of the allocating subtraction."""
    for seed in range(4):
        inst, _, subset = random_case(seed, kernel, "paper", scaling="standard")
        base = inst.kernel.base(inst.X, list(subset))
        for j in subset:
            assert np.array_equal(inst.kernel.remove(base.copy(), inst.X, j), base - inst.kernel.feature_term(inst.X, j))


def test_gaussian_removals_are_bitwise_those_of_the_kernel_matrix():
    """For the Gaussian kernel the removal values take the kernel matrix's own arithmetic (the exponent as numpy
    forms base - T_j, the package's exp, then v'(K v)): bitwise the values of FixedAlpha.value_of_base."""
    for seed in range(4):
        inst, alpha, subset = random_case(seed, "rbf", "paper")
        fixed = FixedAlpha(inst, alpha)
        base = fixed.base(subset)
        assert fixed.removal_values_of_base(base, subset).tolist() == \
            [fixed.value_of_base(base - fixed.term(j)) for j in subset]


@pytest.mark.parametrize("kernel", ["poly1", "poly2", "poly3", "poly5"])
@pytest.mark.parametrize("route", ["monomials", "binomial"])
def test_swap_table_by_either_route_equals_the_direct_computation(kernel, route, monkeypatch):
    """The polynomial swap table from the monomials (one block of outside columns, or one column per block
    with a tick after each) and from the binomial expansion in the added column: the direct values, for
    subsets smaller than the degree, signed data and both senses."""
    import minlp_fs.kernels as kernels

    forced = (0.0, 1.0, 1e300) if route == "monomials" else (1.0, 1.0, 0.0)
    monkeypatch.setattr(kernels, "swap_costs", lambda *args: forced)
    for seed in range(8):
        if route == "monomials" and seed % 2:
            monkeypatch.setattr(kernels, "SWAP_BLOCK", 1)  # a block per outside column
        inst, alpha, subset = random_case(seed, kernel, "paper" if seed < 4 else "fit",
                                          scaling="standard" if seed % 3 == 0 else "minmax")
        ticks = []
        fixed = FixedAlpha(inst, alpha)
        table = swap_matrix(inst.kernel, fixed.X, fixed.v, subset, [j for j in range(inst.n) if j not in subset],
                            ticks.append)
        assert sum(ticks) == table.size
        if route == "monomials" and seed % 2:  # a block per column, counted per row
            assert ticks == [1] * table.size
        got = fixed.swap_values(subset)
        assert list(got.values()) == (table.ravel() - fixed.a_sum).tolist()
        want, scale = direct(inst, alpha, subset)
        assert max(abs(got[k] - want[k]) for k in want) <= 1e-10 * scale, (seed, subset)
        monkeypatch.setattr(kernels, "SWAP_BLOCK", SWAP_BLOCK)


def test_the_swap_table_takes_the_cheaper_route():
    """The operation counts choose the monomials on the paper's usual shapes and the binomial expansion
    where the monomials are many (Sonar poly5 at B = 15: measured 8 ms against 18 ms)."""
    from minlp_fs.monomials import swap_costs

    def monomials(m, B, q, d):
        removals, per_column, binomial = swap_costs(m, B, q, d)
        return removals + q * per_column <= binomial

    assert monomials(569, 6, 24, 2) and monomials(351, 10, 24, 3) and monomials(1000, 10, 14, 5)
    assert not monomials(208, 15, 45, 5) and not monomials(50, 30, 10, 5)


@pytest.mark.parametrize("kernel", ["poly1", "poly2", "poly3", "poly5"])
@pytest.mark.parametrize("route", ["table", "base"])
def test_removals_by_either_route_equal_the_direct_values(kernel, route, monkeypatch):
    """Removals (the greedy's and RFE's f(alpha, K) and f(alpha, K - j) while K shrinks) from the moment table
    of the first K or from K's base matrix: the direct values after every removal, whatever the batch."""

    monkeypatch.setattr(MomentTable, "cheaper", staticmethod(lambda m, g, d: route == "table"))
    for seed in range(8):
        inst, alpha, _ = random_case(seed, kernel, "paper" if seed < 4 else "fit",
                                     scaling="standard" if seed % 3 == 0 else "minmax")
        fixed = FixedAlpha(inst, alpha)
        rng = np.random.default_rng(seed)
        kept = sorted(rng.choice(inst.n, int(rng.integers(1, inst.n + 1)), replace=False).tolist())
        removals = fixed.removals(kept)
        assert (removals.table is not None) == (route == "table")
        while kept:
            value = removals.value()
            assert value == pytest.approx(dual_objective(alpha, inst.gram(kept), inst.y), rel=1e-12,
                                          abs=1e-10 * alpha.sum())
            got = removals.values(kept)
            assert [removals.values([j])[0] for j in kept[::-1]] == got.tolist()[::-1]
            for j, v in zip(kept, got):
                rest = [e for e in kept if e != j]
                want = dual_objective(alpha, inst.gram(rest), inst.y) if rest else \
                    0.5 * inst.kernel.coef0 ** inst.kernel.degree * (alpha @ inst.y) ** 2 - alpha.sum()
                assert v == pytest.approx(want, rel=1e-12, abs=1e-10 * alpha.sum()), (seed, kept, j)
            j = kept[int(rng.integers(len(kept)))]
            kept.remove(j)
            removals.remove(j)


def test_the_moment_table_is_taken_where_cheaper():
    """The table of all n features replaces the base matrix's removals on the paper's small-n polynomial cases
    (BCD poly2, Ionosphere poly3), not where its monomials are many (Sonar poly5: C(65, 5) of them)."""

    assert MomentTable.cheaper(569, 30, 2) and MomentTable.cheaper(351, 34, 3)
    assert not MomentTable.cheaper(208, 60, 5)


def test_gaussian_subset_values_are_those_of_the_gram():
    """GaussianKernel.subset_quads (one compiled pass over the upper triangle per subset, entries with the compiled
    Gram's bits) equals 1/2 v'K v - e'alpha of the Gram to rounding, for two subsets of one size in one batch, the
    whole feature set and one feature; a batch's values do not depend on the batch."""
    for seed in range(6):
        inst, alpha, subset = random_case(seed, "rbf", "paper" if seed % 2 else "fit")
        fixed = FixedAlpha(inst, alpha)
        others = [j for j in range(inst.n) if j not in subset]
        same_size = [subset, tuple(sorted([*subset[1:], others[0]]))]
        assert fixed.values(same_size).tolist() == [fixed.values([S])[0] for S in same_size]
        for S in [*same_size, tuple(range(inst.n)), subset[:1]]:
            value = fixed.values([S])[0]
            K = inst.kernel.gram(inst.X, list(S))
            want = dual_objective(alpha, K, inst.y)
            scale = 0.5 * np.abs(alpha * inst.y) @ np.abs(K) @ np.abs(alpha * inst.y) + alpha.sum()
            assert abs(value - want) <= 1e-12 * scale, (seed, S)
