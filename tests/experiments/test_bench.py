"""``minlp-fs bench``: an end-to-end quick run on synthetic data, resume, and reports from raw records."""
import argparse
import json

import pytest

from minlp_fs.experiments.cli import add_bench_parser, config_from_args, main, run_bench
from minlp_fs.experiments.pipeline import build_grid
from exp_records import record

pytest.importorskip("matplotlib", reason="matplotlib (the 'plots' extra) is not installed")


def test_bench_parser_wires_into_a_main_parser():
    p = argparse.ArgumentParser()
    add_bench_parser(p.add_subparsers(dest="verb"))
    args = p.parse_args(["bench", "multistart", "--quick", "--jobs", "2", "--backend", "dask",
                         "--scheduler", "tcp://h:8786", "--sense", "fit"])
    assert (args.verb, args.experiment, args.quick, args.jobs, args.backend, args.sense) == \
        ("bench", "multistart", True, 2, "dask", "fit")


START, END = "<!-- experiments:start -->", "<!-- experiments:end -->"


def test_certified_quick_end_to_end_and_resume(tmp_path, capsys):
    (tmp_path / "RESULTS.md").write_text("# Results\n\nother helpers' section\n")
    argv = ["certified", "--quick", "--datasets", "synthetic", "--kernels", "poly2", "--methods", "rfe1",
            "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    text = (tmp_path / "RESULTS.md").read_text()
    assert "other helpers' section" in text and START in text and END in text
    assert "| synthetic | rfe1 | 3 |" in text and "quick slice" in text
    raw = (tmp_path / "experiments" / "raw" / "certified-quick.jsonl").read_text().splitlines()
    assert len(raw) == 3 * 2 * 2  # B = 1..3, two senses, enumerate + rfe1
    for png in ("gapB-poly-paper", "time-poly-fit"):
        assert (tmp_path / "figures" / f"certified-quick-{png}.png").is_file()
    capsys.readouterr()
    assert main(argv) == 0
    assert "0 units run, 12 already in the raw file" in capsys.readouterr().err
    assert len((tmp_path / "experiments" / "raw" / "certified-quick.jsonl").read_text().splitlines()) == 12
    assert (tmp_path / "RESULTS.md").read_text().count(START) == 1


def _fake(units, value_of):
    out = []
    for u in units:
        r = record(u["method"], u["B"], value_of(u), sense=u["sense"], kernel=u["kernel"], dataset=u["dataset"],
                   n=10, options=u.get("options"), seed=u.get("seed"))
        r["unit"] = u
        out.append(r)
    return out


@pytest.mark.parametrize("experiment, methods", [("multistart", "ls*,rfe1"), ("params", None), ("accuracy", "ls*")])
def test_report_only_from_raw_records(tmp_path, experiment, methods):
    args = argparse.Namespace(experiment=experiment, quick=True, data_dir=None, jobs=1, backend="loky",
                              scheduler=None, out=str(tmp_path), sense="paper", datasets="synthetic",
                              kernels="poly2", methods=methods, hours=None, solver_time_limit=None,
                              report_only=True, no_progress=True)
    units = build_grid(config_from_args(args))[0].units
    if experiment == "accuracy":
        recs = [{"unit": u, "accuracy": 0.5 + 0.01 * u["fold"], "selection_time_s": 0.1, "features": [0]}
                for u in units]
    elif experiment == "params":
        recs = _fake(units, lambda u: -100.0 - u["options"]["opt_window"])
    else:
        recs = _fake(units, lambda u: -100.0 - u.get("seed", -5))
    (tmp_path / "experiments" / "raw").mkdir(parents=True)
    (tmp_path / "experiments" / "raw" / f"{experiment}-quick.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert run_bench(args) == 0
    section = (tmp_path / "experiments" / "tables" / f"{experiment}-quick.md").read_text()
    assert "incomplete" not in section and "Figures:" in section
    assert list((tmp_path / "figures").glob(f"{experiment}-quick-*.png"))
    if experiment == "multistart":
        assert "| ls* | 1 | 0.00 | 1/1 | 8.3 |" in section  # seeds 0..9: best -109, worst -100: 9/109
    if experiment == "params":
        assert "| ls* | opt_window | 15 | 2 | 0.00 |" in section


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path, capsys):
    argv = ["certified", "--datasets", "synthetic", "--kernels", "poly2", "--methods", "rfe1",
            "--out", str(tmp_path), "--hours", "0.001", "--dry-run"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("certified: ") and "| synthetic | 10 | 200 |" in out
    assert not (tmp_path / "experiments" / "raw" / "certified.jsonl").exists() and not (tmp_path / "RESULTS.md").exists()
