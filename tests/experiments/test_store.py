"""The results store: damaged lines, duplicates, the writer's lock, atomic side files, and fault injection
(a worker killed mid-unit, a writer process killed while holding the lock, a unit that exits)."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from minlp_fs.errors import InputError
from minlp_fs.experiments.runner import run_units
from minlp_fs.experiments.store import (
    StoreWarning,
    read_json,
    read_records,
    writable_folder,
    write_json,
    writer,
)

import faulty

ROOT = Path(__file__).resolve().parents[2]
UNITS = [{"x": x} for x in range(4)]


def square(unit):
    return {"y": unit["x"] ** 2}


def exits_on_one(unit):
    if unit["x"] == 1:
        sys.exit(3)
    return square(unit)


def _lines(*lines) -> str:
    return "".join(line + "\n" for line in lines)


GOOD = '{"unit": {"x": 0}, "y": 0}'


@pytest.mark.parametrize("bad", ["42", "null", "[]", "{}", '"text"', '{"unit": 5}', '{"y": 1}', "not json"])
def test_a_line_that_is_not_a_record_is_skipped_with_a_warning_naming_its_line(tmp_path, bad):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(_lines(GOOD, bad, '{"unit": {"x": 1}, "y": 1}'))
    with pytest.warns(StoreWarning, match=r"skipped 1 line\(s\) that are not records \(line 2\)"):
        records = read_records(raw)
    assert [r["unit"]["x"] for r in records] == [0, 1]


def test_a_torn_last_line_is_skipped_and_named(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(_lines(GOOD) + '{"unit": {"x": 1}, "y"')
    with pytest.warns(StoreWarning, match=r"line 2\)"):
        assert [r["unit"]["x"] for r in read_records(raw)] == [0]


def test_damaged_lines_do_not_stop_a_run_and_the_file_is_completed(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(_lines(GOOD, "42", "null", "[]", "{}"))
    with pytest.warns(StoreWarning, match=r"skipped 4 line\(s\) that are not records \(line 2, 3, 4, 5\)"):
        s = run_units(UNITS, square, raw, progress=False)
    assert (s.n_run, s.n_skipped) == (3, 1)


def test_a_duplicated_record_is_counted_once_and_reported(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(_lines(GOOD, '{"unit": {"x": 1}, "y": 1}', '{"y": 7, "unit": {"x": 0}}'))
    with pytest.warns(StoreWarning, match=r"1 duplicated record\(s\) counted once"):
        records = read_records(raw)
    assert records == [json.loads(GOOD), {"unit": {"x": 1}, "y": 1}]  # the first answer is kept


def test_a_failure_is_superseded_by_a_later_answer_without_a_duplicate_warning(tmp_path, recwarn):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(_lines('{"unit": {"x": 0}, "error": "OSError: gone"}', '{"unit": {"x": 0}, "error": "again"}',
                          GOOD, '{"unit": {"x": 1}, "error": "OSError: gone"}'))
    records = read_records(raw)
    assert records == [json.loads(GOOD), {"unit": {"x": 1}, "error": "OSError: gone"}]
    assert not [w for w in recwarn if issubclass(w.category, StoreWarning)]


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path):
    raw = tmp_path / "raw.jsonl"
    with writer(raw):
        with pytest.raises(InputError, match=rf"written by another run \(pid {os.getpid()}.*another output folder"):
            run_units(UNITS, square, raw, progress=False)
    assert not (tmp_path / "raw.jsonl.lock").exists()
    assert run_units(UNITS, square, raw, progress=False).n_run == 4


HOLD = """
import sys, time
from minlp_fs.experiments.store import writer
with writer(sys.argv[1]) as append:
    append({"unit": {"x": 0}, "y": 0})
    print("ready", flush=True)
    time.sleep(120)
"""


def test_two_writer_processes_then_the_lock_of_a_killed_one_is_taken_over(tmp_path):
    raw = tmp_path / "raw.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(raw)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(InputError, match=rf"pid {holder.pid}\b"):
            run_units(UNITS, square, raw, progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "raw.jsonl.lock").read_text().strip() == str(holder.pid)  # stale: its pid is dead
    with pytest.warns(StoreWarning, match=rf"took over the lock of pid {holder.pid}"):
        s = run_units(UNITS, square, raw, progress=False)
    assert (s.n_run, s.n_skipped) == (3, 1)


KILLED = """
import os, signal, sys
from minlp_fs.experiments.runner import run_units

def unit_fn(unit):
    if unit["x"] == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies in the middle of unit 2
    return {"y": unit["x"] ** 2}

run_units([{"x": x} for x in range(4)], unit_fn, sys.argv[1], progress=False)
"""


def test_a_run_killed_mid_unit_resumes_from_a_torn_file_and_a_stale_lock(tmp_path):
    raw = tmp_path / "raw.jsonl"
    done = subprocess.run([sys.executable, "-c", KILLED, str(raw)], cwd=ROOT, capture_output=True)
    assert done.returncode == -signal.SIGKILL
    assert [r["unit"]["x"] for r in read_records(raw)] == [0, 1]
    with raw.open("a") as fh:
        fh.write('{"unit": {"x": 2}, "y": ')  # and the write of a record torn by the kill
    with pytest.warns(StoreWarning) as caught:
        s = run_units(UNITS, square, raw, progress=False)
    text = " | ".join(str(w.message) for w in caught)
    assert "took over the lock" in text and "cut a torn last line (line 3)" in text
    assert (s.n_run, s.n_skipped) == (2, 2)
    assert [r["y"] for r in read_records(raw)] == [0, 1, 4, 9]


def test_a_loky_worker_killed_mid_unit_stops_the_run_and_the_next_run_completes(tmp_path):
    raw = tmp_path / "raw.jsonl"
    s = run_units(UNITS, faulty.exit_on_two, raw, n_jobs=2, progress=False)
    assert s.worker_died and "terminated" in s.worker_died and s.n_run < 4
    assert not (tmp_path / "raw.jsonl.lock").exists()
    s = run_units(UNITS, square, raw, progress=False)
    assert s.n_run + s.n_skipped == 4
    assert sorted(r["y"] for r in read_records(raw)) == [0, 1, 4, 9]


def test_a_unit_that_exits_leaves_the_store_usable(tmp_path):
    raw = tmp_path / "raw.jsonl"
    with pytest.raises(SystemExit):
        run_units(UNITS, exits_on_one, raw, progress=False)
    assert [r["unit"]["x"] for r in read_records(raw)] == [0]
    assert not (tmp_path / "raw.jsonl.lock").exists()
    assert run_units(UNITS, square, raw, progress=False).n_run == 3


def test_side_files_are_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "meta.json"
    write_json(path, {"a": 1})
    real = os.replace

    def crash(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(InputError, match="No space left"):
        write_json(path, {"a": 2})
    monkeypatch.setattr(os, "replace", real)
    assert read_json(path) == {"a": 1} and [p.name for p in tmp_path.iterdir()] == ["meta.json"]


@pytest.mark.parametrize("content", ['{"wholesale|poly2": 0.01', "", "[1, 2]", "\xff\xfe"])
def test_a_damaged_side_file_reads_as_empty_with_a_warning(tmp_path, content):
    path = tmp_path / "qp_times.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.warns(StoreWarning, match="qp_times.json is damaged"):
        assert read_json(path) == {}
    assert read_json(tmp_path / "absent.json") == {}


def test_an_output_folder_that_cannot_be_made_is_one_input_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="cannot write to the output folder"):
        writable_folder(tmp_path / "file" / "out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_one_input_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(InputError, match="Permission denied"):
            writable_folder(folder)
    finally:
        folder.chmod(0o755)


def test_a_rerun_with_a_longer_time_limit_answers_the_unit_and_supersedes_the_shorter_one():
    """``match_records``: the record of a unit, or of the same unit with a longer ``options.time_limit`` (a
    re-run of a run stopped at its limit), longest first; a shorter limit, another unit or other options never
    answer it."""
    from minlp_fs.experiments.store import match_records

    base = {"dataset": "german", "kernel": "poly3", "B": 8, "sense": "paper", "method": "bnb"}
    unit = {**base, "options": {"time_limit": 120.0}}
    other = {**base, "B": 9, "options": {"time_limit": 120.0}}
    plain = {**base, "method": "ls*"}
    rec = lambda u, tag: {"unit": u, "tag": tag}   # noqa: E731
    records = [rec(unit, "120"), rec({**base, "options": {"time_limit": 900.0}}, "900"),
               rec({**base, "options": {"time_limit": 60.0}}, "60"), rec({**base, "options": {"time_limit": 300.0}}, "300"),
               rec({**base, "options": {"time_limit": 900.0, "gap_tol": 0.01}}, "gap"), rec(other, "B9"),
               rec(plain, "ls*"), rec({**base, "dataset": "sonar", "options": {"time_limit": 900.0}}, "sonar")]
    chosen, superseded = match_records(records, [unit, other, plain])
    assert sorted(r["tag"] for r in chosen) == ["900", "B9", "ls*"]
    assert sorted(r["tag"] for r in superseded) == ["120", "300"]
    assert match_records(records[:1], [unit]) == (records[:1], [])
    assert match_records([rec(plain, "a"), rec(plain, "b")], [plain])[0][0]["tag"] == "b"
    crashed = {**rec({**base, "options": {"time_limit": 900.0}}, "crash"), "error": "MemoryError"}
    assert [r["tag"] for r in match_records([rec(unit, "120"), crashed], [unit])[0]] == ["120"]
    assert [r["tag"] for r in match_records([crashed], [unit])[0]] == ["crash"]


def test_another_exact_methods_certified_answer_stands_for_an_exact_unit():
    """An exact unit (bnb) whose run stopped at its limit is answered by a certified enumeration of the same
    instance, whatever its options; an uncertified one, another instance or a heuristic's unit are not; a unit
    certified by its own method keeps its own record."""
    from minlp_fs.experiments.store import match_records

    base = {"dataset": "ionosphere", "kernel": "poly5", "B": 8, "sense": "fit"}
    unit = {**base, "method": "bnb", "options": {"time_limit": 120.0}}
    ls = {**base, "method": "ls*"}

    def rec(u, tag, certified):
        return {"unit": u, "tag": tag, "result": {"certified": certified, "degenerate": False}}

    stopped = rec(unit, "bnb 120 s", False)
    enumerated = rec({**base, "method": "enumerate", "options": {"n_jobs": 2}}, "enumerate", True)
    unproven = rec({**base, "method": "enumerate"}, "enumerate stopped", False)
    elsewhere = rec({**base, "B": 9, "method": "enumerate"}, "B = 9", True)
    chosen, superseded = match_records([stopped, enumerated, unproven, elsewhere, rec(ls, "ls*", False)], [unit, ls])
    assert sorted(r["tag"] for r in chosen) == ["enumerate", "ls*"]
    assert [r["tag"] for r in superseded] == ["bnb 120 s"]
    assert [r["tag"] for r in match_records([stopped, unproven], [unit])[0]] == ["bnb 120 s"]
    own = rec(unit, "bnb certified", True)
    assert [r["tag"] for r in match_records([enumerated, own], [unit])[0]] == ["bnb certified"]
    assert [r["tag"] for r in match_records([own, enumerated], [unit])[0]] == ["bnb certified"]
