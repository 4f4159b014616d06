""".nl / .gms export: files as specified, read by real solvers, answers mapped back and re-evaluated.

What runs here: SCIP (pyscipopt) reads our .nl, solves it (to proven optimality in the paper sense,
equal to enumeration's optimum) and writes an AMPL .sol through its nl reader
(``SCIPwriteSolutionNl``), which :func:`read_sol` maps back through the .col names; GAMS from
``gamspy_base`` solves our .gms (SBB + CONOPT, always present in the demo) and our code re-evaluates
the answer. Each part skips with the reason when its solver is absent.
"""
import ctypes
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.errors import InputError
from minlp_fs.models import build_model, solution_from_values
from minlp_fs.models.export import export, gms_symbol_table, read_sol, write_gms, write_nl
from minlp_fs.objective import feasibility_violation
from minlp_fs.solvers.enumeration import Enumeration
from builders import synthetic_instance

HAS_SCIP = importlib.util.find_spec("pyscipopt") is not None
START = [0, 2]


def _instance(kernel="rbf", sense="paper", m=8):
    return synthetic_instance(kernel, sense, m=m, data_seed=3)


def _levels(text):
    return {k: float(v) for k, v in re.findall(r"^(\w+)\.l = (\S+);$", text, flags=re.M)}


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gms_follows_minlplib_conventions_with_the_start(tmp_path, sense):
    inst = _instance(sense=sense)
    path = write_gms(inst, tmp_path / "dfs.gms", start=START)
    text = path.read_text()
    assert not re.search(r"\bcard\b", text)       # a GAMS function: never a symbol
    assert "Solve m using %MINLP% minimizing objvar;" in text and "Binary Variables" in text
    table = dict(gms_symbol_table(path))
    assert sorted(table.values()) == sorted(v.name for v in _model_vars(inst))
    # the starting point: the exact alpha of START, and beta = indicator(START)
    fit = AlphaSubproblem(inst).solve(START)
    alpha, beta = solution_from_values(inst, {table[s]: v for s, v in _levels(text).items() if s in table})
    assert np.allclose(alpha, fit.alpha, atol=1e-12) and np.flatnonzero(beta).tolist() == START
    # header counts: equations, variables (objvar included)
    eqs, cols = re.findall(r"^\*\s+(\d+)\s+\d+", text, flags=re.M)[:2]
    # objective, budget, balance, objective_bound, epigraph (+ m margins)
    rows_expected = 5 if sense == "paper" else inst.m + 5
    assert int(eqs) == rows_expected == text.count("..  ")
    assert int(cols) == len(table) + 1


def _model_vars(inst):
    import pyomo.environ as pyo
    return list(build_model(inst).component_data_objects(pyo.Var))


def test_relaxed_gms_is_an_nlp(tmp_path):
    text = write_gms(_instance(), tmp_path / "r.gms", start=START, relax=True).read_text()
    assert "Solve m using %NLP% minimizing objvar;" in text and "Binary Variables" not in text


def test_export_entry_point(tmp_path):
    inst = _instance()
    files = export(inst, "nl", tmp_path / "model", start=START)
    assert [f.suffix for f in files] == [".nl", ".row", ".col", ".json"] and all(f.exists() for f in files)
    assert export(inst, "gms", tmp_path / "model.txt", start=START)[0].name == "model.gms"
    with pytest.raises(InputError, match="unknown export format"):
        export(inst, "lp", tmp_path / "x")


def test_export_keeps_the_name_given_with_the_suffix_in_any_case(tmp_path, capsys):
    """``--out s4.GMS`` wrote s4.gms: a silent rename on a case-sensitive file system."""
    from minlp_fs.cli import main

    assert export(_instance(), "gms", tmp_path / "a.GMS", start=START)[0].name == "a.GMS"
    assert main(["export", "--dataset", "synthetic", "--B", "2", "--m", "12", "--format", "nl",
                 "--out", str(tmp_path / "s4.NL")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == str(tmp_path / "s4.NL")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.GMS", "s4.NL", "s4.col", "s4.json", "s4.row"]


def test_a_random_start_uses_the_seed_and_says_so(tmp_path):
    inst = _instance(m=12)
    starts = set()
    for seed in range(4):
        text = write_gms(inst, tmp_path / f"r{seed}.gms", start="random", seed=seed).read_text()
        line = re.search(r"start: a random subset \(seed (\d+)\): features (\[.*?\])", text)
        assert line and int(line.group(1)) == seed
        starts.add(line.group(2))
    assert len(starts) > 1


def test_nl_symbol_files_and_start(tmp_path):
    inst = _instance()
    nl, row, col, _ = write_nl(inst, tmp_path / "dfs.nl", start=START)
    names = col.read_text().split()
    assert sorted(names) == sorted([f"alpha[{i}]" for i in range(inst.m)] + [f"beta[{j}]" for j in range(inst.n)]
                                   + ["t"])
    # Pyomo's nl writer puts the nonlinear row first
    assert row.read_text().split() == ["epigraph", "budget", "balance", "objective_bound", "objective"]
    # the x segment of the .nl holds one initial value per variable (the start)
    header = re.search(r"^x(\d+)", nl.read_text(), flags=re.M)
    assert header is not None and int(header.group(1)) == inst.m + inst.n + 1


def _scip_write_sol(model):
    """Call SCIP's SCIPwriteSolutionNl (the AMPL .sol writer of its nl reader) on a pyscipopt model."""
    import pyscipopt
    libs = sorted((Path(pyscipopt.__file__).parent.parent / "pyscipopt.libs").glob("libscip*"))
    if not libs:
        pytest.skip("pyscipopt's bundled libscip not found: cannot call SCIPwriteSolutionNl")
    lib = ctypes.CDLL(str(libs[0]))
    if not hasattr(lib, "SCIPwriteSolutionNl"):
        pytest.skip("this SCIP build has no AMPL .nl reader (SCIPwriteSolutionNl)")
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    lib.SCIPwriteSolutionNl.argtypes = [ctypes.c_void_p]
    assert lib.SCIPwriteSolutionNl(get(model.to_ptr(False), b"scip")) == 1  # SCIP_OKAY


@pytest.mark.skipif(not HAS_SCIP, reason="pyscipopt not installed: no solver here reads .nl files")
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_nl_round_trip_through_scip(tmp_path, sense):
    import pyscipopt
    inst = _instance(sense=sense, m=4)
    nl, _, col, _ = write_nl(inst, tmp_path / "dfs.nl", start=START)
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(nl))
    scip.setParam("limits/time", 3 if sense == "fit" else 30)   # SCIP proves the paper-sense one in ~1 s
    scip.optimize()
    assert scip.getNSols() > 0
    _scip_write_sol(scip)
    alpha, beta = read_sol(inst, tmp_path / "dfs.sol", col)
    subset = np.flatnonzero(beta > 0.5)
    assert subset.size == inst.B and np.allclose(beta, np.round(beta))
    if sense == "paper":   # a feasible alpha; SCIP's objective is f(alpha, beta) by our code and the optimum
        assert feasibility_violation(alpha, inst.y, inst.C) < 1e-5
        assert inst.objective(alpha, subset) == pytest.approx(scip.getObjVal(), rel=1e-5, abs=1e-5)
        assert scip.getStatus() == "optimal"
        ref = Enumeration().solve(inst)
        assert subset.tolist() == ref.features and scip.getObjVal() == pytest.approx(ref.objective, rel=1e-6)
    else:                  # alpha = y*c in the box; the primal value is at least -g(beta) (weak duality)
        assert np.all((alpha >= 0) & (alpha <= inst.C))
        assert scip.getObjVal() >= -AlphaSubproblem(inst).solve(subset).value - 1e-4


@pytest.mark.requires_gams
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gms_solved_by_gams(tmp_path, sense):
    from minlp_fs.solvers.gams import solve_gms
    inst = _instance(sense=sense, m=8)
    path = write_gms(inst, tmp_path / "dfs.gms", start=START)
    ans = solve_gms(path, "sbb", time_limit=30)
    assert ans["solvestat"] == 1 and ans["modelstat"] in (1, 2, 8)
    alpha, beta = solution_from_values(inst, ans["values"])
    subset = np.flatnonzero(beta > 0.5)
    assert subset.size == inst.B
    fit = AlphaSubproblem(inst).solve(subset)
    if sense == "paper":   # GAMS's objective is f(alpha, beta) by our code, and no better than g(beta)
        assert inst.objective(alpha, subset) == pytest.approx(ans["objval"], rel=1e-6)
        assert ans["objval"] >= fit.value - 1e-6
    else:                  # the primal objective is at least -g(beta) (weak duality)
        assert ans["objval"] >= -fit.value - 1e-6
    # SBB (local, from our start) ends no worse than the start, whose model value is sign * g(START)
    start_value = inst.sign * AlphaSubproblem(inst).solve(START).value
    assert ans["objval"] <= start_value + 1e-6 * max(1.0, abs(start_value))
