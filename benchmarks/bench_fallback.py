"""bnb with its fallback to enumeration (``certify --method auto``) against bnb alone and enumeration alone.

Per instance, back to back in this process (n_jobs = 1): bnb alone (time limit LIMIT s), enumeration alone, and
bnb with ``fallback_share = 0.5`` (``minlp_fs.exact.fallback``: bnb for 2 s, enumeration's time estimated in 1 s,
bnb again for half the estimate, then enumeration), with the same time limit. The instances are chosen on both
sides: where bnb's bounds prune (Parkinsons, Sonar poly2, Ionosphere rbf) and where they do not (German rbf, m =
1000; Ionosphere poly5 fit). The column "hedged / best" is the hedged run's wall time over the faster of the two
single methods. Usage:

    python benchmarks/bench_fallback.py [--data-dir ../shared/datasets] [--output benchmarks/RESULTS.md]
                                        [--kernels rbf ...]
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import time

from minlp_fs.api import build_instance, solve

from _common import add_io_args, add_kernels_arg, of_kernels, timed_section, write_section

#: (dataset, kernel, sense, B)
CASES = [("parkinsons", "poly3", "paper", 6), ("sonar", "poly2", "fit", 4), ("ionosphere", "rbf", "fit", 5),
         ("german", "rbf", "fit", 4), ("german", "rbf", "fit", 5), ("ionosphere", "poly5", "fit", 6)]
#: seconds per run of bnb alone and of the hedged bnb
LIMIT = 300.0


def _run(inst, method, **options):
    """(result, wall seconds)."""
    t = time.perf_counter()
    res = solve(inst, method, **options)
    return res, time.perf_counter() - t


def _cell(res, seconds: float) -> str:
    return f"{seconds:.1f}" if res.certified else f"{seconds:.1f} ({res.status})"


def row(data_dir, ds, kernel, sense, B) -> str:
    inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
    bnb, t_b = _run(inst, "bnb", time_limit=LIMIT)
    enum, t_e = _run(inst, "enumerate")
    hedged, t_h = _run(inst, "bnb", time_limit=LIMIT, fallback_share=0.5)
    ref = enum.objective
    same = all(r.certified and abs(r.objective - ref) <= 1e-6 * max(1.0, abs(ref)) for r in (enum, hedged))
    phases = " + ".join(f"{p['method']} {p['wall_time_s']:.1f}" for p in hedged.info["phases"])
    estimate = hedged.info.get("enumeration_estimate_s")
    best = min([t_e] + ([t_b] if bnb.certified else []))
    return (f"| {ds} | {kernel} | {sense} | {B} | {math.comb(inst.n, B):,} | {_cell(bnb, t_b)} | {_cell(enum, t_e)} | "
            f"{_cell(hedged, t_h)} | {hedged.info.get('completed_by')} | {phases} | "
            f"{'–' if estimate is None else f'{estimate:.1f}'} | {'yes' if same else 'NO'} | {t_h / best:.2f}x |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_kernels_arg(p)
    add_io_args(p)
    args = p.parse_args()
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    solve(build_instance("wholesale", data_dir=args.data_dir, kernel="rbf", sense="fit", B=2), "bnb")  # compile first
    rows = ["| dataset | kernel | sense | B | C(n,B) | bnb alone (s) | enumeration (s) | hedged bnb (s) | completed by | "
            "hedged phases (s) | enumeration estimated (s) | same optimum | hedged / best |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in of_kernels(CASES, args.kernels):
        rows.append(row(args.data_dir, *case))
        print(rows[-1], flush=True)
    elapsed, text = timed_section(
        "## bnb's fallback to enumeration (bench_fallback.py)", "bench_fallback.py", started, t0, load0,
        f"C = 10, gamma = 0.1, c = 1 (the paper's); wall times, n_jobs = 1, bnb alone and hedged with a {LIMIT:.0f} s "
        "limit (a status in brackets: not finished). Hedged = `BranchAndBound(fallback_share=0.5)`, what `minlp-fs "
        "certify --method auto` runs where it picks bnb: bnb 2 s, enumeration's time estimated in 1 s (8 rank ranges), "
        "bnb again for half the estimate, then enumeration; hedged / best = its time over the faster single method's.",
        rows)
    write_section(args.output, "bench_fallback", text)
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
