"""bnb's incumbent heuristic: the alpha-start (2 QPs) against LS*, both senses, on instances above 100,000 subsets.

What ``BranchAndBound(incumbent="auto")`` rests on (``minlp_fs/exact/bnb.py``, AUTO_LS_FROM): per instance, bnb with
``incumbent="alpha-start"`` and with ``incumbent="ls*"`` back to back in this process (n_jobs = 1, a time limit of
LIMIT s each), their CPU seconds (the heuristic's included), the heuristic's and the tree's QPs, the nodes, whether
the optimum attains the paper sense's trivial bound -2C min(|I+|,|I-|) (then an incumbent at it ends the search at
the root), and the choice ``auto`` makes. Usage:

    python benchmarks/bench_bnb_incumbent.py [--data-dir ../shared/datasets] [--output benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import time

from minlp_fs.api import build_instance, solve
from minlp_fs.exact.bnb import BranchAndBound

from _common import add_io_args, timed_section, write_section

#: (dataset, kernel, B), each in both senses: every one above 100,000 subsets
CASES = [("parkinsons", "poly3", 8), ("parkinsons", "poly3", 11), ("parkinsons", "poly5", 11), ("bcd", "poly3", 8),
         ("bcd", "poly3", 12), ("bcd", "poly5", 12), ("ionosphere", "poly3", 6), ("sonar", "poly3", 6),
         ("sonar", "poly5", 6), ("german", "poly2", 6), ("german", "poly3", 6), ("german", "poly5", 6),
         ("german", "poly2", 8)]
#: seconds per bnb run
LIMIT = 300.0
HEURISTICS = ("alpha-start", "ls*")


def _run(inst, heuristic):
    """(result, CPU seconds) of bnb with this incumbent heuristic."""
    c = time.process_time()
    res = solve(inst, "bnb", incumbent=heuristic, time_limit=LIMIT)
    return res, time.process_time() - c


def row(data_dir, ds, kernel, sense, B) -> str:
    inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
    runs = [_run(inst, h) for h in HEURISTICS]
    ref = runs[0][0].objective
    finished = all(r.certified for r, _ in runs)
    same = "yes" if all(abs(r.objective - ref) <= 1e-6 * max(1.0, abs(ref)) for r, _ in runs) else "NO"
    cells = [f"{c:.2f}" + ("" if r.certified else f" ({r.status})") + f" | {r.info['heuristic_svm_solves']:,} + "
             f"{r.info['qps']:,} | {r.info['nodes']:,}" for r, c in runs]
    trivial = "yes" if sense == "paper" and inst.proves_optimal(ref) else "no"
    return (f"| {ds} | {kernel} | {sense} | {B} | {math.comb(inst.n, B):,} | {' | '.join(cells)} | "
            f"{runs[0][1] / runs[1][1]:.2f}x | {trivial} | {same if finished else '– (not finished)'} | "
            f"{BranchAndBound().heuristic(inst)} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_io_args(p)
    args = p.parse_args()
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    for kernel in ("poly2", "poly3", "poly5"):   # compile first (numba): bnb, and LS* as an incumbent
        for heuristic in HEURISTICS:
            solve(build_instance("wholesale", data_dir=args.data_dir, kernel=kernel, sense="paper", B=3), "bnb",
                  incumbent=heuristic)
    rows = ["| dataset | kernel | sense | B | C(n,B) | alpha-start: CPU (s) | QPs (heuristic + tree) | nodes | "
            "LS*: CPU (s) | QPs (heuristic + tree) | nodes | alpha-start / LS* CPU | optimum at the trivial bound | "
            "same optimum | auto picks |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sense in ("paper", "fit"):
        for ds, kernel, B in CASES:
            rows.append(row(args.data_dir, ds, kernel, sense, B))
            print(rows[-1], flush=True)
    elapsed, text = timed_section(
        "## bnb's incumbent heuristic: the alpha-start against LS* (bench_bnb_incumbent.py)", "bench_bnb_incumbent.py",
        started, t0, load0,
        f"C = 10, gamma = 0.1, c = 1 (the paper's); CPU seconds of each bnb run (n_jobs = 1, {LIMIT:.0f} s limit; a "
        "status in brackets: not finished), the incumbent heuristic's included. `auto` (bnb's default) runs LS* in the "
        "paper sense above 100,000 subsets, else the alpha-start.", rows)
    write_section(args.output, "bench_bnb_incumbent", text)
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
