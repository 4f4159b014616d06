"""RFE1 and RFE2 (paper section 5.1): feasibility, the elimination rule replayed, n_jobs, limits."""
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.datasets import make_synthetic
from minlp_fs.errors import InputError
from minlp_fs.heuristics.rfe import RFE1, RFE2
from minlp_fs.heuristics.screening import FixedAlpha
from minlp_fs.instance import make_instance
from minlp_fs.methods import get_method


def instance(kernel="poly2", sense="paper", B=3, n_noise=5):
    d = make_synthetic(m=50, n_informative=3, n_noise=n_noise, seed=2)
    return make_instance(d.X, d.y, B=B, kernel=kernel, sense=sense)


def check_result(inst, r):
    assert inst.check_subset(r.features) == tuple(r.features)
    assert r.objective == pytest.approx(AlphaSubproblem(inst).solve(r.features).value, rel=1e-6)
    assert r.objective == pytest.approx(inst.objective(r.alpha, r.features), rel=1e-12)
    order = r.info["elimination_order"]
    assert len(order) == inst.n - inst.B and set(order) | set(r.features) == set(range(inst.n))


def remove(kept, j):
    return [e for e in kept if e != j]


@pytest.mark.parametrize("kernel", ["poly3", "rbf"])
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_rfe1_discards_the_best_removal_at_the_current_alpha(kernel, sense):
    inst = instance(kernel, sense)
    r = RFE1().solve(inst)
    check_result(inst, r)
    assert r.n_svm_solves == inst.n - inst.B + 1 and r.status in ("converged", "optimal")
    oracle, kept = AlphaSubproblem(inst), list(range(inst.n))
    for j in r.info["elimination_order"]:
        fixed = FixedAlpha(inst, oracle.solve(kept).alpha)
        scores = {e: inst.score(fixed.value(remove(kept, e))) for e in kept}
        assert scores[j] == pytest.approx(min(scores.values()), rel=1e-6)
        kept = remove(kept, j)


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
@pytest.mark.parametrize("sense", ["paper", "fit"])
@pytest.mark.parametrize("n_noise", [5, 11])
def test_rfe2_discards_the_removal_of_best_refit(kernel, sense, n_noise):
    """Replayed with exact cold fits: the early stops and skips (n > CHUNK) change no elimination."""
    inst = instance(kernel, sense, n_noise=n_noise)
    r = RFE2().solve(inst)
    check_result(inst, r)
    assert r.n_svm_solves <= 1 + sum(range(inst.B + 1, inst.n + 1))
    oracle, kept = AlphaSubproblem(inst), list(range(inst.n))
    for j in r.info["elimination_order"]:
        scores = {e: inst.score(oracle.solve(remove(kept, e)).value) for e in kept}
        assert scores[j] == pytest.approx(min(scores.values()), rel=1e-6)
        kept = remove(kept, j)


def test_rfe2_is_identical_for_any_n_jobs():
    inst = instance("poly3", "fit", B=2, n_noise=7)
    a, b = RFE2(n_jobs=1).solve(inst), RFE2(n_jobs=2).solve(inst)
    assert (a.features, a.objective, a.info) == (b.features, b.objective, b.info)


@pytest.mark.parametrize("name", ["rfe1", "rfe2"])
def test_time_limit_finishes_at_fixed_alpha(name):
    inst = instance()
    r = get_method(name, time_limit=1e-9).solve(inst)
    assert r.status == "time_limit" and r.info["finished_at_fixed_alpha"] == inst.n - inst.B
    check_result(inst, r)


class InterruptingOracle(AlphaSubproblem):
    """Raises KeyboardInterrupt (once) at the k-th solve, as Ctrl-C would."""

    def __init__(self, inst, k):
        super().__init__(inst)
        self.k = k

    def solve(self, subset, warm_start=None, K=None, worse_than=None, neighbours=None):
        self.k -= 1
        if self.k == 0:
            raise KeyboardInterrupt
        return super().solve(subset, warm_start, K, worse_than, neighbours)


@pytest.mark.parametrize("method, k", [(RFE1(), 3), (RFE2(), 12)])
def test_ctrl_c_returns_a_feasible_subset(method, k):
    """Interrupted in the second elimination step (RFE2: solve 1 is all features, 2-9 the first step)."""
    inst = instance()
    r = method.solve(inst, oracle=InterruptingOracle(inst, k))
    assert r.status == "interrupted" and r.info["finished_at_fixed_alpha"] == inst.n - inst.B - 1
    check_result(inst, r)


@pytest.mark.parametrize("options", [{"n_jobs": 0}, {"time_limit": -1}, {"time_limit": "1"}])
def test_bad_options_are_named(options):
    with pytest.raises(InputError, match=next(iter(options))):
        RFE2(**options)


@pytest.mark.parametrize("name", ["rfe1", "rfe2"])
def test_the_finish_after_a_time_limit_is_one_ranking_pass(name, monkeypatch):
    """Stopped early, RFE makes the remaining removals in one fixed-alpha pass (|kept| + 1 evaluations,
    not the greedy's O(|kept|^2)), so the finish stays short on very wide data."""
    from minlp_fs.heuristics import greedy, rfe

    inst = instance()
    calls = []
    real = greedy.ranked_removal

    def counted(fixed, B, start=None, sign=None):
        step = real(fixed, B, start=start, sign=sign)
        calls.append((len(start), step.n_evals))
        return step
    monkeypatch.setattr(rfe, "ranked_removal", counted)
    monkeypatch.setattr(greedy, "plain_greedy", None)  # the quadratic greedy is not used by RFE any more
    r = get_method(name, time_limit=1e-9).solve(inst)
    assert r.status == "time_limit" and calls == [(inst.n, inst.n + 1)]
    check_result(inst, r)


def test_ranked_removal_of_one_feature_is_the_greedy_step():
    from minlp_fs.alpha import AlphaSubproblem as Oracle
    from minlp_fs.heuristics.greedy import plain_greedy, ranked_removal
    from minlp_fs.heuristics.screening import FixedAlpha

    for sense in ("paper", "fit"):
        inst = instance("poly3", sense)
        fixed = FixedAlpha(inst, Oracle(inst).solve(range(inst.n)).alpha)
        assert ranked_removal(fixed, inst.n - 1).order == plain_greedy(fixed, inst.n - 1).order
        one_pass = ranked_removal(fixed, inst.B)
        assert len(one_pass.subset) == inst.B and one_pass.n_evals == inst.n + 1
