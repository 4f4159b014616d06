"""``minlp_fs.compare`` and ``minlp-fs compare``: several methods on one instance or a small grid."""
import itertools
import json

import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.cli import main
from minlp_fs.compare import Row, compare, compare_grid, format_table, parse_list
from minlp_fs.errors import InputError
from minlp_fs.experiments.metrics import gap_pct
from minlp_fs.result import Result, TracePoint

TINY = ["--dataset", "synthetic", "--m", "40"]


def _optimum(inst):
    oracle = AlphaSubproblem(inst)
    return min((oracle.solve(s).value for s in itertools.combinations(range(inst.n), inst.B)),
               key=inst.score)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gaps_are_to_the_certified_optimum(small_poly_instance, sense):
    inst = small_poly_instance.with_params(sense=sense)
    best = _optimum(inst)
    rows = compare(inst, ["alpha-start", "rfe1", "enumerate"])
    assert [r.method for r in rows] == ["alpha-start", "rfe1", "enumerate"]
    assert all(r.reference == "certified optimum (enumerate)" for r in rows)
    enum = rows[-1].result
    assert enum.certified and enum.objective == pytest.approx(best, rel=1e-7) and rows[-1].gap_pct == 0
    for row in rows[:2]:
        assert row.gap_pct == pytest.approx(max(gap_pct(row.result.objective, enum.objective, sense), 0), abs=1e-9)
        assert inst.score(row.result.objective) >= inst.score(best) - 1e-7 * abs(best)


def test_without_a_certificate_the_reference_is_the_best_found(small_poly_instance):
    rows = compare(small_poly_instance, ["alpha-start", "ls*"], time_limit=5)
    best = min(rows, key=lambda r: small_poly_instance.score(r.result.objective))
    assert all(r.reference == f"best found ({best.method})" for r in rows) and best.gap_pct == 0


def test_a_method_that_refuses_the_instance_is_an_error_row(small_rbf_instance):
    rows = compare(small_rbf_instance, ["acso", "rfe1"])
    assert rows[0].result.status == "error" and "polynomial kernel" in rows[0].result.message
    assert rows[0].gap_pct is None and rows[1].result.ok and rows[1].gap_pct == 0


@pytest.mark.parametrize("methods, words", [(["ls*", "tabu"], "unknown method 'tabu'"),
                                            (["ls*", "ls-star"], "listed twice")])
def test_bad_method_lists_fail_before_any_run(small_poly_instance, methods, words):
    with pytest.raises(InputError, match=words):
        compare(small_poly_instance, methods)


def test_grid_runs_every_combination(small_poly_instance):
    built = []

    def build(B, kernel):
        built.append((B, kernel))
        return small_poly_instance.with_params(B=B, kernel=kernel)

    rows = compare_grid(build, ["rfe1", "enumerate"], {"B": [2, 3], "kernel": ["poly2", "rbf"]})
    assert built == [(2, "poly2"), (2, "rbf"), (3, "poly2"), (3, "rbf")] and len(rows) == 8
    assert [(r.instance["B"], r.instance["kernel"]["name"]) for r in rows[::2]] == built
    with pytest.raises(InputError, match="varies only B, kernel"):
        compare_grid(build, ["rfe1"], {"C": [1, 10]})


def test_parse_list():
    assert parse_list("3, 4,", int, "--B") == [3, 4]
    with pytest.raises(InputError, match="--B must be comma-separated int values"):
        parse_list("3,x", int, "--B")
    with pytest.raises(InputError, match="--methods is empty"):
        parse_list(" , ", str, "--methods")


def test_table_shows_no_bound_for_a_solvers_infinity(small_poly_instance):
    res = Result(method="scip", sense="paper", objective=-1.5, features=[0, 1, 2], feature_names=[],
                 alpha=None, status="time_limit", bound=-1e20, trace=[TracePoint(0.1, -1.5)])
    text = format_table([Row(small_poly_instance.describe(), "scip", res, 0.0, "best found (scip)")])
    line = text.splitlines()[2].split()
    assert line[:3] == ["scip", "-1.5", "-"] and "time_limit" in line


def test_cli_compare_table_json_and_plot(capsys, tmp_path):
    argv = ["compare", *TINY, "--B", "2", "--methods", "rfe1,ls*,enumerate", "--time-limit", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "gap to the certified optimum (enumerate)" in out and "SVM solves" in out and "certified" in out
    assert main(argv + ["--json", "--plot", str(tmp_path / "c.png")]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in rows] == ["rfe1", "ls*", "enumerate"] and rows[2]["result"]["certified"]
    assert all(r["instance"]["m"] == 40 for r in rows)
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_compare_grid_and_exit_status(capsys):
    code = main(["compare", *TINY, "--B", "2,3", "--kernel", "poly2,rbf", "--methods", "acso,rfe1", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 8 and code == 1      # acso refuses the Gaussian kernel: a row, and a non-zero exit
    assert [r["result"]["status"] for r in rows if r["method"] == "acso"] == ["converged", "error"] * 2


@pytest.mark.parametrize("argv, words", [
    (["compare", *TINY, "--methods", "ls*,tabu"], "unknown method 'tabu'"),
    (["compare", *TINY, "--B", "2,x", "--methods", "ls*"], "--B must be comma-separated"),
    (["compare", *TINY, "--B", "99", "--methods", "ls*"], "B = 99 is out of range"),
    (["compare", *TINY, "--methods", "ls*,rfe1", "--time-limit", "-1"], "--time-limit must be None or a number"),
    (["compare", *TINY, "--methods", "ls*", "--time-limit", "nan"], "--time-limit must be None or a number"),
])
def test_cli_compare_bad_input_is_one_line(capsys, argv, words):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1


def test_cli_compare_exit_status_is_the_most_severe_rows(capsys):
    """An unavailable method (knitro without a licence) makes the run exit 3, as the README's table says."""
    from minlp_fs.solvers.knitro import Knitro

    if Knitro().availability().ok:
        pytest.skip("knitro is licensed here")
    assert main(["compare", *TINY, "--methods", "ls*,knitro"]) == 3


def _row(method, objective, certified=False):
    result = Result(method=method, sense="fit", objective=objective, features=[0], feature_names=["x0"],
                    alpha=None, status="optimal" if certified else "converged", certified=certified)
    return Row({}, method, result)


def test_the_reference_is_the_best_certified_value_and_a_method_beating_it_is_shown(small_poly_instance):
    from minlp_fs.compare import _add_gaps

    inst = small_poly_instance.with_params(sense="fit")     # fit: larger g is better
    rows = [_row("loose", -10.0, certified=True), _row("tight", -9.0, certified=True), _row("ls*", -9.0)]
    _add_gaps(inst, rows)
    assert rows[0].reference == "certified optimum (tight)"
    assert [r.gap_pct for r in rows] == [pytest.approx(100 / 9), 0.0, 0.0]
    rows = [_row("enumerate", -10.0, certified=True), _row("ls*", -9.0), _row("rfe1", -10.0 * (1 + 1e-8))]
    _add_gaps(inst, rows)
    assert rows[0].reference == ("certified optimum (enumerate); beaten by ls* beyond the 1e-6 accuracy "
                                 "of every value")
    assert rows[1].gap_pct == pytest.approx(-10.0) and rows[2].gap_pct == 0.0


@pytest.mark.parametrize("escapes", [False, True])
def test_ctrl_c_stops_the_whole_comparison(capsys, monkeypatch, escapes):
    """Ctrl-C during enumerate (caught by its run, or escaping it as before a method has an answer): the rows
    so far are printed, enumerate's marked interrupted, neither the methods after it nor the grid's next instance are started; exit 130."""
    import minlp_fs.solvers.enumeration as enumeration

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(enumeration, "_enumerate_chunk", ctrl_c)
    if escapes:
        monkeypatch.setattr(enumeration.Enumeration, "solve", ctrl_c)
    code = main(["compare", *TINY, "--B", "2,3", "--methods", "rfe1,enumerate,ls*", "--json"])
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert code == 130 and [(r["method"], r["instance"]["B"]) for r in rows] == [("rfe1", 2), ("enumerate", 2)]
    assert rows[0]["result"]["status"] == "converged" and rows[1]["result"]["status"] == "interrupted"
    assert err == "minlp-fs: interrupted during enumerate: the comparison stopped there\n"
