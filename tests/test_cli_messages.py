"""Command-line messages found wanting by review: flags that would be ignored, messages on several lines or
with raw exception names, a key rewritten from what the user typed, a cut-off --help."""
import json
import re

import pytest

from minlp_fs.cli import main

TINY = ["--dataset", "synthetic", "--B", "2", "--m", "40"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code, err, words):
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, words", [
    (["solve", *TINY, "--label", "foo"], "--dataset synthetic generates its data: --label (for a CSV dataset) "
                                         "would have no effect; drop it"),
    (["certify", *TINY, "--data-dir", ".", "--label", "y"], "--data-dir and --label (for a CSV dataset) would have "
                                                            "no effect; drop them"),
    (["solve", *TINY, "--kernel", "poly"], "--kernel poly needs a degree: poly2, poly3, poly5 (any polyD), or poly "
                                           "with --degree D"),
    (["compare", *TINY, "--kernel", "poly2,poly", "--methods", "rfe1"], "--kernel poly needs a degree"),
])
def test_flags_that_would_be_ignored_or_guessed_are_refused(capsys, argv, words):
    """--label/--data-dir mean nothing for generated data; a bare ``poly`` was silently degree 2 (scikit-learn's
    default is 3). A grid is built whole before any method runs, so its bad value costs no run."""
    code, out, err = run(capsys, *argv)
    _one_line(code, err, words)
    assert out == ""


def test_poly_with_a_degree_is_that_degree(capsys):
    code, out, _ = run(capsys, "solve", *TINY, "--kernel", "poly", "--degree", "3", "--json")
    assert code == 0 and json.loads(out)["instance"]["kernel"]["degree"] == 3


def test_a_garbage_sol_file_is_one_line(capsys, tmp_path):
    assert main(["export", *TINY, "--format", "nl", "--out", str(tmp_path / "m.nl")]) == 0
    (tmp_path / "g.sol").write_text("a\nb\nOptions\n3\nx\n")
    code, _, err = run(capsys, "evaluate", *TINY, "--sol", str(tmp_path / "g.sol"), "--col", str(tmp_path / "m.col"))
    _one_line(code, err, f"cannot read AMPL solution {tmp_path / 'g.sol'}: Error reading")
    assert "SOL File Output" not in err


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["instance"]["X"][0].__setitem__(0, "a"), "a value cannot be read: could not convert string"),
    (lambda d: d.pop("nodes"), "a field is missing: 'nodes'"),
    (lambda d: d["instance"].__setitem__("C", -10), "C must be a finite number > 0; got -10"),
])
def test_a_malformed_certificate_is_bad_input_not_a_failed_proof(capsys, tmp_path, edit, words):
    path = tmp_path / "c.json"
    assert main(["certify", *TINY, "--no-progress", "--certificate", str(path)]) == 0
    capsys.readouterr()
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "verify", str(path), "--graphml", str(tmp_path / "t.graphml"))
    _one_line(code, err, f"{path}: malformed certificate: {words}")
    assert out == "" and "Error:" not in err and not (tmp_path / "t.graphml").exists()


def test_a_solver_option_key_is_quoted_as_typed(capsys):
    code, _, err = run(capsys, "solve", *TINY, "--method", "ipopt", "--solver-option", "max_iter=abc")
    _one_line(code, err, "--solver-option 'max_iter' is set by the option --max-iter; use --max-iter instead")


def test_the_top_level_help_names_every_verb(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "minlp-fs solve | certify | verify | solvers | methods | export | export-library | evaluate | compare " \
           "| datasets | bench" in text


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly():
    """`minlp-fs ... --json | head` once ended in a BrokenPipeError traceback: now exit 141 (128 + SIGPIPE)
    and nothing on stderr (the reader here closes the pipe before the command writes)."""
    import subprocess
    import sys

    from minlp_fs.cli import EXIT_BROKEN_PIPE

    proc = subprocess.Popen([sys.executable, "-m", "minlp_fs.cli", "solve", "--B", "2", "--m", "40", "--method",
                             "alpha-start", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE and err == ""


@pytest.mark.parametrize("argv, words", [
    (["certify", *TINY, "--method", "xyz"], "certify: argument --method: invalid choice: 'xyz'"),
    (["solve", *TINY, "--bogus"], "solve: unrecognized arguments: --bogus"),
    (["solve", "--B", "x"], "solve: argument --B: invalid int value: 'x'"),
    (["compare", *TINY], "compare: the following arguments are required: --methods"),
    (["frobnicate"], "argument verb: invalid choice: 'frobnicate'"),
])
def test_a_flag_the_parser_refuses_is_one_line_naming_the_verb_and_its_help(capsys, argv, words):
    """argparse printed its usage block before the error; now one line, exit 2, pointing at the verb's --help."""
    code, out, err = run(capsys, *argv)
    _one_line(code, err, words)
    assert err.startswith("minlp-fs: error: ") and out == ""
    verb = argv[0] if argv[0] != "frobnicate" else ""
    assert f"(see 'minlp-fs{' ' + verb if verb else ''} --help')" in err and "usage:" not in err


def test_hybrids_options_are_flags_of_solve(capsys):
    """hybrid:SOLVER is not in the registry, so its max_rounds had no flag (its heuristic shared SCIP's --heuristic);
    its solver gets none: SOLVER is in the method's name."""
    pytest.importorskip("pyscipopt", reason="pyscipopt not installed (pip install minlp-fs[scip])")
    code, out, err = run(capsys, "solve", *TINY, "--method", "hybrid:scip", "--max-rounds", "1", "--heuristic", "acso*",
                         "--time-limit", "3", "--json")
    assert code in (0, 124), err   # SCIP may not close the gap within its share of the 3 s
    res = json.loads(out)
    assert res["method"] == "hybrid:scip" and [r["component"] for r in res["info"]["rounds"]][:2] == ["acso*", "scip"]
    assert len([r for r in res["info"]["rounds"] if r["component"] == "scip"]) == 1
    code, _, err = run(capsys, "solve", *TINY, "--method", "ls", "--max-rounds", "2")
    _one_line(code, err, "method 'ls' has no option(s) --max-rounds")
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = capsys.readouterr().out
    assert "--max-rounds" in text and "--heuristic" in text and not re.search(r"--solver(?!-option)", text)
