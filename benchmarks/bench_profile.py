"""Where the heuristics spend their time: cProfile of LS*, ACSO* and RFE2, share of time in SVM solves.

    python benchmarks/bench_profile.py [--data-dir ../shared/datasets] [--quick | --german | --grid] [--output RESULTS.md]

Each case runs twice in this process, after a warm-up of every method on a small synthetic instance
(numba's compiled code loaded), on one BLAS thread, with ``n_jobs = 1`` (all work in one thread):

* timed: CPU time of the whole ``solve()`` and of the SVM solves inside it, by timers around
  :meth:`AlphaSubproblem.solve` (``solve`` = the QP plus the subset's Gram matrix and the objective of
  its answer) and :meth:`AlphaSubproblem.solve_gram` (``QP`` = the SMO solve itself); ``outside / solve``
  = (total - solve) / solve, the cost of everything that is not an SVM solve relative to the solves
  (issue 16's target: at most 0.5, i.e. a heuristic within 1.5x of its own solves);
* profiled (cProfile): the three functions with the largest own time besides the SMO and the oracle's
  own code (the Gram matrices of the solves count there). The profiler inflates the Python-level
  parts, so only these names come from that run.

The section ``bench_profile`` of RESULTS.md is replaced; with ``--german`` (LS* on German rbf B = 10, the
timing slice's slowest case) the section ``bench_profile_german``; with ``--grid`` (the timed runs only, on
every case of the heuristics grid: the issue's target is on the grid) the section ``bench_profile_grid``.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: (dataset, kernel, B, method): three datasets, the same sense (paper)
CASES = [(d, k, B, meth) for d, k, B in [("ionosphere", "poly3", 10), ("bcd", "poly2", 6), ("cleveland", "poly3", 4)]
         for meth in ["ls*", "acso*", "rfe2"]]
QUICK = [c for c in CASES if c[0] == "ionosphere"]
GERMAN = [("german", "rbf", 10, "ls*")]


def _cum(stats: pstats.Stats, func_name: str, file_end: str) -> tuple[float, int]:
    """(cumulative time, primitive calls) of one function in a profile."""
    for (file, _, name), (cc, _nc, _tt, ct, _callers) in stats.stats.items():
        if name == func_name and file.endswith(file_end):
            return ct, cc
    return 0.0, 0


def _top_outside(stats: pstats.Stats, k: int = 3) -> str:
    """The ``k`` functions with the largest own time, the SMO and the oracle's own code excluded."""
    skip = ("smo.py", "oracle.py", "libsvm.py", "neighbours.py", "threading.py", "profile")
    rows = sorted(((tt, name, Path(file).name) for (file, _, name), (_, _, tt, _, _) in stats.stats.items()
                   if not Path(file).name.startswith(skip) and not name.startswith("<")),
                  reverse=True)[:k]
    return ", ".join(f"{file}:{name} {tt:.2f}s" for tt, name, file in rows)


def _timed_solves(stack: list, totals: dict, key: str, func):
    """``func`` wrapped to add its CPU time to totals[key] (outermost calls only: ``stack`` holds the open ones)."""
    def wrapper(*args, **kwargs):
        if key in stack:
            return func(*args, **kwargs)
        stack.append(key)
        t0 = time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            totals[key] += time.process_time() - t0
            stack.remove(key)
    return wrapper


def timed_case(data, kernel, B, method) -> dict:
    """One unprofiled run: CPU time of ``solve()``, of the SVM solves in it and of their QPs, solves, objective."""
    from minlp_fs.alpha.oracle import AlphaSubproblem
    from minlp_fs.api import solve
    from minlp_fs.instance import make_instance

    totals, stack = {"solve": 0.0, "solve_gram": 0.0}, []
    real = {name: getattr(AlphaSubproblem, name) for name in totals}
    for name, func in real.items():
        setattr(AlphaSubproblem, name, _timed_solves(stack, totals, name, func))
    try:
        inst = make_instance(data.X, data.y, B=B, kernel=kernel, sense="paper", name=data.name)
        t0 = time.process_time()
        res = solve(inst, method=method)
        cpu = time.process_time() - t0
    finally:
        for name, func in real.items():
            setattr(AlphaSubproblem, name, func)
    return {"case": (data.name, kernel, B, method), "cpu": cpu, "solves": res.n_svm_solves,
            "qp": totals["solve_gram"], "solve": totals["solve"], "objective": res.objective}


def outside_ratio(row: dict) -> float:
    """(CPU - solve) / solve of a :func:`timed_case` row: the issue's ratio (target <= 0.5)."""
    return (row["cpu"] - row["solve"]) / row["solve"]


def profile_case(dataset, kernel, B, method, data_dir) -> dict:
    """:func:`timed_case`, then the same case again under cProfile for the largest own times outside the SMO."""
    from minlp_fs.api import solve
    from minlp_fs.datasets import load_dataset
    from minlp_fs.instance import make_instance

    data = load_dataset(dataset, data_dir)
    row = timed_case(data, kernel, B, method)
    prof = cProfile.Profile(time.process_time)  # CPU time: other jobs on the machine do not inflate it
    prof.enable()
    again = solve(make_instance(data.X, data.y, B=B, kernel=kernel, sense="paper", name=data.name), method=method)
    prof.disable()
    assert again.objective == row["objective"], "the profiled run made other decisions"
    return {**row, "top": _top_outside(pstats.Stats(prof))}


def grid_rows(data_dir) -> list:
    """:func:`timed_case` on the whole heuristics grid (bench_heuristics.py: nine datasets, four kernels,
    B = round(0.1 n) ... round(0.5 n), paper sense): LS* and RFE2 on every case, ACSO* on the polynomial
    kernels; then per method the sums of CPU and solve time, their ratio, and the cases above 0.5."""
    from bench_heuristics import FRACTIONS, KERNELS, budgets
    from tqdm.auto import tqdm

    from minlp_fs.datasets import PAPER_DATASETS, load_dataset

    runs = []
    for name in PAPER_DATASETS:
        data = load_dataset(name, data_dir)
        runs += [(data, k, B, meth) for k in KERNELS for _, B in budgets(data.X.shape[1], FRACTIONS)
                 for meth in ("ls*", "acso*", "rfe2") if meth != "acso*" or k != "rbf"]
    rows = [timed_case(*run) for run in tqdm(runs, desc="grid cases", unit="case")]
    lines = ["| method | cases | CPU (s), sum | solve (s), sum | QP (s), sum | outside / solve, sums "
             "| median over cases | cases above 0.5 (their share of the CPU) | largest |", "|---|---|---|---|---|---|---|---|---|"]
    for meth in ("ls*", "acso*", "rfe2"):
        mine = [r for r in rows if r["case"][3] == meth]
        ratio = {r["case"]: outside_ratio(r) for r in mine if r["solve"] > 0}
        cpu, sol = sum(r["cpu"] for r in mine), sum(r["solve"] for r in mine)
        over = [r for r in mine if ratio.get(r["case"], 0.0) > 0.5]
        worst = max(ratio, key=ratio.get)
        lines.append(f"| {meth} | {len(mine)} | {cpu:.1f} | {sol:.1f} | {sum(r['qp'] for r in mine):.1f} | "
                     f"{(cpu - sol) / sol:.2f} | {sorted(ratio.values())[len(ratio) // 2]:.2f} | {len(over)} "
                     f"({100 * sum(r['cpu'] for r in over) / cpu:.1f} %) | {ratio[worst]:.2f} "
                     f"({' '.join(map(str, worst[:3]))}, {next(r['cpu'] for r in mine if r['case'] == worst):.2f} s) |")
    over = sorted((r for r in rows if r["solve"] > 0 and outside_ratio(r) > 0.5), key=lambda r: -r["cpu"])
    lines += ["", "The cases above 0.5 that take the most CPU:", "",
              "| dataset | kernel | B | method | CPU (s) | solve (s) | QP (s) | outside / solve |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {' | '.join(map(str, r['case']))} | {r['cpu']:.2f} | {r['solve']:.2f} | {r['qp']:.2f} | "
              f"{outside_ratio(r):.2f} |" for r in over[:12]]
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("MINLP_FS_DATA") or str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--quick", action="store_true", help="ionosphere only")
    ap.add_argument("--german", action="store_true", help="LS* on German rbf B = 10 only (own section)")
    ap.add_argument("--grid", action="store_true", help="the whole heuristics grid, sums per method (own section)")
    ap.add_argument("--output", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from threadpoolctl import threadpool_limits

    from minlp_fs.api import solve
    from minlp_fs.datasets import make_synthetic
    from minlp_fs.experiments.report import machine, write_section
    from minlp_fs.instance import make_instance

    cases = [] if args.grid else GERMAN if args.german else QUICK if args.quick else CASES
    t_start = time.time()
    lines = ["| dataset | kernel | B | method | CPU (s) | solves | QP (s) | solve (s) | solve share "
             "| outside / solve | largest own times under cProfile (SMO excluded) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with threadpool_limits(1):
        d = make_synthetic(m=60, seed=0)
        for method in sorted({c[3] for c in cases} | ({"ls*", "acso*", "rfe2"} if args.grid else set())):
            solve(make_instance(d.X, d.y, B=3, kernel="poly2"), method=method)
        if args.grid:
            lines = grid_rows(args.data_dir)
        for case in cases:
            r = profile_case(*case, args.data_dir)
            print(r, file=sys.stderr, flush=True)
            lines.append(f"| {' | '.join(map(str, case))} | {r['cpu']:.2f} | {r['solves']} | {r['qp']:.2f} | "
                         f"{r['solve']:.2f} | {100 * r['solve'] / r['cpu']:.0f}% | "
                         f"{outside_ratio(r):.2f} | {r['top']} |")
    title = "Profile of the heuristics on the whole grid" if args.grid else "Profile of the heuristics"
    last = ("Per method, sums over the grid's cases (ACSO* on the polynomial kernels only), the median of the "
            "cases' ratios, the cases above the target (with their share of the method's CPU) and the largest "
            "ratio (its case and CPU)." if args.grid else "The last column comes from a second run of the same "
            "case under cProfile (same objective asserted).")
    text = (f"## {title} (bench_profile.py)\n\nCommand: `python benchmarks/bench_profile.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}".rstrip() + "` (from the repository root). Date: "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, total {time.time() - t_start:.0f} s.\n"
            f"Machine: {machine()}. Paper sense, n_jobs = 1, one BLAS thread, after a warm-up; CPU times of one "
            f"unprofiled run per case. QP = CPU time in the SMO solve (`AlphaSubproblem.solve_gram`); solve = in "
            f"`AlphaSubproblem.solve` (QP + the subset's Gram + the objective of the answer); solve share = "
            f"solve / CPU; outside / solve = (CPU - solve) / solve (target <= 0.5). {last}\n\n" + "\n".join(lines))
    section = "bench_profile_grid" if args.grid else "bench_profile_german" if args.german else "bench_profile"
    write_section(args.output, section, text)
    print(text)


if __name__ == "__main__":
    main()
