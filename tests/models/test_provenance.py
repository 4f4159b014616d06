"""Every exported file states the instance's parameters, sense and meaning of its optimum, rows,
bounds, start, package version and date: .gms in its header, .nl in a JSON sidecar, Pyomo in its doc."""
import json
import re

import pytest

pytest.importorskip("pyomo.environ", reason="Pyomo is a core dependency; absent here")

from minlp_fs import __version__  # noqa: E402
from minlp_fs.api import build_instance  # noqa: E402
from minlp_fs.models import build_model  # noqa: E402
from minlp_fs.models.export import gms_symbol_table, write_gms, write_nl  # noqa: E402
from minlp_fs.models.formulation import Formulation  # noqa: E402
from minlp_fs.models.provenance import NOT_RECORDED, comment_lines, provenance  # noqa: E402

SOURCE = {"dataset": "synthetic", "scaling": "minmax", "seed": 3, "m": 12}


def _instance(kernel="poly3", sense="paper", gamma=0.25):
    return build_instance("synthetic", kernel=kernel, gamma=gamma, coef0=2.0 if kernel != "rbf" else None,
                          B=2, C=4.0, sense=sense, m=12, seed=3)


def _check(info, inst, sense):
    assert info["sense"] == sense and info["m"] == 12 and info["n"] == inst.n and info["B"] == 2
    assert info["C"] == 4.0 and info["kernel"] == inst.kernel.params()
    assert info["rows"] == [int(i) for i in inst.rows] and len(info["rows"]) == 12
    assert info["scaling"] == "minmax" and info["seed"] == 3 and info["dataset"] == "synthetic"
    assert info["package"] == f"minlp-fs {__version__}" and re.match(r"\d{4}-\d\d-\d\dT", info["date"])
    assert info["bounds"]["objective"] == list(Formulation(inst).objective_range)
    assert ("-(max over beta of g(beta))" in info["optimum"]) == (sense == "fit")
    assert info["start"].startswith("the given subset: features [0, 1]")


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_nl_sidecar_states_everything(tmp_path, sense):
    inst = _instance(sense=sense)
    files = write_nl(inst, tmp_path / "m.nl", start=[0, 1], source=SOURCE)
    info = json.loads(files[-1].read_text())
    assert files[-1].name == "m.json"
    _check(info, inst, sense)
    assert info["regenerate"] == ("minlp-fs export --dataset synthetic --kernel poly3 --gamma 0.25 --coef0 2.0 "
                                  f"--degree 3 --B 2 --C 4.0 --sense {sense} --scaling minmax --m 12 --seed 3 "
                                  "--data-dir DIR --format FMT --out FILE")


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gms_header_states_everything(tmp_path, sense):
    inst = _instance(kernel="rbf", sense=sense)
    path = write_gms(inst, tmp_path / "m.gms", start=[0, 1], source=SOURCE)
    text = path.read_text()
    first = text.splitlines()[0]
    assert f"sense {sense}" in first and f"minlp-fs {__version__}" in first
    head = [line[1:].strip() for line in text.splitlines() if line.startswith("*")]
    assert 'kernel: {"name": "rbf", "gamma": 0.25}' in head and "C: 4.0" in head and "scaling: minmax" in head
    assert any(line.startswith("optimum: ") and ("SVM primal" in line) == (sense == "fit") for line in head)
    assert len(gms_symbol_table(path)) == inst.n + (12 + 1 if sense == "paper" else 12 + 1 + 12 + 1)
    other = write_gms(_instance(kernel="rbf", sense=sense, gamma=0.5), tmp_path / "o.gms", start=[0, 1],
                      source=SOURCE).read_text()
    assert 'kernel: {"name": "rbf", "gamma": 0.5}' in other    # a different gamma, a different header


def test_pyomo_model_doc_and_unrecorded_source():
    inst = _instance()
    model = build_model(inst)
    assert "kernel: " in model.doc and f"minlp-fs {__version__}" in model.doc
    info = model.dfs["provenance"]
    assert info["scaling"] == info["seed"] == info["dataset"] == NOT_RECORDED and "regenerate" not in info


def test_long_values_are_wrapped_at_spaces():
    info = provenance(Formulation(_instance()), SOURCE)
    lines = comment_lines({"rows": list(range(200)), "sense": "fit"}, width=60)
    assert all(len(line) <= 60 for line in lines) and lines[-1] == "sense: fit"
    assert json.loads("".join(line.strip() if k == 0 else " " + line.strip()
                              for k, line in enumerate(lines[:-1]))[len("rows: "):]) == list(range(200))
    assert info["kernel"]["degree"] == 3
