"""The alpha-start: greedy elimination at the all-features alpha, then one exact fit."""
import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.datasets import make_synthetic
from minlp_fs.errors import InputError
from minlp_fs.heuristics.alpha_start import AlphaStart
from minlp_fs.heuristics.greedy import plain_greedy
from minlp_fs.heuristics.screening import FixedAlpha
from minlp_fs.heuristics.starts import resolve_start
from minlp_fs.instance import make_instance
from minlp_fs.methods import get_method


def instance(kernel="poly2", sense="paper", B=3):
    d = make_synthetic(m=50, n_informative=3, n_noise=6, seed=4)
    return make_instance(d.X, d.y, B=B, kernel=kernel, sense=sense)


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "rbf"])
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_alpha_start_is_the_greedy_at_the_full_alpha_refitted(kernel, sense):
    inst = instance(kernel, sense)
    r = AlphaStart().solve(inst)
    assert r.method == "alpha-start" and r.status in ("converged", "optimal") and r.n_svm_solves == 2
    assert tuple(r.features) == inst.check_subset(r.features) and len(r.features) == inst.B
    # independent replay: full fit, plain greedy in the instance's sense, fresh fit
    oracle = AlphaSubproblem(inst)
    full = oracle.solve(range(inst.n))
    assert tuple(r.features) == plain_greedy(FixedAlpha(inst, full.alpha), inst.B, sign=inst.sign).subset
    assert r.objective == pytest.approx(oracle.solve(r.features).value, rel=1e-6)
    assert r.objective == pytest.approx(inst.objective(r.alpha, r.features), rel=1e-12)
    lazy = kernel != "rbf" and sense == "paper"
    assert r.info["greedy"] == ("lazy" if lazy else "plain")
    assert set(r.info["elimination_order"]) | set(r.features) == set(range(inst.n))


def test_alpha_start_is_the_default_start_and_is_registered():
    inst = instance()
    assert resolve_start(inst, None) == tuple(AlphaStart().solve(inst).features)
    assert isinstance(get_method("alpha-start"), AlphaStart)


def test_alpha_start_with_B_equal_n_keeps_everything():
    inst = instance(B=9)
    r = AlphaStart().solve(inst)
    assert r.features == list(range(9)) and r.n_svm_solves == 1


def test_alpha_start_rejects_a_start():
    with pytest.raises(InputError, match="no start"):
        AlphaStart().solve(instance(), start=[0, 1, 2])


def test_alpha_start_shares_the_oracle():
    inst = instance()
    oracle = AlphaSubproblem(inst)
    r = AlphaStart().solve(inst, oracle=oracle)
    assert oracle.cached(r.features) is not None and np.array_equal(oracle.cached(r.features).alpha, r.alpha)
