"""Heuristics on the paper's grid (appendix app:compare, Table quality-cost) and the LS speed ratio.

    python benchmarks/bench_heuristics.py [--quick] [--data-dir ../shared/datasets] [--methods ls ls* ...]
                                          [--sense paper|fit] [--no-ratio]

Grid: the nine datasets x kernels poly2, poly3, poly5, rbf x B in {0.1n, ..., 0.5n} (rounded half up,
at least 1, deduplicated), C = 10, gamma = 0.1 (section 5). Every method runs with its default
options from the alpha-start (start-dependent methods compute it themselves and count its solves);
methods whose module is absent are skipped with a note, and a method that refuses a kernel (ACSO on
the Gaussian kernel) is recorded as not applicable. Per method: mean gap (%) to the best objective
found by any method on the case, cases where it attains it, mean SVM solves, mean wall time.

Each (case, method) is appended to results/heuristics.jsonl as soon as it finishes, so an
interrupted run resumes where it stopped. The LS speed ratio (our LS vs the straightforward
reference of reference_ls.py, same start, same decisions, both on one BLAS thread) is measured side
by side in each run. The summary replaces the section between the markers in RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from minlp_fs.datasets import PAPER_DATASETS, load_dataset, make_synthetic
from minlp_fs.errors import CapabilityError
from minlp_fs.experiments.store import read_records, writer
from minlp_fs.instance import make_instance
from minlp_fs.methods import get_method, method_class

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_data_dir, machine, write_section  # noqa: E402
from reference_ls import straightforward_ls  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "heuristics.jsonl"
#: the previous full-grid run (recorded in the tenth session, at the heuristics and the SMO of 142ed2b; CPU seconds on
#: one BLAS thread), compared per method in the report
PREVIOUS = HERE / "results" / "heuristics-576e6de.jsonl"
REPORT = HERE / "RESULTS.md"
METHODS = ["alpha-start", "rfe1", "rfe2", "ls", "ls*", "acso", "acso*"]
KERNELS = ["poly2", "poly3", "poly5", "rbf"]
FRACTIONS = [0.1, 0.2, 0.3, 0.4, 0.5]
C, GAMMA = 10.0, 0.1
QUICK = {"datasets": ["wholesale", "bcw", "cleveland", "parkinsons", "sonar"], "kernels": ["poly3", "rbf"],
         "fractions": [0.2, 0.4]}
#: (dataset, kernel, fraction of n) of the LS speed comparison
RATIO_CASES = [("wholesale", "rbf", 0.5), ("bcw", "poly2", 0.3), ("cleveland", "poly3", 0.3),
               ("parkinsons", "rbf", 0.3), ("bcd", "poly2", 0.2), ("ionosphere", "rbf", 0.2), ("sonar", "rbf", 0.1)]
#: the paper's Table quality-cost (324 polynomial cases per budget): gap %, SVM solves, time (s)
PAPER_TABLE = [("0.1n", 0.31, 0.15, 178, 362, 2.51, 3.33), ("0.2n", 1.46, 0.39, 360, 655, 4.21, 5.74),
               ("0.3n", 4.64, 0.07, 463, 783, 5.84, 8.03), ("0.4n", 4.08, 0.07, 532, 771, 7.13, 8.23),
               ("0.5n", 0.93, 0.06, 570, 696, 7.10, 7.70)]


def budgets(n: int, fractions) -> list:
    """[(fraction, B)] with B = round-half-up(f n) >= 1, the first fraction kept for a repeated B."""
    seen = {}
    for f in fractions:
        seen.setdefault(max(1, math.floor(f * n + 0.5)), f)
    return [(f, B) for B, f in seen.items()]


def available(names) -> list:
    kept = []
    for name in names:
        try:
            method_class(name)
        except ImportError as exc:
            print(f"skipping {name}: its module is not available ({exc})")
            continue
        kept.append(name)
    return kept


def case_key(row) -> tuple:
    return row["dataset"], row["kernel"], row["B"], row["sense"], row["C"], row["gamma"]


def row_key(row) -> tuple:
    """What a row of results/heuristics.jsonl answers: its case and method."""
    return case_key(row) + (row["method"],)


def load_rows(path=None) -> list:
    """The records of ``path`` (default: this run's file, RESULTS)."""
    return read_records(path or RESULTS, row_key)


def run_grid(args, methods, grid) -> int:
    """Run the (case, method) pairs not yet in the results file (of ``--datasets`` only, if given);
    returns (how many ran, interrupted)."""
    done = {row_key(r) for r in load_rows()}
    todo = []
    for ds in args.datasets or grid["datasets"]:
        n = PAPER_DATASETS[ds][1]
        for kernel in grid["kernels"]:
            for f, B in budgets(n, grid["fractions"]):
                for m in methods:
                    row = {"dataset": ds, "kernel": kernel, "B": B, "sense": args.sense, "C": C, "gamma": GAMMA}
                    if case_key(row) + (m,) not in done:
                        todo.append((ds, kernel, f, B, m))
    data, n_done = {}, 0
    try:
        with threadpool_limits(1), writer(RESULTS) as append, tqdm(todo, desc="heuristics grid") as bar:
            for ds, kernel, f, B, m in bar:
                bar.set_postfix_str(f"{ds} {kernel} B={B} {m}")
                if ds not in data:
                    data[ds] = load_dataset(ds, args.data_dir)
                d = data[ds]
                inst = make_instance(d.X, d.y, B, kernel=kernel, C=C, gamma=GAMMA, sense=args.sense, name=ds)
                row = {"dataset": ds, "n": inst.n, "m": inst.m, "kernel": kernel, "B": B, "fraction": f,
                       "sense": args.sense, "C": C, "gamma": GAMMA, "method": m}
                try:
                    c0 = time.process_time()
                    r = get_method(m).solve(inst)
                    cpu = time.process_time() - c0
                except CapabilityError as exc:
                    row.update(applicable=False, message=str(exc))
                else:
                    if r.status == "interrupted":  # Ctrl-C inside the method: the run is not recorded
                        raise KeyboardInterrupt
                    row.update(applicable=True, objective=r.objective, features=r.features, status=r.status,
                               n_svm_solves=r.n_svm_solves, wall_time_s=r.wall_time_s, cpu_s=cpu,
                               degenerate=r.degenerate)
                append(row)
                n_done += 1
    except KeyboardInterrupt:
        print(f"interrupted: {n_done} of {len(todo)} runs recorded, the run in progress dropped; "
              "the same command resumes", file=sys.stderr)
        return n_done, True
    return n_done, False


def summarise(rows, methods) -> tuple:
    """Per (fraction, method) and per method: [cases, mean gap %, best reached, mean solves, mean time]."""
    cases = {}
    for r in rows:
        if r.get("applicable") and r["method"] in methods:
            cases.setdefault(case_key(r), {})[r["method"]] = r
    per_b, overall = {}, {}
    n_degenerate = 0
    for runs in cases.values():
        sign = 1.0 if next(iter(runs.values()))["sense"] == "paper" else -1.0
        best = min(sign * r["objective"] for r in runs.values())
        n_degenerate += any(r["degenerate"] for r in runs.values())
        for m, r in runs.items():
            gap = 100.0 * (sign * r["objective"] - best) / abs(best)
            stat = (gap, gap <= 1e-4, r["n_svm_solves"], r["wall_time_s"], r.get("cpu_s", np.nan))
            per_b.setdefault((r["fraction"], m), []).append(stat)
            overall.setdefault(m, []).append(stat)

    def agg(stats):
        a = np.array(stats, dtype=float)
        return [len(a), a[:, 0].mean(), int(a[:, 1].sum()), a[:, 2].mean(), a[:, 3].mean(), a[:, 4].mean()]

    return ({k: agg(v) for k, v in per_b.items()}, {k: agg(v) for k, v in overall.items()},
            len(cases), n_degenerate)


def speed_ratio(args) -> list:
    """Our LS vs the straightforward reference from the alpha-start, side by side, in both senses."""
    out = []
    for kernel in sorted({case[1] for case in RATIO_CASES}):  # load the compiled code before timing
        warm = make_synthetic(m=40, n_informative=3, n_noise=3, seed=0)
        for sense in ("paper", "fit"):
            get_method("ls").solve(make_instance(warm.X, warm.y, 3, kernel=kernel, sense=sense))
    cases = [(sense, *case) for sense in ("paper", "fit") for case in RATIO_CASES]
    for sense, ds, kernel, f in tqdm(cases, desc="LS speed ratio"):
        d = load_dataset(ds, args.data_dir)
        B = budgets(d.X.shape[1], [f])[0][1]
        inst = make_instance(d.X, d.y, B, kernel=kernel, C=C, gamma=GAMMA, sense=sense, name=ds)
        start = tuple(get_method("alpha-start").solve(inst).features)
        t = time.perf_counter()
        ours = get_method("ls").solve(inst, start=start)
        t_ours = time.perf_counter() - t
        with threadpool_limits(limits=1):
            t = time.perf_counter()
            subset, value, fits = straightforward_ls(inst, start)
            t_ref = time.perf_counter() - t
        same = tuple(ours.features) == subset
        assert same, f"{ds} {kernel} B={B}: LS ended at {ours.features}, the reference at {list(subset)}"
        out.append({"sense": sense, "dataset": ds, "kernel": kernel, "B": B, "m": inst.m, "n": inst.n, "same_subset": same,
                    "ours_s": t_ours, "ref_s": t_ref, "ours_solves": ours.n_svm_solves, "ref_fits": fits,
                    "ratio": t_ref / t_ours})
    return out


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def previous_lines(rows, methods) -> list:
    """Per method, this run against the previous full-grid run (PREVIOUS) on the cases both ran."""
    old = {row_key(r): r for r in load_rows(PREVIOUS) if r.get("applicable")}
    cpu = all("cpu_s" in r for r in old.values())   # runs since 4035c3b record CPU seconds; earlier ones wall only
    what = "mean CPU" if cpu else "mean wall"
    out = ["", f"Against the previous run of the grid ({PREVIOUS.relative_to(HERE)}: commit {PREVIOUS.stem.split('-')[-1]}, "
           + ("CPU time of `solve()` on one BLAS thread, as this run" if cpu else
              "wall times on a machine shared with other jobs, the BLAS threads numpy chose")
           + "); this run: one BLAS thread, CPU time of `solve()`, which the machine's load does not inflate:", "",
           f"| method | cases in both | previous {what} (s) | this run's mean CPU (s) | previous / this | "
           "previous mean solves | this run's mean solves | same objective (1e-6 rel.) |", "|---|---|---|---|---|---|---|---|"]
    for m in methods:
        both = [(r, old[row_key(r)]) for r in rows if r["method"] == m and r.get("applicable") and "cpu_s" in r
                and row_key(r) in old]
        if not both:
            continue
        w = float(np.mean([o["cpu_s"] if cpu else o["wall_time_s"] for _, o in both]))
        c = float(np.mean([r["cpu_s"] for r, _ in both]))
        same = sum(abs(r["objective"] - o["objective"]) <= 1e-6 * max(1.0, abs(o["objective"])) for r, o in both)
        out.append(f"| {m} | {len(both)} | {fmt(w)} | {fmt(c)} | {w / c:.2f}x | "
                   f"{np.mean([o['n_svm_solves'] for _, o in both]):.0f} | {np.mean([r['n_svm_solves'] for r, _ in both]):.0f} "
                   f"| {same}/{len(both)} |")
    return out


def report(args, methods, grid, summary, ratios, elapsed, n_new, rows) -> str:
    per_b, overall, n_cases, n_degenerate = summary
    slice_ = "quick slice" if args.quick else "full grid"
    lines = ["## Heuristics: quality and cost (bench_heuristics.py)", "",
             f"Command: `python benchmarks/bench_heuristics.py{' --quick' if args.quick else ''} "
             f"--sense {args.sense} --methods {' '.join(methods)}` ({slice_}; this run took {elapsed:.0f} s for {n_new} new "
             f"method runs, the others read back from results/heuristics.jsonl, on the "
             f"project machine, 2 cores, shared with other jobs).",
             f"Slice run: datasets {', '.join(grid['datasets'])}; kernels {', '.join(grid['kernels'])}; "
             f"B = round({', '.join(str(f) for f in grid['fractions'])} n); C = {C:g}, gamma = {GAMMA:g}; "
             f"sense `{args.sense}`; {n_cases} cases ({n_degenerate} where some method attains the trivial "
             f"bound, i.e. a degenerate optimum). Every method from the alpha-start with its default options "
             f"(LS*: 10% re-fit, 200 samples, OptWindow 10). Gap = 100 (f - f_best)/|f_best| in the sense's "
             f"direction, f_best = the best objective any listed method found on the case; "
             f"\"best\" = cases where the method attains it (gap <= 1e-4 %).", "",
             "| method | cases | mean gap (%) | best | mean SVM solves | mean wall time (s) | mean CPU time (s) |",
             "|---|---|---|---|---|---|---|"]
    for m in methods:
        if m in overall:
            c, gap, hit, solves, t, cpu = overall[m]
            lines.append(f"| {m} | {c} | {fmt(gap)} | {hit}/{c} | {solves:.0f} | {fmt(t)} | {fmt(cpu)} |")
    lines += ["", "Per budget:", "", "| B | method | cases | mean gap (%) | best | mean SVM solves | mean wall time (s) "
              "| mean CPU time (s) |", "|---|---|---|---|---|---|---|---|"]
    for f in grid["fractions"]:
        for m in methods:
            if (f, m) in per_b:
                c, gap, hit, solves, t, cpu = per_b[(f, m)]
                lines.append(f"| {f}n | {m} | {c} | {fmt(gap)} | {hit}/{c} | {solves:.0f} | {fmt(t)} | {fmt(cpu)} |")
    lines += previous_lines(rows, methods)
    lines += ["", "The paper's Table quality-cost (its 324 polynomial cases per budget over C in {0.1, 1, 10, 100} "
              "and gamma in {0.01, 0.1, 1}, Apple M1; gap to the best of LS* and ACSO*), for comparison:", "",
              "| B | gap LS* | gap ACSO* | solves LS* | solves ACSO* | time LS* (s) | time ACSO* (s) |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {b} | {a} | {c} | {d} | {e} | {g} | {h} |" for b, a, c, d, e, g, h in PAPER_TABLE]
    if ratios:
        lines += ["", "### LS speed: our LS vs the straightforward reference", "",
                  "Same alpha-start, same decisions (benchmarks/reference_ls.py: each neighbour's kernel rebuilt "
                  "by scikit-learn and fitted cold by libsvm, no cache); both on one BLAS thread, n_jobs = 1, "
                  "measured side by side in this run, after one warm-up LS per kernel (numba's compiled code "
                  "loaded before timing); the final subsets are asserted equal. Ours: each neighbour's kernel "
                  "matrix and warm-start gradient in one compiled pass from the centre's base "
                  "(minlp_fs/alpha/neighbours.py; Gaussian: per-feature exp tables), SMO warm-started from the "
                  "centre's alpha and stopped once duality proves the neighbour worse than the centre or the "
                  "best neighbour so far (LS moves only to a strictly better one), such proofs remembered "
                  "across moves, a cache by subset and, in the fit sense, neighbours skipped when their "
                  "screening bound f(alpha_c, beta) >= g(beta) cannot beat the best re-fit. \"our solves\" "
                  "counts SMO runs, most of them stopped early.", "",
                  "| sense | case | m | n | B | same subset | ours (s) | our solves | reference (s) | "
                  "reference fits | ratio |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in ratios:
            lines.append(f"| {r['sense']} | {r['dataset']} {r['kernel']} | {r['m']} | {r['n']} | {r['B']} | "
                         f"{r['same_subset']} | {r['ours_s']:.2f} | {r['ours_solves']} | {r['ref_s']:.2f} | "
                         f"{r['ref_fits']} | {r['ratio']:.1f}x |")
        for sense in ("paper", "fit"):
            ours = sum(r["ours_s"] for r in ratios if r["sense"] == sense)
            ref = sum(r["ref_s"] for r in ratios if r["sense"] == sense)
            lines.append(f"| {sense} | total | | | | | {ours:.2f} | | {ref:.2f} | | {ref / ours:.1f}x |")
    return "\n".join(lines)


#: the timing slice: each dataset with two kernels, (poly3, poly5) and (poly2, rbf) in turn, B in {0.2n, 0.4n}
SLICE_FRACTIONS = [0.2, 0.4]
SLICE_METHODS = ["ls*", "acso*"]
SLICE_RESULTS = HERE / "results" / "heuristics-slice.jsonl"


def slice_cases() -> list:
    """[(dataset, kernel, fraction, B)]: dataset number i gets kernels poly3 and poly5 (i even) or poly2 and rbf."""
    return [(ds, kernel, f, B) for i, (ds, (_, n)) in enumerate(PAPER_DATASETS.items())
            for kernel in (("poly3", "poly5") if i % 2 == 0 else ("poly2", "rbf"))
            for f, B in budgets(n, SLICE_FRACTIONS)]


def timing_slice(args) -> str:
    """LS* and ACSO* on :func:`slice_cases` with this checkout, timed (CPU and wall) in this process on one
    BLAS thread after a warm-up; each row appended to ``SLICE_RESULTS`` as it finishes (a rerun resumes),
    compared with the same cases' rows of ``PREVIOUS`` (another run, an older version, wall time only)."""
    t0 = time.perf_counter()
    done = {}
    if SLICE_RESULTS.exists():
        for line in SLICE_RESULTS.read_text().splitlines():
            r = json.loads(line)
            done[(r["dataset"], r["kernel"], r["B"], r["method"])] = r
    recorded = {(r["dataset"], r["kernel"], r["B"], r["method"]): r for r in load_rows(PREVIOUS)
                if r["sense"] == "paper" and r["C"] == C and r["gamma"] == GAMMA}
    data = {}
    with threadpool_limits(1), SLICE_RESULTS.open("a") as out:
        d = make_synthetic(m=60, seed=0)
        for m in SLICE_METHODS:
            get_method(m).solve(make_instance(d.X, d.y, 3, kernel="poly2"))
        for ds, kernel, f, B in slice_cases():
            for m in SLICE_METHODS:
                if (ds, kernel, B, m) in done or (m == "acso*" and kernel == "rbf"):
                    continue
                if ds not in data:
                    data[ds] = load_dataset(ds, args.data_dir)
                inst = make_instance(data[ds].X, data[ds].y, B, kernel=kernel, C=C, gamma=GAMMA, sense="paper", name=ds)
                w0, c0 = time.perf_counter(), time.process_time()
                res = get_method(m).solve(inst)
                row = {"dataset": ds, "kernel": kernel, "B": B, "fraction": f, "method": m, "objective": res.objective,
                       "n_svm_solves": res.n_svm_solves, "cpu_s": time.process_time() - c0,
                       "wall_s": time.perf_counter() - w0}
                print(json.dumps(row), flush=True)
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[(ds, kernel, B, m)] = row
    lines = ["| method | cases | new mean CPU (s) | new mean wall (s) | recorded mean wall (s) "
             "| recorded wall / new CPU | new mean solves | recorded mean solves | same objective as recorded |",
             "|---|---|---|---|---|---|---|---|---|"]
    per_case = ["| dataset | kernel | B | method | new CPU (s) | new wall (s) | recorded wall (s) | new solves "
                "| recorded solves | same objective |", "|---|---|---|---|---|---|---|---|---|---|"]
    for m in SLICE_METHODS:
        rows = [(done[k], recorded.get(k)) for k in ((ds, kern, B, m) for ds, kern, _, B in slice_cases()) if k in done]
        both = [(r, o) for r, o in rows if o is not None]
        same = sum(abs(r["objective"] - o["objective"]) <= 1e-6 * max(1.0, abs(o["objective"])) for r, o in both)
        mean = lambda xs: sum(xs) / max(1, len(xs))  # noqa: E731
        new_cpu, old_wall = mean([r["cpu_s"] for r, _ in both]), mean([o["wall_time_s"] for _, o in both])
        lines.append(f"| {m} | {len(both)} | {new_cpu:.2f} | {mean([r['wall_s'] for r, _ in both]):.2f} | "
                     f"{old_wall:.2f} | {old_wall / new_cpu:.2f}x | {mean([r['n_svm_solves'] for r, _ in both]):.0f} | "
                     f"{mean([o['n_svm_solves'] for _, o in both]):.0f} | {same}/{len(both)} |")
        for r, o in both:
            ok = abs(r["objective"] - o["objective"]) <= 1e-6 * max(1.0, abs(o["objective"]))
            per_case.append(f"| {r['dataset']} | {r['kernel']} | {r['B']} | {m} | {r['cpu_s']:.2f} | "
                            f"{r['wall_s']:.2f} | {o['wall_time_s']:.2f} | {r['n_svm_solves']} | "
                            f"{o['n_svm_solves']} | {ok} |")
    return (f"## Heuristics grid, timing slice (bench_heuristics.py --timing-slice)\n\nCommand: `python benchmarks/"
            f"bench_heuristics.py --timing-slice` (from the repository root; this invocation "
            f"{time.perf_counter() - t0:.0f} s, rows of earlier invocations read back from "
            f"results/{SLICE_RESULTS.name}). Date: "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\nMachine: {machine()}. Slice of the grid above: "
            f"each of the nine datasets with two kernels (poly3 and poly5, poly2 and rbf in turn; German: poly2 "
            f"and rbf), B in {{0.2n, 0.4n}}, C = 10, "
            f"gamma = 0.1, paper sense, default options, n_jobs = 1, one BLAS thread, after a warm-up; this version "
            f"only. "
            f"'recorded' = the same cases' rows of results/{PREVIOUS.name}: another run, by an older version, on a "
            f"shared machine (wall times only). Every run is single-threaded, so its CPU time is what it takes on a "
            f"core of its own; the new wall times are inflated by the other jobs on the machine at the time. The "
            f"recorded wall / new CPU ratio is therefore indicative, not a side-by-side measurement "
            f"(bench_versions.py is that).\n\n"
            + "\n".join(lines) + "\n\nPer case:\n\n" + "\n".join(per_case))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timing-slice", action="store_true",
                    help="time LS* and ACSO* on a slice of the grid (slice_cases) and report section heuristics_slice")
    ap.add_argument("--quick", action="store_true", help="the ~5 minute slice " + json.dumps(QUICK))
    ap.add_argument("--data-dir", default=default_data_dir())
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--sense", choices=["paper", "fit"], default="paper")
    ap.add_argument("--no-ratio", action="store_true", help="skip the LS speed comparison")
    ap.add_argument("--datasets", type=lambda t: [d.strip() for d in t.split(",")],
                    help="run only these datasets' cases (comma-separated); the report covers every case "
                         "of the grid found in the results file")
    args = ap.parse_args(argv)
    if args.timing_slice:
        text = timing_slice(args)
        write_section(REPORT, "heuristics_slice", text)
        print(text)
        return
    t0 = time.perf_counter()
    methods = available(args.methods)
    grid = QUICK if args.quick else {"datasets": list(PAPER_DATASETS), "kernels": KERNELS, "fractions": FRACTIONS}
    n_new, interrupted = run_grid(args, methods, grid)
    in_grid = {(ds, k, B): f for ds in grid["datasets"] for k in grid["kernels"]
               for f, B in budgets(PAPER_DATASETS[ds][1], grid["fractions"])}
    rows = [dict(r, fraction=in_grid[(r["dataset"], r["kernel"], r["B"])]) for r in load_rows()
            if (r["dataset"], r["kernel"], r["B"]) in in_grid
            and r["sense"] == args.sense and r["C"] == C and r["gamma"] == GAMMA]
    ratios = [] if args.no_ratio or interrupted or "ls" not in methods else speed_ratio(args)
    text = report(args, methods, grid, summarise(rows, methods), ratios, time.perf_counter() - t0, n_new, rows)
    write_section(REPORT, "bench_heuristics", text)
    print(text)


if __name__ == "__main__":
    main()
