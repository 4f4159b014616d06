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
    (["solve", *TINY, "--method", "rfe1", "--refit-fraction", "0.5"], "has no option(s) refit_fraction"),
    (["solve", *TINY, "--method", "ls*", "--refit-fraction", "0"], "refit_fraction"),
    (["solve", *TINY, "--start", "0,0"], "repeated"),
    (["solve", *TINY, "--method", "ipopt", "--start", "random", "--seed", "-1"], "seed must be an integer >= 0"),
    (["solve", *TINY, "--method", "acso*", "--start", "random", "--seed", "-1"], "seed must be an integer >= 0"),
    (["solve", "--method", "ipopt", "--seed", "-1"], "ipopt: seed must be an integer >= 0"),
    (["solve", *TINY, "--seed", "-1"], "synthetic data: seed must be an integer >= 0"),
    (["solve", *TINY, "--method", "ls*", "--n-samples", "-1"], "ls*: n_samples must be an integer >= 0"),
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
