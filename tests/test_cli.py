"""The command line: the main job's output, JSON keys, every verb, and errors as one line (no traceback)."""
import json

import pytest

from minlp_fs.cli import main

TINY = ["--dataset", "synthetic", "--B", "2", "--m", "40"]
KEYS = {"method", "sense", "objective", "features", "status", "certified", "wall_time_s", "n_svm_solves"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("method", ["ls", "ls-star", "acso*", "rfe1", "alpha-start"])
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_solve_json_has_the_promised_keys_and_a_feasible_answer(capsys, method, sense):
    code, out, _ = run(capsys, "solve", *TINY, "--method", method, "--sense", sense, "--json")
    d = json.loads(out)
    assert code == 0 and KEYS <= set(d) and d["sense"] == sense
    assert len(d["features"]) == 2 and d["n_svm_solves"] >= 1 and d["instance"]["m"] == 40


def test_solve_table_flags_a_degenerate_optimum(capsys, data_dir):
    """Cleveland, poly2, B = 1: the paper-sense optimum (chol) attains the trivial bound -2C*137 = -2740."""
    code, out, _ = run(capsys, "solve", "--dataset", "cleveland", "--data-dir", str(data_dir), "--B", "1",
                       "--method", "enumerate")
    assert code == 0 and "DEGENERATE" in out and "certified optimal" in out and "-2740" in out
    assert "Use --sense fit" in out and "1e-6 relative" in out   # the certified claim states its tolerance


def test_a_degenerate_fit_sense_result_does_not_advise_the_fit_sense(capsys):
    """A Gaussian kernel of gamma 1e-300 is constant: every subset, the best-fitting one too, gives a one-class SVM,
    so the advice is about the kernel, not the sense."""
    code, out, _ = run(capsys, "solve", *TINY, "--kernel", "rbf", "--gamma", "1e-300", "--sense", "fit",
                       "--method", "ls")
    assert code == 0 and "DEGENERATE" in out and "--sense fit" not in out and "another gamma" in out


def test_method_options_become_flags(capsys):
    code, out, _ = run(capsys, "solve", *TINY, "--method", "ls*", "--refit-fraction", "1.0", "--n-samples", "5",
                       "--opt-window", "2", "--start", "random", "--seed", "3", "--json")
    assert code == 0 and json.loads(out)["method"] == "ls*"


def test_certify_json_matches_enumeration(capsys):
    code, out, _ = run(capsys, "certify", *TINY, "--sense", "fit", "--method", "enumerate", "--no-progress", "--json")
    d = json.loads(out)
    assert code == 0 and d["certified"] and d["status"] == "optimal" and d["info"]["n_subsets"] == 45


def test_certify_cleveland_poly2_b3(capsys, data_dir):
    code, out, _ = run(capsys, "certify", "--dataset", "cleveland", "--data-dir", str(data_dir), "--kernel", "poly2",
                       "--B", "3", "--no-progress", "--json")
    d = json.loads(out)
    assert code == 0 and d["certified"] and d["features"] == [3, 4, 5]
    assert d["objective"] == pytest.approx(-2696.035321566, rel=1e-6)


@pytest.mark.parametrize("argv, words", [
    (["solve", "--B", "0"], "B = 0 is out of range"),
    (["solve", "--B", "31"], "B = 31 is out of range"),
    (["solve", "--kernel", "sigmoid"], "unknown kernel 'sigmoid'"),
    (["solve", "--method", "tabu"], "unknown method 'tabu'"),
    (["solve", "--dataset", "iris"], "unknown dataset 'iris'"),
    (["solve", "--dataset", "sonar"], "needs its CSV file"),
    (["solve", "--dataset", "bcd", "--data-dir", "/nonexistent"], "does not exist"),
    (["solve", *TINY, "--method", "acso", "--kernel", "rbf"], "needs a polynomial kernel"),
    (["solve", *TINY, "--method", "rfe1", "--start", "random"], "does not take a start"),
    (["solve", *TINY, "--method", "rfe1", "--refit-fraction", "0.5"], "has no option(s) --refit-fraction"),
    (["solve", *TINY, "--method", "ls*", "--refit-fraction", "0"], "ls*: --refit-fraction"),
    (["solve", *TINY, "--start", "0,0"], "repeated"),
    (["solve", *TINY, "--method", "ipopt", "--start", "random", "--seed", "-1"], "seed must be an integer >= 0"),
    (["solve", *TINY, "--method", "acso*", "--start", "random", "--seed", "-1"], "seed must be an integer >= 0"),
    (["solve", "--method", "ipopt", "--seed", "-1"], "ipopt: seed must be an integer >= 0"),
    (["solve", *TINY, "--seed", "-1"], "synthetic data: seed must be an integer >= 0"),
    (["solve", *TINY, "--method", "ls*", "--n-samples", "-1"], "ls*: --n-samples must be an integer >= 0"),
])
def test_bad_input_is_one_line_without_traceback(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1


def test_solvers_lists_every_adapter_with_a_reason(capsys):
    code, out, _ = run(capsys, "solvers", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and {"ipopt", "scip", "baron", "knitro"} <= set(rows)
    assert all(r["available"] or r["reason"] for r in rows.values())


def test_export_writes_a_gms_file(capsys, tmp_path):
    target = tmp_path / "tiny.gms"
    code, out, _ = run(capsys, "export", *TINY, "--format", "gms", "--out", str(target))
    assert code == 0 and target.is_file() and "Solve" in target.read_text()


def test_datasets_lists_the_nine(capsys):
    code, out, _ = run(capsys, "datasets")
    assert code == 0 and len(out.strip().splitlines()) == 9 and "built in" in out


# --- issue 13: exit statuses, overflow, --label, --jobs, export, --start, start-up Ctrl-C ---------

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from minlp_fs import workers  # noqa: E402
from minlp_fs.result import Result  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FLAGGED = "y,x0,x1,x2,flag\n" + "".join(
    f"{1 if i % 2 else -1},{(i * 7) % 5 / 4},{(i * 3) % 7 / 6},{(i * 5) % 11 / 10},{(i // 2) % 2}\n" for i in range(16))


def test_certify_with_an_overflowing_kernel_is_an_error_not_a_certified_zero(capsys):
    code, out, err = run(capsys, "certify", "--B", "2", "--m", "50", "--kernel", "poly5", "--gamma", "1e70",
                         "--no-progress")
    assert code == 2 and out == "" and "certified" not in err
    assert err.startswith("minlp-fs: error: kernel values on bcd's scaled data overflow to inf (poly5: degree=5, "
                          "gamma=1e+70") and err.count("\n") == 1


def test_certify_on_data_scaled_by_1e150_without_scaling_is_an_error(capsys, tmp_path):
    rows = "".join(f"{(i % 5 + 1) * 1e150:g},{(i % 3 + 1) * 1e150:g},{1 if i % 2 else -1}\n" for i in range(12))
    (tmp_path / "huge.csv").write_text("a,b,y\n" + rows)
    code, out, err = run(capsys, "certify", "--dataset", "huge", "--data-dir", str(tmp_path), "--B", "1",
                         "--scaling", "none", "--no-progress")
    assert code == 2 and out == "" and "overflow to inf" in err
    code, out, _ = run(capsys, "certify", "--dataset", "huge", "--data-dir", str(tmp_path), "--B", "1",
                       "--no-progress", "--json")  # the same data min-max scaled is fine
    assert code == 0 and json.loads(out)["certified"]


def test_a_certified_result_carries_its_tolerance(capsys):
    code, out, _ = run(capsys, "certify", *TINY, "--no-progress", "--json")
    d = json.loads(out)
    assert code == 0 and d["certified"] and d["info"]["tolerance"] == {"kkt": 1e-5}
    code, out, _ = run(capsys, "certify", *TINY, "--no-progress", "--method", "enumerate")
    assert "note       optimal over all 45 subsets, each SVM dual solved to KKT tolerance 1e-05" in out
    code, out, _ = run(capsys, "certify", *TINY, "--no-progress", "--method", "bnb")
    assert "note       optimal by branch-and-bound (every bound proven, see `minlp-fs verify`), each SVM dual " \
           "solved to KKT tolerance 1e-05" in out


@pytest.mark.parametrize("verb", [["solve", "--method", "alpha-start"], ["certify", "--no-progress"]])
def test_the_label_column_is_found_by_name_on_every_verb(capsys, tmp_path, verb):
    (tmp_path / "flagged.csv").write_text(FLAGGED)
    base = [*verb, "--dataset", "flagged", "--data-dir", str(tmp_path), "--B", "1", "--json"]
    code, out, _ = run(capsys, *base)
    d = json.loads(out)
    assert code == 0 and d["instance"]["n"] == 4 and "y" not in d["feature_names"]
    code, out, _ = run(capsys, *base, "--label", "flag")
    assert code == 0 and json.loads(out)["instance"]["class_counts"] == [8, 8]
    code, _, err = run(capsys, *base, "--label", "nope")
    assert code == 2 and "no column named 'nope' for the labels; the columns are y, x0, x1, x2, flag" in err


def test_export_takes_label(capsys, tmp_path):
    (tmp_path / "flagged.csv").write_text(FLAGGED)
    target = tmp_path / "m.gms"
    code, out, _ = run(capsys, "export", "--dataset", "flagged", "--data-dir", str(tmp_path), "--B", "1",
                       "--label", "flag", "--format", "gms", "--out", str(target))
    assert code == 0 and target.is_file()


@pytest.mark.parametrize("argv, words", [
    (["certify", "--dataset", "../x/y", "--data-dir", "."], "dataset '../x/y' must be a file name in the data folder"),
    (["certify", "--dataset", "/etc/passwd", "--data-dir", "."], "must be a file name in the data folder, not a path"),
    (["certify", "--dataset", "x", "--data-dir", str(REPO / "README.md")], "is a file, not a folder"),
    (["certify", *TINY, "--jobs", "0"], "certify --jobs must be an integer >= 1 or -1 (one worker per CPU); got 0"),
    (["certify", *TINY, "--jobs", "-3"], "certify --jobs must be an integer >= 1 or -1"),
    (["solve", *TINY, "--jobs", "0"], "solve --jobs must be an integer >= 1 or -1"),
    (["solve", *TINY, "--start", "-1,2"], "feature subset [-1, 2] has indices outside 0..9"),
    (["solve", *TINY, "--start", "-1"], "feature subset [-1] has indices outside 0..9"),
    (["solve", *TINY, "--method", "acso", "--kernel", "rbf"], "or pass --allow-nonsubmodular to run acso"),
])
def test_more_bad_input_is_one_line_exit_2(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1
    assert "allow_nonsubmodular" not in err


@pytest.mark.parametrize("verb", ["certify", "solve"])
def test_jobs_above_the_cpus_are_capped_with_a_warning(capsys, monkeypatch, verb):
    monkeypatch.setattr(workers, "cpu_count", lambda: 1)
    extra = ["--no-progress", "--method", "enumerate"] if verb == "certify" else ["--method", "ls"]
    code, out, err = run(capsys, verb, *TINY, "--jobs", "100000", *extra, "--json")
    assert code == 0
    assert err == f"minlp-fs: warning: {verb} --jobs 100000 is more than the 1 CPU(s) of this machine; using 1\n"
    if verb == "certify":
        assert json.loads(out)["info"]["n_jobs"] == 1


@pytest.mark.parametrize("status, code", [("optimal", 0), ("converged", 0), ("time_limit", 124), ("limit", 4),
                                          ("interrupted", 130), ("unavailable", 3), ("error", 1)])
def test_exit_status_follows_the_result_status(capsys, monkeypatch, status, code):
    import minlp_fs.api

    def fake_solve(inst, method, **kw):
        ok = status in ("optimal", "converged", "time_limit", "limit", "interrupted")
        return Result(method=method, sense=inst.sense, objective=-1.0 if ok else None, features=[0, 1] if ok else [],
                      feature_names=["a", "b"] if ok else [], alpha=None, status=status)

    monkeypatch.setattr(minlp_fs.api, "solve", fake_solve)
    for verb in (["solve"], ["certify", "--no-progress"]):
        assert run(capsys, *verb, *TINY, "--json")[0] == code


def test_a_time_limited_certify_exits_124_with_its_partial_answer(capsys):
    code, out, _ = run(capsys, "certify", *TINY, "--time-limit", "1e-9", "--no-progress", "--json")
    d = json.loads(out)
    assert code == 124 and d["status"] == "time_limit" and not d["certified"] and d["objective"] is not None


def test_an_interrupted_certify_exits_130(capsys, monkeypatch):
    import minlp_fs.solvers.enumeration as enumeration

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(enumeration, "_enumerate_chunk", interrupted)
    code, out, _ = run(capsys, "certify", *TINY, "--no-progress", "--json", "--method", "enumerate")
    assert code == 130 and json.loads(out)["status"] == "interrupted"


def test_an_interrupted_branch_and_bound_exits_130_with_a_bound(capsys, monkeypatch):
    import minlp_fs.exact.search as search

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(search._Search, "_process", interrupted)
    code, out, _ = run(capsys, "certify", *TINY, "--no-progress", "--json", "--method", "bnb")
    d = json.loads(out)
    assert code == 130 and d["status"] == "interrupted" and d["bound"] is not None and not d["certified"]


def test_an_unavailable_solver_raised_exits_3(capsys, monkeypatch):
    import minlp_fs.api
    from minlp_fs.errors import SolverUnavailableError

    def unavailable(*args, **kwargs):
        raise SolverUnavailableError("scip: pyscipopt is not installed")

    monkeypatch.setattr(minlp_fs.api, "solve", unavailable)
    code, out, err = run(capsys, "solve", *TINY, "--method", "scip")
    assert code == 3 and err == "minlp-fs: unavailable: scip: pyscipopt is not installed\n"


@pytest.mark.parametrize("fmt, out, words", [
    ("gms", "{tmp}", "--out {tmp} is a folder; give a file name such as {tmp}/model.gms"),
    ("nl", "{tmp}/a.gms", "ends in .gms but --format is nl: use a .nl file name or --format gms"),
    ("gms", "{tmp}/a.txt", "ends in .txt but --format gms writes a .gms file"),
    ("gms", "{tmp}/missing/a.gms", "cannot write {tmp}/missing/a.gms: folder {tmp}/missing does not exist"),
])
def test_export_refuses_renaming_and_missing_folders(capsys, tmp_path, fmt, out, words):
    out, words = out.format(tmp=tmp_path), words.format(tmp=tmp_path)
    code, _, err = run(capsys, "export", *TINY, "--format", fmt, "--out", out)
    assert code == 2 and words in err and err.count("\n") == 1
    assert not list(tmp_path.rglob("*.gms")) and not list(tmp_path.rglob("*.nl"))


def test_export_adds_a_missing_suffix(capsys, tmp_path):
    code, out, _ = run(capsys, "export", *TINY, "--format", "gms", "--out", str(tmp_path / "model"))
    assert code == 0 and out.strip() == str(tmp_path / "model.gms") and (tmp_path / "model.gms").is_file()


def test_export_to_an_unwritable_path_is_one_line(capsys, tmp_path, monkeypatch):
    import minlp_fs.models.export as export

    def denied(instance, out, **kw):
        raise PermissionError(13, "Permission denied", str(out))

    monkeypatch.setattr(export, "write_gms", denied)
    code, _, err = run(capsys, "export", *TINY, "--format", "gms", "--out", str(tmp_path / "a.gms"))
    assert code == 2 and err == f"minlp-fs: error: cannot write {tmp_path / 'a.gms'}: Permission denied\n"


STARTUP_CTRL_C = """
import importlib.abc, runpy, sys
class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
sys.argv = ["minlp-fs", "certify", "--dataset", "synthetic", "--B", "1", "--no-progress"]
runpy.run_module("minlp_fs.cli", run_name="__main__")
"""


@pytest.mark.parametrize("module", ["minlp_fs.methods", "minlp_fs.api", "numba"])
def test_ctrl_c_during_start_up_is_one_line_exit_130(module):
    """Ctrl-C while the package is still being imported (simulated at the import of ``module``)."""
    proc = subprocess.run([sys.executable, "-c", STARTUP_CTRL_C.format(module=module)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130 and proc.stderr == "minlp-fs: interrupted\n" and proc.stdout == ""


def test_certify_auto_picks_the_exact_method_measured_faster():
    from minlp_fs.api import build_instance
    from minlp_fs.errors import InputError
    from minlp_fs.exact.cli import certify_method

    small = build_instance("synthetic", B=2, kernel="poly2")          # C(10, 2) = 45 subsets
    large = build_instance("bcd", B=5, kernel="poly2")                # C(30, 5) = 142,506
    assert certify_method(small, "auto", None) == "enumerate"
    assert certify_method(large, "auto", None) == "bnb"
    assert certify_method(large.with_params(kernel="rbf"), "auto", None) == "enumerate"
    assert certify_method(small, "auto", "proof.json") == "bnb"
    with pytest.raises(InputError, match="--certificate needs --method bnb"):
        certify_method(small, "enumerate", "proof.json")


def test_export_random_start_uses_the_seed_and_json_lists_the_files(capsys, tmp_path):
    """``export --start random`` drew seed 0 whatever ``--seed`` said, and ``--json`` was ignored."""
    out = tmp_path / "r.gms"
    code, text, _ = run(capsys, "export", *TINY, "--format", "gms", "--out", str(out), "--start", "random",
                        "--seed", "3", "--json")
    d = json.loads(text)
    assert code == 0 and d["files"] == [str(out)] and d["instance"]["m"] == 40
    assert "start: a random subset (seed 3): features" in out.read_text()
