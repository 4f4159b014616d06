"""bench_bnb_phases.py's accounting: every instant of a run charged to one phase, the phases of each sense seen,
the same answer as without the timers, and the search's code restored after the block."""
import sys
from pathlib import Path

import pytest

from minlp_fs import make_instance, make_synthetic, solve
from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.exact import search

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_bnb_phases as bp  # noqa: E402


@pytest.mark.parametrize("sense, seen, unseen", [("fit", {"universe", "relaxed", "split", "leaves"}, {"probes"}),
                                                 ("paper", {"probes", "subsets"}, {"universe", "relaxed", "split"})])
def test_phases_add_up_to_the_run_and_the_search_is_restored(sense, seen, unseen):
    data = make_synthetic(m=60, n_informative=3, n_noise=5, seed=2)
    inst = make_instance(data.X, data.y, B=4, kernel="poly3", sense=sense)
    plain = solve(inst, "bnb")
    before = (search._Search._solve, search.fit_split, AlphaSubproblem.solve_gram)
    with bp.instrumented(bp.Phases()) as phases:
        res, cpu = phases.run(lambda: solve(inst, "bnb"))
    assert res.objective == plain.objective and res.info["nodes"] == plain.info["nodes"]
    assert sum(phases.spent.values()) == pytest.approx(cpu, rel=1e-9, abs=1e-12)
    assert all(phases.spent[p] > 0 for p in seen) and all(phases.spent.get(p, 0.0) == 0 for p in unseen)
    assert (search._Search._solve, search.fit_split, AlphaSubproblem.solve_gram) == before
    assert not {"_expand_probes", "_tighten_one", "_subset_probe"} & set(vars(search._Search))   # PaperProbes', as before
