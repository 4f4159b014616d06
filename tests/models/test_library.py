"""``minlp-fs export-library --quick``: the files, the CSV's counts and values, and the provenance."""
import csv
import importlib.util
import json
import math
import shlex

import pytest

from minlp_fs.cli import main
from minlp_fs.models.library import CERTIFY_MAX_SUBSETS, COLUMNS, QUICK, entries

pytestmark = pytest.mark.requires_data


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    from tests.conftest import DATA_DIR
    if not DATA_DIR.is_dir():
        pytest.skip("the shared datasets folder is absent")
    out = tmp_path_factory.mktemp("library")
    assert main(["export-library", "--out", str(out), "--quick", "--data-dir", str(DATA_DIR)]) == 0
    with (out / "library.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return out, rows, DATA_DIR


def _header_counts(path) -> dict:
    """Equation, variable and nonzero totals from a .gms header written in MINLPLib's conventions."""
    lines = path.read_text().splitlines()
    totals = {}
    for key, label in (("constraints", "Equation counts"), ("variables", "Variable counts"),
                       ("nonzeros", "Nonzero counts")):
        at = next(k for k, line in enumerate(lines) if line.strip("* ") == label)
        numbers = next(line for line in lines[at + 1:] if line.strip("* ")[:1].isdigit())
        totals[key] = [int(x) for x in numbers.strip("* ").split()]
    return {"constraints": totals["constraints"][0], "variables": totals["variables"][0],
            "binaries": totals["variables"][2], "nonzeros": totals["nonzeros"][0],
            "nonlinear_nonzeros": totals["nonzeros"][2]}


def test_quick_library_has_one_row_and_five_files_per_instance(library):
    out, rows, _ = library
    assert [r["name"] for r in rows] == [e.name for e in entries(quick=True)] and len(rows) == len(QUICK)
    assert list(rows[0]) == list(COLUMNS)
    for r in rows:
        for suffix in (".gms", ".nl", ".row", ".col", ".json"):
            assert (out / (r["name"] + suffix)).stat().st_size > 0
    assert {r["certified"] for r in rows} == {"true", "false"}   # both kinds in the quick set


def test_the_csvs_counts_are_those_of_the_written_models(library):
    out, rows, _ = library
    for r in rows:
        header = _header_counts(out / (r["name"] + ".gms"))
        assert header == {k: int(r[k]) for k in header}, r["name"]


@pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None,
                    reason="pyscipopt not installed: no solver here reads .nl files")
def test_scip_reads_every_nl_with_the_csvs_counts(library):
    import pyscipopt
    out, rows, _ = library
    for r in rows:
        scip = pyscipopt.Model()
        scip.hideOutput()
        scip.readProblem(str(out / (r["name"] + ".nl")))
        binaries = [v for v in scip.getVars() if v.vtype() in ("BINARY", "INTEGER")
                    and v.getLbGlobal() == 0 and v.getUbGlobal() == 1]
        # the .nl has no objvar and no objective row (its objective t - e'alpha is linear)
        assert scip.getNVars() == int(r["variables"]) - 1 and len(binaries) == int(r["binaries"])
        assert scip.getNConss() == int(r["constraints"]) - 1


def test_certified_values_equal_enumeration_of_the_regenerated_instance(library, capsys):
    """The provenance's ``regenerate`` flags, given to ``certify``, rebuild the instance: its enumerated
    optimum is the CSV's certified value; an uncertified value is no better than the formulation's bound."""
    out, rows, data_dir = library
    capsys.readouterr()
    for r in rows:
        info = json.loads((out / (r["name"] + ".json")).read_text())
        flags = shlex.split(info["regenerate"])[2:-6] + ["--data-dir", str(data_dir), "--json"]
        if r["certified"] == "true":
            assert main(["certify", *flags]) == 0
            ref = json.loads(capsys.readouterr().out)
            assert ref["certified"] and float(r["best_known"]) == pytest.approx(ref["objective"], rel=1e-7)
            assert float(r["best_bound"]) == float(r["best_known"])
        else:
            assert math.comb(int(info["n"]), int(r["B"])) > CERTIFY_MAX_SUBSETS
            assert float(r["best_bound"]) == info["bounds"]["objective"][0] < float(r["best_known"])


def test_the_files_provenance_is_the_csv_row(library):
    out, rows, _ = library
    for r in rows:
        info = json.loads((out / (r["name"] + ".json")).read_text())
        k = info["kernel"]
        assert (info["dataset"], info["m"], info["seed"], info["B"], info["C"], info["sense"], info["scaling"]) == \
               (r["dataset"], int(r["m"]), int(r["seed"]), int(r["B"]), float(r["C"]), r["sense"], r["scaling"])
        assert (k["name"], k["gamma"], k["coef0"], k["degree"]) == \
               (r["kernel"], float(r["gamma"]), float(r["coef0"]), int(r["degree"]))
        gms = (out / (r["name"] + ".gms")).read_text()
        assert f"*    regenerate: {info['regenerate'][:60]}" in gms and f"*    dataset: {r['dataset']}" in gms


def test_export_library_refuses_a_file_as_its_folder_and_missing_data(tmp_path, capsys, monkeypatch):
    target = tmp_path / "library.csv"
    target.write_text("")
    assert main(["export-library", "--out", str(target), "--quick"]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err
    monkeypatch.delenv("MINLP_FS_DATA", raising=False)
    assert main(["export-library", "--out", str(tmp_path / "lib"), "--quick", "--data-dir", str(tmp_path)]) == 2
    assert "dataset 'cleveland' not found" in capsys.readouterr().err and not (tmp_path / "lib").exists()
