"""The files the command line writes (``certify --certificate``, ``verify --graphml``, ``compare --plot``,
``export --out``): checked before the work starts (one line, exit 2), and a write that fails afterwards
is one line after the answer, which is printed first."""
import json

import pytest

from minlp_fs.cli import main

TINY = ["--dataset", "synthetic", "--B", "2", "--m", "40"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _no_work(monkeypatch):
    """Make every long run fail the test: the path must be refused before it."""
    import minlp_fs.api
    import minlp_fs.compare
    import minlp_fs.exact.cli

    def started(*args, **kwargs):
        raise AssertionError("the work started before the output path was checked")

    for module, name in ((minlp_fs.api, "solve"), (minlp_fs.compare, "compare_grid"), (minlp_fs.exact.cli, "verify")):
        monkeypatch.setattr(module, name, started)


@pytest.fixture
def certificate(tmp_path, capsys):
    path = tmp_path / "c.json"
    assert main(["certify", *TINY, "--sense", "fit", "--no-progress", "--certificate", str(path)]) == 0
    capsys.readouterr()
    return path


CASES = {
    "certify": ["certify", *TINY, "--no-progress", "--certificate"],
    "verify": ["verify", "{cert}", "--graphml"],
    "compare": ["compare", *TINY, "--methods", "rfe1,ls*", "--plot"],
    "export": ["export", *TINY, "--format", "gms", "--out"],
}


@pytest.mark.parametrize("verb", CASES)
@pytest.mark.parametrize("where, words", [
    ("{tmp}", "{tmp} is a folder; give a file name"),
    ("{tmp}/missing/f.json", "cannot write {tmp}/missing/f.{suffix}: folder {tmp}/missing does not exist"),
    ("/proc/f.json", "cannot write /proc/f.{suffix}: No such file or directory"),
])
def test_an_unwritable_output_is_refused_before_the_work(capsys, tmp_path, certificate, monkeypatch, verb, where,
                                                         words):
    suffix = {"compare": "png", "export": "gms"}.get(verb, "json")
    where = where.replace(".json", "" if verb in ("compare", "export") else ".json")
    _no_work(monkeypatch)
    argv = [a.format(cert=certificate) for a in CASES[verb]] + [where.format(tmp=tmp_path)]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert words.format(tmp=tmp_path, suffix=suffix) in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]     # nothing written, not even a probe


def test_a_plot_never_writes_a_renamed_file(capsys, tmp_path, monkeypatch):
    """``--plot /tmp`` once wrote ``/tmp.png``; a name without a suffix gets .png, a suffix matplotlib
    cannot write is refused before the comparison."""
    monkeypatch.chdir(tmp_path)
    _no_work(monkeypatch)
    code, _, err = run(capsys, "compare", *TINY, "--methods", "ls*", "--plot", "x.txt")
    assert code == 2 and "--plot x.txt: matplotlib cannot write .txt files; use one of" in err and ".png" in err
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "compare", *TINY, "--methods", "rfe1", "--plot", "curve")
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["curve.png"]


def _disk_full(*args, **kwargs):
    raise OSError(28, "No space left on device", "the-file")


def test_a_certificate_write_that_fails_after_the_search_prints_the_answer_first(capsys, tmp_path, monkeypatch):
    from minlp_fs.exact.certificate import Recorder

    monkeypatch.setattr(Recorder, "write", _disk_full)
    path = tmp_path / "c.json"
    code, out, err = run(capsys, "certify", *TINY, "--no-progress", "--certificate", str(path), "--json")
    d = json.loads(out)
    assert code == 2 and d["status"] == "optimal" and d["certified"] and "certificate" not in d["info"]
    assert err == f"minlp-fs: error: cannot write the certificate {path}: No space left on device\n"


def test_the_api_warns_when_the_certificate_cannot_be_written(tmp_path, monkeypatch):
    from minlp_fs.api import build_instance, solve
    from minlp_fs.exact.certificate import Recorder

    monkeypatch.setattr(Recorder, "write", _disk_full)
    with pytest.warns(RuntimeWarning, match="cannot write the certificate"):
        res = solve(build_instance("synthetic", B=2, m=40), "bnb", certificate=str(tmp_path / "c.json"))
    assert res.status == "optimal" and "No space left" in res.info["certificate_error"]


def test_a_plot_write_that_fails_prints_the_table_first(capsys, tmp_path, monkeypatch):
    import minlp_fs.compare

    monkeypatch.setattr(minlp_fs.compare, "plot", _disk_full)
    code, out, err = run(capsys, "compare", *TINY, "--methods", "rfe1", "--plot", str(tmp_path / "c.png"))
    assert code == 2 and "rfe1" in out and "SVM solves" in out
    assert err == "minlp-fs: error: cannot write the-file: No space left on device\n"


def test_a_graphml_write_that_fails_is_one_line_after_the_verdict(capsys, certificate, monkeypatch):
    import networkx

    monkeypatch.setattr(networkx, "write_graphml", _disk_full)
    code, out, err = run(capsys, "verify", str(certificate), "--graphml", str(certificate.with_suffix(".graphml")))
    assert code == 2 and out.startswith("PROVEN: ")
    assert err == "minlp-fs: error: cannot write the-file: No space left on device\n"
