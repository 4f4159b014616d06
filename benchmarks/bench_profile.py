"""Where the heuristics spend their time: cProfile of LS*, ACSO* and RFE2, share of time in SVM solves.

    python benchmarks/bench_profile.py [--data-dir ../shared/datasets] [--quick | --german] [--output RESULTS.md]

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
timing slice's slowest case) the section ``bench_profile_german``.
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


def profile_case(dataset, kernel, B, method, data_dir) -> dict:
    from minlp_fs.alpha.oracle import AlphaSubproblem
    from minlp_fs.api import solve
    from minlp_fs.datasets import load_dataset
    from minlp_fs.instance import make_instance

    data = load_dataset(dataset, data_dir)

    def fresh():
        return make_instance(data.X, data.y, B=B, kernel=kernel, sense="paper", name=data.name)

    totals, stack = {"solve": 0.0, "solve_gram": 0.0}, []
    real = {name: getattr(AlphaSubproblem, name) for name in totals}
    for name, func in real.items():
        setattr(AlphaSubproblem, name, _timed_solves(stack, totals, name, func))
    try:
        t0 = time.process_time()
        res = solve(fresh(), method=method)
        cpu = time.process_time() - t0
    finally:
        for name, func in real.items():
            setattr(AlphaSubproblem, name, func)
    prof = cProfile.Profile(time.process_time)  # CPU time: other jobs on the machine do not inflate it
    prof.enable()
    again = solve(fresh(), method=method)
    prof.disable()
    assert again.objective == res.objective, "the profiled run made other decisions"
    return {"case": (dataset, kernel, B, method), "cpu": cpu, "solves": res.n_svm_solves,
            "qp": totals["solve_gram"], "solve": totals["solve"], "top": _top_outside(pstats.Stats(prof)),
            "objective": res.objective}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("MINLP_FS_DATA") or str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--quick", action="store_true", help="ionosphere only")
    ap.add_argument("--german", action="store_true", help="LS* on German rbf B = 10 only (own section)")
    ap.add_argument("--output", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from threadpoolctl import threadpool_limits

    from minlp_fs.api import solve
    from minlp_fs.datasets import make_synthetic
    from minlp_fs.experiments.report import machine, write_section
    from minlp_fs.instance import make_instance

    cases = GERMAN if args.german else QUICK if args.quick else CASES
    t_start = time.time()
    lines = ["| dataset | kernel | B | method | CPU (s) | solves | QP (s) | solve (s) | solve share "
             "| outside / solve | largest own times under cProfile (SMO excluded) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with threadpool_limits(1):
        d = make_synthetic(m=60, seed=0)
        for method in sorted({c[3] for c in cases}):
            solve(make_instance(d.X, d.y, B=3, kernel="poly2"), method=method)
        for case in cases:
            r = profile_case(*case, args.data_dir)
            print(r, file=sys.stderr, flush=True)
            lines.append(f"| {' | '.join(map(str, case))} | {r['cpu']:.2f} | {r['solves']} | {r['qp']:.2f} | "
                         f"{r['solve']:.2f} | {100 * r['solve'] / r['cpu']:.0f}% | "
                         f"{(r['cpu'] - r['solve']) / r['solve']:.2f} | {r['top']} |")
    text = (f"## Profile of the heuristics (bench_profile.py)\n\nCommand: `python benchmarks/bench_profile.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}".rstrip() + "` (from the repository root). Date: "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, total {time.time() - t_start:.0f} s.\n"
            f"Machine: {machine()}. Paper sense, n_jobs = 1, one BLAS thread, after a warm-up; CPU times of one "
            f"unprofiled run per case. QP = CPU time in the SMO solve (`AlphaSubproblem.solve_gram`); solve = in "
            f"`AlphaSubproblem.solve` (QP + the subset's Gram + the objective of the answer); solve share = "
            f"solve / CPU; outside / solve = (CPU - solve) / solve (target <= 0.5). The last column comes from a "
            f"second run of the same case under cProfile (same objective asserted).\n\n" + "\n".join(lines))
    write_section(args.output, "bench_profile_german" if args.german else "bench_profile", text)
    print(text)


if __name__ == "__main__":
    main()
