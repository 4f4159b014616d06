"""Multistart over k shared random starts (paper section 5.1.2, Table b2-summary)."""
import json
from dataclasses import dataclass

import numpy as np
import pytest

from minlp_fs.datasets import make_synthetic
from minlp_fs.errors import InputError
from minlp_fs.heuristics.local_search import LocalSearch
from minlp_fs.heuristics.multistart import multistart, shared_starts
from minlp_fs.heuristics.starts import random_subset
from minlp_fs.instance import make_instance
from minlp_fs.methods import Method


def instance(sense="fit", kernel="rbf"):
    d = make_synthetic(m=50, n_informative=3, n_noise=7, seed=4)
    return make_instance(d.X, d.y, B=4, kernel=kernel, sense=sense)


def test_same_seed_same_starts_for_every_method():
    inst = instance()
    a = multistart("ls", inst, k=4, seed=7)
    b = multistart(LocalSearch(), inst, k=4, seed=7)
    c = multistart("ls*", inst, k=4, seed=7)
    rng = np.random.default_rng(7)
    expected = [random_subset(inst.n, inst.B, rng) for _ in range(4)]
    assert a.starts == b.starts == c.starts == expected == shared_starts(inst, 4, 7)
    assert [r.info["start"] for r in c.results] == [list(s) for s in expected]
    assert [r.objective for r in a.results] == [r.objective for r in b.results]
    assert multistart("ls", inst, k=4, seed=8).starts != expected


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_statistics(sense):
    inst = instance(sense, "poly2")
    ms = multistart("ls", inst, k=5, seed=1)
    values = [r.objective for r in ms.results]
    scores = [inst.score(v) for v in values]
    assert len(ms.results) == 5 and ms.completed == [0, 1, 2, 3, 4] and not ms.interrupted
    assert ms.best is ms.results[int(np.argmin(scores))]
    assert ms.best_objective == values[int(np.argmin(scores))]
    assert ms.worst_objective == values[int(np.argmax(scores))]
    assert ms.mean_objective == pytest.approx(np.mean(values))
    spread = 100 * (max(scores) - min(scores)) / abs(ms.best_objective)
    assert ms.spread == pytest.approx(spread) and ms.spread >= 0
    assert ms.spread_to(2 * ms.best_objective) == pytest.approx(spread / 2)
    d = json.loads(json.dumps(ms.to_dict()))
    assert d["k"] == 5 and d["best_objective"] == ms.best_objective and len(d["results"]) == 5
    assert ms.total_time_s >= sum(r.wall_time_s for r in ms.results) * 0.99


def test_any_n_jobs_same_result():
    inst = instance()
    one = multistart("ls*", inst, k=3, seed=2)
    two = multistart("ls*", inst, k=3, seed=2, n_jobs=2)
    assert [(r.features, r.objective) for r in one.results] == [(r.features, r.objective) for r in two.results]


@dataclass
class _Interrupted(Method):
    """Finishes two runs, then behaves like Ctrl-C on the third."""

    name = "interrupted-after-two"
    uses_start = True
    calls: int = 0

    def solve(self, instance, start=None, oracle=None, callback=None):
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return LocalSearch().solve(instance, start=start)


def test_ctrl_c_keeps_finished_runs():
    ms = multistart(_Interrupted(), instance(), k=5, seed=0)
    assert ms.interrupted and ms.completed == [0, 1] and len(ms.results) == 2
    assert ms.best in ms.results


@dataclass
class _NoStart(Method):
    name = "no-start"

    def solve(self, instance, start=None, oracle=None, callback=None):
        raise AssertionError("not called")


def test_bad_input():
    inst = instance()
    with pytest.raises(InputError, match="start-dependent"):
        multistart(_NoStart(), inst)
    for bad in (0, True, 2.5):
        with pytest.raises(InputError, match=r"multistart: k \(number of starts\) must be an integer >= 1"):
            multistart("ls", inst, k=bad)
    with pytest.raises(InputError, match="n_jobs"):
        multistart("ls", inst, n_jobs=0)
    with pytest.raises(InputError, match="multistart: seed must be an integer >= 0; got -1"):
        multistart("ls", inst, seed=-1)
