"""probe_solves.solve_probes: a node's probes in compiled chunks give what the per-probe path gives
(AlphaSubproblem.solve_gram on ProbeGrams' matrix, then f and primal_lower_bound at the alpha reached), and hand back
the probes that path would treat otherwise."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.exact.bounds import primal_lower_bound
from minlp_fs.exact.probe_gram import ProbeGrams
from minlp_fs.exact.probe_solves import solve_probes
from minlp_fs.instance import make_instance
from minlp_fs.objective import dual_objective
from minlp_fs.result import Status
from minlp_fs.stopping import SearchStopped

from bnb_helpers import random_instance


def _node(seed, kernel, n=6):
    inst = random_instance(seed, 30, n, 3, kernel, "paper")
    fixed = (seed % n,)
    free = [j for j in range(n) if j not in fixed]
    warm = AlphaSubproblem(inst, tol=1e-9).solve(fixed).alpha
    return inst, fixed, free, warm


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "poly5"])
@given(seed=st.integers(0, 10_000), stop=st.booleans())
@settings(max_examples=10, deadline=None)
def test_the_compiled_probes_are_the_per_probe_solves(kernel, seed, stop):
    """Same alpha bit for bit (same matrix, start, gradient and SMO steps), same early stops; f and the bound to
    rounding. ``stop``: an incumbent 1e-3 (relative) below the least probe value and a tight tolerance, so that the
    probes stop early once their bound comes within 1e-3 of g (unless one converges first: few steps at m = 30)."""
    _compare(kernel, seed, stop)


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "poly5"])
def test_the_compiled_probes_stop_early_as_the_per_probe_solves(kernel):
    """The comparison above with an incumbent to stop against: the probes of these nodes do stop early."""
    assert sum(_compare(kernel, seed, True) for seed in range(4)) > 0


def _compare(kernel, seed, stop) -> int:
    """The probes of a random node by solve_probes and by solve_gram, compared; returns how many stopped early."""
    inst, fixed, free, warm = _node(seed, kernel)
    grams = ProbeGrams(inst, fixed)
    exact_values = [AlphaSubproblem(inst, tol=1e-9).solve_gram(grams.gram(j))[0] for j in free]
    exact_values = [dual_objective(a, grams.gram(j), inst.y) for a, j in zip(exact_values, free)]
    least = min(exact_values)
    incumbent, tol = (least - 1e-3 * max(1.0, abs(least)), 1e-9) if stop else (None, 1e-3)
    oracle = AlphaSubproblem(inst, tol=tol, cache=False)
    batch = solve_probes(grams, free, warm, oracle, incumbent, lambda: None)
    assert oracle.n_solves == len(free)
    reference = AlphaSubproblem(inst, tol=tol, cache=False)
    for j in free:
        K = grams.gram(j)
        alpha, exact = reference.solve_gram(K, warm, incumbent)
        got_exact, got_alpha, value, bound = batch[j]
        assert got_exact == exact and np.array_equal(got_alpha, alpha)
        if exact:
            assert value == pytest.approx(dual_objective(alpha, K, inst.y), rel=1e-12, abs=1e-12)
            assert bound == pytest.approx(primal_lower_bound(K, inst.y, inst.C, alpha), rel=1e-12, abs=1e-12)
    return sum(not batch[j][0] for j in free)


@pytest.mark.parametrize("kernel", ["poly2", "poly5"])
@given(seed=st.integers(0, 10_000), stop=st.booleans())
@settings(max_examples=10, deadline=None)
def test_the_compiled_grouped_probes_are_the_per_probe_solves(kernel, seed, stop):
    """On rows that repeat (3 levels per feature, as Cleveland's categorical features), each probe is solved over
    the duplicate-row groups the oracle gives it, as solve_gram(groups=...) solves it: the same alpha bit for bit and
    the same early stops; f and the bound to rounding."""
    rng = np.random.default_rng(seed)
    m, n = 40, 5
    X = rng.integers(0, 3, size=(m, n)) / 2.0
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 0.5, m) > 1.0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    inst = make_instance(X, y, 3, kernel, C=1.0, scaling="none")
    fixed, free = (0,), list(range(1, n))
    warm = AlphaSubproblem(inst, tol=1e-9).solve(fixed).alpha
    grams = ProbeGrams(inst, fixed)
    groups = {j: AlphaSubproblem(inst).groups((0, j)) for j in free}
    assert any(g is not None for g in groups.values())
    values = [dual_objective(AlphaSubproblem(inst, tol=1e-9).solve_gram(grams.gram(j), groups=groups[j])[0],
                             grams.gram(j), inst.y) for j in free]
    incumbent, tol = (min(values) - 1e-3 * max(1.0, abs(min(values))), 1e-9) if stop else (None, 1e-3)
    batch = solve_probes(grams, free, warm, AlphaSubproblem(inst, tol=tol, cache=False), incumbent, lambda: None,
                         groups=groups)
    reference = AlphaSubproblem(inst, tol=tol, cache=False)
    for j in free:
        K = grams.gram(j)
        stats = {}
        alpha, exact = reference.solve_gram(K, warm, incumbent, groups=groups[j], stats=stats)
        got_exact, got_alpha, value, bound = batch[j]
        assert got_exact == exact and np.array_equal(got_alpha, alpha)
        if exact:
            assert value == pytest.approx(dual_objective(alpha, K, inst.y), rel=1e-12, abs=1e-12)
            assert bound == pytest.approx(primal_lower_bound(K, inst.y, inst.C, alpha), rel=1e-12, abs=1e-12)
        else:
            assert value == stats["value"]


def test_a_probe_whose_matrix_is_not_finite_is_handed_back():
    inst, fixed, free, warm = _node(1, "poly3")
    grams = ProbeGrams(inst, fixed)
    grams.base = grams.base.copy()
    grams.base[0, 0] = np.inf   # every probe's K_00 overflows
    batch = solve_probes(grams, free, warm, AlphaSubproblem(inst, tol=1e-3), None, lambda: None)
    assert batch == dict.fromkeys(free)


def test_the_time_limit_is_checked_before_each_chunk(monkeypatch):
    from minlp_fs.exact import probe_solves

    inst, fixed, free, warm = _node(2, "poly2")
    grams = ProbeGrams(inst, fixed)
    monkeypatch.setattr(probe_solves, "CHUNK_ENTRIES", 2 * inst.m ** 2)   # two probes per compiled call
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise SearchStopped(Status.TIME_LIMIT, "time limit")

    oracle = AlphaSubproblem(inst, tol=1e-3)
    with pytest.raises(SearchStopped):
        solve_probes(grams, free, warm, oracle, None, check)
    assert len(calls) == 2 and oracle.n_solves == 2
