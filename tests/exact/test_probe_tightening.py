"""Paper sense: the loose probes whose weak-duality bracket straddles the incumbent are re-solved
(search._Search._tighten). Every probe score the search records is a lower bound of g(I + j), the
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
