"""The greedy beta-step: lazy = plain greedy, Proposition 2 as property tests, the Gaussian counterexample."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import polynomial_kernel

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.errors import CapabilityError, InputError
from minlp_fs.heuristics.greedy import F, H, greedy_step, lazy_greedy, plain_greedy
from minlp_fs.heuristics.screening import FixedAlpha
from minlp_fs.instance import make_instance


def random_instance(seed, degree, m=30, n=10, B=3, sense="paper"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, n))
    y = np.where(np.arange(m) % 3 == 0, 1.0, -1.0)
    rng.shuffle(y)
    return make_instance(X, y, B=B, kernel=f"poly{degree}", sense=sense)


def random_alpha(inst, kind, seed):
    """'fit': a real SVM solution on a random subset (sparse support, signed v = alpha*y);
    'positive': every alpha_i > 0 at random, rescaled per class so that y'alpha = 0."""
    rng = np.random.default_rng(seed)
    if kind == "fit":
        size = int(rng.integers(1, inst.n + 1))
        return AlphaSubproblem(inst).solve(sorted(rng.choice(inst.n, size, replace=False))).alpha
    alpha = rng.uniform(0.1, 1.0, size=inst.m)
    pos, neg = inst.y > 0, inst.y < 0
    alpha[neg] *= alpha[pos].sum() / alpha[neg].sum()
    return alpha * (0.9 * inst.C / alpha.max())


CASES = [(d, kind, seed) for d in (2, 3, 5) for kind in ("fit", "positive") for seed in range(12)]


def test_lazy_greedy_returns_the_plain_greedy_set_with_fewer_evaluations(record_property):
    lazy_total = plain_total = 0
    for degree, kind, seed in CASES:
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.integers(6, 15))
        inst = random_instance(seed, degree, m=int(rng.integers(20, 41)), n=n, B=int(rng.integers(1, n)))
        fixed = FixedAlpha(inst, random_alpha(inst, kind, seed))
        lazy, plain = lazy_greedy(fixed, inst.B), plain_greedy(fixed, inst.B, sign=1)
        assert lazy.subset == plain.subset and lazy.order == plain.order, (degree, kind, seed)
        assert len(lazy.subset) == inst.B and lazy.n_evals <= plain.n_evals
        lazy_total, plain_total = lazy_total + lazy.n_evals, plain_total + plain.n_evals
    saving = 1 - lazy_total / plain_total
    print(f"lazy greedy: {lazy_total} vs {plain_total} evaluations over {len(CASES)} cases "
          f"({100 * saving:.1f}% fewer)")
    record_property("lazy_evaluation_saving", saving)
    assert lazy_total < plain_total


def test_lazy_greedy_from_a_given_ground_set():
    inst = random_instance(3, 3, n=12, B=2)
    fixed = FixedAlpha(inst, random_alpha(inst, "fit", 3))
    start = [0, 2, 3, 5, 7, 8, 11]
    lazy = lazy_greedy(fixed, 2, start=start)
    assert lazy.subset == plain_greedy(fixed, 2, start=start, sign=1).subset
    assert set(lazy.subset) | set(lazy.order) == set(start)


def test_greedy_checks_B_and_keeps_everything_at_B_equal_n():
    inst = random_instance(2, 2, n=6)
    fixed = FixedAlpha(inst, random_alpha(inst, "fit", 2))
    assert lazy_greedy(fixed, 6) == plain_greedy(fixed, 6) == (tuple(range(6)), 1, [])
    for bad in (0, 7):
        with pytest.raises(InputError, match="out of range"):
            plain_greedy(fixed, bad)
    with pytest.raises(InputError, match="out of range"):
        lazy_greedy(fixed, 4, start=[0, 1, 2])


@pytest.mark.parametrize("sign", [1, -1])
def test_plain_greedy_removes_the_best_feature_at_each_step(sign):
    """Replayed: each removal gives the smallest (sign +1) / largest (sign -1) f at fixed alpha."""
    inst = random_instance(5, 2, n=9, B=3)
    fixed = FixedAlpha(inst, random_alpha(inst, "fit", 5))
    step = plain_greedy(fixed, 3, sign=sign)
    kept = list(range(inst.n))
    for j in step.order:
        values = {e: fixed.value([k for k in kept if k != e]) for e in kept}
        assert sign * values[j] == pytest.approx(min(sign * v for v in values.values()), rel=1e-12, abs=1e-12)
        kept.remove(j)
    assert tuple(kept) == step.subset


def test_greedy_step_picks_lazy_only_in_the_paper_sense():
    paper = random_instance(7, 2, n=10, B=4)
    fit = paper.with_params(sense="fit")
    alpha = random_alpha(paper, "fit", 7)
    assert greedy_step(FixedAlpha(paper, alpha), 4) == lazy_greedy(FixedAlpha(paper, alpha), 4)
    assert greedy_step(FixedAlpha(fit, alpha), 4) == plain_greedy(FixedAlpha(fit, alpha), 4, sign=-1)


def test_greedy_achieves_the_submodular_guarantee():
    """H(R_greedy) >= (1 - 1/e) max_{|R| = n-B} H(R) (Nemhauser et al.; H monotone submodular, Prop. 2)."""
    for seed in range(6):
        inst = random_instance(seed, 2 + seed % 2, m=25, n=7, B=3)
        fixed = FixedAlpha(inst, random_alpha(inst, "fit", seed))
        removed = lazy_greedy(fixed, 3).order
        best = max(H(fixed, R) for R in itertools.combinations(range(7), 4))
        assert H(fixed, removed) >= (1 - 1 / math.e) * best - 1e-9 * abs(best)


def test_F_is_v_K_v_by_an_independent_kernel():
    inst = random_instance(11, 3, n=6)
    alpha = random_alpha(inst, "positive", 11)
    fixed, v = FixedAlpha(inst, alpha), alpha * inst.y
    p = inst.kernel.params()
    for S in [(0,), (1, 4), (0, 2, 3, 5)]:
        K = polynomial_kernel(inst.X[:, list(S)], degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])
        assert F(fixed, S) == pytest.approx(v @ K @ v, rel=1e-10)
        # Proposition 2: F(S') = lambda - H([n] \ S')
        assert F(fixed, S) == pytest.approx(F(fixed, range(6)) - H(fixed, set(range(6)) - set(S)), rel=1e-10)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), degree=st.sampled_from([2, 3, 5]), kind=st.sampled_from(["fit", "positive"]),
       sets=st.lists(st.integers(0, 2), min_size=6, max_size=6).filter(lambda t: 2 in t))
def test_H_is_monotone_nonnegative_submodular(seed, degree, kind, sets):
    """Over n = 6 features, t_j = 0: j in A (subset of B), 1: j in B only, 2: j outside B (e among them)."""
    inst = random_instance(seed, degree, m=12, n=6, B=1)
    fixed = FixedAlpha(inst, random_alpha(inst, kind, seed))
    A = {j for j, t in enumerate(sets) if t == 0}
    Bset = {j for j, t in enumerate(sets) if t <= 1}
    e = sets.index(2)
    tol = 1e-9 * (1.0 + F(fixed, range(6)))
    assert H(fixed, ()) == 0.0
    assert H(fixed, A) >= -tol
    assert H(fixed, A) <= H(fixed, Bset) + tol
    assert H(fixed, A | {e}) - H(fixed, A) >= H(fixed, Bset | {e}) - H(fixed, Bset) - tol


@pytest.fixture
def gaussian_counterexample():
    """The appendix's data: x1 = (0,1,-0.5), x2 = (-1,-1,-1), x3 = (0,-1,0), y = (-1,1,1), gamma = 1."""
    X = np.array([[0.0, 1.0, -0.5], [-1.0, -1.0, -1.0], [0.0, -1.0, 0.0]])
    inst = make_instance(X, [-1, 1, 1], B=1, kernel="rbf", gamma=1.0, C=100.0, scaling="none")
    return FixedAlpha(inst, np.array([1.0, 0.5, 0.5]))


def test_gaussian_counterexample_numbers_and_violations(gaussian_counterexample):
    fx = gaussian_counterexample
    f1, f2, f3 = 0, 1, 2  # the paper's features 1, 2, 3 (1-based)
    expected = {(f2,): 1.9634, (f1,): 0.3161, (f1, f2): 1.6589, (f3,): 0.1263, (f1, f3): 0.5024}
    for S, value in expected.items():
        assert round(F(fx, S), 4) == value
    assert F(fx, ()) == pytest.approx(0.0, abs=1e-15)
    # e = 2, A = {}, B = {1}: Delta_e(A) > Delta_e(B), so F is not supermodular
    assert F(fx, (f2,)) - F(fx, ()) > F(fx, (f1, f2)) - F(fx, (f1,))
    # e = 3: Delta_e(A) < Delta_e(B), so F is not submodular
    assert F(fx, (f3,)) - F(fx, ()) < F(fx, (f1, f3)) - F(fx, (f1,))


def test_lazy_greedy_refuses_the_gaussian_kernel_plain_greedy_runs(gaussian_counterexample):
    with pytest.raises(CapabilityError, match="Counterexamples"):
        lazy_greedy(gaussian_counterexample, 1)
    step = plain_greedy(gaussian_counterexample, 1)
    assert step.order == [1, 0] and step.subset == (2,)  # keeps the paper's feature 3
