"""Parallel branch-and-bound through Ray against loky and the sequential search (issue 12, item 4).

On instances whose tree has thousands of nodes, back to back in this process: ``solve(inst, "bnb")``
(sequential), ``n_jobs=2`` with loky worker processes, ``n_jobs=2, backend="ray"`` starting its own local
Ray (start and shutdown included, as ``minlp-fs certify --jobs 2 --backend ray`` does), and the same on a
Ray already running in this process (``ray.init`` before, not timed; what ``--scheduler ADDR`` on a running
cluster costs). Wall time; CPU of this process plus the workers' tasks (``info['parallel']['worker_cpu_s']``);
where the workers are this process's children (loky, the running Ray), also the CPU of every child process
over the run (Ray's own GCS, raylet and idle workers included); nodes, QPs, same optimum and same counts.

    python benchmarks/bench_bnb_ray.py [--data-dir ../shared/datasets] [--output benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import datetime
import os
import time

import psutil
import ray

from minlp_fs.api import build_instance

from _common import add_io_args, command, machine, write_section
from bench_bnb import cpu_timed, warm_up

#: (dataset, kernel, sense, B): trees of thousands of nodes at the paper's B_max (bench_bnb (e))
CASES = [("german", "poly2", "fit", 9), ("bcd", "poly3", "paper", 12)]


def children_cpu() -> dict:
    """User + system CPU seconds of every live descendant process, by pid."""
    out = {}
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            out[child.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def run(inst, **options):
    """(result, wall s, CPU s of this process + worker tasks, CPU s of all processes over the run)."""
    before, c0 = children_cpu(), time.process_time()
    res, wall, cpu = cpu_timed(inst, "bnb", **options)
    after = children_cpu()
    total = time.process_time() - c0 + sum(v - before.get(pid, 0.0) for pid, v in after.items())
    return res, wall, cpu, total


def rows_for(data_dir, ds, kernel, sense, B):
    inst = build_instance(ds, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
    runs = {"sequential": run(inst), "loky, 2 workers": run(inst, n_jobs=2),
            "ray, 2 workers, own local Ray (start included)": run(inst, n_jobs=2, backend="ray")}
    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False)
    start = time.perf_counter() - t
    try:
        runs[f"ray, 2 workers, on a running Ray (its start, {start:.1f} s, not included)"] = run(inst, n_jobs=2, backend="ray")
    finally:
        ray.shutdown()
    seq = runs["sequential"][0]
    loky = runs["loky, 2 workers"][0]
    out = []
    for name, (res, wall, cpu, total) in runs.items():
        same = res.status == "optimal" and res.features == seq.features and abs(res.objective - seq.objective) <= 1e-6 * max(1.0, abs(seq.objective))
        counts = "-" if name == "sequential" else "yes" if all(res.info[k] == loky.info[k] for k in ("nodes", "qps")) else "NO"
        par = res.info.get("parallel")
        tasks = "-" if par is None else f"{par['tasks']} / {par['waves']}"
        children = "-" if name == "sequential" or "own local" in name else f"{total:.1f}"
        out.append(f"| {ds} {kernel} {sense} B={B} | {name} | {res.status} | {'yes' if same else 'NO'} | {counts} | "
                   f"{wall:.1f} | {runs['sequential'][1] / wall:.2f}x | {cpu:.1f} | {children} | "
                   f"{res.info['nodes']:,} | {res.info['qps']:,} | {tasks} |")
        print(out[-1], flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_io_args(p)
    args = p.parse_args()
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    warm_up(args.data_dir)
    rows = ["| instance | run | status | same optimum as sequential | same nodes and QPs as loky | wall (s) | "
            "speed vs sequential | CPU (s), main + worker tasks | CPU (s), all processes | nodes | QPs | "
            "worker tasks / waves |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in CASES:
        rows += rows_for(args.data_dir, *case)
    elapsed, load1 = time.perf_counter() - t0, os.getloadavg()
    text = "\n".join([
        "## Parallel bnb through Ray vs loky vs sequential (bench_bnb_ray.py)", "",
        f"Command: `{command('bench_bnb_ray.py')}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
        f"total {elapsed:.0f} s. Ray {ray.__version__}.",
        f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {load1[0]:.1f} (a machine "
        "shared with other jobs: compare the rows of one instance, run back to back). C = 10, gamma = 0.1, c = 1.",
        "CPU, all processes: this process and every child process over the run (loky's workers; Ray's GCS, "
        "raylet and workers), not measurable when the run starts and stops its own Ray (its processes are gone).", "",
        *rows])
    write_section(args.output, "bench_bnb_ray", text)
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
