"""Exported models before/after their valid bounds: the final bound and gap of BARON, SBB and SCIP.

The bounds of :mod:`minlp_fs.models.formulation` (epigraph t in [0, M], the objective row in
[-2C min(|I+|, |I-|), 0], finite b and xi) are in every model written by this checkout. This script
writes the same instances with an older revision too (``--before DIR``: a checkout of it, e.g. by
``git worktree add DIR REV``; the writer runs there in a subprocess, so that revision's ``minlp_fs``
is imported) and hands both files, from the same alpha-start, to the same solvers under the same time
limit: ``.gms`` to GAMS/BARON (global) and GAMS/SBB (NLP-based branch and bound, whose bound is not
a global one on this nonconvex problem), ``.nl`` to SCIP (``readProblem``). Instances: the paper sense
of ``bench_solvers.py``'s reduced instances that fit BARON's demo (m = 10; C = 10, gamma = 0.1, c = 1,
B = floor(n/2), rows drawn stratified with seed 0). Gap = (objective - bound) / |objective|. Usage:

    python benchmarks/bench_bounds.py --before DIR [--time-limit 20] [--data-dir ../shared/datasets]
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minlp_fs.api import build_instance
from minlp_fs.datasets import PAPER_DATASETS

from _common import HERE, add_io_args, command, machine, write_section

CASES = [("cleveland", 2, 10), ("cleveland", 3, 10), ("cleveland", 5, 10), ("bcd", 2, 10), ("ionosphere", 2, 10)]
SOLVERS = ("baron", "sbb", "scip")
WRITER = """
import json, sys
from minlp_fs.api import build_instance
from minlp_fs.datasets import PAPER_DATASETS
from minlp_fs.models.export import write_gms, write_nl
ds, d, m, data_dir, out = json.loads(sys.argv[1])
n = PAPER_DATASETS[ds][1]
inst = build_instance(ds, data_dir, B=n // 2, kernel=f"poly{d}", C=10.0, gamma=0.1, m=m, seed=0)
write_gms(inst, out + ".gms")
write_nl(inst, out + ".nl")
"""


def write_models(root: Path, case: tuple, data_dir: str, out: str) -> None:
    """The case's .gms and .nl as written by the checkout at ``root``."""
    subprocess.run([sys.executable, "-c", WRITER, json.dumps([*case, data_dir, out])], cwd=root, check=True)


def solve_gams(path: str, solver: str, time_limit: float) -> dict:
    from minlp_fs.solvers.gams import register_solver, solve_gms

    if solver == "baron":
        register_solver("baron")
    ans = solve_gms(path, solver, time_limit)
    if ans.get("timeout"):
        return {"error": "killed: no answer within reslim + 60 s"}
    return {"objective": ans.get("objval"), "bound": ans.get("objest"), "time": ans.get("resusd"),
            "status": f"model status {ans.get('modelstat'):.0f}, solve status {ans.get('solvestat'):.0f}"
            if ans.get("modelstat") is not None else "no status (GAMS error)"}


def solve_scip(path: str, time_limit: float) -> dict:
    import pyscipopt

    model = pyscipopt.Model()
    model.hideOutput()
    model.readProblem(path)
    model.setParam("limits/time", time_limit)
    t0 = time.perf_counter()
    model.optimize()
    has = model.getNSols() > 0
    return {"objective": model.getPrimalbound() if has else None, "bound": model.getDualbound(),
            "time": time.perf_counter() - t0, "status": model.getStatus()}


def gap(run: dict):
    obj, bound = run.get("objective"), run.get("bound")
    if obj is None or bound is None or abs(bound) > 1e19:
        return None
    return (obj - bound) / max(abs(obj), 1e-9)


def cell(run: dict) -> str:
    if run.get("error"):
        return run["error"]
    g = gap(run)
    obj, bound = run.get("objective"), run.get("bound")
    text = f"{obj:.2f}" if obj is not None else f"no solution ({run.get('status')})"
    text += f" / {bound:.2f}" if bound is not None and abs(bound) < 1e19 else " / no bound"
    return text + (f" ({100 * g:.3g}%)" if g is not None else "")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="a checkout of the revision to compare against")
    p.add_argument("--time-limit", type=float, default=20.0)
    add_io_args(p)
    args = p.parse_args(argv)
    after_root, before_root = HERE.parent, Path(args.before).resolve()
    revs = {k: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=r, capture_output=True,
                              text=True).stdout.strip() or r.name   # an exported tree: its folder's name
            for k, r in (("before", before_root), ("after", after_root))}
    t_start = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_bounds_") as tmp:
        for case in CASES:
            inst = build_instance(case[0], args.data_dir, B=PAPER_DATASETS[case[0]][1] // 2, kernel=f"poly{case[1]}",
                                  C=10.0, gamma=0.1, m=case[2], seed=0)
            row = {"case": case, "trivial": inst.trivial_bound}
            for version, root in (("before", before_root), ("after", after_root)):
                out = str(Path(tmp) / f"{case[0]}_{case[1]}_{case[2]}_{version}")
                write_models(root, case, str(Path(args.data_dir).resolve()), out)
                for solver in SOLVERS:
                    try:
                        run = solve_scip(out + ".nl", args.time_limit) if solver == "scip" else \
                            solve_gams(out + ".gms", solver, args.time_limit)
                    except Exception as exc:  # a demo limit or a missing solver: recorded, not fatal
                        run = {"error": f"{type(exc).__name__}: {exc}"[:80]}
                    row[version, solver] = run
                    print(case, version, solver, cell(run), flush=True)
            rows.append(row)
    took = time.time() - t_start
    lines = ["## Exported models with and without the valid bounds (bench_bounds.py)", "",
             f"Command: `{command('bench_bounds.py', argv)}` (from the repository root; DIR a checkout of the "
             f"revision before the bounds). Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
             f"took {took:.0f} s. Before: revision {revs['before']}; after: {revs['after']} (the models of this "
             "checkout).", f"Machine: {machine()}; shared with other jobs.", "",
             f"Paper sense (min f), C = 10, gamma = 0.1, c = 1, B = floor(n/2), m = 10 rows drawn stratified with "
             f"seed 0, start: the alpha-start; time limit {args.time_limit:g} s per run (GAMS reslim, SCIP "
             "limits/time). Cell: objective / bound (gap = (objective - bound)/|objective|). BARON and SCIP "
             "bounds are global; SBB's is not (NLP relaxations of a nonconvex problem). The trivial bound "
             "-2C min(|I+|, |I-|) is the objective's lower bound in the new files.", "",
             "| dataset | d | m | trivial bound | solver | before: objective / bound (gap) | "
             "after: objective / bound (gap) | gap after / before |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        ds, d, m = row["case"]
        for solver in SOLVERS:
            b, a = row["before", solver], row["after", solver]
            gb, ga = gap(b), gap(a)
            ratio = f"{ga / gb:.3g}" if gb and ga is not None else "-"
            lines.append(f"| {ds} | {d} | {m} | {row['trivial']:g} | {solver} | {cell(b)} | {cell(a)} | {ratio} |")
    write_section(args.output, "bench_bounds", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
