"""Branch-and-bound (``bnb``) against enumeration, side by side in one run, and certificates (issue 12).

(a) Same instances, both methods one after the other in this process (enumeration with n_jobs = 1,
    bnb with its default incumbent, included in its time and QP count: the alpha-start (2 QPs), or LS* in the
    paper sense above 100,000 subsets):
    dataset, kernel, sense, B, C(n, B), optimum agreement, wall times, QPs (SVM solves), bnb nodes,
    and the ratios. The
    instances enumerate in seconds to a couple of minutes (B from n/4 to n/2 where C(n, B) allows).
(b) bnb alone where enumeration is out of reach here (the paper's B_max), with a time limit: status,
    bound and gap, QPs against C(n, B).
(c) bnb's incumbent: none, the alpha-start (the default) or LS*, on the largest instances of (a).
(e) bnb at the paper's B_max (Parkinsons 11, German 9, BCD 12, Ionosphere 10, Sonar 6), every polynomial
    kernel, both senses, with a time limit: status, gap, time, QPs (the certified grid's target).
(d) One certificate per dataset: ``minlp-fs certify --method bnb --certificate FILE``, then
    ``minlp-fs verify FILE`` in a separate process, with 1 and 2 worker processes (every bound
    recomputed: weak duality and feasible alphas without a QP, libsvm where those do not close);
    file size, times, the bounds checked without a QP, the solves, the verdict and its tolerance.
(f) Parallel bnb: ``--jobs 1`` (the sequential search) against ``--jobs 2`` (subtrees in loky worker
    processes), back to back: wall time, nodes, QPs, same optimum.
(d) and (f) run alone with ``--certificates`` and write their own section (bench_bnb_certificates).
``--gaussian``: (a), (e) and (d) for the Gaussian kernel's fit sense (its chord bounds), in section bench_bnb_gaussian.

Wall times on a shared 2-core machine: compare the ratios of a row, measured back to back. Usage:

    python benchmarks/bench_bnb.py [--quick] [--certificates | --gaussian] [--data-dir ../shared/datasets] [--output benchmarks/RESULTS.md]
    python benchmarks/bench_bnb.py --bmax-limit SECONDS [--jobs N]     # only (e), longer limits, own section
    python benchmarks/bench_bnb.py --only cleveland:poly3:paper:6 [...]                     # chosen rows of (a), printed only
    python benchmarks/bench_bnb.py --bmax-limit SECONDS --only german:poly3:paper:9 [...]   # chosen rows of (e), printed only
    python benchmarks/bench_bnb.py --only ... [--bmax-limit SECONDS] [--repeat N] --section NAME
        # the chosen rows written to section NAME (with CPU seconds; --repeat: of N runs of (a), the one of
        # median CPU ratio), beside the rows of the same instances recorded in bench_bnb and bench_bnb_bmax
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minlp_fs.api import build_instance, solve

from _common import add_io_args, command, machine, timed_section, write_section

#: (dataset, B) for part (a): every polynomial kernel, both senses
SIDE_BY_SIDE = [("wholesale", 3), ("diabetes", 4), ("bcw", 4), ("cleveland", 6), ("parkinsons", 6)]
#: Gaussian kernel rows of part (a), for certify --method auto's choice
RBF_CASES = [("diabetes", 4), ("cleveland", 6)]
#: (dataset, kernel, sense, B) for part (b), each with BEYOND_LIMIT seconds
BEYOND = [("parkinsons", "poly3", "paper", 11), ("parkinsons", "poly3", "fit", 11), ("parkinsons", "poly2", "fit", 11),
          ("ionosphere", "poly2", "fit", 5), ("sonar", "poly2", "fit", 4), ("german", "poly2", "fit", 5)]
BEYOND_LIMIT = 60.0
#: (dataset, kernel, sense, B) for part (c)
INCUMBENT_CASES = [("cleveland", "poly2", "paper", 6), ("cleveland", "poly2", "fit", 6),
                   ("parkinsons", "poly3", "paper", 6), ("parkinsons", "poly3", "fit", 6)]
#: (dataset, kernel, sense, B) for part (d): one certificate per dataset
CERTIFICATES = [("wholesale", "poly2", "fit", 3), ("diabetes", "poly3", "fit", 4), ("bcw", "poly2", "fit", 4),
                ("cleveland", "poly3", "paper", 6), ("parkinsons", "poly3", "paper", 6),
                ("german", "poly2", "fit", 3), ("bcd", "poly2", "fit", 4), ("ionosphere", "poly2", "fit", 4),
                ("sonar", "poly2", "fit", 3)]
#: the paper's B_max per dataset (Table cert-coverage) for part (e), each run with PAPER_BMAX_LIMIT seconds
PAPER_BMAX = [("parkinsons", 11), ("german", 9), ("bcd", 12), ("ionosphere", 10), ("sonar", 6)]
PAPER_BMAX_LIMIT = 20.0
#: (dataset, B) of the Gaussian kernel's fit sense (``--gaussian``): bnb (the chord bounds) against enumeration
GAUSSIAN_FIT = [("diabetes", 4), ("cleveland", 6), ("parkinsons", 6), ("german", 3), ("bcd", 4), ("ionosphere", 4),
                ("sonar", 3)]
#: ``--gaussian``: the paper's B_max (each run with GAUSSIAN_BMAX_LIMIT seconds) and one certificate per dataset
GAUSSIAN_BMAX_LIMIT = 60.0
GAUSSIAN_CERTIFICATES = [("cleveland", "rbf", "fit", 6), ("parkinsons", "rbf", "fit", 11), ("german", "rbf", "fit", 3),
                         ("bcd", "rbf", "fit", 12), ("ionosphere", "rbf", "fit", 5), ("sonar", "rbf", "fit", 3)]
#: (dataset, kernel, sense, B) for part (f): bnb with --jobs 1 and 2
PARALLEL_CASES = [("parkinsons", "poly3", "paper", 6), ("ionosphere", "poly2", "fit", 4), ("sonar", "poly2", "fit", 3)]
REPO = Path(__file__).resolve().parent.parent


def timed(inst, method, cpu=None, **options):
    """(result, wall seconds); ``cpu``: a list that receives the process's CPU seconds (all threads)."""
    t, c = time.perf_counter(), time.process_time()
    res = solve(inst, method, **options)
    if cpu is not None:
        cpu.append(time.process_time() - c)
    return res, time.perf_counter() - t


def cpu_timed(inst, method, **options):
    """(result, wall s, CPU s of this process and of bnb's workers)."""
    c = time.process_time()
    res, t = timed(inst, method, **options)
    return res, t, time.process_time() - c + res.info.get("parallel", {}).get("worker_cpu_s", 0.0)


def warm_up(data_dir):
    """Load numba's compiled functions once, so that the first row's times are not compile times (bnb's incumbent
    heuristic included: LS* in the paper sense of large instances)."""
    inst = build_instance("wholesale", data_dir=data_dir, kernel="poly2", sense="fit", B=2)
    solve(inst, "enumerate")
    solve(inst, "bnb")
    for kernel in ("poly2", "poly3", "poly5"):
        solve(build_instance("wholesale", data_dir=data_dir, kernel=kernel, sense="paper", B=3), "bnb", incumbent="ls*")


def summary(rows, least=1000):
    """One line: QP, time and CPU ratios over the rows with C(n,B) >= ``least`` (columns 10, 13 and 17)."""
    cells = [r.split(" | ") for r in rows[2:]]
    big = [c for c in cells if int(c[5].replace(",", "")) >= least]
    if not big:
        return ""
    qp = sorted(float(c[12].rstrip("x")) for c in big)
    tm = sorted(float(c[9].rstrip("x")) for c in big)
    cp = sorted(float(c[16].rstrip("x |")) for c in big)
    return (f"Rows with C(n,B) >= {least:,} ({len(big)}): QP ratio {qp[0]:.1f}x to {qp[-1]:.1f}x (median "
            f"{qp[len(qp) // 2]:.1f}x), time ratio {tm[0]:.1f}x to {tm[-1]:.1f}x (median {tm[len(tm) // 2]:.1f}x), "
            f"CPU ratio {cp[0]:.1f}x to {cp[-1]:.1f}x (median {cp[len(cp) // 2]:.1f}x).")


def side_by_side(data_dir, cases, kernels, units=None):
    """Part (a) over (dataset, B) x kernels x both senses, or only ``units`` (dataset, B, kernel, sense)."""
    if units is None:
        units = [(ds, B, kernel, sense) for ds, B in cases for kernel in kernels for sense in ("paper", "fit")]
    rows = ["| dataset | n | kernel | sense | B | C(n,B) | same optimum | enum time (s) | bnb time (s) | "
            "time ratio | enum QPs | bnb QPs (heuristic + tree) | QP ratio | bnb nodes | enum CPU (s) | bnb CPU (s) | "
            "CPU ratio |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds, B, kernel, sense in units:
        inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
        cpu = []
        enum, t_e = timed(inst, "enumerate", cpu)
        bnb, t_b = timed(inst, "bnb", cpu)
        same = abs(enum.objective - bnb.objective) <= 1e-6 * max(1.0, abs(enum.objective))
        q_b = bnb.n_svm_solves
        rows.append(f"| {ds} | {inst.n} | {kernel} | {sense} | {B} | {math.comb(inst.n, B):,} | "
                    f"{'yes' if same and bnb.certified else 'NO'} | {t_e:.2f} | {t_b:.2f} | {t_e / t_b:.1f}x | "
                    f"{enum.n_svm_solves:,} | {q_b:,} ({bnb.info['heuristic_svm_solves']:,} + "
                    f"{bnb.info['qps']:,}) | {enum.n_svm_solves / q_b:.1f}x | {bnb.info['nodes']:,} | "
                    f"{cpu[0]:.2f} | {cpu[1]:.2f} | {cpu[0] / cpu[1]:.1f}x |")
        print(rows[-1], flush=True)
    return rows


def beyond(data_dir, cases, limit):
    rows = ["| dataset | n | kernel | sense | B | C(n,B) | status | objective | bound | gap % | time (s) | "
            "bnb QPs | QPs / C(n,B) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds, kernel, sense, B in cases:
        inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
        res, t = timed(inst, "bnb", time_limit=limit)
        total = math.comb(inst.n, B)
        bound = "–" if res.bound is None else f"{res.bound:.6f}"
        rows.append(f"| {ds} | {inst.n} | {kernel} | {sense} | {B} | {total:,} | {res.status} | {res.objective:.6f} | "
                    f"{bound} | {res.info['gap_percent']:.2g} | {t:.1f} | {res.n_svm_solves:,} | "
                    f"{res.n_svm_solves / total:.1e} |")
        print(rows[-1], flush=True)
    return rows


def _bmax_row(data_dir, ds, B, kernel, sense, limit, cpu: bool = False, gap_tol: float | None = None) -> str:
    """One row of part (e); with ``gap_tol``, bnb stops at that relative gap and the row starts with it."""
    inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
    c = time.process_time()
    res, t = timed(inst, "bnb", time_limit=limit, gap_tol=gap_tol or 0.0)
    row = (f"| {ds} | {inst.n} | {kernel} | {sense} | {B} | {math.comb(inst.n, B):,} | "
           + (f"{gap_tol:g} | {res.objective:.6f} | {res.bound:.6f} | " if gap_tol is not None else "")
           + f"{res.status} | {res.info['gap_percent']:.2g} | {t:.1f} | {res.n_svm_solves:,} | {res.info['nodes']:,} |"
           + (f" {time.process_time() - c:.1f} |" if cpu else ""))
    print(row, flush=True)
    return row


def only_spec(text: str) -> tuple:
    """``dataset:kernel:sense:B`` of ``--only`` as (dataset, B, kernel, sense), part (e)'s unit."""
    parts = text.split(":")
    if len(parts) != 4 or parts[2] not in ("paper", "fit") or not parts[3].isdigit():
        raise argparse.ArgumentTypeError(f"expected dataset:kernel:sense:B (e.g. german:poly3:paper:9), got {text!r}")
    return parts[0], int(parts[3]), parts[1], parts[2]


def at_paper_bmax(data_dir, cases, limit, jobs: int = 1, units=None, cpu: bool = False):
    """Part (e): bnb at each dataset's B_max, every polynomial kernel, both senses; ``jobs`` runs at a time
    (each a sequential bnb in its own loky process), rows in the order of the cases; ``units``: only these
    (dataset, B, kernel, sense) instead; ``cpu``: with a column of each run's CPU seconds."""
    from joblib import Parallel, delayed

    if units is None:
        units = [(ds, B, kernel, sense) for ds, B in cases for kernel in ("poly2", "poly3", "poly5")
                 for sense in ("paper", "fit")]
    rows = Parallel(n_jobs=jobs)(delayed(_bmax_row)(data_dir, *u, limit, cpu) for u in units)
    return ["| dataset | n | kernel | sense | B | C(n,B) | status | gap % | time (s) | QPs | nodes |"
            + (" CPU (s) |" if cpu else ""),
            "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if cpu else ""), *rows]


def gap_section(args) -> None:
    """``--gap-tols`` with ``--only`` and ``--bmax-limit``: each chosen row at each relative gap, in ``--section``."""
    from joblib import Parallel, delayed

    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    warm_up(args.data_dir)
    rows = Parallel(n_jobs=args.jobs)(delayed(_bmax_row)(args.data_dir, *u, args.bmax_limit, True, g)
                                      for u in args.only for g in args.gap_tols)
    text = "\n".join([
        f"## bnb with a relative optimality gap (`gap_tol`), {args.bmax_limit:.0f} s per run (bench_bnb.py --gap-tols)", "",
        f"Command: `{command('bench_bnb.py')}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
        f"total {time.perf_counter() - t0:.0f} s, {args.jobs} run(s) at a time (each n_jobs = 1).",
        f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {os.getloadavg()[0]:.1f}. "
        "C = 10, gamma = 0.1, c = 1 (the paper's); time = wall time of each run. A run that ends `optimal` is certified "
        "within `gap %` (incumbent against the proven bound); gap_tol 0 is the exact search.", "",
        "| dataset | n | kernel | sense | B | C(n,B) | gap_tol | incumbent | bound | status | gap % | time (s) | QPs | "
        "nodes | CPU (s) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows])
    write_section(args.output, args.section, text)
    print(f"wrote {args.output}")


def recorded_rows(output: str, units) -> list:
    """The rows of ``units`` (dataset, B, kernel, sense) recorded in sections bench_bnb and bench_bnb_bmax of
    ``output`` (the figures a run is compared with), each prefixed by its section's name."""
    text = Path(output).read_text() if Path(output).exists() else ""
    found = []
    for name in ("bench_bnb", "bench_bnb_bmax"):
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        if start not in text:
            continue
        section = text.split(start, 1)[1].split(end, 1)[0]
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) > 5 and any((cells[0], cells[2], cells[3], cells[4]) == (ds, kernel, sense, str(B))
                                      for ds, B, kernel, sense in units):
                found.append(f"{name}: {line.strip()}")
    return found


def only_section(args) -> None:
    """The chosen rows (``--only``) in section ``--section``: bnb alone with ``--bmax-limit`` (with CPU seconds),
    else side by side with enumeration (of ``--repeat`` runs, the one of median CPU ratio); then the rows of the
    same instances recorded in bench_bnb and bench_bnb_bmax."""
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    before = recorded_rows(args.output, args.only)
    warm_up(args.data_dir)
    if args.bmax_limit is not None:
        rows = at_paper_bmax(args.data_dir, PAPER_BMAX, args.bmax_limit, args.jobs, args.only, cpu=True)
        what = f"bnb alone, {args.bmax_limit:.0f} s per run, {args.jobs} run(s) at a time (each n_jobs = 1)"
    else:
        rows = side_by_side(args.data_dir, None, None, [])
        for unit in args.only:
            runs = [side_by_side(args.data_dir, None, None, [unit])[2] for _ in range(args.repeat)]
            rows.append(sorted(runs, key=lambda r: float(r.split(" | ")[16].rstrip("x |")))[len(runs) // 2])
        what = ("bnb and enumeration back to back, as in part (a)"
                + (f"; of {args.repeat} such runs, the one of median CPU ratio" if args.repeat > 1 else ""))
    text = "\n".join([
        f"## Chosen rows of bench_bnb.py ({what})", "",
        f"Command: `{command('bench_bnb.py')}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
        f"total {time.perf_counter() - t0:.0f} s.",
        f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {os.getloadavg()[0]:.1f}. "
        "C = 10, gamma = 0.1, c = 1 (the paper's); time = wall time of each run.", "", *rows, "",
        *([summary(rows), ""] if args.bmax_limit is None else []),
        "The same instances as recorded before this run (section: row):", "", *(f"    {r}" for r in before)])
    write_section(args.output, args.section, text)
    print(f"wrote {args.output}")


def incumbents(data_dir, cases):
    rows = ["| dataset | kernel | sense | B | incumbent | time (s) | heuristic QPs | tree QPs | nodes |",
            "|---|---|---|---|---|---|---|---|---|"]
    for ds, kernel, sense, B in cases:
        inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
        for heuristic in ("none", "alpha-start", "ls*"):
            res, t = timed(inst, "bnb", incumbent=heuristic)
            rows.append(f"| {ds} | {kernel} | {sense} | {B} | {heuristic} | {t:.2f} | "
                        f"{res.info['heuristic_svm_solves']:,} | {res.info['qps']:,} | {res.info['nodes']:,} |")
            print(rows[-1], flush=True)
    return rows


def cli(*args):
    """``minlp-fs ARGS`` in a fresh process of this interpreter (this checkout's package)."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "minlp_fs.cli", *args], capture_output=True, text=True, cwd=REPO)
    return proc, time.perf_counter() - t


def certificates(data_dir, cases, folder):
    rows = ["| dataset | kernel | sense | B | objective | certify time (s) | certificate (kB) | nodes recorded | "
            "verify time (s), 1 job | verify time (s), 2 jobs | bounds without a QP | solves | verify exit status | "
            "verdict (tolerance) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds, kernel, sense, B in cases:
        path = Path(folder) / f"{ds}-{kernel}-{sense}-B{B}.json"
        proc, t_c = cli("certify", "--method", "bnb", "--dataset", ds, "--data-dir", data_dir, "--kernel", kernel,
                        "--sense", sense, "--B", str(B), "--certificate", str(path), "--no-progress", "--json")
        if proc.returncode != 0:
            raise RuntimeError(f"certify failed for {ds}: {proc.stderr}")
        res = json.loads(proc.stdout)
        nodes = len(json.loads(path.read_text())["nodes"])
        check, t_v = cli("verify", str(path), "--json")
        check2, t_v2 = cli("verify", str(path), "--json", "--jobs", "2")
        verdict, verdict2 = json.loads(check.stdout), json.loads(check2.stdout)
        same = verdict2["proven"] == verdict["proven"]
        rows.append(f"| {ds} | {kernel} | {sense} | {B} | {res['objective']:.6f} | {t_c:.1f} | "
                    f"{path.stat().st_size / 1024:.0f} | {nodes:,} | {t_v:.1f} | {t_v2:.1f}{'' if same else ' (other verdict!)'} | "
                    f"{verdict['n_cheap']:,} | {verdict['n_qps']:,} | {check.returncode} | "
                    + (f"proven ({verdict['tolerance']:.2g})" if verdict['proven'] else 'NOT proven: ' + verdict['reason'])
                    + " |")
        print(rows[-1], flush=True)
    return rows


def parallel_runs(data_dir, cases):
    rows = ["| dataset | kernel | sense | B | C(n,B) | same optimum | time (s), 1 job | time (s), 2 jobs | time ratio | "
            "CPU (s), 1 job | CPU (s), 2 jobs (main + workers) | nodes, 1 job | nodes, 2 jobs | QPs, 1 job | "
            "QPs, 2 jobs | worker tasks / waves |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds, kernel, sense, B in cases:
        inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
        one, t1, c1 = cpu_timed(inst, "bnb")
        two, t2, c2 = cpu_timed(inst, "bnb", n_jobs=2)
        same = one.features == two.features and abs(one.objective - two.objective) <= 1e-6 * max(1.0, abs(one.objective))
        par = two.info["parallel"]
        rows.append(f"| {ds} | {kernel} | {sense} | {B} | {math.comb(inst.n, B):,} | {'yes' if same else 'NO'} | "
                    f"{t1:.1f} | {t2:.1f} | {t1 / t2:.2f}x | {c1:.1f} | {c2:.1f} | {one.info['nodes']:,} | {two.info['nodes']:,} | "
                    f"{one.info['qps']:,} | {two.info['qps']:,} | {par['tasks']} / {par['waves']} |")
        print(rows[-1], flush=True)
    return rows


def gaussian_section(args, folder) -> tuple:
    """The Gaussian kernel's fit sense (the chord bounds of minlp_fs.exact.chords), in its own section:
    bnb against enumeration, bnb at the paper's B_max, and certificates."""
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    warm_up(args.data_dir)
    solve(build_instance("wholesale", data_dir=args.data_dir, kernel="rbf", sense="fit", B=2), "bnb")
    side = side_by_side(args.data_dir, None, None, [(ds, B, "rbf", "fit") for ds, B in GAUSSIAN_FIT])
    bmax = at_paper_bmax(args.data_dir, None, GAUSSIAN_BMAX_LIMIT, units=[(ds, B, "rbf", "fit") for ds, B in PAPER_BMAX])
    out = ["### (a) bnb vs enumeration, Gaussian kernel, fit sense, back to back (wall time, n_jobs = 1)", "",
           *side, "", summary(side), "",
           f"### (e) bnb at the paper's B_max, Gaussian kernel, fit sense (time limit {GAUSSIAN_BMAX_LIMIT:.0f} s per run)",
           "", *bmax, "",
           "### (d) Certificates: `minlp-fs certify --method bnb --certificate FILE`, then `minlp-fs verify FILE "
           "[--jobs 2]` (separate processes)", "", *certificates(args.data_dir, GAUSSIAN_CERTIFICATES, folder)]
    return timed_section("## Branch-and-bound, the Gaussian kernel's fit sense: chord bounds (bench_bnb.py --gaussian)",
                         "bench_bnb.py", started, t0, load0,
                         "C = 10, gamma = 0.1 (the paper's). bnb bounds a fit-sense node's children by the chords of "
                         "`minlp_fs/exact/chords.py` at the relaxed alpha (one QP per node, no QP of I u F); before, it "
                         "solved every leaf. QPs as in bench_bnb.", out)


def certificates_section(args, folder, quick):
    """Parts (d) and (f) alone, in their own section."""
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    out = ["### (d) One certificate per dataset: `minlp-fs certify --method bnb --certificate FILE`, "
           "then `minlp-fs verify FILE [--jobs 2]` (separate processes)", "",
           *certificates(args.data_dir, CERTIFICATES[:2] if quick else CERTIFICATES, folder), "",
           "### (f) Parallel bnb: `--jobs 1` (sequential search) vs `--jobs 2` (subtrees in 2 loky worker "
           "processes, including their start), back to back in this process; CPU = process time of this process "
           "plus that of the workers' tasks: a CPU total near the sequential one, split over 2 workers, is what "
           "2 free cores would turn into a wall-time gain; the wall time depends on the cores the machine's load leaves", "",
           *parallel_runs(args.data_dir, PARALLEL_CASES[:1] if quick else PARALLEL_CASES)]
    return timed_section("## Branch-and-bound certificates and parallel bnb (bench_bnb.py --certificates)", "bench_bnb.py",
                         started, t0, load0,
                         "C = 10, gamma = 0.1, c = 1 (the paper's). verify's verdict: no subset beats the claimed value "
                         "by more than the tolerance shown, 1e-6 x max(1, |value|); solves = the verifier's SVM solves "
                         "(libsvm, then the package's SMO at 1e-10 where libsvm's duality gap is too wide).", out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_io_args(p)
    p.add_argument("--quick", action="store_true", help="two small datasets, poly2, no part (b)")
    p.add_argument("--cert-dir", default=None, help="folder for the certificates (default: a temporary one)")
    p.add_argument("--certificates", action="store_true", help="only parts (d) and (f), in their own section")
    p.add_argument("--gaussian", action="store_true",
                   help="only the Gaussian kernel's fit sense: (a), (e) and (d), in their own section (bench_bnb_gaussian)")
    p.add_argument("--bmax-limit", type=float, default=None,
                   help="only part (e), with this time limit per run, in its own section (bench_bnb_bmax)")
    p.add_argument("--jobs", type=int, default=1, help="with --bmax-limit: runs at a time (one process each)")
    p.add_argument("--only", type=only_spec, nargs="+", action="extend", default=None, metavar="DATASET:KERNEL:SENSE:B",
                   help="only these rows of part (a), or of part (e) with --bmax-limit, printed (no section written)")
    p.add_argument("--section", default=None, help="with --only: write the rows to this RESULTS.md section")
    p.add_argument("--repeat", type=int, default=1, help="with --only and --section, without --bmax-limit: runs per row")
    p.add_argument("--gap-tols", type=float, nargs="+", default=None,
                   help="with --only, --bmax-limit and --section: run each row at each of these relative gaps (bnb gap_tol)")
    args = p.parse_args()
    if args.gap_tols is not None:
        if args.only is None or args.bmax_limit is None or args.section is None:
            p.error("--gap-tols needs --only, --bmax-limit and --section")
        gap_section(args)
        return
    if args.only is not None and args.section is not None:
        only_section(args)
        return
    if args.only is not None:
        load0 = os.getloadavg()
        print(f"load average (1 min) at start {load0[0]:.1f}", flush=True)
        if args.bmax_limit is None:
            warm_up(args.data_dir)
            side_by_side(args.data_dir, None, None, args.only)
        else:
            at_paper_bmax(args.data_dir, PAPER_BMAX, args.bmax_limit, args.jobs, args.only)
        print(f"load average (1 min) at end {os.getloadavg()[0]:.1f}")
        return
    if args.bmax_limit is not None:
        started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
        rows = at_paper_bmax(args.data_dir, PAPER_BMAX, args.bmax_limit, args.jobs)
        closed = sum("| optimal |" in r for r in rows[2:])
        text = "\n".join([
            f"## Branch-and-bound at the paper's B_max, {args.bmax_limit:.0f} s per run (bench_bnb.py --bmax-limit)", "",
            f"Command: `{command('bench_bnb.py')}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
            f"total {time.perf_counter() - t0:.0f} s, {args.jobs} run(s) at a time (each a sequential bnb, n_jobs = 1).",
            f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {os.getloadavg()[0]:.1f}. "
            "C = 10, gamma = 0.1, c = 1 (the paper's); time = wall time of each run.", "",
            f"Certified optimal: {closed} of {len(rows) - 2} (dataset, kernel, sense) at the paper's B_max "
            "(Table cert-coverage: Parkinsons 11, German 9, BCD 12, Ionosphere 10, Sonar 6).", "", *rows])
        write_section(args.output, "bench_bnb_bmax", text)
        print(f"wrote {args.output}")
        return
    if args.gaussian:
        with tempfile.TemporaryDirectory() as tmp:
            elapsed, text = gaussian_section(args, args.cert_dir or tmp)
        write_section(args.output, "bench_bnb_gaussian", text)
        print(f"wrote {args.output} in {elapsed:.0f} s")
        return
    if args.certificates:
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.cert_dir or tmp
            Path(folder).mkdir(parents=True, exist_ok=True)
            elapsed, text = certificates_section(args, folder, args.quick)
        write_section(args.output, "bench_bnb_certificates" + ("_quick" if args.quick else ""), text)
        print(f"wrote {args.output} in {elapsed:.0f} s")
        return
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    cmd = command("bench_bnb.py")
    quick = args.quick
    kernels = ("poly2",) if quick else ("poly2", "poly3", "poly5")
    warm_up(args.data_dir)
    poly = side_by_side(args.data_dir, SIDE_BY_SIDE[:2] if quick else SIDE_BY_SIDE, kernels)
    out = ["### (a) bnb vs enumeration, same instances, back to back (wall time, n_jobs = 1)", "",
           *poly, "", summary(poly), "",
           "Gaussian kernel (paper sense: no bound but the trivial one, bnb enumerates the leaves without "
           "enumeration's revolving door, and `certify --method auto` uses enumeration; fit sense: the chord bounds, "
           "more rows in bench_bnb_gaussian):", "",
           *side_by_side(args.data_dir, RBF_CASES[:1] if quick else RBF_CASES, ("rbf",))]
    if not quick:
        out += ["", f"### (b) bnb where enumeration is out of reach here (time limit {BEYOND_LIMIT:.0f} s per run)", "",
                *beyond(args.data_dir, BEYOND, BEYOND_LIMIT)]
        out += ["", "### (c) bnb's incumbent heuristic (`incumbent=`): none, alpha-start (the default `auto`'s choice "
                "below 100,000 subsets), LS*", "",
                *incumbents(args.data_dir, INCUMBENT_CASES)]
        out += ["", f"### (e) bnb at the paper's B_max, every polynomial kernel, both senses (time limit "
                f"{PAPER_BMAX_LIMIT:.0f} s per run)", "", *at_paper_bmax(args.data_dir, PAPER_BMAX, PAPER_BMAX_LIMIT)]
    out += ["", "(d) certificates and (f) parallel bnb: section bench_bnb_certificates (`--certificates`)."]
    elapsed, load1 = time.perf_counter() - t0, os.getloadavg()
    head = ["## Branch-and-bound certification (bench_bnb.py)", "",
            f"Command: `{cmd}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, total {elapsed:.0f} s.",
            f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {load1[0]:.1f}. "
            "C = 10, gamma = 0.1, c = 1 (the paper's). QPs = SVM dual solves, including those stopped early "
            "once proven worse than the incumbent (enumeration's and bnb's alike).", ""]
    write_section(args.output, "bench_bnb" + ("_quick" if quick else ""), "\n".join(head + out))
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
