"""Enumeration's opened solves (alpha/opening.py, solvers/opened_walk.py) compute what the matrix's solves compute.

The claim is exact: the swap's pass gives the bits of swap + apply + SMO's full gradient, SMO's opening steps
on rows computed from the base are the full solve's first steps, and an enumeration chunk returns the same
best subset, value, alpha and counts with or without them, bit for bit; for the polynomial kernels and the
Gaussian one (whose walk may send subsets to their matrices: ``Routes``).
"""
import itertools
import math

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.alpha import opening as opening_module
from minlp_fs.alpha.opening import Opening, _opening
from minlp_fs.alpha.smo import _full_gradient, feasible_start, smo_solve
from minlp_fs.datasets import make_synthetic
from minlp_fs.instance import make_instance
from minlp_fs.kernels import GaussianKernel, PolynomialKernel, _swap_gradient
from minlp_fs.solvers import enumeration, opened_walk
from minlp_fs.solvers.revolving_door import start_state


def _instance(kernel="poly3", B=4, sense="fit", m=60, n=9, seed=0, levels=None):
    d = make_synthetic(m=m, n_informative=3, n_noise=n - 3, seed=seed)
    X = d.X if levels is None else np.floor(d.X * levels) / levels   # few values per feature: repeated rows
    return make_instance(X, d.y, B, kernel, sense=sense)


def _feasible_alpha(inst, seed):
    rng = np.random.default_rng(seed)
    alpha = np.where(rng.random(inst.m) < 0.4, inst.C, rng.random(inst.m) * inst.C)
    pos, neg = inst.y > 0, inst.y < 0
    alpha[neg] *= alpha[pos].sum() / alpha[neg].sum()   # y'alpha = 0, inside the box for these draws
    return feasible_start(np.minimum(alpha, inst.C), inst.y, inst.C)


@pytest.mark.parametrize("kernel", ["poly1", "poly2", "poly3", "poly4", "poly5", "rbf"])
@pytest.mark.parametrize("m", [60, 351])
def test_swap_pass_gives_the_bits_of_swap_apply_and_full_gradient(kernel, m):
    inst = _instance(kernel, m=m)
    kern, X, y = inst.kernel, inst.X, inst.y.astype(float)
    alpha = _feasible_alpha(inst, m)
    base = kern.base(X, [0, 2, 5])
    expected_base = kern.swap(base.copy(), X, 2, 7)
    K = kern.apply(expected_base)
    expected_grad = np.empty(inst.m)
    _full_gradient(K, y, alpha, expected_grad)
    grad, diag = np.empty(inst.m), np.empty(inst.m)
    _swap_gradient(base, np.ascontiguousarray(X[:, 2]), np.ascontiguousarray(X[:, 7]), *kern.compiled_phi, y, alpha,
                   grad, diag, np.empty(inst.m), np.empty(2 * inst.m))
    assert np.array_equal(base, expected_base)
    assert np.array_equal(grad, expected_grad)
    assert np.array_equal(diag, np.diagonal(K))


@pytest.mark.parametrize("kernel", ["poly2", "poly5", "rbf"])
@pytest.mark.parametrize("steps", [0, 1, 7, 30])
def test_opening_takes_the_full_solves_first_steps(kernel, steps):
    """Stopping after exactly ``steps`` steps (a threshold just below f there), the opening returns the full
    solve's alpha and tracked value, bit for bit; with fewer steps allowed it does not decide."""
    inst = _instance(kernel)
    kern, y, C = inst.kernel, inst.y.astype(float), float(inst.C)
    base = kern.base(inst.X, [1, 3, 4, 8])
    K = kern.apply(base)
    alpha0 = _feasible_alpha(inst, steps)
    grad0 = np.empty(inst.m)
    _full_gradient(K, y, alpha0, grad0)
    path = smo_solve(K, y, C, alpha0=alpha0, tol=1e-5, max_iter=steps)   # f after ``steps`` steps
    assert path.iterations == steps
    below = path.value + 1e-9 * abs(path.value)   # f there is below it, f one step earlier is not
    full = smo_solve(K, y, C, alpha0=alpha0, tol=1e-5, below=below)
    assert full.stopped_early and full.iterations == steps
    buffers, U = np.empty((7, inst.m)), np.full(inst.m, C)
    args = (base, *kern.compiled_phi, np.diagonal(K).copy(), y, U)
    alpha, grad = alpha0.copy(), grad0.copy()
    n_pos, work = int((y > 0).sum()), np.empty(2 * inst.m)
    decided, taken, value = _opening(*args, alpha, grad, 1e-5, np.inf, below, steps, n_pos, buffers, work)
    assert decided and taken == steps
    assert np.array_equal(alpha, full.alpha) and value == full.value
    if steps:
        assert not _opening(*args, alpha0.copy(), grad0.copy(), 1e-5, np.inf, below, steps - 1, n_pos, buffers,
                            work)[0]


def _chunks(inst, start, stop, monkeypatch, opened: bool):
    with monkeypatch.context() as patch:
        if not opened:
            patch.setattr(Opening, "applies", staticmethod(lambda oracle: False))
        patch.setattr(enumeration, "REBUILD_EVERY", 11)   # several rebuilds within the chunk
        return enumeration._enumerate_chunk(inst, start, stop, "smo", 1e-5)


@pytest.mark.parametrize("kernel,B,levels", [("poly2", 4, None), ("poly3", 3, None), ("poly5", 5, None),
                                             ("poly3", 3, 2), ("poly2", 4, 3), ("rbf", 4, None), ("rbf", 3, 2)])
def test_enumeration_chunk_is_the_same_with_and_without_the_opening(kernel, B, levels, monkeypatch):
    inst = _instance(kernel, B=B, levels=levels)
    calls = []
    cls = type(inst.kernel)
    apply = cls.apply
    monkeypatch.setattr(cls, "apply", lambda self, *a, **k: calls.append(1) or apply(self, *a, **k))
    total = math.comb(inst.n, B)
    for start, stop in [(0, 80), (17, total)]:
        calls.clear()
        opened = _chunks(inst, start, stop, monkeypatch, True)
        n_opened = len(calls)
        plain = _chunks(inst, start, stop, monkeypatch, False)
        assert opened.best_rank == plain.best_rank and opened.best_value == plain.best_value
        assert np.array_equal(opened.best_alpha, plain.best_alpha)
        assert (opened.n_done, opened.n_stopped_early, opened.n_rebuilds) == \
            (plain.n_done, plain.n_stopped_early, plain.n_rebuilds)
        assert n_opened <= len(calls) - n_opened   # never more matrices than without the opening
        if levels is None and kernel != "rbf":   # rows all distinct: most stops decided without a kernel matrix
            assert n_opened < (stop - start) / 2 < len(calls) - n_opened


def test_opening_applies_to_kernels_with_compiled_passes_solved_by_smo():
    assert Opening.applies(AlphaSubproblem(_instance("poly2", sense="fit")))
    assert Opening.applies(AlphaSubproblem(_instance("poly2", sense="paper")))
    assert Opening.applies(AlphaSubproblem(_instance("rbf", sense="paper")))
    assert not Opening.applies(AlphaSubproblem(_instance("poly2", sense="fit"), backend="libsvm"))


def test_opened_walk_reports_every_rank_once(monkeypatch):
    """Runs and handed-back subsets together cover ranks start..stop-1 in order, whatever the threshold."""
    inst = _instance("poly3", B=4)
    oracle = AlphaSubproblem(inst, cache=False)
    for threshold in (None, -1e9, 0.0, -40.0):
        seen, last = 0, None
        for rank, subset, fit, rebuilt, decided in opened_walk.opened_fits(Opening(oracle), 5, 120,
                                                                           lambda: threshold, 13):
            seen += decided + (fit is not None)
            assert rank == 5 + seen - 1 and (last is None or rank > last)
            last = rank
        assert seen == 115


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "poly5", "rbf"])
def test_paper_sense_opening_decides_only_subsets_worse_than_the_threshold(kernel):
    """In the paper sense the opening stops a subset once the hinge-bias primal bound exceeds ``above``: every
    subset it decides has g > above (g solved to 1e-10), from random starts, for thresholds around g."""
    inst = _instance(kernel, B=3, sense="paper", seed=3)
    kern, y, C = inst.kernel, inst.y.astype(float), float(inst.C)
    oracle = AlphaSubproblem(inst, tol=1e-10, cache=False)
    buffers, U, n_pos, work = np.empty((7, inst.m)), np.full(inst.m, C), int((y > 0).sum()), np.empty(2 * inst.m)
    decided_count = 0
    for S in list(itertools.combinations(range(inst.n), 3))[::4]:
        g = oracle.solve(S).value
        base = kern.base(inst.X, S)
        K = kern.apply(base)
        for seed, margin in itertools.product(range(2), (-0.5, -0.05, -1e-6, 0.05)):
            alpha = _feasible_alpha(inst, seed)
            grad = np.empty(inst.m)
            _full_gradient(K, y, alpha, grad)
            above = g + margin * abs(g)
            decided, taken, _ = _opening(base, *kern.compiled_phi, np.diagonal(K).copy(), y, U, alpha, grad, 1e-5,
                                         above, -np.inf, 100, n_pos, buffers, work)
            if decided:
                decided_count += 1
                assert g > above, (S, seed, margin, taken)
    assert decided_count > 20


@pytest.mark.parametrize("kernel,B,levels", [("poly2", 4, None), ("poly3", 3, None), ("poly5", 5, None),
                                             ("poly3", 3, 2), ("rbf", 4, None), ("rbf", 3, 2)])
def test_paper_sense_chunk_finds_the_optimum_with_and_without_the_opening(kernel, B, levels, monkeypatch):
    """The paper sense's opened chunk stops other subsets than the matrix's (a stronger bound, checked on the
    opening's own schedule) but finds the same best subset: the least g over the chunk's ranks, by brute force."""
    inst = _instance(kernel, B=B, levels=levels, sense="paper", seed=5)
    oracle = AlphaSubproblem(inst, tol=1e-9, cache=False)
    total = math.comb(inst.n, B)
    values = [oracle.solve(tuple(start_state(r, inst.n, B)[1:B + 1].tolist())).value for r in range(total)]
    for start, stop in [(0, 80), (17, total)]:
        opened = _chunks(inst, start, stop, monkeypatch, True)
        plain = _chunks(inst, start, stop, monkeypatch, False)
        best = start + int(np.argmin(values[start:stop]))
        assert opened.best_rank == plain.best_rank == best
        assert opened.best_value == pytest.approx(values[best], rel=1e-6)
        assert opened.n_done == plain.n_done == stop - start
        assert opened.n_stopped_early > (stop - start) / 2 and plain.n_stopped_early > (stop - start) / 2


def test_routes_send_subsets_to_their_matrices_after_a_window_the_opening_seldom_decided():
    routes = opened_walk.Routes(adaptive=True)
    probe, run = routes.PROBE, routes.MATRIX_RUN
    routes.record(probe // 2, 0)                      # half a window decided: the opening goes on
    routes.record(probe // 2, 0)
    assert not routes.by_matrix()
    routes.record(probe // 2 - 1, probe // 2 + 1)     # fewer than half: the next MATRIX_RUN subsets by matrix
    assert [routes.by_matrix() for _ in range(run + 1)] == [True] * run + [False]
    cheap = opened_walk.Routes(adaptive=False)        # polynomial kernels: always the opening
    cheap.record(0, 10 * probe)
    assert not cheap.by_matrix() and cheap.window > 10 ** 9


def test_gaussian_walk_takes_both_routes_and_finds_what_the_matrices_find(monkeypatch):
    """With openings of no steps (the bounds at the warm start alone), which decide fewer subsets, the walk sends runs
    to the matrices and still returns the plain chunk's best subset, value, alpha and counts, bit for bit (fit
    sense)."""
    inst = _instance("rbf", B=4)
    monkeypatch.setattr(opened_walk, "OPENING_STEPS", 0)
    monkeypatch.setattr(opening_module, "OPENING_STEPS", 0)
    monkeypatch.setattr(opened_walk.Routes, "PROBE", 8)
    taken = []
    by_matrix = opened_walk.Routes.by_matrix
    monkeypatch.setattr(opened_walk.Routes, "by_matrix", lambda self: taken.append(by_matrix(self)) or taken[-1])
    total = math.comb(inst.n, 4)
    opened = _chunks(inst, 0, total, monkeypatch, True)
    plain = _chunks(inst, 0, total, monkeypatch, False)
    assert any(taken) and not all(taken)
    assert (opened.best_rank, opened.best_value, opened.n_done, opened.n_stopped_early) == \
        (plain.best_rank, plain.best_value, plain.n_done, plain.n_stopped_early)
    assert np.array_equal(opened.best_alpha, plain.best_alpha)
    # subset by subset, against a fixed threshold: every Fit the walk returns is the matrix walk's at that rank
    threshold = plain.best_value - 0.3 * abs(plain.best_value)
    oracle = AlphaSubproblem(inst, tol=1e-5, cache=False)
    walk = {rank: fit for rank, _, fit, _, _ in opened_walk.opened_fits(Opening(oracle), 0, total, lambda: threshold,
                                                                        1000) if fit is not None}
    matrix = {rank: fit for rank, _, fit, _, _ in enumeration._matrix_fits(oracle, 0, total, lambda: threshold)}
    assert len(walk) > 20
    for rank, fit in walk.items():
        assert (fit.subset, fit.value, fit.exact) == (matrix[rank].subset, matrix[rank].value, matrix[rank].exact)
