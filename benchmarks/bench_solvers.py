"""General MINLP/NLP solvers against LS* and ACSO* on reduced instances (paper appendix sec:baron).

Part 1 reproduces the appendix's Tables "baron results clev / on bcd / iono / sonar": problem (3)
(paper sense: min f(alpha, beta)) with the polynomial kernels d in {2, 3, 5} (gamma = 0.1, c = 1),
C = 10, on Cleveland, BCD, Ionosphere and Sonar reduced to m in {10, 50, 100, 150, 200} samples
(stratified, seed 0: ``minlp_fs.models.library.reduced_instance``, the instances that
``minlp-fs export-library`` writes). The appendix does not state B; we use
B = floor(n/2), the budget of section 5's multistart study whose starting points the appendix's
solvers share. Methods, all from the same alpha-start (section 5.1, computed inside every timed run):
``ipopt`` (the relaxation by cyipopt with our callbacks, then top-B rounding), ``scip`` (global; its
LS* plugin off, so SCIP alone), ``baron``, ``gams-knitro`` and ``gams-ipopt`` (GAMS demo licences:
"size limit" where the adapter says the model is too large), ``ls*`` and ``acso*``, each under the
same time limit. Every objective is the adapter's polished g(beta), recomputed by ``dual_objective``.
The paper's numbers for the same rows (paper_baron.csv, transcribed from those tables; Baron at
3600 s, Knitro/Ipopt/ACSO*/LS* best of five starts, Apple M1) stand beside ours: the samples and B
differ, so compare the ranking within a row, not the values across the two sides.

Part 2 times the native cyipopt adapter (``ipopt``) against the Pyomo route (``ipopt-pyomo``: the
same relaxation as a Pyomo model solved by GAMS's IPOPT) from the same start, alternately in one
process, plus the native adapter with numpy's default BLAS threads (every other run uses one).

Each run happens in a forked child process with BLAS on one thread, an address-space cap
(``--mem-mb``) and a wall-clock cap of 2 x time limit + 120 s (GAMS's own overrun guard is 60 s): a
run past it is killed and recorded "killed", a child that dies is recorded "crashed". Every run is
appended to results/solvers.jsonl as it finishes; a rerun skips the runs already there (delete
lines to redo them). The section ``bench_solvers`` of RESULTS.md is rewritten at the end. Usage:

    python benchmarks/bench_solvers.py [--quick] [--data-dir ../shared/datasets] [--time-limit S]
                                       [--methods ls* scip ...] [--no-ratio] [--mem-mb 6000]
"""
from __future__ import annotations

import argparse
import csv
import datetime
import multiprocessing as mp
import os
import resource
import signal
import statistics
import time

from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from minlp_fs.api import solve
from minlp_fs.experiments.store import read_records, writer
from minlp_fs.methods import method_class
from minlp_fs.models.library import REDUCED_C as C, REDUCED_DATASETS as DATASETS, REDUCED_DEGREES as DEGREES, \
    REDUCED_GAMMA as GAMMA, REDUCED_SIZES as SIZES, reduced_instance as instance

from _common import HERE, add_io_args, command, machine, write_section

RESULTS = HERE / "results" / "solvers.jsonl"
PAPER_CSV = HERE / "paper_baron.csv"
METHODS = ["alpha-start", "ls*", "acso*", "ipopt", "gams-ipopt", "gams-knitro", "baron", "scip", "bnb"]
#: methods that prove a bound of their own (the general solvers say so through info["scope"])
GLOBAL_METHODS = {"bnb"}
#: --quick: d = 2 at m <= 100, d = 3 and 5 at m <= 50, all four datasets (28 rows, ~25 min at 30 s)
QUICK = [(ds, 2, m) for ds in DATASETS for m in (10, 50, 100)] + \
        [(ds, d, m) for ds in DATASETS for d in (3, 5) for m in (10, 50)]
FULL = [(ds, d, m) for ds in DATASETS for d in DEGREES for m in SIZES]
#: (dataset, d, m) of the native-vs-Pyomo timing
RATIO_CASES = [("cleveland", 2, 50), ("cleveland", 2, 200), ("ionosphere", 3, 100), ("sonar", 2, 100)]
RATIO_VARIANTS = ("ipopt", "ipopt-pyomo")
PAPER_COLUMNS = [("Baron", "baron"), ("Baron-H", "baronh"), ("Knitro", "knitro"), ("Ipopt", "ipopt"),
                 ("ACSO*", "acso"), ("LS*", "ls")]


def row_key(row) -> tuple:
    """What a row of results/solvers.jsonl answers: (part, dataset, d, m, method or variant, time limit)."""
    return (row["part"], row["dataset"], row["d"], row["m"], row["method" if row["part"] == "grid" else "variant"],
            row["time_limit"])


def options(method: str, time_limit: float) -> dict:
    opts = {"time_limit": time_limit} if "time_limit" in method_class(method).options() else {}
    if method == "scip":
        opts["heuristic"] = None  # SCIP alone; LS*/ACSO* are separate columns
    return opts


def run_method(ds, d, m, method, time_limit, data_dir) -> dict:
    """One timed solve (in a child process); the result's summary."""
    inst = instance(ds, d, m, data_dir)
    start = "alpha-start" if method_class(method).uses_start else None
    t = time.perf_counter()
    r = solve(inst, method, start=start, **options(method, time_limit))
    wall = time.perf_counter() - t
    info = r.info or {}
    return {"status": r.status, "objective": r.objective, "certified": r.certified, "bound": r.bound,
            "degenerate": r.degenerate, "features": r.features, "wall_s": wall, "n_svm_solves": r.n_svm_solves,
            "scope": "global" if method in GLOBAL_METHODS else info.get("scope"), "solver_status": info.get("solver_status"),
            "solver_objective": info.get("solver_objective"), "solver_time_s": info.get("solver_time_s"),
            "relaxation_objective": info.get("relaxation_objective"), "message": (r.message or "")[:400]}


def run_ratio(ds, d, m, time_limit, data_dir, variants, reps) -> list:
    """Native vs Pyomo route from the same start, alternately; warm-up on a tiny instance first."""
    tiny, inst = instance("cleveland", 2, 10, data_dir), instance(ds, d, m, data_dir)
    start = list(solve(inst, "alpha-start").features)
    for v in variants:
        solve(tiny, v, start="alpha-start", time_limit=time_limit)
    out = {v: {"times": []} for v in variants}
    for _ in range(reps):
        for v in variants:
            t = time.perf_counter()
            r = solve(inst, v, start=start, time_limit=time_limit)
            out[v]["times"].append(time.perf_counter() - t)
            out[v].update(status=r.status, objective=r.objective, solver_time_s=r.info.get("solver_time_s"),
                          relaxation_objective=r.info.get("relaxation_objective"))
    return [dict(variant=v, **res) for v, res in out.items()]


def _child(conn, fn, args, mem_mb, blas_threads):
    os.setpgrp()  # its own process group, killed as a whole at the cap
    try:
        if mem_mb:
            resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
        with threadpool_limits(limits=blas_threads):
            conn.send(("ok", fn(*args)))
    except BaseException as exc:  # reported to the parent as the run's outcome
        conn.send(("error", f"{type(exc).__name__}: {exc}"[:400]))
    finally:
        conn.close()


def isolated(fn, args, cap_s, mem_mb, blas_threads=1):
    """(kind, payload) of fn(*args) in a forked child: kind 'ok', 'error', 'killed' or 'crashed'."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, mem_mb, blas_threads))
    proc.start()
    send.close()
    try:
        if not recv.poll(cap_s):
            return "killed", f"no answer within the {cap_s:.0f} s cap; killed"
        try:
            return recv.recv()
        except EOFError:
            proc.join(5)
            return "crashed", f"the run died (exit code {proc.exitcode}; e.g. out of memory)"
    finally:
        if proc.is_alive():
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child and anything it started in its group
            except ProcessLookupError:
                pass
        proc.join()


def run_grid(args, cases, methods) -> None:
    done = {row_key(r) for r in read_records(args.results, row_key)}
    todo = [(ds, d, m, meth) for ds, d, m in sorted(cases, key=lambda c: (c[2], c[1], DATASETS.index(c[0])))
            for meth in methods if ("grid", ds, d, m, meth, args.time_limit) not in done]
    cap = 2 * args.time_limit + 120
    with writer(args.results) as append, tqdm(todo, desc="solvers grid") as bar:
        for ds, d, m, meth in bar:
            bar.set_postfix_str(f"{ds} d={d} m={m} {meth}")
            inst = instance(ds, d, m, args.data_dir)
            row = {"part": "grid", "dataset": ds, "d": d, "m": m, "n": inst.n, "B": inst.B, "C": C,
                   "gamma": GAMMA, "sense": inst.sense, "seed": 0, "method": meth,
                   "time_limit": args.time_limit, "load_1min": os.getloadavg()[0]}
            kind, payload = isolated(run_method, (ds, d, m, meth, args.time_limit, args.data_dir), cap,
                                     args.mem_mb)
            row.update(payload if kind == "ok" else {"status": kind, "objective": None, "message": payload})
            append(row)


def run_ratios(args) -> None:
    done = {row_key(r) for r in read_records(args.results, row_key)}
    jobs = [job for c in RATIO_CASES for job in ((c, RATIO_VARIANTS, 1), (c, ("ipopt",), None))]
    with writer(args.results) as append:
        for (ds, d, m), variants, threads in tqdm(jobs, desc="native vs Pyomo"):
            label = {v: v if threads == 1 else f"{v} (default BLAS threads)" for v in variants}
            if all(("ratio", ds, d, m, label[v], args.time_limit) in done for v in variants):
                continue
            kind, payload = isolated(run_ratio, (ds, d, m, args.time_limit, args.data_dir, variants, 2),
                                     8 * args.time_limit + 300, args.mem_mb, blas_threads=threads)
            rows = payload if kind == "ok" else [{"variant": v, "status": kind, "message": payload} for v in variants]
            for r in rows:
                append({"part": "ratio", "dataset": ds, "d": d, "m": m, "time_limit": args.time_limit,
                        "load_1min": os.getloadavg()[0], **r, "variant": label[r["variant"]]})

# ---- report ----------------------------------------------------------------------------------------

def load_paper() -> dict:
    """(dataset, d, m) -> the paper's numbers for that row (floats), from paper_baron.csv."""
    with open(PAPER_CSV, newline="") as fh:
        return {(r["dataset"], int(r["d"]), int(r["m"])): {k: float(v) for k, v in r.items()
                                                           if k not in ("dataset", "d", "m")}
                for r in csv.DictReader(fh)}


def num(v) -> str:
    return "-" if v is None else (f"{v:.2f}" if abs(v) >= 10 else f"{v:.3f}")


def close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(b))


def cell(r, best, time_limit) -> str:
    """'objective (time s, notes)': bold at the row's best; 'opt' certified, 'TL' stopped at the limit."""
    if r is None:
        return "not run"
    msg = (r.get("message") or "").lower()
    if r["status"] == "unavailable":
        return "size limit" if "size limit" in msg else "unavailable"
    if r.get("objective") is None:
        return {"killed": "killed at cap", "crashed": "crashed"}.get(
            r["status"], "memory limit" if "memory" in msg else f"{r['status']}, no solution")
    notes = [f"{r['wall_s']:.1f} s"]
    if r.get("certified"):
        notes.append("opt")
    elif r["status"] == "time_limit":
        notes.append("TL")
    if r.get("scope") == "global" and r.get("bound") is not None and not r.get("certified"):
        no_bound = abs(r["bound"]) >= 1e19  # SCIP's -infinity: no finite dual bound yet
        gap = 100 * (r["objective"] - r["bound"]) / abs(r["objective"])
        notes.append("no bound" if no_bound else f"gap {gap:.3g}%")
    if r["wall_s"] > 1.25 * time_limit + 5:
        notes.append("overran")
    value = num(r["objective"])
    return f"{f'**{value}**' if close(r['objective'], best) else value} ({', '.join(notes)})"


def paper_cells(p) -> list:
    if p is None:
        return ["-"] * len(PAPER_COLUMNS)
    out = [f"{num(p['baron_obj'])} (gap {p['baron_gap_pct']:.3g}%)"]
    return out + [f"{num(p[f'{key}_obj'])} ({p[f'{key}_time_s']:g} s)" for _, key in PAPER_COLUMNS[1:]]


def grid_section(rows, cases, methods, time_limit) -> list:
    paper = load_paper()
    by_case = {}
    for r in rows:
        by_case.setdefault((r["dataset"], r["d"], r["m"]), {})[r["method"]] = r
    lines = ["| dataset | d | m | n | B | " + " | ".join(methods) + " | "
             + " | ".join(f"paper {name}" for name, _ in PAPER_COLUMNS) + " |",
             "|---" * (5 + len(methods) + len(PAPER_COLUMNS)) + "|"]
    stats = {m: {"rows": 0, "best": 0, "opt": 0, "tl": 0, "limit": 0, "failed": 0, "max_over": 0.0, "gaps": []}
             for m in methods}
    beaten = []
    for case in sorted(cases, key=lambda c: (DATASETS.index(c[0]), c[1], c[2])):
        runs = by_case.get(case, {})
        if not runs:
            continue
        values = [r["objective"] for r in runs.values() if r.get("objective") is not None]
        best = min(values) if values else None
        any_row = next(iter(runs.values()))
        lines.append(f"| {case[0]} | {case[1]} | {case[2]} | {any_row['n']} | {any_row['B']} | "
                     + " | ".join(cell(runs.get(m), best, time_limit) for m in methods) + " | "
                     + " | ".join(paper_cells(paper.get(case))) + " |")
        for m, r in runs.items():
            if m not in stats:
                continue
            s = stats[m]
            if r["status"] == "unavailable":
                s["limit"] += 1
                continue
            if r.get("objective") is None:
                s["failed"] += 1
                continue
            s["rows"] += 1
            s["best"] += close(r["objective"], best)
            s["opt"] += bool(r.get("certified"))
            s["tl"] += r["status"] == "time_limit"
            s["max_over"] = max(s["max_over"], r["wall_s"] / time_limit)
            if r.get("scope") == "global" and r.get("bound") is not None and abs(r["bound"]) < 1e19:
                s["gaps"].append(max(0.0, 100 * (best - r["bound"]) / abs(best)))
        heur = [runs[m]["objective"] for m in ("ls*", "acso*") if m in runs and runs[m].get("objective") is not None]
        if heur and best is not None and best < min(heur) and not close(best, min(heur)):
            who = [m for m, r in runs.items() if close(r.get("objective"), best)]
            beaten.append(f"{case[0]} d={case[1]} m={case[2]}: {', '.join(who)} {num(best)} vs "
                          f"LS*/ACSO* {num(min(heur))}")
    summary = ["", "| method | rows with a solution | at the row's best | certified optimal | stopped at time limit "
               "| size limit / unavailable | failed (error, memory, killed) | max wall / time limit |",
               "|---|---|---|---|---|---|---|---|"]
    summary += [f"| {m} | {s['rows']} | {s['best']} | {s['opt']} | {s['tl']} | {s['limit']} | {s['failed']} | "
                f"{s['max_over']:.2f} |" for m, s in stats.items()]
    summary += ["", "Rows where a solver beat both LS* and ACSO*: " + ("; ".join(beaten) if beaten else "none") + "."]
    summary += ["", "What each global method's own bound proves about the row's best objective (any method's): gap = "
                "100 (best - bound) / |best| over the rows where it returned a finite bound (0 where it certified):", "",
                "| method | rows with a bound | gap 0 (certified) | gap <= 1 % | median gap % | largest gap % |",
                "|---|---|---|---|---|---|"]
    summary += [f"| {m} | {len(s['gaps'])} | {sum(g <= 1e-4 for g in s['gaps'])} | {sum(g <= 1 for g in s['gaps'])} | "
                f"{statistics.median(s['gaps']):.3g} | {max(s['gaps']):.3g} |" for m, s in stats.items() if s["gaps"]]
    for m in methods:
        mine = [r for r in rows if r["method"] == m and r.get("scope") == "global" and r["status"] != "unavailable"]
        if mine:
            per = {ds: (sum(bool(r.get("certified")) for r in mine if r["dataset"] == ds),
                        sum(r["dataset"] == ds for r in mine)) for ds in DATASETS}
            summary.append(f"\nCertified by {m}, per dataset: "
                           + ", ".join(f"{ds} {a}/{b}" for ds, (a, b) in per.items() if b) + ".")
    return lines + summary


def ratio_section(rows) -> list:
    by_case = {}
    for r in rows:
        by_case.setdefault((r["dataset"], r["d"], r["m"]), {})[r["variant"]] = r
    ratios, same_ratios = [], []
    lines = ["| case | native: relaxation / polished | Pyomo: relaxation / polished | same relaxation optimum "
             "| native (s) | Pyomo route (s) | Pyomo / native | native, default BLAS threads (s) "
             "| default threads / one thread |", "|---|---|---|---|---|---|---|---|---|"]
    for (ds, d, m), v in by_case.items():
        nat, pyo, thr = v.get("ipopt"), v.get("ipopt-pyomo"), v.get("ipopt (default BLAS threads)")
        if not (nat and pyo and nat.get("times") and pyo.get("times")):
            lines.append(f"| {ds} d={d} m={m} | {(nat or {}).get('message', '-')} | "
                         f"{(pyo or {}).get('message', '-')} | | | | | | |")
            continue
        t_nat, t_pyo = min(nat["times"]), min(pyo["times"])
        same = close(nat["relaxation_objective"], pyo["relaxation_objective"]) or \
            abs(nat["relaxation_objective"] - pyo["relaxation_objective"]) <= 1e-4 * abs(pyo["relaxation_objective"])
        t_thr = min(thr["times"]) if thr and thr.get("times") else None
        ratios.append(t_pyo / t_nat)
        if same:
            same_ratios.append(t_pyo / t_nat)
        lines.append(f"| {ds} d={d} m={m} | {num(nat['relaxation_objective'])} / {num(nat['objective'])} | "
                     f"{num(pyo['relaxation_objective'])} / {num(pyo['objective'])} | {'yes' if same else 'no'} | "
                     f"{t_nat:.3f} | {t_pyo:.3f} | {t_pyo / t_nat:.1f}x | "
                     f"{'-' if t_thr is None else f'{t_thr:.3f}'} | "
                     f"{'-' if t_thr is None else f'{t_thr / t_nat:.1f}x'} |")
    if ratios:
        lines += ["", f"Pyomo / native time ratio: {min(ratios):.1f}x to {max(ratios):.1f}x over {len(ratios)} cases; "
                  f"at the same relaxation optimum ({len(same_ratios)} case(s)): "
                  + (", ".join(f"{x:.1f}x" for x in same_ratios) or "none") + "."]
    return lines


def warm_up(data_dir) -> None:
    """Import the optional packages and compile numba once, before forking the timed runs."""
    for module in ("pyomo.environ", "cyipopt", "pyscipopt"):
        try:
            __import__(module)
        except ImportError:
            pass
    tiny = instance("cleveland", 2, 10, data_dir)
    for method in ("alpha-start", "ls*", "acso*"):
        solve(tiny, method)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="the slice d=2 at m in {10,50,100} and d in {3,5} at m in {10,50} (28 rows)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per run and method (default 30 with --quick, else 60)")
    ap.add_argument("--methods", nargs="+", default=METHODS, help="methods of part 1")
    ap.add_argument("--no-ratio", action="store_true", help="skip part 2 (native vs Pyomo route)")
    ap.add_argument("--mem-mb", type=int, default=6000, help="address-space cap of each run (MB)")
    ap.add_argument("--results", default=str(RESULTS), help="JSON-lines file of the runs (appended, resumed)")
    add_io_args(ap)
    args = ap.parse_args(argv)
    args.time_limit = args.time_limit or (30.0 if args.quick else 60.0)
    cmd = command("bench_solvers.py", argv)
    cases = QUICK if args.quick else FULL
    started, load0, t0 = datetime.datetime.now(datetime.timezone.utc), os.getloadavg(), time.perf_counter()
    warm_up(args.data_dir)
    run_grid(args, cases, args.methods)
    if not args.no_ratio:
        run_ratios(args)
    rows = read_records(args.results, row_key)
    grid_rows = [r for r in rows if r.get("part") == "grid" and r["time_limit"] == args.time_limit
                 and (r["dataset"], r["d"], r["m"]) in set(cases) and r["method"] in args.methods]
    ratio_rows = [r for r in rows if r.get("part") == "ratio" and r["time_limit"] == args.time_limit]
    load1, elapsed = os.getloadavg(), time.perf_counter() - t0
    loads = [r["load_1min"] for r in grid_rows] or [load0[0]]
    slice_text = ("the --quick slice: all four datasets, d = 2 at m in {10, 50, 100}, d in {3, 5} at m in "
                  "{10, 50}" if args.quick else "the full grid: 4 datasets x d in {2, 3, 5} x m in {10, ..., 200}")
    head = ["## General solvers vs LS*/ACSO* on reduced instances (bench_solvers.py)", "",
            f"Command: `{cmd}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC; this invocation "
            f"took {elapsed:.0f} s (runs already in results/solvers.jsonl are not repeated; the table's runs "
            f"took {sum(r.get('wall_s') or 0 for r in grid_rows):.0f} s in all). Full grid: "
            f"`python benchmarks/bench_solvers.py --time-limit {args.time_limit:g}` (60 rows).",
            f"Machine: {machine()}, shared with other jobs: 1-min load average at the start of the table's runs "
            f"{min(loads):.1f} to {max(loads):.1f} (median {statistics.median(loads):.1f}; this invocation: "
            f"{load0[0]:.1f} at start, {load1[0]:.1f} at end). Wall times.", "",
            f"Slice run: {slice_text}. Paper sense (min f), C = {C:g}, gamma = {GAMMA:g}, c = 1, B = floor(n/2) "
            f"(not stated in the appendix), m samples drawn stratified with seed 0. Time limit {args.time_limit:g} s "
            "per run for every method; each method's time includes computing the alpha-start it starts from. "
            "SCIP runs without its LS* plugin; BLAS on one thread in every run (see part 2 for why); each run in "
            f"its own process capped at {args.mem_mb} MB of address space.", "",
            "Cell: polished objective f (wall time, notes); bold = the best of our methods on the row; `opt` = "
            "certified globally optimal; `TL` = stopped at the time limit; `gap` = (f - bound)/|f| of a global "
            "solver; `size limit` = the GAMS demo licence refuses the model (the adapter's reason); `memory "
            "limit` = the solver ran out of the address-space cap. Paper columns: the appendix's numbers for "
            "the same (dataset, d, m): Baron objective with its MIP gap at 3600 s, the others objective "
            "(time, s, cumulative over five starts on an Apple M1). Our samples and B are not the paper's, so "
            "the values differ between the two sides; the ranking within each side is what compares.", ""]
    text = head + grid_section(grid_rows, cases, args.methods, args.time_limit)
    if ratio_rows:
        text += ["", "### Native cyipopt adapter vs the Pyomo route on the same relaxation", "",
                 "Same instance, same start subset (the alpha-start), relaxation beta in [0, 1] then top-B "
                 "rounding and polish; time = the whole `solve()` call, min of 2 runs done alternately in one "
                 "process after a warm-up call of each. Native: `ipopt` (cyipopt with our numpy callbacks, exact "
                 "Hessian), BLAS on one thread; Pyomo route: `ipopt-pyomo` (Pyomo model written to GAMS, solved "
                 "by GAMS/IPOPT). The last two columns run the native adapter with numpy's default BLAS threads, "
                 "as a user calling it without threadpool limits would.", ""]
        text += ratio_section(ratio_rows)
    write_section(args.output, "bench_solvers", "\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
