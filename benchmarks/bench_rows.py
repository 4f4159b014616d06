"""Rows: the exact mode against large-m mode (minlp_fs/large_m.py) for m = 1,000 ... 20,000, n = 50, k = 10.

    python benchmarks/bench_rows.py [--sizes 1000 2000 5000 10000 20000] [--exact-up-to 5000]
                                    [--rows 2000] [--rows-study 1000 3000] [--study-sizes 5000 20000]

Two seeded sets of 50 columns, each drawn once with TEST = 5,000 extra rows held out; the training
set of size m is the first m of the other rows (nested):

* ``classification``: ``make_classification(n_features=50, n_informative=10, n_redundant=0,
  random_state=0)`` (ten informative columns among 40 noise ones);
* ``interaction``: x uniform in [-1, 1]^50, y = 1[x0 x1 + x2^2 > median] (seed 0): a nonlinear signal
  in three columns.

Every run is ``CardinalitySVC(10, random_state=0)`` with default parameters (poly3, gamma 0.1, C 10,
LS*) except ``large_m``: False (the exact mode, up to ``--exact-up-to`` rows) or True with
``large_m_rows`` (``--rows``; ``--rows-study`` adds other sample sizes at ``--study-sizes``). Each run
is a fresh process: wall time of ``fit`` (selection + the final SVC on all rows), peak resident memory
(``ru_maxrss``: the whole process, libsvm's cache included; the baseline after loading the data is
shown apart), held-out accuracy, the selected columns and f on all rows (``objective_``). Runs are
appended to results/rows.jsonl as they finish (an interrupted run resumes); the table replaces the
``bench_rows`` section of RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from minlp_fs.experiments.store import read_records, writer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command, machine, write_section  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "rows.jsonl"
REPORT = HERE / "RESULTS.md"
DATASETS = ("classification", "interaction")
N, K, TEST, TOP = 50, 10, 5000, 20000


def data(name: str):
    """(X, y) of TOP + TEST rows: training rows first, the held-out TEST rows last."""
    if name == "classification":
        from sklearn.datasets import make_classification

        return make_classification(n_samples=TOP + TEST, n_features=N, n_informative=10, n_redundant=0,
                                   random_state=0)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(TOP + TEST, N))
    s = X[:, 0] * X[:, 1] + X[:, 2] ** 2
    return X, (s > np.median(s)).astype(int)


def one(unit: dict) -> dict:
    """Run one unit in this process and measure it (called in a fresh child process)."""
    from minlp_fs.estimators import CardinalitySVC

    X, y = data(unit["dataset"])
    X_tr, y_tr, X_te, y_te = X[:unit["m"]], y[:unit["m"]], X[TOP:], y[TOP:]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    est = CardinalitySVC(K, random_state=0, large_m=unit["large_m"], large_m_rows=unit["rows"])
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(X_tr, y_tr)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    info = est.result_.info.get("large_m", {})
    return {"unit": unit, "wall_s": wall, "cpu_s": cpu, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "base_mb": base / 1024, "accuracy": float(est.score(X_te, y_te)), "large_m_": bool(est.large_m_),
            "features": [int(j) for j in est.selected_features_], "objective": est.objective_,
            "search_objective": info.get("search_objective"), "n_support": info.get("n_support"),
            "n_svm_solves": est.result_.n_svm_solves}


def units(args) -> list:
    """Large-m mode first, then the exact mode, then the sample-size study (the cheapest answers first)."""
    large = [{"dataset": ds, "m": m, "large_m": True, "rows": args.rows} for ds in DATASETS for m in args.sizes]
    exact = [{"dataset": ds, "m": m, "large_m": False, "rows": args.rows} for ds in DATASETS for m in args.sizes
             if m <= args.exact_up_to]
    study = [{"dataset": ds, "m": m, "large_m": True, "rows": r} for ds in DATASETS for m in args.study_sizes
             for r in args.rows_study]
    return large + exact + study


def run(args) -> None:
    done = {json.dumps(r["unit"], sort_keys=True) for r in read_records(RESULTS)}
    todo = [u for u in units(args) if json.dumps(u, sort_keys=True) not in done]
    with writer(RESULTS) as append:
        for u in todo:
            print("running", u, flush=True)
            proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(u)], capture_output=True, text=True)
            if proc.returncode:
                append({"unit": u, "error": proc.stderr.strip().splitlines()[-1]})
                print(proc.stderr, file=sys.stderr)
                continue
            record = json.loads(proc.stdout.strip().splitlines()[-1])
            append(record)
            print(f"  {record['wall_s']:.0f} s, {record['peak_mb']:.0f} MB, accuracy {record['accuracy']:.4f}", flush=True)


def report(args, elapsed: float, load0: float) -> str:
    rows = {json.dumps(r["unit"], sort_keys=True): r for r in read_records(RESULTS) if "error" not in r}

    def get(ds, m, lm, r):
        return rows.get(json.dumps({"dataset": ds, "m": m, "large_m": lm, "rows": r}, sort_keys=True))

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Rows: exact mode against large-m mode (bench_rows.py)",
        "",
        f"Command: `{command('bench_rows.py', args.argv)}` (from the repository root). Date: {stamp}, "
        f"this invocation {elapsed:.0f} s (runs already in results/rows.jsonl are reused).",
        f"Machine: {machine()}. Load average (1 min) at start {load0:.1f}, at end {os.getloadavg()[0]:.1f}.",
        "",
        f"`CardinalitySVC({K}, random_state=0)`, default parameters (poly3, gamma 0.1, C 10, LS*), n = {N}; "
        f"held-out accuracy on {TEST} further rows of the same set. Each run is a fresh process: wall "
        "seconds of `fit` (selection and the final SVC on all m rows; its CPU seconds in brackets, which the "
        "machine's load does not inflate), peak resident memory of the process "
        "(ru_maxrss, MB; the process after loading the data, before `fit`, in brackets). Large-m mode: the "
        f"search on a stratified sample of {args.rows} rows, f of the chosen subset then exact on all rows "
        "(libsvm + objective.dual_objective, no m x m matrix). f: objective_ on all m rows (fit sense: "
        "larger is better). Exact mode not run above "
        f"{args.exact_up_to} rows (one m x m Gram per candidate: {8 * 10000 ** 2 / 2 ** 20:.0f} MB at m = 10,000).",
        "",
        "| set | m | exact s (CPU s) | exact peak MB | exact acc. | large-m s (CPU s) | large-m peak MB | large-m acc. | "
        "acc. large-m - exact | f exact | f large-m | same subset |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ds in DATASETS:
        for m in args.sizes:
            ex, lm = get(ds, m, False, args.rows), get(ds, m, True, args.rows)
            cells = [ds, f"{m:,}"]
            cells += [f"{ex['wall_s']:.0f} ({ex['cpu_s']:.0f})", f"{ex['peak_mb']:.0f} ({ex['base_mb']:.0f})", f"{ex['accuracy']:.4f}"] \
                if ex else ["not run" if m > args.exact_up_to else "not finished", "", ""]
            cells += [f"{lm['wall_s']:.0f} ({lm['cpu_s']:.0f})", f"{lm['peak_mb']:.0f} ({lm['base_mb']:.0f})", f"{lm['accuracy']:.4f}"] \
                if lm else ["missing", "", ""]
            both = ex is not None and lm is not None
            cells += [f"{100 * (lm['accuracy'] - ex['accuracy']):+.2f} points" if both else "",
                      f"{ex['objective']:.6g}" if ex else "", f"{lm['objective']:.6g}" if lm else "",
                      ("yes" if ex["features"] == lm["features"] else "no") if both else ""]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"At m <= {args.rows} the sample is every row: both modes search the same instance, so those rows "
              "check the exact re-evaluation (the same f from libsvm as from the package's SMO), not the sampling.",
              "", "Summary:"]
    for ds in DATASETS:
        pairs = [(get(ds, m, False, args.rows), get(ds, m, True, args.rows)) for m in args.sizes]
        both = [(ex, lm) for ex, lm in pairs if ex and lm]
        top = get(ds, max(args.sizes), True, args.rows)
        gap = max((abs(lm["accuracy"] - ex["accuracy"]) for ex, lm in both), default=None)
        lines.append(f"* {ds}: " + (f"large-m at m = {max(args.sizes):,}: {top['wall_s']:.0f} s wall, "
                                     f"{top['cpu_s']:.0f} s CPU, peak {top['peak_mb']:.0f} MB; " if top else "") +
                     (f"largest |accuracy difference| to the exact mode {100 * gap:.2f} points over m = "
                      f"{', '.join(format(ex['unit']['m'], ',') for ex, _ in both)}" if both else "no exact run to compare"))
    study = [(ds, m, r) for ds in DATASETS for m in args.study_sizes for r in sorted({*args.rows_study, args.rows})]
    if args.rows_study:
        lines += ["", "Sample size of the search (large_m_rows) in large-m mode:", "",
                  "| set | m | large_m_rows | s (CPU s) | peak MB | accuracy | f large-m |", "|---|---|---|---|---|---|---|"]
        for ds, m, r in study:
            rec = get(ds, m, True, r)
            if rec:
                lines.append(f"| {ds} | {m:,} | {r} | {rec['wall_s']:.0f} ({rec['cpu_s']:.0f}) | {rec['peak_mb']:.0f} | "
                             f"{rec['accuracy']:.4f} | {rec['objective']:.6g} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000])
    ap.add_argument("--exact-up-to", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=2000, help="large_m_rows of the main table")
    ap.add_argument("--rows-study", type=int, nargs="*", default=[1000, 3000])
    ap.add_argument("--study-sizes", type=int, nargs="*", default=[5000, 20000])
    ap.add_argument("--report-only", action="store_true", help="rewrite the section from results/rows.jsonl")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(json.loads(args.one))))
        return
    args.argv = sys.argv[1:] if argv is None else list(argv)
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    if not args.report_only:
        run(args)
    text = report(args, time.perf_counter() - t0, load0)
    write_section(REPORT, "bench_rows", text)
    print(text)


if __name__ == "__main__":
    main()
