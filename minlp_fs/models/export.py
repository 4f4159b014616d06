"""Export DFS-SVM instances (paper problem (4)) for external solvers, and read their answers back.

* ``.nl`` (AMPL) by Pyomo's nl writer with ``symbolic_solver_labels``: the ``.row`` / ``.col``
  files list the constraint and variable names (``alpha[3]``, ``beta[0]``, ...) in the file's order,
  the model's initial values (the starting point) are written into the ``.nl``, and ``FILE.json``
  holds the provenance (:mod:`minlp_fs.models.provenance`: parameters, sense and what the optimum
  means, rows, bounds, start, version, date).
* ``.gms`` in MINLPLib's conventions: scalar variables ``x1, x2, ...`` (continuous), ``b..``
  (binary) and ``objvar``, equations ``e1, e2, ...`` with the objective as
  ``e1.. <f> - objvar =E= 0``, a header of equation/variable/nonzero counts, bounds, the starting
  point as levels (``.l``), ``objvar.lo``/``objvar.up`` at the formulation's objective bounds, and
  ``Solve m using %MINLP% minimizing objvar`` (``%NLP%`` for a relaxation); the header comment holds
  the provenance and a table mapping each GAMS symbol to the model's name.
* :func:`read_sol` reads an AMPL ``.sol`` (Pyomo's sol reader) and maps it through the ``.col``
  names to (alpha, beta).

The starting point is a feature subset with its exact alpha (the warm start every solver adapter
uses): ``start`` is None / "alpha-start" (the paper's alpha-start), "random" or a list of indices;
``start=False`` writes no starting point. ``relax`` and ``support`` are passed to ``build_model``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import InputError
from .dfs_svm import build_model, load_start, solution_from_values
from .provenance import comment_lines

FORMATS = ("nl", "gms")


def starting_point(instance, start=None, seed: int = 0, oracle=None) -> tuple:
    """(alpha, beta) of a start subset, alpha exact for that subset (the solvers' warm start)."""
    from ..alpha import AlphaSubproblem
    from ..heuristics.starts import resolve_start

    oracle = oracle if oracle is not None else AlphaSubproblem(instance)
    fit = oracle.solve(resolve_start(instance, start, seed=seed, oracle=oracle))
    beta = np.zeros(instance.n)
    beta[list(fit.subset)] = 1.0
    return fit.alpha, beta


def started_model(instance, start=None, relax: bool = False, support=None, source: dict | None = None,
                  seed: int = 0):
    """The Pyomo model the writers write: ``build_model`` with the starting point loaded and named in
    its provenance (one model can be written by :func:`write_nl_model` and :func:`write_gms_model`);
    ``seed`` draws the ``start="random"`` subset."""
    model = build_model(instance, relax=relax, support=support, source=source)
    if start is not False:
        alpha, beta = starting_point(instance, start, seed=seed)
        load_start(model, alpha, beta)
        what = "the alpha-start (paper section 5.1)" if start in (None, "alpha-start") else \
            f"a random subset (seed {seed})" if start == "random" else "the given subset"
        start = f"{what}: features {np.flatnonzero(beta).tolist()} with their exact alpha"
    else:
        start = "none"
    model.dfs["provenance"]["start"] = start
    return model


def write_nl(instance, path, start=None, relax: bool = False, support=None, source: dict | None = None,
             seed: int = 0) -> list:
    """Write ``path`` (.nl) with its ``.row``, ``.col`` and ``.json`` (provenance) files; ``start=False``
    writes no start, ``seed`` draws a random one; ``source``: see :mod:`minlp_fs.models.provenance`."""
    return write_nl_model(started_model(instance, start, relax, support, source, seed), path)


def write_nl_model(model, path) -> list:
    """:func:`write_nl` for a model built by :func:`started_model`."""
    path = Path(path)
    model.write(str(path), format="nl", io_options={"symbolic_solver_labels": True})
    sidecar = path.with_suffix(".json")
    sidecar.write_text(json.dumps(model.dfs["provenance"], indent=1) + "\n")
    return [path, path.with_suffix(".row"), path.with_suffix(".col"), sidecar]


def read_sol(instance, sol_path, col_path) -> tuple:
    """(alpha, beta) from a solver's AMPL ``.sol`` for a model written by :func:`write_nl`."""
    import pyomo.environ  # noqa: F401  (registers Pyomo's readers)
    from pyomo.opt import ReaderFactory

    names = Path(col_path).read_text().split()
    try:
        results = ReaderFactory("sol")(str(sol_path))
    except (OSError, ValueError) as exc:   # Pyomo's message ends with the whole file: keep the reason, on one line
        reason = " ".join(str(exc).split("SOL File Output:")[0].split())
        raise InputError(f"cannot read AMPL solution {sol_path}: {reason}") from None
    if len(results.solution) == 0:
        raise InputError(f"{sol_path} holds no solution ({results.solver.message})")
    found = results.solution(0).variable
    if len(found) > len(names):
        raise InputError(f"{sol_path} has {len(found)} variables but {col_path} names {len(names)}")
    values = {name: found.get(f"v{k}", {}).get("Value", 0.0) for k, name in enumerate(names)}
    return solution_from_values(instance, values)


# ---- GAMS (MINLPLib conventions) -------------------------------------------------------------------

def gms_symbols(model) -> list:
    """[(GAMS symbol, Pyomo variable)] in file order: the non-beta variables, then beta."""
    import pyomo.environ as pyo
    variables = [v for v in model.component_data_objects(pyo.Var) if not v.fixed]
    ordered = [v for v in variables if v.parent_component() is not model.beta] + list(model.beta.values())
    return [(("x" if v.is_continuous() else "b") + str(k), v) for k, v in enumerate(ordered, start=1)]


def _terms(expr, to_gams) -> list:
    """GAMS text of a sum, one term per line (so lines stay short)."""
    from pyomo.core.expr import SumExpression
    args = expr.args if isinstance(expr, SumExpression) else [expr]
    lines = []
    for k, arg in enumerate(args):
        text = to_gams(arg)
        lines.append(text if k == 0 or text.startswith("-") else "+ " + text)
    return lines


def model_counts(model) -> dict:
    """Jacobian nonzeros (objvar included) and how many of them are nonlinear, as MINLPLib counts them."""
    import pyomo.environ as pyo
    from pyomo.repn import generate_standard_repn
    nz = nl = 0
    exprs = [model.objective.expr] + [c.body for c in model.component_data_objects(pyo.Constraint, active=True)]
    for k, expr in enumerate(exprs):
        repn = generate_standard_repn(expr, quadratic=False)
        nonlinear = {id(v) for v in repn.nonlinear_vars}
        used = nonlinear | {id(v) for v in repn.linear_vars}
        nz += len(used) + (k == 0)          # + objvar in the objective's equation
        nl += len(nonlinear)
    return {"nonzeros": nz, "nonlinear": nl}


def gms_text(model, title: str = "") -> str:
    """The model as a .gms file in MINLPLib's conventions (see the module docstring)."""
    import pyomo.environ as pyo
    from pyomo.core.base.symbol_map import SymbolMap
    from pyomo.repn.plugins.gams_writer import (
        StorageTreeChecker,
        expression_to_string,
        split_long_line,
    )

    symbols = gms_symbols(model)
    smap = SymbolMap()
    for name, var in symbols:
        smap.addSymbol(var, name)
    checker = StorageTreeChecker(model)

    def to_gams(expr):
        return expression_to_string(expr, checker, smap=smap)[0]

    cons = list(model.component_data_objects(pyo.Constraint, active=True))
    equations = [(_terms(model.objective.expr, to_gams) + ["- objvar"], "=E=", 0.0, model.objective.name)]
    for con in cons:
        kind, rhs = ("=E=", con.upper) if con.equality else (("=G=", con.lower) if con.has_lb() else ("=L=", con.upper))
        equations.append(([split_long_line(to_gams(con.body))], kind, pyo.value(rhs), con.name))
    discrete = [s for s, v in symbols if not v.is_continuous()]
    positive = [s for s, v in symbols if v.is_continuous() and v.lb == 0]
    kinds = [e[1] for e in equations]
    counts = model_counts(model)
    mtype = "MINLP" if discrete else "NLP"
    info = model.dfs["provenance"]
    head = [f"*  {mtype} written by {info['package']} (DFS-SVM, paper problem (4), sense {info['sense']}) "
            f"{title}".rstrip(), "*",
            "*  Equation counts",
            "*      Total        E        G        L        N        X        C        B",
            f"*  {len(equations):>9}{kinds.count('=E='):>9}{kinds.count('=G='):>9}{kinds.count('=L='):>9}"
            f"{0:>9}{0:>9}{0:>9}{0:>9}", "*", "*  Variable counts",
            "*                   x        b        i      s1s      s2s       sc       si",
            "*      Total     cont   binary  integer     sos1     sos2    scont     sint",
            f"*  {len(symbols) + 1:>9}{len(symbols) + 1 - len(discrete):>9}{len(discrete):>9}"
            f"{0:>9}{0:>9}{0:>9}{0:>9}{0:>9}", "*  FX      0", "*", "*  Nonzero counts",
            "*      Total    const       NL",
            f"*  {counts['nonzeros']:>9}{counts['nonzeros'] - counts['nonlinear']:>9}{counts['nonlinear']:>9}",
            "*", f"*  Solve m using {mtype} minimizing objvar;", "*", "*  Provenance:"]
    head += ["*    " + line for line in comment_lines(info)] + ["*", "*  Symbols:"]
    head += [f"*    {s} = {v.name}" for s, v in symbols] + ["*    objvar = " + model.objective.name]
    out = head + ["", "", _declare("Variables", [s for s, _ in symbols] + ["objvar"])]
    if positive:
        out += ["", _declare("Positive Variables", positive)]
    if discrete:
        out += ["", _declare("Binary Variables", discrete)]
    out += ["", _declare("Equations", [f"e{k}" for k in range(1, len(equations) + 1)]), ""]
    for k, (lines, kind, rhs, name) in enumerate(equations, start=1):
        out += ["", f"* {name}", f"e{k}..  " + "\n      ".join(lines) + f" {kind} {_num(rhs)};"]
    out += ["", "* set non-default bounds"]
    low, high = model.dfs["formulation"].objective_range
    out += [f"objvar.lo = {_num(low)};", f"objvar.up = {_num(high)};"]
    for s, v in symbols:
        if v.is_continuous() and v.lb not in (None, 0):
            out.append(f"{s}.lo = {_num(v.lb)};")
        if v.is_continuous() and v.ub is not None:
            out.append(f"{s}.up = {_num(v.ub)};")
    levels = [f"{s}.l = {_num(v.value)};" for s, v in symbols if v.value is not None]
    if levels:
        out += ["", "* set non-default levels (the starting point)"] + levels
        if len(levels) == len(symbols):
            out.append(f"objvar.l = {_num(pyo.value(model.objective))};")
    out += ["", "Model m / all /;", "", "m.limrow=0; m.limcol=0;", "m.tolproj=0.0;", "",
            "$if NOT '%gams.u1%' == '' $include '%gams.u1%'", "",
            f"$if not set {mtype} $set {mtype} {mtype}", f"Solve m using %{mtype}% minimizing objvar;", ""]
    return "\n".join(out)


def gms_symbol_table(path) -> list:
    """[(GAMS symbol, model name)] from the ``*  Symbols:`` table of a .gms written by :func:`gms_text`."""
    table, inside = [], False
    with open(path) as fh:
        for line in fh:
            if not line.startswith("*"):
                break
            text = line[1:].strip()
            if text == "Symbols:":
                inside = True
            elif inside and " = " in text:
                symbol, name = text.split(" = ", 1)
                if symbol != "objvar":
                    table.append((symbol, name))
    if not table:
        raise InputError(f"{path} has no symbol table: write it with minlp_fs.models.export.write_gms")
    return table


def _num(x) -> str:
    return repr(float(x)) if float(x) != int(x) else str(int(x))


def _declare(keyword: str, names: list, per_line: int = 10) -> str:
    rows = [",".join(names[k:k + per_line]) for k in range(0, len(names), per_line)]
    pad = " " * (len(keyword) + 2)
    return f"{keyword}  " + (",\n" + pad).join(rows) + ";"


def write_gms(instance, path, start=None, relax: bool = False, support=None, source: dict | None = None,
              seed: int = 0) -> Path:
    """Write a MINLPLib-style ``.gms`` of the instance, the starting point as levels (``seed`` draws a random
    one), the provenance in the header (``source``: see :mod:`minlp_fs.models.provenance`)."""
    return write_gms_model(started_model(instance, start, relax, support, source, seed), path)


def write_gms_model(model, path) -> Path:
    """:func:`write_gms` for a model built by :func:`started_model`."""
    path, inst = Path(path), model.dfs["formulation"].instance
    path.write_text(gms_text(model, title=f"instance {inst.name}: m={inst.m} n={inst.n} B={inst.B} C={inst.C} "
                                          f"kernel={inst.kernel.name} sense={inst.sense}"))
    return path


def export(instance, fmt: str, out, start=None, relax: bool = False, support=None, source: dict | None = None,
           seed: int = 0) -> list:
    """``minlp-fs export --format nl|gms --out F``: the files written (``out`` with the format's suffix, in
    any case, kept as given; another suffix is replaced); ``seed`` draws ``start="random"``."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.suffix.lower() != f".{fmt}":
        out = out.with_suffix(f".{fmt}")
    if fmt == "nl":
        return write_nl(instance, out, start=start, relax=relax, support=support, source=source, seed=seed)
    return [write_gms(instance, out, start=start, relax=relax, support=support, source=source, seed=seed)]
