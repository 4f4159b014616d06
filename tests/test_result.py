"""Result serialisation and the Incumbent's bookkeeping in both senses (incl. Remark 1's certificate)."""
import json

import numpy as np
import pytest

from minlp_fs.instance import make_instance
from minlp_fs.result import TERMINATIONS, Incumbent, Result, TracePoint

Y = np.array([1.0] * 4 + [-1.0] * 6)
X = np.random.default_rng(0).uniform(size=(10, 4))


def instance(sense="paper"):
    return make_instance(X, Y, 2, C=10.0, sense=sense, feature_names=["a", "b", "c", "d"])


def test_to_json_round_trip():
    r = Result(method="ls", sense="fit", objective=np.float64(-12.5), features=[np.int64(0), 2],
               feature_names=["a", "c"], alpha=np.array([0.0, 1.5]), status="converged",
               wall_time_s=0.25, n_svm_solves=np.int64(17), bound=float("inf"),
               trace=[TracePoint(0.1, -10.0, "start"), TracePoint(0.2, -12.5, "swap")],
               info={"iters": np.int32(3), "subset": (1, 2), "gap": np.nan})
    d = json.loads(r.to_json())
    assert {"method", "sense", "objective", "features", "status", "certified", "wall_time_s",
            "n_svm_solves"} <= d.keys()
    assert (d["method"], d["sense"], d["objective"], d["features"], d["status"]) == \
        ("ls", "fit", -12.5, [0, 2], "converged")
    assert (d["certified"], d["degenerate"], d["wall_time_s"], d["n_svm_solves"]) == (False, False, 0.25, 17)
    assert d["bound"] is None and d["alpha"] is None
    assert d["trace"] == [{"time_s": 0.1, "value": -10.0, "source": "start"},
                          {"time_s": 0.2, "value": -12.5, "source": "swap"}]
    assert d["info"] == {"iters": 3, "subset": [1, 2], "gap": None}
    assert json.loads(r.to_json(with_alpha=True))["alpha"] == [0.0, 1.5]
    assert r.ok


def test_result_without_answer():
    r = Result("scip", "paper", None, [], [], None, "unavailable", message="pyscipopt is not installed")
    assert not r.ok
    d = json.loads(r.to_json(with_alpha=True))
    assert d["objective"] is None and d["alpha"] is None and d["message"] == "pyscipopt is not installed"


def test_unknown_status():
    with pytest.raises(ValueError, match="unknown status 'done'"):
        Result("ls", "paper", 1.0, [], [], None, "done")
    assert "optimal" in TERMINATIONS and "converged" in TERMINATIONS


@pytest.mark.parametrize("sense, values, expected, best", [
    ("paper", [-5.0, -7.0, -6.0, -7.0, -8.0], [True, True, False, False, True], -8.0),
    ("fit", [-5.0, -7.0, -4.0, -4.0, -6.0], [True, False, True, False, False], -4.0)])
def test_incumbent_keeps_the_better_value(sense, values, expected, best):
    seen = []
    inc = Incumbent(instance(sense), callback=seen.append)
    accepted = [inc.offer(v, (k % 4, (k + 1) % 4), np.full(10, k), source=f"s{k}") for k, v in enumerate(values)]
    assert accepted == expected
    assert inc.value == best
    k_best = values.index(best)
    assert inc.subset == (k_best % 4, (k_best + 1) % 4) and inc.alpha[0] == k_best
    assert [t.value for t in inc.trace] == [v for v, a in zip(values, accepted) if a]
    assert [t.source for t in inc.trace] == [f"s{k}" for k, a in enumerate(accepted) if a]
    assert seen == inc.trace
    times = [t.time_s for t in inc.trace]
    assert times == sorted(times) and times[0] >= 0

    r = inc.result("ls", "converged", n_svm_solves=5, info={"x": 1})
    assert (r.method, r.sense, r.objective, r.status, r.n_svm_solves) == ("ls", sense, best, "converged", 5)
    assert r.features == sorted(inc.subset) and r.feature_names == ["abcd"[j] for j in r.features]
    assert not r.certified and not r.degenerate and r.bound is None and r.info == {"x": 1}
    assert r.trace == inc.trace and r.trace is not inc.trace and r.wall_time_s >= times[-1]


def test_paper_incumbent_at_the_trivial_bound_is_certified():
    inst = instance("paper")
    assert inst.trivial_bound == -80.0
    inc = Incumbent(inst)
    inc.offer(-70.0, (0, 1), None)
    inc.offer(-80.0, (1, 3), None, "greedy")
    r = inc.result("greedy", "converged", n_svm_solves=3)
    assert r.certified and r.degenerate and r.status == "optimal"
    assert r.bound == -80.0 and "trivial bound" in r.message
    assert json.loads(r.to_json())["certified"] is True


def test_fit_incumbent_at_the_trivial_bound_is_not_certified():
    inc = Incumbent(instance("fit"))
    inc.offer(-80.0, (0, 1), None)
    r = inc.result("ls", "converged", n_svm_solves=1, message="done")
    assert r.degenerate and not r.certified and r.status == "converged" and r.message == "done"


def test_empty_incumbent():
    r = Incumbent(instance()).result("ls", "interrupted", n_svm_solves=0)
    assert r.objective is None and r.features == [] and not r.degenerate and not r.ok
    assert json.loads(r.to_json())["objective"] is None


def test_every_certified_result_states_its_tolerance():
    """A certified claim states its tolerance, whichever route made it (review of the eighth session: only
    `minlp-fs certify` added it): the KKT tolerance of an exact method's solves, or the trivial bound's."""
    from minlp_fs import solve
    from minlp_fs.datasets import make_synthetic
    from minlp_fs.instance import make_instance
    from minlp_fs.objective import TRIVIAL_RTOL

    d = make_synthetic(m=40, seed=3)
    inst = make_instance(d.X, d.y, B=2, kernel="poly2")
    for method in ("enumerate", "bnb"):
        r = solve(inst, method)
        assert r.certified and r.info["tolerance"] == {"kkt": 1e-5} and "KKT tolerance 1e-05" in r.message
    r = solve(inst, "ls")
    assert not r.certified and "tolerance" not in r.info
    trivial = solve(make_instance(d.X, d.y, B=1, kernel="poly2", C=1e-4), "ls")
    assert trivial.certified and trivial.info["tolerance"] == {"trivial_bound_rtol": TRIVIAL_RTOL}
