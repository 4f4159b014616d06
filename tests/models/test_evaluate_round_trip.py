"""The round trip of issue 14: export -> an external solver -> its solution file -> ``minlp-fs evaluate``.

SCIP (pyscipopt) reads the exported ``.nl``, beta is fixed to the certified optimum of a tiny instance
(``minlp-fs certify``), SCIP solves and writes an AMPL ``.sol`` through its nl reader; GAMS (gamspy's
bundled system, SBB + CONOPT in the demo licence) runs the exported ``.gms`` with beta fixed by the
model's user include and writes a ``.gdx``. ``minlp-fs evaluate --sol`` / ``--gdx`` must return the
certified value and status ``optimal``. Each part skips with the reason when its solver is absent.
"""
import importlib.util
import json
import subprocess

import pytest
from test_export import _scip_write_sol  # the .sol writer of SCIP's nl reader, shared with the export tests

from minlp_fs.cli import main
from minlp_fs.models.export import gms_symbol_table

TINY = ["--dataset", "synthetic", "--B", "2", "--m", "12"]


def _cli_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _certified(capsys, sense):
    ref = _cli_json(capsys, "certify", *TINY, "--sense", sense, "--no-progress", "--json")
    assert ref["certified"]
    return ref


@pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None,
                    reason="pyscipopt not installed: no solver here reads .nl files")
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_scip_sol_evaluates_to_the_certified_value(tmp_path, capsys, sense):
    import pyscipopt
    ref = _certified(capsys, sense)
    assert main(["export", *TINY, "--sense", sense, "--format", "nl", "--out", str(tmp_path / "dfs.nl")]) == 0
    capsys.readouterr()
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(tmp_path / "dfs.nl"))
    fixed = 0
    for var in scip.getVars():
        if var.name.startswith("beta["):
            value = float(int(var.name[5:-1]) in ref["features"])
            scip.chgVarLb(var, value)
            scip.chgVarUb(var, value)
            fixed += 1
    assert fixed == 10
    scip.setParam("limits/time", 60)
    scip.optimize()
    assert scip.getNSols() > 0
    _scip_write_sol(scip)
    ev = _cli_json(capsys, "evaluate", *TINY, "--sense", sense, "--sol", str(tmp_path / "dfs.sol"), "--json")
    assert ev["features"] == ref["features"] and ev["status"] == "optimal" and ev["gap_pct"] < 1e-6
    assert ev["objective"] == pytest.approx(ref["objective"], rel=1e-9)
    assert ev["certified_objective"] == pytest.approx(ref["objective"], rel=1e-9)
    assert ev["beta_max_fractionality"] == 0
    if sense == "paper":   # SCIP's alpha gives f = the certified value (to SCIP's tolerances)
        assert ev["file_objective"] == pytest.approx(ref["objective"], rel=1e-5)
        assert scip.getObjVal() == pytest.approx(ref["objective"], rel=1e-5)
    else:                  # SCIP minimised the primal, whose optimum is -g(beta) (strong duality)
        assert -scip.getObjVal() == pytest.approx(ref["objective"], rel=1e-5)


@pytest.mark.requires_gams
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gams_gdx_evaluates_to_the_certified_value(tmp_path, capsys, sense):
    import gamspy_base
    ref = _certified(capsys, sense)
    gms = tmp_path / "dfs.gms"
    assert main(["export", *TINY, "--sense", sense, "--format", "gms", "--out", str(gms)]) == 0
    capsys.readouterr()
    # the .gms includes the file named by GAMS's user string 1 before its Solve: fix beta there
    fix = [f"{symbol}.fx = {int(int(name[5:-1]) in ref['features'])};"
           for symbol, name in gms_symbol_table(gms) if name.startswith("beta[")]
    assert len(fix) == 10
    (tmp_path / "fix.gms").write_text("\n".join(fix) + "\n")
    done = subprocess.run([f"{gamspy_base.directory}/gams", gms.name, "u1=fix.gms", "gdx=solution.gdx",
                           "minlp=sbb", "nlp=conopt", "reslim=60", "optcr=0", "lo=3"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    ev = _cli_json(capsys, "evaluate", *TINY, "--sense", sense, "--gdx", str(tmp_path / "solution.gdx"),
                   "--gms", str(gms), "--json")
    assert ev["features"] == ref["features"] and ev["status"] == "optimal" and ev["gap_pct"] < 1e-6
    assert ev["objective"] == pytest.approx(ref["objective"], rel=1e-9)
    if sense == "paper":   # CONOPT's alpha is a local = global optimum of the convex QP in alpha
        assert ev["file_objective"] == pytest.approx(ref["objective"], rel=1e-5)
