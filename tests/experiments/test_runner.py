"""The runner: resume from the raw file, Ctrl-C keeps a valid file, failures become records and are retried."""
import json

import pytest

from minlp_fs.errors import InputError
from minlp_fs.experiments.runner import run_units
from minlp_fs.experiments.store import StoreWarning, read_records, unit_key

CALLS = []


def square(unit):
    CALLS.append(unit["x"])
    return {"y": unit["x"] ** 2}


def stop_at_three(unit):
    if unit["x"] == 3:
        raise KeyboardInterrupt
    return square(unit)


def fail_on_two(unit):
    if unit["x"] == 2:
        raise ValueError("bad unit")
    return square(unit)


UNITS = [{"x": x} for x in range(4)]


def test_resume_runs_only_the_missing_units(tmp_path):
    raw = tmp_path / "raw.jsonl"
    CALLS.clear()
    first = run_units(UNITS[:2], square, raw, progress=False)
    assert (first.n_run, first.n_skipped) == (2, 0)
    CALLS.clear()
    second = run_units(UNITS, square, raw, progress=False)
    assert (second.n_units, second.n_run, second.n_skipped) == (4, 2, 2)
    assert sorted(CALLS) == [2, 3]
    records = read_records(raw)
    assert sorted(r["y"] for r in records) == [0, 1, 4, 9]
    assert run_units(UNITS, square, raw, progress=False).n_run == 0


def test_unit_key_ignores_field_order_and_duplicates_run_once(tmp_path):
    assert unit_key({"a": 1, "b": [1, 2]}) == unit_key({"b": [1, 2], "a": 1})
    CALLS.clear()
    s = run_units([{"x": 5}, {"x": 5}], square, tmp_path / "r.jsonl", progress=False)
    assert (s.n_units, s.n_run, CALLS) == (1, 1, [5])


def test_interrupt_keeps_a_valid_file_and_resumes(tmp_path):
    raw = tmp_path / "raw.jsonl"
    s = run_units(UNITS, stop_at_three, raw, progress=False)
    assert s.interrupted and s.n_run == 3
    assert [r["unit"]["x"] for r in read_records(raw)] == [0, 1, 2]
    assert all(json.loads(line) for line in raw.read_text().splitlines())
    s = run_units(UNITS, square, raw, progress=False)
    assert (s.n_run, s.n_skipped, s.interrupted) == (1, 3, False)


def test_a_torn_last_line_is_cut_before_appending(tmp_path):
    raw = tmp_path / "raw.jsonl"
    run_units(UNITS[:2], square, raw, progress=False)
    with raw.open("a") as fh:
        fh.write('{"unit": {"x": 2}, "y"')  # a writer killed mid-line
    with pytest.warns(StoreWarning, match=r"line 3"):
        assert len(read_records(raw)) == 2
    with pytest.warns(StoreWarning, match=r"cut a torn last line \(line 3\)"):
        s = run_units(UNITS, square, raw, progress=False)
    assert s.n_run == 2
    assert raw.read_text().count("\n") == 4
    assert sorted(r["unit"]["x"] for r in read_records(raw)) == [0, 1, 2, 3]


def test_a_failing_unit_is_recorded_and_the_others_run(tmp_path):
    raw = tmp_path / "raw.jsonl"
    s = run_units(UNITS, fail_on_two, raw, progress=False)
    assert (s.n_run, s.n_errors) == (4, 1)
    bad = [r for r in read_records(raw) if "error" in r]
    assert bad[0]["unit"] == {"x": 2} and "ValueError: bad unit" in bad[0]["error"]


def test_a_failed_unit_is_retried_by_the_next_run_and_its_success_replaces_the_failure(tmp_path):
    raw = tmp_path / "raw.jsonl"
    run_units(UNITS, fail_on_two, raw, progress=False)
    CALLS.clear()
    again = run_units(UNITS, fail_on_two, raw, progress=False)  # still failing: retried, reported again
    assert (again.n_run, again.n_retried, again.n_skipped, again.n_errors, CALLS) == (1, 1, 3, 1, [])
    fixed = run_units(UNITS, square, raw, progress=False)
    assert (fixed.n_run, fixed.n_retried, fixed.n_errors, CALLS) == (1, 1, 0, [2])
    records = read_records(raw)  # three records of unit 2 in the file, one answer, no duplicate warning
    assert [r["unit"]["x"] for r in records] == [0, 1, 2, 3] and not any("error" in r for r in records)
    assert run_units(UNITS, square, raw, progress=False).n_run == 0


def test_parallel_loky_gives_the_same_records(tmp_path):
    a = run_units(UNITS, square, tmp_path / "a.jsonl", n_jobs=2, progress=False)
    assert a.n_run == 4
    got = {r["unit"]["x"]: r["y"] for r in read_records(tmp_path / "a.jsonl")}
    assert got == {0: 0, 1: 1, 2: 4, 3: 9}


def test_unknown_backend_and_stray_scheduler_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="unknown backend"):
        run_units(UNITS, square, tmp_path / "r.jsonl", backend="spark", progress=False)
    with pytest.raises(InputError, match="scheduler"):
        run_units(UNITS, square, tmp_path / "r.jsonl", backend="loky", scheduler="tcp://x:1", progress=False)


def test_a_method_stopped_by_ctrl_c_stops_the_run_and_is_not_recorded(tmp_path, monkeypatch):
    # Ctrl-C inside LS* makes it return its incumbent with status 'interrupted' (here raised from its
    # callback, as SIGINT would be); that run is not the unit's result and must stay to do
    from minlp_fs.experiments import units

    real = units.solve

    def ctrl_c_inside(inst, method, **kwargs):
        def stop(*args, **kw):
            raise KeyboardInterrupt
        return real(inst, method, callback=stop, **kwargs)

    unit = {"dataset": "synthetic", "kernel": "poly2", "B": 2, "sense": "fit", "method": "ls*", "seed": 0}
    assert units.solve_unit(unit)["result"]["status"] == "converged"
    monkeypatch.setattr(units, "solve", ctrl_c_inside)
    with pytest.raises(KeyboardInterrupt):
        units.solve_unit(unit)
    raw = tmp_path / "raw.jsonl"
    s = run_units([unit, {**unit, "seed": 1}], units.solve_unit, raw, progress=False)
    assert s.interrupted and s.n_run == 0 and read_records(raw) == []
