"""bench_versions.py's whole-grid mode: the workload is the heuristics grid, and the table counts and averages
what the two versions did."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_versions  # noqa: E402


@pytest.mark.requires_data
def test_the_grid_workload_is_the_heuristics_grid(data_dir):
    """172 cases (nine datasets, four kernels, B = round(0.1 n ... 0.5 n) without repeats), ACSO* on the 129
    polynomial ones, as in bench_heuristics' table."""
    cases = bench_versions.grid_workload(["ls*", "acso*"], str(data_dir))
    assert sum(c[4] == "ls*" for c in cases) == 172 and sum(c[4] == "acso*" for c in cases) == 129
    assert len(set(cases)) == len(cases) and all(c[3] == "paper" for c in cases)
    assert ("german", "poly5", 10, "paper", "ls*") in cases and ("german", "rbf", 10, "paper", "acso*") not in cases


def test_the_case_table_averages_per_method_and_judges_each_objective():
    cases = [("a", "poly2", 2, "paper", "ls*"), ("b", "poly2", 3, "paper", "ls*"), ("c", "rbf", 1, "paper", "ls*"),
             ("d", "rbf", 1, "paper", "ls*")]  # the last one has no new run yet: left out
    row = lambda cpu, obj, solves: {"cpu": cpu, "objective": obj, "solves": solves}  # noqa: E731
    results = {"old": {cases[0]: row(2.0, -10.0, 10), cases[1]: row(4.0, -10.0, 20), cases[2]: row(6.0, -10.0, 30),
                       cases[3]: row(1.0, -1.0, 1)},
               "new": {cases[0]: row(1.0, -10.0, 10), cases[1]: row(1.0, -10.1, 20), cases[2]: row(1.0, -9.9, 30)}}
    text = bench_versions.case_table(results, cases, with_dataset=True)
    summary = text.splitlines()[2]
    assert summary == "| ls* | 3 | 4.00 | 1.00 | 4.00x | 20 | 20 | 1 / 1 / 1 | 1.0e-02 |"
    assert "| a | poly2 | 2 | ls* | 2.00 | 1.00 | 2.00x | 10 | 10 | -10.000000 | -10.000000 | same (+0.0e+00) |" in text
    assert "better (+1.0e-02)" in text and "worse (-1.0e-02)" in text and "| d |" not in text


def test_kernels_selects_a_workloads_cases_and_refuses_an_empty_selection():
    """--kernels (benchmarks/_common.of_kernels, shared by bench_versions, bench_enumeration and bench_fallback): the
    cases of those kernels, in order; all of them without it; a selection with no case stops with a message."""
    from _common import of_kernels

    assert of_kernels(bench_versions.BNB_CASES, ["rbf"]) == [("cleveland", "rbf", 6, "fit", "bnb")]
    assert of_kernels(bench_versions.CASES, None) == bench_versions.CASES
    both = of_kernels(bench_versions.CASES, ["poly3", "rbf"])
    assert both == [c for c in bench_versions.CASES if c[1] in ("poly3", "rbf")]
    assert {c[1] for c in both} == {"poly3", "rbf"}
    with pytest.raises(SystemExit, match="no case of the kernels rbf"):
        of_kernels(bench_versions.QUICK, ["rbf"])
