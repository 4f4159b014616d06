"""The stop signal and the one Deadline of Method.solve: a callback raising SearchStopped, Ctrl-C, and a
time limit honoured while the alpha-start is built and inside one screening pass."""
import time

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.api import solve
from minlp_fs.datasets import make_synthetic
from minlp_fs.heuristics import screening
from minlp_fs.heuristics.alpha_start import AlphaStart
from minlp_fs.instance import make_instance
from minlp_fs.methods import get_method
from minlp_fs.result import Status
from minlp_fs.stopping import Deadline, SearchStopped


def synthetic(n_noise=7, sense="fit", B=3):
    d = make_synthetic(m=40, n_informative=3, n_noise=n_noise, seed=1)
    return make_instance(d.X, d.y, B=B, kernel="poly2", sense=sense)


def _stop_after(k, signal):
    """A callback that raises ``signal`` at the k-th incumbent improvement (after it was recorded)."""
    seen = []

    def callback(point):
        seen.append(point)
        if len(seen) == k:
            raise signal()
    return callback, seen


@pytest.mark.parametrize("name", ["ls*", "acso*", "enumerate"])
@pytest.mark.parametrize("signal", [SearchStopped, KeyboardInterrupt])
def test_a_stop_keeps_the_incumbent_with_status_interrupted(name, signal):
    inst = synthetic()
    full = get_method(name).solve(inst, **({"start": (7, 8, 9)} if get_method(name).uses_start else {}))
    assert len(full.trace) >= 2, "the test needs at least two improvements"
    callback, seen = _stop_after(1, signal)
    kw = {"start": (7, 8, 9)} if get_method(name).uses_start else {}
    r = get_method(name).solve(inst, callback=callback, **kw)
    assert r.status == Status.INTERRUPTED == "interrupted" and r.ok
    assert len(r.trace) == 1 and r.objective == seen[0].value
    assert r.objective == pytest.approx(AlphaSubproblem(inst).solve(r.features).value, rel=1e-6)


def test_deadline_is_one_instant_and_raises_the_stop_signal():
    assert Deadline(None).remaining() is None and not Deadline(None).expired()
    Deadline(None).check()
    d = Deadline(0.0)
    assert d.expired() and d.remaining() <= 0
    with pytest.raises(SearchStopped) as err:
        d.check()
    assert err.value.status == Status.TIME_LIMIT


class SlowScreening:
    """Every fixed-alpha evaluation (screening, greedy) takes ``delay`` s; the deadline is checked each time
    (a batch of swap values is counted, and the deadline checked, per block of rows)."""

    def __init__(self, monkeypatch, delay=0.01):
        self.n = 0
        real = screening.FixedAlpha._count

        def slow(fixed, evaluations=1):
            self.n += evaluations
            time.sleep(delay * evaluations)
            return real(fixed, evaluations)
        monkeypatch.setattr(screening.FixedAlpha, "_count", slow)
        monkeypatch.setattr(screening, "CHECK_EVERY", 1)


@pytest.mark.parametrize("start", [None, "alpha-start"])
def test_time_limit_holds_while_the_alpha_start_is_built(monkeypatch, start):
    inst = synthetic(n_noise=17, sense="fit")
    full = AlphaStart().solve(inst)
    slow = SlowScreening(monkeypatch)
    r = solve(inst, "ls*", start=start, time_limit=0.1)
    assert r.status == "time_limit" and not r.ok and "before a feasible subset" in r.message
    assert slow.n < full.info["n_evaluations"] / 2     # the greedy stopped early, not at its end


def test_time_limit_holds_inside_one_screening_pass(monkeypatch):
    inst = synthetic(n_noise=17, sense="paper")
    start = (0, 4, 5)
    slow = SlowScreening(monkeypatch)
    r = get_method("ls*", time_limit=0.1).solve(inst, start=start)
    n1 = inst.B * (inst.n - inst.B)
    assert r.status == "time_limit" and r.features == list(start) and r.info["n1_steps"] == 1
    assert slow.n < n1 / 2                              # the one N1 screening pass stopped early
    assert r.n_svm_solves == 1                          # only the start: no re-fit chunk began


def test_time_limit_holds_inside_acso_star_iteration(monkeypatch):
    inst = synthetic(n_noise=17, sense="paper")
    slow = SlowScreening(monkeypatch)
    r = get_method("acso*", time_limit=0.1).solve(inst, start=(0, 4, 5))
    assert r.status == "time_limit" and r.info["stopped_by"] == "time_limit" and r.ok
    assert r.info["iterations"] == 0 and slow.n < inst.n


def test_status_is_a_str_enum_and_json_keeps_the_string():
    inst = synthetic()
    r = get_method("ls").solve(inst, start=(7, 8, 9))
    assert r.status is Status.CONVERGED and r.status == "converged" and f"{r.status}" == "converged"
    assert '"status": "converged"' in r.to_json()


def test_overrun_allows_the_grace_and_reports_beyond_it():
    from minlp_fs.stopping import OVERRUN_GRACE_S, OVERRUN_RTOL, overrun

    assert overrun(None, 1e9) is None
    edge = 10.0 * (1 + OVERRUN_RTOL) + OVERRUN_GRACE_S
    assert overrun(10.0, edge) is None
    assert overrun(10.0, edge + 0.01) == pytest.approx(edge + 0.01 - 10.0)


def test_a_run_that_ends_late_says_so(monkeypatch, small_poly_instance):
    """A unit of work that does not check the deadline (here: a sleep inside LS's search) makes the run end
    late: the Result's info and message and a TimeLimitOverrunWarning say by how much; a run within its
    limit says nothing."""
    from minlp_fs.heuristics.local_search import LocalSearch
    from minlp_fs.stopping import TimeLimitOverrunWarning

    real = LocalSearch._search

    def slow(self, run):
        time.sleep(0.8)
        return real(self, run)

    monkeypatch.setattr(LocalSearch, "_search", slow)
    with pytest.warns(TimeLimitOverrunWarning, match=r"ls: the run ended 0\.\d+ s after its time limit of 0\.1 s"):
        late = solve(small_poly_instance, "ls", time_limit=0.1)
    assert late.info["time_limit_overrun_s"] >= 0.7
    assert "after its time limit of 0.1 s" in late.message
    monkeypatch.setattr(LocalSearch, "_search", real)
    on_time = solve(small_poly_instance, "ls", time_limit=30)
    assert "time_limit_overrun_s" not in on_time.info and "time limit" not in on_time.message


def test_a_few_costly_fixed_alpha_evaluations_are_checked_one_chunk_at_a_time(monkeypatch):
    """The deadline is read at every count, and a batch is cut into chunks of at most CHECK_ENTRIES kernel entries:
    at a limit already passed, a batch of 50 evaluations stops after its first chunk (here of 1 evaluation)."""
    from minlp_fs.heuristics.screening import FixedAlpha
    from minlp_fs.stopping import Deadline, SearchStopped

    inst = synthetic(n_noise=17, sense="fit")
    fixed = FixedAlpha(inst, np.full(inst.m, 0.5), deadline=Deadline(1e-9))
    time.sleep(0.01)
    monkeypatch.setattr(screening, "CHECK_ENTRIES", 1)
    with pytest.raises(SearchStopped):
        fixed._batched(lambda chunk: np.zeros(len(chunk)), list(range(50)))
    assert fixed.n_evals == 1
