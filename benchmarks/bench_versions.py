"""Two versions of the package side by side: the same methods on the same instances, timed in one run.

    python benchmarks/bench_versions.py --old REV [--data-dir ../shared/datasets] [--repeats 3] [--quick | --slice]

``REV`` is any git revision of this repository (a tag, a commit, ``main~3``). Its tree is checked out
into a temporary git worktree; each repetition then runs the whole workload once in a fresh process
per version, alternating old and new (old, new, old, new, ...), so both see the same machine load.
Each process first runs one small warm-up of every method (numba's compiled code loaded), then every
case on one BLAS thread. Per case and version the run of least CPU time over the repetitions is kept
(CPU time of the process: on a machine shared with other jobs it moves far less than the wall time,
which is given too), with its objective and SVM solves; the table gives old/new ratios (> 1: the new
version is faster) and says whether both versions reached the same objective (to 1e-6 relative, the
accuracy of every value). The section ``bench_versions`` of RESULTS.md is replaced.

The workload (:data:`CASES`) is the LS speed table's instances (bench_heuristics.py) with LS, LS*,
ACSO* (polynomial kernels), RFE2 and the alpha-start in the paper's sense, plus one enumeration, and
LS*, ACSO*, RFE2 on German (m = 1000, where the solves cost most). ``--slice``: instead, the heuristics grid's
timing slice (bench_heuristics.py --timing-slice: 36 cases, LS* on each, ACSO* on the polynomial ones), with
per-method means; its table goes to the section ``bench_versions_slice``. ``--bnb``: branch-and-bound on the fit
sense's rows (:data:`BNB_CASES`), section ``bench_versions_bnb``. ``--german``: German's cases of the
heuristics grid (the four kernels x B in {2, 5, 7, 10, 12}, LS* on each, ACSO* on the polynomial ones), one
process per version and kernel (old, new, kernel after kernel, so that a cut-short run keeps whole pairs);
per case CPU, solves and objective, and how many objectives are the same, better or worse (relative
difference above 1e-6), with the worst relative loss; the section ``bench_german_grid`` is rewritten after
every kernel. ``--grid``: the whole heuristics grid of bench_heuristics.py (nine datasets, four kernels, B = round(0.1 n
... 0.5 n), paper sense) with the ``--methods`` (ACSO* on the polynomial kernels only), one run per version: old
and new run at the same time, one process each (one core each on a 2-core machine), dataset after dataset, with
a progress bar; Ctrl-C keeps the finished datasets. Per method the mean CPU, solves and same / better / worse
objectives (section ``bench_versions_grid``, rewritten after every dataset). ``--kernels``: only the workload's
cases of those kernels (e.g. ``--kernels rbf`` for a change to the Gaussian kernel).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import add_kernels_arg, of_kernels

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: (dataset, kernel, B, sense, method)
CASES = [
    *[(d, k, B, "paper", meth)
      for d, k, B in [("wholesale", "rbf", 4), ("bcw", "poly2", 3), ("cleveland", "poly3", 4),
                      ("parkinsons", "rbf", 7), ("bcd", "poly2", 6), ("ionosphere", "rbf", 7),
                      ("sonar", "rbf", 6)]
      for meth in ["alpha-start", "ls", "ls*", "rfe2"]],
    *[(d, k, B, "paper", "acso*") for d, k, B in [("bcw", "poly2", 3), ("cleveland", "poly3", 4),
                                                  ("bcd", "poly2", 6), ("ionosphere", "poly3", 10)]],
    ("ionosphere", "poly3", 10, "paper", "ls*"),
    ("cleveland", "poly2", 3, "fit", "enumerate"),
    *[("german", "poly2", 5, "paper", meth) for meth in ["ls*", "acso*", "rfe2"]],
]
QUICK = [c for c in CASES if c[0] in ("bcw", "cleveland")]
#: ``--bnb``: branch-and-bound (default options) on the fit sense's rows of bench_bnb part (a) above 1,000 subsets,
#: German's and Sonar's fit rows of bench_bnb_large / part (b), the Gaussian fit sense (chords) and two paper rows
BNB_CASES = [
    *[(d, k, B, "fit", "bnb") for d, B in [("cleveland", 6), ("parkinsons", 6)] for k in ("poly2", "poly3", "poly5")],
    ("ionosphere", "poly2", 5, "fit", "bnb"), ("ionosphere", "poly3", 6, "fit", "bnb"),
    ("sonar", "poly2", 4, "fit", "bnb"), ("sonar", "poly2", 6, "fit", "bnb"),
    ("german", "poly2", 6, "fit", "bnb"), ("german", "poly3", 6, "fit", "bnb"),
    ("cleveland", "rbf", 6, "fit", "bnb"),
    ("cleveland", "poly5", 6, "paper", "bnb"), ("parkinsons", "poly3", 6, "paper", "bnb"),
]

#: the code each process runs: warm up, then time every case; prints one JSON object per case
WORKER = r"""
import json, sys, time
from threadpoolctl import threadpool_limits
from minlp_fs.api import solve
from minlp_fs.datasets import load_dataset, make_synthetic
from minlp_fs.instance import make_instance
cases, data_dir = json.loads(sys.argv[1]), sys.argv[2]
with threadpool_limits(1):
    d = make_synthetic(m=60, seed=0)
    paths = {("poly2", "paper", c[4]) for c in cases} | {(c[1], c[3], c[4]) for c in cases}
    for kernel, sense, method in sorted(paths):   # each path's compiled code loaded before any case is timed
        solve(make_instance(d.X, d.y, B=3, kernel=kernel, sense=sense), method=method)
    for name, kernel, B, sense, method in cases:
        data = load_dataset(name, data_dir)
        inst = make_instance(data.X, data.y, B=B, kernel=kernel, sense=sense, name=data.name)
        t0, c0 = time.perf_counter(), time.process_time()
        res = solve(inst, method=method)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(json.dumps({"case": [name, kernel, B, sense, method], "wall": wall, "cpu": cpu,
                          "objective": res.objective, "solves": res.n_svm_solves}), flush=True)
"""


@contextlib.contextmanager
def old_checkout(rev: str):
    """(path, short sha) of a temporary detached worktree of ``rev``, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(old), rev], cwd=ROOT, check=True)
        sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        try:
            yield old, sha
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)


def run_version(checkout: Path, cases, data_dir: str) -> dict:
    """One process importing ``minlp_fs`` from ``checkout``; case (as a tuple) -> its row."""
    return run_both({"one": checkout}, cases, data_dir)["one"]


def table(results: dict, cases) -> str:
    lines = ["| dataset | kernel | B | sense | method | old CPU (s) | new CPU (s) | old / new CPU | old / new wall "
             "| old solves | new solves | same objective |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot = {"old": [0.0, 0.0], "new": [0.0, 0.0]}
    for case in map(tuple, cases):
        o, n = results["old"][case], results["new"][case]
        for version, row in (("old", o), ("new", n)):
            tot[version][0] += row["cpu"]
            tot[version][1] += row["wall"]
        same = abs(o["objective"] - n["objective"]) <= 1e-6 * max(1.0, abs(o["objective"]))
        lines.append(f"| {' | '.join(map(str, case))} | {o['cpu']:.3f} | {n['cpu']:.3f} | {o['cpu'] / n['cpu']:.2f}x | "
                     f"{o['wall'] / n['wall']:.2f}x | {o['solves']} | {n['solves']} | {same} |")
    (oc, ow), (nc, nw) = tot["old"], tot["new"]
    lines.append(f"| total | | | | | {oc:.2f} | {nc:.2f} | {oc / nc:.2f}x | {ow / nw:.2f}x | | | |")
    return "\n".join(lines)


def slice_workload() -> list:
    """The timing slice's runs: LS* on every case of bench_heuristics.slice_cases, ACSO* on the polynomial ones."""
    sys.path.insert(0, str(HERE))
    from bench_heuristics import slice_cases

    return [(d, k, B, "paper", meth) for meth in ("ls*", "acso*") for d, k, _, B in slice_cases()
            if meth == "ls*" or k != "rbf"]


def means(results: dict, cases) -> str:
    """Per method: runs, mean CPU old / new and their ratio, mean solves, runs with the same objective."""
    lines = ["| method | runs | old mean CPU (s) | new mean CPU (s) | old / new | old mean solves | new mean solves "
             "| same objective |", "|---|---|---|---|---|---|---|---|"]
    for meth in dict.fromkeys(c[4] for c in cases):
        rows = [(results["old"][tuple(c)], results["new"][tuple(c)]) for c in cases if c[4] == meth]
        oc, nc = (float(np.mean([r[v]["cpu"] for r in rows])) for v in (0, 1))
        os_, ns = (float(np.mean([r[v]["solves"] for r in rows])) for v in (0, 1))
        same = sum(abs(o["objective"] - n["objective"]) <= 1e-6 * max(1.0, abs(o["objective"])) for o, n in rows)
        lines.append(f"| {meth} | {len(rows)} | {oc:.2f} | {nc:.2f} | {oc / nc:.2f}x | {os_:.0f} | {ns:.0f} "
                     f"| {same}/{len(rows)} |")
    return "\n".join(lines)


def german_workload() -> list:
    """German's heuristics-grid cases (bench_heuristics.budgets of its 24 features), grouped by kernel."""
    sys.path.insert(0, str(HERE))
    from bench_heuristics import FRACTIONS, KERNELS, budgets

    return [("german", k, B, "paper", meth) for k in KERNELS for meth in ("ls*", "acso*")
            for _, B in budgets(24, FRACTIONS) if meth == "ls*" or k != "rbf"]


def case_table(results: dict, cases, with_dataset: bool = False) -> str:
    """Per method the mean CPU and solves and the same / better / worse objective counts, then per case old / new
    CPU, solves and objectives (with a dataset column if ``with_dataset``)."""
    lines = [("| dataset " if with_dataset else "") + "| kernel | B | method | old CPU (s) | new CPU (s) | old / new "
             "| old solves | new solves | old objective | new objective | new vs old |",
             "|" + "---|" * (11 + with_dataset)]
    per = {}
    for case in map(tuple, cases):
        if case not in results["old"] or case not in results["new"]:
            continue
        o, n = results["old"][case], results["new"][case]
        rel = (o["objective"] - n["objective"]) / max(1.0, abs(o["objective"]))  # > 0: new better (paper: min)
        verdict = "same" if abs(rel) <= 1e-6 else ("better" if rel > 0 else "worse")
        lines.append(f"| {case[0] + ' | ' if with_dataset else ''}{case[1]} | {case[2]} | {case[4]} | {o['cpu']:.2f} | "
                     f"{n['cpu']:.2f} | {o['cpu'] / max(n['cpu'], 1e-9):.2f}x | {o['solves']} | {n['solves']} | "
                     f"{o['objective']:.6f} | {n['objective']:.6f} | {verdict} ({rel:+.1e}) |")
        p = per.setdefault(case[4], {"old": 0.0, "new": 0.0, "n": 0, "same": 0, "better": 0, "worse": 0, "loss": 0.0,
                                     "old_solves": 0, "new_solves": 0})
        p["old"] += o["cpu"]
        p["new"] += n["cpu"]
        p["old_solves"] += o["solves"]
        p["new_solves"] += n["solves"]
        p["n"] += 1
        p[verdict] += 1
        p["loss"] = max(p["loss"], -rel)
    head = ["| method | cases | old mean CPU (s) | new mean CPU (s) | old / new | old mean solves | new mean solves "
            "| same / better / worse | worst rel. loss |",
            "|---|---|---|---|---|---|---|---|---|"]
    for meth, p in per.items():
        head.append(f"| {meth} | {p['n']} | {p['old'] / p['n']:.2f} | {p['new'] / p['n']:.2f} | "
                    f"{p['old'] / max(p['new'], 1e-9):.2f}x | {p['old_solves'] / p['n']:.0f} | "
                    f"{p['new_solves'] / p['n']:.0f} | {p['same']} / {p['better']} / {p['worse']} | {p['loss']:.1e} |")
    return "\n".join(head) + "\n\nPer case:\n\n" + "\n".join(lines)


def grid_workload(methods, data_dir: str) -> list:
    """The heuristics grid's (dataset, kernel, B, "paper", method) runs, dataset by dataset."""
    sys.path.insert(0, str(HERE))
    from bench_heuristics import FRACTIONS, KERNELS, budgets

    from minlp_fs.datasets import PAPER_DATASETS, load_dataset

    return [(d, k, B, "paper", meth) for d in PAPER_DATASETS for k in KERNELS
            for _, B in budgets(load_dataset(d, data_dir).X.shape[1], FRACTIONS)
            for meth in methods if not (meth.startswith("acso") and k == "rbf")]


def run_both(checkouts: dict, cases, data_dir: str) -> dict:
    """One process per checkout, importing ``minlp_fs`` from it, all at the same time; version -> (case as a
    tuple -> its row)."""
    data_dir = str(Path(data_dir).resolve())   # the workers run in the checkouts: a relative path would move
    with tempfile.TemporaryDirectory() as tmp:     # files, not pipes: a full pipe would stall a worker
        outs = {v: open(Path(tmp) / f"{i}.out", "w+") for i, v in enumerate(checkouts)}
        procs = {v: subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(cases), data_dir], cwd=c,
                                     env=dict(os.environ, PYTHONPATH=str(c)), stdout=outs[v], text=True)
                 for v, c in checkouts.items()}
        try:
            for p in procs.values():
                p.wait()
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
        for v, p in procs.items():
            if p.returncode != 0:
                raise subprocess.CalledProcessError(p.returncode, f"{v} version's worker")
        text = {}
        for v, f in outs.items():
            f.seek(0)
            text[v] = f.read()
            f.close()
    return {v: {tuple(r["case"]): r for r in map(json.loads, filter(lambda x: x.startswith("{"), o.splitlines()))}
            for v, o in text.items()}


def grid_main(args, argv) -> None:
    """``--grid``: old and new on the whole heuristics grid, dataset after dataset (section bench_versions_grid)."""
    from tqdm import tqdm

    from minlp_fs.experiments.report import machine, write_section

    cases = of_kernels(grid_workload(args.methods, args.data_dir), args.kernels)
    t0, load0 = time.time(), os.getloadavg()
    results = {"old": {}, "new": {}}
    with old_checkout(args.old) as (old, old_sha), tqdm(total=len(cases), desc="grid runs (per version)") as bar:
        try:
            for dataset in dict.fromkeys(c[0] for c in cases):
                group = [list(c) for c in cases if c[0] == dataset]
                for version, rows in run_both({"old": old, "new": ROOT}, group, args.data_dir).items():
                    results[version].update(rows)
                bar.update(len(group))
                done = [c for c in cases if c in results["old"] and c in results["new"]]
                text = (f"## Two versions on the heuristics grid (bench_versions.py --grid)\n\nCommand: "
                        f"`python benchmarks/bench_versions.py {' '.join(sys.argv[1:] if argv is None else argv)}` "
                        f"(from the repository root); old = {old_sha}, new = the working tree. Date: "
                        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {time.time() - t0:.0f} s so far, "
                        f"{len(done)} of {len(cases)} runs per version; load average (1 min) at start {load0[0]:.1f}, "
                        f"now {os.getloadavg()[0]:.1f}.\nMachine: {machine()}. Paper sense, C = 10, gamma = 0.1, "
                        "default options; CPU time of `solve()` per run, one run per version, old and new in two "
                        "processes at the same time (dataset after dataset), one BLAS thread each, after a warm-up. "
                        "'new vs old': the relative difference of the objectives (old - new) / max(1, |old|), > 0 "
                        "when new is better (lower); 'same' within 1e-6.\n\n"
                        + case_table(results, done, with_dataset=True))
                write_section(args.output, "bench_versions_grid", text)
        except KeyboardInterrupt:
            print("interrupted: the finished datasets are in the section", file=sys.stderr)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="git revision to compare against the working tree")
    ap.add_argument("--data-dir", default=os.environ.get("MINLP_FS_DATA") or str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="bcw and cleveland only")
    ap.add_argument("--bnb", action="store_true", help="branch-and-bound's fit-sense rows (BNB_CASES)")
    ap.add_argument("--slice", action="store_true", help="the heuristics grid's timing slice (LS*, ACSO*)")
    ap.add_argument("--german", action="store_true", help="German's heuristics-grid cases (LS*, ACSO*), one run each")
    ap.add_argument("--grid", action="store_true", help="the whole heuristics grid, old and new at the same time")
    ap.add_argument("--methods", nargs="+", default=["ls*", "acso*", "rfe2", "ls"], help="with --grid")
    add_kernels_arg(ap)
    ap.add_argument("--output", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args(argv)
    if args.grid:
        return grid_main(args, argv)
    if args.german:
        return german_main(args, argv)
    from minlp_fs.experiments.report import machine, write_section

    cases = [list(c) for c in of_kernels(slice_workload() if args.slice else QUICK if args.quick
                                         else BNB_CASES if args.bnb else CASES, args.kernels)]
    t0 = time.time()
    results = {"old": {}, "new": {}}
    with old_checkout(args.old) as (old, old_sha):
        for rep in range(args.repeats):
            for version, checkout in (("old", old), ("new", ROOT)):
                print(f"repetition {rep + 1}/{args.repeats}: {version}", file=sys.stderr, flush=True)
                for case, row in run_version(checkout, cases, args.data_dir).items():
                    best = results[version].get(case)
                    if best is None or row["cpu"] < best["cpu"]:
                        results[version][case] = row
    title = ("the heuristics grid's timing slice" if args.slice else "branch-and-bound side by side" if args.bnb
             else "side by side")
    text = (f"## Two versions, {title} (bench_versions.py)\n\nCommand: `python benchmarks/bench_versions.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}` (from the repository root); old = {old_sha}, new = "
            f"the working tree. Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, total "
            f"{time.time() - t0:.0f} s.\nMachine: {machine()}. CPU time of `solve()` per case (and the ratio of wall "
            f"times of the same runs), the least over {args.repeats} repetitions, old and new in alternating "
            f"processes, one BLAS thread, after a warm-up.\n\n"
            + (means(results, cases) + "\n\nPer case:\n\n" if args.slice else "") + table(results, cases))
    write_section(args.output, "bench_versions_slice" if args.slice else "bench_versions_bnb" if args.bnb
                  else "bench_versions", text)
    print(text)


def german_main(args, argv) -> None:
    """``--german``: old and new on German's grid cases, kernel after kernel (section bench_german_grid)."""
    from minlp_fs.experiments.report import machine, write_section

    cases = of_kernels(german_workload(), args.kernels)
    t0, load0 = time.time(), os.getloadavg()
    results = {"old": {}, "new": {}}
    with old_checkout(args.old) as (old, old_sha):
        for kernel in dict.fromkeys(c[1] for c in cases):
            group = [list(c) for c in cases if c[1] == kernel]
            for version, checkout in (("old", old), ("new", ROOT)):
                print(f"{kernel}: {version}", file=sys.stderr, flush=True)
                results[version].update(run_version(checkout, group, args.data_dir))
            text = (f"## Two versions on German's heuristics-grid cases (bench_versions.py --german)\n\nCommand: "
                    f"`python benchmarks/bench_versions.py {' '.join(sys.argv[1:] if argv is None else argv)}` "
                    f"(from the repository root); old = {old_sha}, new = the working tree. Date: "
                    f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {time.time() - t0:.0f} s so far; load "
                    f"average (1 min) at start {load0[0]:.1f}, now {os.getloadavg()[0]:.1f}.\n"
                    f"Machine: {machine()}. "
                    "Paper sense, C = 10, gamma = 0.1; CPU time of `solve()` per case, one run per version, "
                    "one process per version and kernel (old then new), one BLAS thread, after a warm-up. "
                    "'new vs old': the relative difference of the objectives (old - new) / max(1, |old|), "
                    "> 0 when new is better (lower).\n\n" + case_table(results, cases))
            write_section(args.output, "bench_german_grid", text)
            print(text, flush=True)


if __name__ == "__main__":
    main()
