"""``minlp-fs bench``: an end-to-end quick run on synthetic data, resume, and reports from raw records."""
import argparse
import csv
import json

import pytest

from minlp_fs.experiments import tables
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
                              kernels="poly2", methods=methods, hours=None, solver_time_limit=None, exact_time_limit=None,
                              exact_method="auto",
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
    rendered = tables.markdown_tables(section)   # each table also as CSV beside the markdown
    csvs = sorted((tmp_path / "experiments" / "tables").glob(f"{experiment}-quick-t*.csv"),
                  key=lambda p: int(p.name.split("-t")[1].split("-")[0].split(".")[0]))
    assert rendered and len(csvs) == len(rendered)
    for path, (_, header, rows) in zip(csvs, rendered):
        with path.open(newline="") as fh:
            assert list(csv.reader(fh)) == [header] + rows
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


CERT = ["certified", "--quick", "--datasets", "synthetic", "--kernels", "poly2", "--methods", "rfe1", "--no-progress"]


def test_jobs_zero_is_one_clear_error(tmp_path, capsys):
    assert main([*CERT, "--out", str(tmp_path), "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert "--jobs must be an integer >= 1; got 0" in err and "Traceback" not in err
    assert main([*CERT, "--out", str(tmp_path), "--jobs", "0", "--dry-run"]) == 2


def test_an_output_folder_that_cannot_be_written_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    for extra in ([], ["--report-only"]):
        assert main([*CERT, "--out", str(tmp_path / "file" / "out"), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("error:") == 1 and "cannot write to the output folder" in err


def test_failed_units_are_retried_by_the_next_run_and_reported(tmp_path, capsys, monkeypatch):
    from minlp_fs.errors import InputError
    from minlp_fs.experiments import units

    def file_gone(*args, **kwargs):
        raise InputError("dataset file synthetic.csv is missing for a moment")

    argv = [*CERT, "--out", str(tmp_path)]
    with monkeypatch.context() as m:
        m.setattr(units, "build_instance", file_gone)
        assert main(argv) == 1
    assert "12 units run, 0 already in the raw file, 12 failed" in capsys.readouterr().err
    assert main(argv) == 0
    assert "12 units run (12 of them retried after a failure), 0 already in the raw file, 0 failed" in \
        capsys.readouterr().err
    section = (tmp_path / "experiments" / "tables" / "certified-quick.md").read_text()
    assert "in the raw file: 12 (0 failed)" in section and "| synthetic | rfe1 | 3 |" in section
    assert main(argv) == 0
    assert "0 units run, 12 already in the raw file, 0 failed" in capsys.readouterr().err


def _no_timing(monkeypatch):
    from minlp_fs.experiments.registry import certified

    def timed(*args, **kwargs):
        raise AssertionError("a QP time was measured")

    monkeypatch.setattr(certified, "measure_qp_time", timed)


def test_dry_run_times_nothing_and_writes_nothing(tmp_path, capsys, monkeypatch):
    _no_timing(monkeypatch)
    for experiment in ("certified", "multistart", "params", "accuracy"):
        assert main([experiment, "--datasets", "synthetic", "--kernels", "poly2", "--out", str(tmp_path),
                     "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "QP time not measured yet for synthetic" in out and "| synthetic | 10 | 200 | 5 |" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", ["--report-only", "--dry-run"])
def test_torn_side_files_are_ignored_with_a_warning(tmp_path, capsys, monkeypatch, mode):
    argv = [*CERT, "--out", str(tmp_path)]
    assert main(argv) == 0
    raw = tmp_path / "experiments" / "raw"
    for name in ("certified-quick.qp_times.json", "certified-quick.meta.json"):
        text = (raw / name).read_text()
        (raw / name).write_text(text[: len(text) // 2])
    before = {p.name: p.read_bytes() for p in raw.iterdir()}
    capsys.readouterr()
    _no_timing(monkeypatch)
    assert main([*argv, mode]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "qp_times.json is damaged" in err
    assert {p.name: p.read_bytes() for p in raw.iterdir()} == before  # nothing rebuilt without a run
    if mode == "--report-only":
        assert "meta.json is damaged" in err


def test_a_run_rebuilds_a_torn_qp_times_file(tmp_path, capsys):
    argv = [*CERT, "--out", str(tmp_path)]
    assert main(argv) == 0
    path = tmp_path / "experiments" / "raw" / "certified-quick.qp_times.json"
    path.write_text('{"synthetic|poly2": ')
    assert main(argv) == 0
    assert "qp_times.json is damaged" in capsys.readouterr().err
    assert json.loads(path.read_text())["synthetic|poly2"] > 0


def test_a_new_experiment_is_one_registry_entry(tmp_path, monkeypatch):
    """The pipeline runs and reports an experiment it knows only through the registry."""
    from minlp_fs.experiments import config
    from minlp_fs.experiments.grids import Grid
    from minlp_fs.experiments.pipeline import run_experiment
    from minlp_fs.experiments.registry import EXPERIMENTS, Experiment
    from minlp_fs.experiments.slices import SLICES, Slice

    def build(cfg, measure=True):
        grid = Grid()
        for x in range(3):
            grid.add({"x": x})
        return grid, None

    def render(cfg, grid, plan, records):
        return [f"sum of squares {sum(r['y'] for r in records)}"], []

    monkeypatch.setitem(EXPERIMENTS, "toy", Experiment("toy", "Toy", build, square_unit, render))
    monkeypatch.setitem(SLICES, "toy", {"full": Slice(("synthetic",), ("poly2",), ("ls*",))})
    summary, section = run_experiment(config.BenchConfig("toy", out=tmp_path, progress=False))
    assert summary.n_run == 3 and "### Toy" in section.read_text() and "sum of squares 5" in section.read_text()


def square_unit(unit, data_dir=None):
    return {"y": unit["x"] ** 2}


def test_a_second_bench_run_on_the_same_out_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    from minlp_fs.experiments.store import writer

    _no_timing(monkeypatch)  # the lock comes before the QP times are measured
    with writer(tmp_path / "experiments" / "raw" / "certified-quick.jsonl"):
        assert main([*CERT, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "is being written by another run (pid" in err
    raw = tmp_path / "experiments" / "raw"
    assert [p.name for p in raw.iterdir()] == ["certified-quick.jsonl"]  # the first writer's, empty
    assert (raw / "certified-quick.jsonl").read_text() == ""


def test_lines_that_are_not_records_are_named_once_and_the_run_goes_on(tmp_path, capsys):
    argv = [*CERT, "--out", str(tmp_path)]
    assert main(argv) == 0
    raw = tmp_path / "experiments" / "raw" / "certified-quick.jsonl"
    with raw.open("a") as fh:
        fh.write('42\nnull\n[]\n{}\n{"unit": {"dataset"')
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "cut a torn last line (line 17)" in err and "Traceback" not in err
    assert err.count("skipped 4 line(s) that are not records (line 13, 14, 15, 16)") == 1
    assert "0 units run, 12 already in the raw file" in err


def test_jobs_above_the_cpus_are_capped_with_a_warning_unless_a_scheduler_runs_them():
    import warnings

    from minlp_fs.experiments.config import BenchConfig
    from minlp_fs.workers import JobsCappedWarning, cpu_count

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert BenchConfig("certified", jobs=100_000).jobs == cpu_count()
    assert any(issubclass(w.category, JobsCappedWarning) and "bench --jobs" in str(w.message) for w in caught)
    assert BenchConfig("certified", jobs=100_000, backend="dask", scheduler="tcp://127.0.0.1:1").jobs == 100_000
