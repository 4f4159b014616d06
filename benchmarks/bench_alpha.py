"""Alpha-subproblem and enumeration speed, side by side in one run (appendix app:cert's procedure).

(a) Time of one alpha-subproblem (SVM dual (2) at fixed beta) on each of the nine datasets, poly2
    and rbf (German, m = 1000: poly3 and poly5 too), B = max(1, round(0.3 n)), over a few random
    subsets: libsvm cold, our SMO cold, and our SMO warm-started from the optimal alpha of a swap
    neighbour (one feature out, one in). Our SMO runs as ``AlphaSubproblem`` runs it: over the groups
    of duplicate rows when they pay (``AlphaSubproblem.groups``, whose time is included).
(b) Enumeration throughput (subsets per second) over the same ranks of the revolving-door order:
    swap-updated kernel + warm SMO with early stops (what ``Enumeration`` does: on the polynomial kernels its
    opened walk, alpha/opening.py), the two intermediates, rebuilding
    every kernel + cold libsvm on the precomputed Gram, and libsvm computing the kernel itself
    (``SVC(kernel="poly"|"rbf")`` on the selected columns: the paper's procedure). The variants
    run round-robin in blocks of subsets, so machine load affects them alike.
(c) Certified optima of cleveland poly2 B=3 in both senses with ``Enumeration``.

Times are CPU seconds of this single-threaded process (BLAS limited to one thread; libsvm and the
numba SMO are single-threaded), so other jobs on the machine distort them less than wall time.
Every value is recomputed by ``dual_objective``; the variants' optima over the same ranks must
agree (column "max rel. diff."). Usage:

    python benchmarks/bench_alpha.py [--quick] [--data-dir ../shared/datasets] [--output benchmarks/RESULTS.md]
    python benchmarks/bench_alpha.py --german N   # part (a) on German only, N subsets per kernel (section bench_alpha_german)

German's solves are heavy-tailed (10^3 to 10^6 SMO steps, depending on the subset), so ``--german`` also
reports the mean over its subsets, the total time of each solver being what a heuristic pays.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import time

import numpy as np
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from minlp_fs.alpha import DEFAULT_TOL, AlphaSubproblem, libsvm_solve, smo_solve
from minlp_fs.datasets import PAPER_DATASETS, load_dataset
from minlp_fs.instance import make_instance
from minlp_fs.objective import dual_objective
from minlp_fs.alpha.opening import Opening
from minlp_fs.solvers.enumeration import REBUILD_EVERY, Enumeration, gram_walk
from minlp_fs.solvers.opened_walk import opened_fits
from minlp_fs.solvers.revolving_door import revolving_door

from _common import add_io_args, command, machine, write_section

#: (dataset, kernel, B) for part (b)
THROUGHPUT_CASES = [("wholesale", "rbf", 3), ("diabetes", "poly2", 4), ("cleveland", "poly2", 3),
                    ("parkinsons", "rbf", 11), ("german", "poly2", 9), ("ionosphere", "poly3", 10),
                    ("sonar", "poly2", 6)]
VARIANTS = {  # name -> (kernel update, solver, early stop); the first is what Enumeration does
    "swap + warm SMO + early stop": ("swap", "smo", True),
    "swap + warm SMO": ("swap", "smo", False),
    "swap + cold libsvm": ("swap", "libsvm", False),
    "rebuild + warm SMO": ("rebuild", "smo", False),
    "rebuild + cold libsvm": ("rebuild", "libsvm", False),
    "libsvm native kernel": ("native", "libsvm", False),
}


def timed(fn, reps, enough=0.5):
    """(min CPU time over up to ``reps`` runs, last result); one run when it takes ``enough`` s or more."""
    best, out = np.inf, None
    for _ in range(reps):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
        if best >= enough:
            break
    return best, out


def per_solve_row(inst, n_subsets, reps, rng):
    """Median ms of libsvm cold / SMO cold / SMO warm from a swap neighbour, and the largest value gap."""
    times, gap, _ = per_solve_times(inst, n_subsets, reps, rng)
    return {k: float(np.median(v)) for k, v in times.items()}, gap


def per_solve_times(inst, n_subsets, reps, rng, steps=False):
    """The ms of libsvm cold / SMO cold / SMO warm from a swap neighbour per subset, the largest value gap, and per
    subset whether SMO ran over duplicate-row groups and its warm steps; with ``steps`` also libsvm's iterations
    (``n_iter_`` of one more, untimed, fit of the same problem)."""
    times, gap = {"libsvm": [], "smo": [], "warm": []}, 0.0
    info = {"grouped": [], "warm_steps": [], "libsvm_steps": []}
    y, C = inst.y, inst.C
    oracle = AlphaSubproblem(inst)
    for _ in range(n_subsets):
        S = sorted(rng.choice(inst.n, inst.B, replace=False))
        if inst.B < inst.n:
            out, inn = rng.choice(S), rng.choice(sorted(set(range(inst.n)) - set(S)))
            neighbour = sorted(set(S) - {out} | {inn})
        else:
            neighbour = S
        alpha0 = smo_solve(inst.gram(neighbour), y, C, tol=DEFAULT_TOL).alpha
        K = inst.gram(S)
        t_lib, a_lib = timed(lambda: libsvm_solve(K, y, C, tol=DEFAULT_TOL), reps)
        key = tuple(int(j) for j in S)
        groups = oracle.groups(key)
        t_smo, a_smo = timed(lambda: smo_solve(K, y, C, tol=DEFAULT_TOL, groups=groups).alpha, reps)
        t_warm, warm = timed(lambda: smo_solve(K, y, C, alpha0=alpha0, tol=DEFAULT_TOL, groups=groups), reps)
        ref = dual_objective(a_lib, K, y)
        for a in (a_smo, warm.alpha):
            gap = max(gap, abs(dual_objective(a, K, y) - ref) / abs(ref))
        for key, t in (("libsvm", t_lib), ("smo", t_smo), ("warm", t_warm)):
            times[key].append(1e3 * t)
        info["grouped"].append(groups is not None)
        info["warm_steps"].append(warm.iterations)
        if steps:
            info["libsvm_steps"].append(int(SVC(C=C, kernel="precomputed", tol=DEFAULT_TOL).fit(K, y).n_iter_[0]))
    return times, gap, info


def variant_steps(inst, stop, update, backend, early_stop):
    """Yield (seconds, value) for each subset of ranks 0..stop-1, by one enumeration variant.

    With ``early_stop`` a solve stops once duality proves the subset worse than the best so far, as in
    :class:`~minlp_fs.solvers.enumeration.Enumeration` (the value is then an upper bound, never a best).
    """
    if update == "native":
        p = inst.kernel.params()
        kw = {"kernel": "rbf"} if p["name"] == "rbf" else \
            {"kernel": "poly", "degree": p["degree"], "coef0": p["coef0"]}
        for S in revolving_door(inst.n, inst.B, 0, stop):
            t = time.process_time()
            svc = SVC(C=inst.C, gamma=p["gamma"], tol=DEFAULT_TOL, **kw).fit(inst.X[:, list(S)], inst.y)
            dt = time.process_time() - t
            alpha = np.zeros(inst.m)
            alpha[svc.support_] = np.minimum(np.abs(svc.dual_coef_[0]), inst.C)
            yield dt, dual_objective(alpha, inst.gram(S), inst.y)
        return
    oracle = AlphaSubproblem(inst, backend=backend, cache=False)
    if update == "swap" and early_stop and Opening.applies(oracle):   # what Enumeration runs there
        yield from opened_steps(oracle, stop)
        return
    walk = gram_walk(inst, 0, stop) if update == "swap" else \
        ((S, inst.gram(S), True) for S in revolving_door(inst.n, inst.B, 0, stop))
    alpha = best = None
    while True:
        t = time.process_time()
        step = next(walk, None)
        if step is None:
            return
        fit = oracle.solve(step[0], warm_start=alpha, K=step[1], worse_than=best if early_stop else None)
        alpha = fit.alpha
        if fit.exact and (best is None or inst.better(fit.value, best)):
            best = fit.value
        yield time.process_time() - t, fit.value


def opened_steps(oracle, stop):
    """:func:`variant_steps` of the early-stopping swap variant where :class:`Opening` applies (fit sense, polynomial
    kernels): Enumeration's opened walk, a compiled run's time charged to its first subset (value None: stopped early)."""
    inst, best = oracle.instance, None
    fits = opened_fits(Opening(oracle), 0, stop, lambda: best, REBUILD_EVERY)
    while True:
        t = time.process_time()
        item = next(fits, None)
        if item is None:
            return
        _, _, fit, _, decided = item
        dt = time.process_time() - t
        for _ in range(decided):
            yield dt, None
            dt = 0.0
        if fit is not None:
            if fit.exact and (best is None or inst.better(fit.value, best)):
                best = fit.value
            yield dt, fit.value


def throughput_row(inst, budget, block):
    """Round-robin the variants over the same ranks until the slowest has used ``budget`` seconds."""
    total = math.comb(inst.n, inst.B)
    for spec in VARIANTS.values():  # the first solves load compiled code (0.15 s measured): not timed
        for _ in variant_steps(inst, min(total, 2), *spec):
            pass
    gens = {name: variant_steps(inst, total, *spec) for name, spec in VARIANTS.items()}
    spent = dict.fromkeys(VARIANTS, 0.0)
    best = {name: None for name in VARIANTS}
    done = 0
    while done < total and max(spent.values()) < budget:
        todo = min(block, total - done)
        for name, gen in gens.items():
            for _ in range(todo):
                dt, value = next(gen)
                spent[name] += dt
                if value is not None and (best[name] is None or inst.better(value, best[name])):
                    best[name] = value
        done += todo
    ref = best["swap + warm SMO + early stop"]
    gap = max(abs(v - ref) / abs(ref) for v in best.values())
    return {name: done / spent[name] for name in VARIANTS}, done, total, gap


def certify_rows(data_dir):
    d = load_dataset("cleveland", data_dir)
    rows = []
    for sense in ("paper", "fit"):
        inst = make_instance(d.X, d.y, 3, "poly2", sense=sense, feature_names=d.feature_names, name="cleveland")
        r = Enumeration().solve(inst)
        rows.append(f"| {sense} | {r.objective:.6f} | {r.features} ({', '.join(r.feature_names)}) | "
                    f"{r.status} | {r.certified} | {r.degenerate} | {r.n_svm_solves} | "
                    f"{r.info['n_done']}/{r.info['n_subsets']} | {r.wall_time_s:.2f} |")
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer subsets, repetitions and seconds per case")
    ap.add_argument("--german", type=int, default=0, metavar="N",
                    help="only part (a) on German, N subsets per kernel, median and mean (section bench_alpha_german)")
    add_io_args(ap)
    args = ap.parse_args(argv)
    if args.german:
        return german_rows(args, command("bench_alpha.py", argv))
    n_sub, reps, budget, block = (3, 1, 2.0, 5) if args.quick else (5, 3, 8.0, 10)
    cmd = command("bench_alpha.py", argv)
    started, load0, t_start = datetime.datetime.now(datetime.timezone.utc), os.getloadavg(), time.perf_counter()
    rng, extra_rng = np.random.default_rng(0), np.random.default_rng(1)
    out = []
    with threadpool_limits(limits=1):
        out += ["### (a) One alpha-subproblem: median CPU ms over random subsets (min of "
                f"{reps} repetition(s) each), B = max(1, round(0.3 n)), C = 10, gamma = 0.1, tol = {DEFAULT_TOL:g}", "",
                "| dataset | m | n | B | kernel | libsvm cold | SMO cold | SMO warm (swap neighbour) "
                "| libsvm / SMO warm | max rel. value diff. |", "|---|---|---|---|---|---|---|---|---|---|"]
        for name, (m, n) in PAPER_DATASETS.items():
            d = load_dataset(name, args.data_dir)
            B = max(1, round(0.3 * d.X.shape[1]))
            extra = ("poly3", "poly5") if name == "german" else ()
            for kernel in ("poly2", "rbf") + extra:
                inst = make_instance(d.X, d.y, B, kernel)
                # the extra kernels draw from their own stream: the other rows keep their subsets
                t, gap = per_solve_row(inst, n_sub, reps, rng if kernel not in extra else extra_rng)
                out.append(f"| {name} | {inst.m} | {inst.n} | {B} | {kernel} | {t['libsvm']:.2f} | {t['smo']:.2f} "
                           f"| {t['warm']:.2f} | {t['libsvm'] / t['warm']:.1f}x | {gap:.1e} |")
                print(out[-1], flush=True)
        names = list(VARIANTS)
        out += ["", f"### (b) Enumeration throughput (subsets per CPU second, one core), same ranks of the revolving-door order, "
                f"round-robin in blocks of {block}, up to {budget:g} CPU s for the slowest variant; sense fit. "
                "'ours' = swap + warm SMO + early stop, what `minlp-fs certify --method enumerate` runs (polynomial kernels: its opened walk)", "",
                "| dataset | kernel | B | subsets | " + " | ".join(names)
                + " | ours / rebuild+libsvm | ours / native libsvm | early stop / none | swap / rebuild (SMO) "
                "| swap / rebuild (libsvm) | max rel. diff. of optima |",
                "|---|---|---|---|" + "---|" * (len(names) + 6)]
        for name, kernel, B in THROUGHPUT_CASES:
            d = load_dataset(name, args.data_dir)
            inst = make_instance(d.X, d.y, B, kernel, sense="fit")
            rate, done, total, gap = throughput_row(inst, budget, block)
            out.append(f"| {name} | {kernel} | {B} | {done}/{total} | " + " | ".join(f"{rate[v]:.1f}" for v in names)
                       + f" | {rate[names[0]] / rate['rebuild + cold libsvm']:.1f}x"
                       + f" | {rate[names[0]] / rate['libsvm native kernel']:.1f}x"
                       + f" | {rate[names[0]] / rate['swap + warm SMO']:.2f}x"
                       + f" | {rate['swap + warm SMO'] / rate['rebuild + warm SMO']:.2f}x"
                       + f" | {rate['swap + cold libsvm'] / rate['rebuild + cold libsvm']:.2f}x | {gap:.1e} |")
            print(out[-1], flush=True)
        out += ["", "### (c) Certified optimum, cleveland poly2 B = 3 (`Enumeration()`, n_jobs = 1)", "",
                "| sense | objective | argmin | status | certified | degenerate | #QPs | subsets done | wall time (s) |",
                "|---|---|---|---|---|---|---|---|---|"]
        out += certify_rows(args.data_dir)
    load1, elapsed = os.getloadavg(), time.perf_counter() - t_start
    head = ["## Alpha-subproblem and enumeration (bench_alpha.py)", "",
            f"Command: `{cmd}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
            f"total {elapsed:.0f} s.", f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, "
            f"at end {load1[0]:.1f}; times are CPU times of this process and every comparison is a ratio "
            "measured side by side in this run.", ""]
    write_section(args.output, "bench_alpha", "\n".join(head + out))
    print(f"wrote {args.output} in {elapsed:.0f} s")


def route_rows(kernel, times, info) -> list:
    """Rows of the route table: per route, the ratios of the medians and the median per-subset ratio, the median
    iterations of each solver and their cost per step (sum of ms over sum of steps)."""
    rows = []
    grouped = np.array(info["grouped"])
    lib, warm = np.array(times["libsvm"]), np.array(times["warm"])
    lib_steps, warm_steps = np.array(info["libsvm_steps"]), np.array(info["warm_steps"])
    for name, mask in (("groups", grouped), ("all rows", ~grouped)):
        if not mask.any():
            continue
        rows.append(f"| {kernel} | {name} | {int(mask.sum())} | {np.median(lib[mask]) / np.median(warm[mask]):.1f}x "
                    f"| {np.median(lib[mask] / warm[mask]):.1f}x | {np.median(lib_steps[mask]):.0f} "
                    f"| {np.median(warm_steps[mask]):.0f} | {1e3 * lib[mask].sum() / lib_steps[mask].sum():.2f} / "
                    f"{1e3 * warm[mask].sum() / max(1, warm_steps[mask].sum()):.2f} |")
    return rows


def german_rows(args, cmd) -> None:
    """Part (a) on German, every kernel, ``args.german`` subsets (one repetition each): median and mean ms."""
    started, load0, t_start = datetime.datetime.now(datetime.timezone.utc), os.getloadavg(), time.perf_counter()
    d = load_dataset("german", args.data_dir)
    B = max(1, round(0.3 * d.X.shape[1]))
    out = [f"### German, {args.german} random subsets per kernel (one repetition each), B = {B}, C = 10, gamma = 0.1, "
           f"tol = {DEFAULT_TOL:g}: median and mean CPU ms", "",
           "| kernel | libsvm cold (median / mean) | SMO cold | SMO warm (swap neighbour) | libsvm / SMO warm, "
           "medians | libsvm / SMO warm, means | max rel. value diff. |", "|---|---|---|---|---|---|---|"]
    parts = ["", "### The same solves split by SMO's route (over duplicate-row groups or over all 1000 rows), with "
             "libsvm's iterations and SMO's steps", "",
             "| kernel | route | subsets | libsvm / SMO warm, medians of the times | median of the per-subset ratios "
             "| libsvm iterations (median) | SMO warm steps (median) | ms per 1000 steps, libsvm / SMO warm |",
             "|---|---|---|---|---|---|---|---|"]
    with threadpool_limits(limits=1):
        for kernel in ("poly2", "rbf", "poly3", "poly5"):
            inst = make_instance(d.X, d.y, B, kernel)
            times, gap, info = per_solve_times(inst, args.german, 1, np.random.default_rng(7), steps=True)
            med, mean = ({k: float(stat(v)) for k, v in times.items()} for stat in (np.median, np.mean))
            out.append(f"| {kernel} | {med['libsvm']:.2f} / {mean['libsvm']:.2f} | {med['smo']:.2f} / {mean['smo']:.2f} "
                       f"| {med['warm']:.2f} / {mean['warm']:.2f} | {med['libsvm'] / med['warm']:.1f}x "
                       f"| {mean['libsvm'] / mean['warm']:.1f}x | {gap:.1e} |")
            print(out[-1], flush=True)
            parts += route_rows(kernel, times, info)
    out += parts
    load1, elapsed = os.getloadavg(), time.perf_counter() - t_start
    head = ["## Alpha-subproblem on German (bench_alpha.py --german)", "",
            f"Command: `{cmd}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, total {elapsed:.0f} s.",
            f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {load1[0]:.1f}; CPU times "
            "of this process, libsvm and SMO side by side in this run.", ""]
    write_section(args.output, "bench_alpha_german", "\n".join(head + out))
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
