"""Paper sense: the loose probes whose weak-duality bracket straddles the incumbent are re-solved
(paper_probes.PaperProbes._tighten). Every probe score the search records is a lower bound of g(I + j), the
optimum is enumeration's and the certificate replays; a very loose probe tolerance makes straddles common."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.api import solve
from minlp_fs.exact import search
from minlp_fs.exact.certificate import verify_file

from bnb_helpers import random_instance, value_table


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


#: KKT tolerance of the inner probes here: their -P lies far below g, so brackets straddle the incumbent
VERY_LOOSE = 0.5


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "poly5"])
@given(seed=st.integers(0, 10_000), n=st.integers(4, 8), data=st.data())
@settings(max_examples=8, deadline=None)
def test_recorded_probe_scores_are_lower_bounds_and_the_optimum_is_enumerations(tmp_path_factory, kernel, seed, n,
                                                                                data):
    B = data.draw(st.integers(2, n - 1))
    inst = random_instance(seed, 30, n, B, kernel, "paper")
    path = tmp_path_factory.mktemp("tight") / "cert.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "PROBE_TOL", VERY_LOOSE)
        res = solve(inst, "bnb", incumbent="none", certificate=str(path))
    enum = solve(inst, "enumerate")
    assert res.certified and close(res.objective, enum.objective)
    table = value_table(inst, range(1, B + 1))
    for rec in json.loads(path.read_text())["nodes"]:
        if rec["kind"] != "probes":
            continue
        for j, _, score, _ in rec["probes"]:
            g = table[tuple(sorted([*rec["fixed"], j]))]
            assert score <= g + 1e-6 * max(1.0, abs(g)), (rec["fixed"], j, score, g)
    verdict = verify_file(path)
    assert verdict.proven, verdict.reason


def test_tightening_lifts_straddling_probes_and_saves_nodes(monkeypatch):
    inst = random_instance(5, 40, 10, 5, "poly2", "paper")
    monkeypatch.setattr(search, "PROBE_TOL", VERY_LOOSE)
    tightened = solve(inst, "bnb", incumbent="none")
    monkeypatch.setattr(search._Search, "_tighten", lambda *args: None)
    plain = solve(inst, "bnb", incumbent="none")
    assert tightened.info["probes_tightened"] > 0 and plain.info["probes_tightened"] == 0
    assert tightened.info["nodes"] < plain.info["nodes"]
    assert close(tightened.objective, plain.objective)


@pytest.mark.parametrize("kernel", ["poly2", "poly5"])
@given(seed=st.integers(0, 10_000))
@settings(max_examples=8, deadline=None)
def test_settled_probes_move_no_child_bound(tmp_path_factory, kernel, seed):
    """Probes stopped once they prove g(I + j) below their node's bound (settled): the optimum is enumeration's and
    the search's without the stop, every recorded probe score is a lower bound of g, and the certificate replays."""
    inst = random_instance(seed, 40, 9, 4, kernel, "paper")
    path = tmp_path_factory.mktemp("settled") / "cert.json"
    res = solve(inst, "bnb", incumbent="none", certificate=str(path))
    assert res.certified and close(res.objective, solve(inst, "enumerate").objective)
    table = value_table(inst, range(1, 5))
    for rec in json.loads(path.read_text())["nodes"]:
        for j, _, score, _ in rec.get("probes") or []:
            g = table[tuple(sorted([*rec["fixed"], j]))]
            assert score <= g + 1e-6 * max(1.0, abs(g))
    assert verify_file(path).proven
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search._Search, "_settled", lambda self, node: None)
        unsettled = solve(inst, "bnb", incumbent="none")
    assert unsettled.info["probes_settled"] == 0 and close(unsettled.objective, res.objective)


def test_settled_probes_occur_on_the_same_tree():
    """On instances whose probes fall below their node's bound, some probes settle, and the search solves the same
    tree with them (same nodes and QPs here: the order among the settled probes did not change)."""
    settled = 0
    for seed in (1, 5, 11):
        inst = random_instance(seed, 40, 9, 4, "poly5", "paper")
        res = solve(inst, "bnb", incumbent="none")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(search._Search, "_settled", lambda self, node: None)
            plain = solve(inst, "bnb", incumbent="none")
        settled += res.info["probes_settled"]
        assert (res.info["nodes"], res.info["qps"]) == (plain.info["nodes"], plain.info["qps"])
        assert close(res.objective, plain.objective)
    assert settled > 0


@pytest.mark.parametrize("kernel", ["poly2", "poly5"])
def test_b_subset_probes_stop_against_the_incumbent_of_their_time(kernel):
    """B = 1: the root's probes are the B-subsets themselves, and without a starting incumbent one expansion's
    incumbent would be none, every probe solved to the tolerance. Each probe is stopped against the incumbent found
    by the node's earlier probes instead: some stop early, and the optimum is enumeration's."""
    stopped = 0
    for seed in range(3):
        inst = random_instance(seed, 40, 8, 1, kernel, "paper")
        res = solve(inst, "bnb", incumbent="none")
        assert res.certified and close(res.objective, solve(inst, "enumerate").objective)
        assert res.info["qps"] == inst.n
        stopped += res.info["qps_stopped_early"]
    assert stopped > 0
