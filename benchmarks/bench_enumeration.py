"""Enumeration's cost per subset, two versions side by side in one run, on the same ranks.

    python benchmarks/bench_enumeration.py --old REV [--data-dir ../shared/datasets] [--chunks 6] [--repeats 2]
                                           [--kernels rbf ...]

For each case (dataset, kernel, B, sense), ``--chunks`` runs of 1,000 consecutive ranks of the revolving-door
order, drawn with a fixed seed, are enumerated as ``Enumeration``'s workers do (``_enumerate_chunk``: every
solve stops early against the chunk's best so far), by ``REV`` (a temporary git worktree) and by this
checkout, each in its own process, alternating old, new, old, new (``--repeats`` times; the least CPU time of
each is kept), on one BLAS thread. Both must find the same best subset and value and stop the same subsets
early (column "same") in the fit sense, where the new code's opened solves (:mod:`minlp_fs.alpha.opening`)
take the old solves' steps; in the paper sense the opening tests a stronger primal bound, so it stops other
subsets and only the best rank and value must agree ("best only"; values to 1e-6 relative, the best subset
being solved from other warm starts). Both versions then run the same chunks seeded with LS*'s value, as a
whole enumeration does (``Enumeration``'s incumbent ``auto`` above 100,000 subsets; LS*'s own time not included:
it is paid once per enumeration; ``REV`` must know ``_enumerate_chunk``'s ``seed``, 830cda4 on). Writes the
section ``bench_enumeration`` of RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import add_io_args, add_kernels_arg, command, machine, of_kernels, write_section
from bench_versions import old_checkout

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: (dataset, kernel, B, sense): polynomial enumerations in both senses (where the opening applies; German's
#: rows repeat, so its subsets are solved over groups, on their matrices), and Gaussian ones (where it does not)
CASES = [("ionosphere", "poly5", 8, "fit"), ("ionosphere", "poly2", 5, "fit"), ("bcd", "poly3", 6, "fit"),
         ("sonar", "poly3", 3, "fit"), ("parkinsons", "poly3", 6, "fit"), ("cleveland", "poly2", 6, "fit"),
         ("german", "poly3", 3, "fit"), ("ionosphere", "poly5", 6, "paper"), ("ionosphere", "poly5", 10, "paper"),
         ("bcd", "poly3", 6, "paper"), ("parkinsons", "poly2", 6, "paper"), ("cleveland", "poly5", 6, "paper"),
         ("german", "poly3", 3, "paper"), ("ionosphere", "rbf", 4, "fit"), ("parkinsons", "rbf", 6, "paper"),
         ("sonar", "rbf", 3, "paper"), ("german", "rbf", 3, "fit"), ("bcd", "rbf", 4, "fit"),
         ("bcd", "rbf", 7, "paper"), ("ionosphere", "rbf", 7, "paper")]
CHUNK = 1000

WORKER = r"""
import json, math, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from minlp_fs.datasets import load_dataset, make_synthetic
from minlp_fs.instance import make_instance
from minlp_fs.solvers import enumeration as E
cases, data_dir, n_chunks, chunk, seeded = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
with threadpool_limits(1):
    d = make_synthetic(m=60, seed=0)
    for kernel in ("poly2", "poly3", "poly5", "rbf"):   # numba's compiled code loaded before any timing
        for sense in ("paper", "fit"):
            E._enumerate_chunk(make_instance(d.X, d.y, B=3, kernel=kernel, sense=sense), 0, 50, "smo", 1e-5)
    for name, kernel, B, sense in cases:
        data = load_dataset(name, data_dir)
        inst = make_instance(data.X, data.y, B=B, kernel=kernel, sense=sense, name=data.name)
        total = math.comb(inst.n, B)
        starts = np.random.default_rng(0).integers(0, total - chunk, n_chunks)
        options = {}
        if seeded:
            from minlp_fs.api import solve
            options["seed"] = solve(inst, method="ls*").objective
        rows = []
        c0 = time.process_time()
        for a in starts:
            ch = E._enumerate_chunk(inst, int(a), int(a) + chunk, "smo", 1e-5, **options)
            rows.append([ch.best_rank, ch.best_value, ch.n_stopped_early, ch.n_done])
        cpu = time.process_time() - c0
        print(json.dumps({"case": [name, kernel, B, sense], "cpu": cpu, "chunks": rows}), flush=True)
"""


def run(checkout: Path, cases, data_dir: str, n_chunks: int, seeded: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(cases), data_dir, str(n_chunks), str(CHUNK),
                          "1" if seeded else "0"], cwd=checkout, env=dict(os.environ, PYTHONPATH=str(checkout)),
                         check=True, capture_output=True, text=True).stdout
    return {tuple(r["case"]): r for r in map(json.loads, out.splitlines())}


def keep_least(best: dict, new: dict) -> None:
    for case, row in new.items():
        if case not in best or row["cpu"] < best[case]["cpu"]:
            best[case] = row


def same_best(old_chunks: list, new_chunks: list) -> bool:
    """The same best rank in every chunk, and values equal to 1e-6 relative (the accuracy of a value at tol = 1e-5);
    a chunk whose every subset stopped early against the seed has none (None in both)."""
    return all(a[0] == b[0] and (a[1] == b[1] or None not in (a[1], b[1])
                                 and abs(a[1] - b[1]) <= 1e-6 * max(abs(a[1]), 1.0))
               for a, b in zip(old_chunks, new_chunks))


def agreement(old_row: dict, new_row: dict) -> str:
    """Column "same": yes, best only or no (:func:`same_best`)."""
    if old_row["chunks"] == new_row["chunks"]:
        return "yes"
    return "best only" if same_best(old_row["chunks"], new_row["chunks"]) else "no"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="git revision to compare with")
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=2)
    add_kernels_arg(ap)
    add_io_args(ap)
    args = ap.parse_args(argv)
    data_dir = str(Path(args.data_dir).resolve())
    cases = of_kernels(CASES, args.kernels)
    old, new, old_seeded, seeded = {}, {}, {}, {}
    with old_checkout(args.old) as (checkout, sha):
        for _ in range(args.repeats):
            keep_least(old, run(checkout, cases, data_dir, args.chunks, False))
            keep_least(new, run(ROOT, cases, data_dir, args.chunks, False))
            keep_least(old_seeded, run(checkout, cases, data_dir, args.chunks, True))
            keep_least(seeded, run(ROOT, cases, data_dir, args.chunks, True))
    n = args.chunks * CHUNK
    lines = ["| dataset | kernel | B | sense | old ms / subset | new ms / subset | old / new | same | "
             "seeded by LS*: old ms / subset | new ms / subset | old / new | same | stopped early, seeded: old / new "
             f"(of {n:,}) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in map(tuple, cases):
        o, w, so, s = old[case], new[case], old_seeded[case], seeded[case]
        lines.append(f"| {' | '.join(map(str, case))} | {1e3 * o['cpu'] / n:.3f} | {1e3 * w['cpu'] / n:.3f} | "
                     f"{o['cpu'] / w['cpu']:.2f}x | {agreement(o, w)} | {1e3 * so['cpu'] / n:.3f} | "
                     f"{1e3 * s['cpu'] / n:.3f} | {so['cpu'] / s['cpu']:.2f}x | {agreement(so, s)} | "
                     f"{sum(c[2] for c in so['chunks']):,} / {sum(c[2] for c in s['chunks']):,} |")
    body = [f"Command: `{command('bench_enumeration.py', argv)}` (from the repository root). Machine: {machine()}.",
            "", f"Old: {sha}; new: this checkout. CPU time per subset over {args.chunks} chunks of {CHUNK:,} "
            "consecutive ranks (fixed seed), least of the repetitions; \"same\": yes = the same best rank, value, "
            "early stops and subsets in every chunk; best only = the same best rank and value (to 1e-6 relative) in "
            "every chunk, other early stops (the paper sense's opening).", "", *lines]
    write_section(args.output, "bench_enumeration",
                  "\n".join(["## Enumeration per subset, two versions (bench_enumeration.py)", "", *body]))


if __name__ == "__main__":
    main()
