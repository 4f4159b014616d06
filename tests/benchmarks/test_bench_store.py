"""The benchmark scripts keep their results in the experiments' results store (one JSON-lines harness)."""
import argparse
import sys
from pathlib import Path

import pytest

from minlp_fs.errors import InputError
from minlp_fs.experiments.store import StoreWarning, writer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_heuristics  # noqa: E402
import bench_solvers  # noqa: E402

ROW = ('{"dataset": "wholesale", "kernel": "rbf", "B": 1, "sense": "paper", "C": 10.0, "gamma": 0.1, '
       '"method": "ls", "applicable": true}')


def test_heuristics_rows_skip_bad_lines_and_count_duplicates_once(tmp_path, monkeypatch):
    path = tmp_path / "heuristics.jsonl"
    path.write_text("\n".join([ROW, "42", "{}", ROW, '{"dataset": "wh']))
    monkeypatch.setattr(bench_heuristics, "RESULTS", path)
    with pytest.warns(StoreWarning) as caught:
        assert len(bench_heuristics.load_rows()) == 1
    text = " | ".join(str(w.message) for w in caught)
    assert "(line 2, 3, 5)" in text and "1 duplicated record(s)" in text


def test_a_second_heuristics_run_on_the_same_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "heuristics.jsonl"
    monkeypatch.setattr(bench_heuristics, "RESULTS", path)
    args = argparse.Namespace(datasets=None, sense="paper", data_dir=None)
    with writer(path):
        with pytest.raises(InputError, match="being written by another run"):
            bench_heuristics.run_grid(args, ["ls"], {"datasets": [], "kernels": [], "fractions": []})
    assert bench_heuristics.run_grid(args, ["ls"], {"datasets": [], "kernels": [], "fractions": []}) == (0, False)


def test_solvers_rows_are_keyed_by_part():
    grid = {"part": "grid", "dataset": "sonar", "d": 2, "m": 10, "method": "scip", "time_limit": 30.0}
    ratio = {"part": "ratio", "dataset": "sonar", "d": 2, "m": 10, "variant": "ipopt", "time_limit": 30.0}
    assert bench_solvers.row_key(grid) == ("grid", "sonar", 2, 10, "scip", 30.0)
    assert bench_solvers.row_key(ratio) == ("ratio", "sonar", 2, 10, "ipopt", 30.0)
    with pytest.raises(KeyError):
        bench_solvers.row_key({"part": "grid"})
