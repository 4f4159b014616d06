"""Build time and size of the Pyomo model of problem (3) (``minlp_fs.models.build_model``, issue 4).

For each of the paper's nine datasets at full m, kernels poly2 and rbf, B = round(0.3 n), paper sense:

* the full model: one kernel entry per unordered pair i <= h, one term per nonzero feature term
  t_j(x^i, x^h), i.e. O(m^2 n) terms;
* the support-restricted model (``support=``): only the rows with alpha_i > 0 at the exact alpha of
  the first B features (the SVM's support vectors), the use case for large m.

Each build runs in its own process under a wall-clock cap (``--cap`` seconds): a build that does
not finish in time is reported as "> cap" with the estimated number of terms (counted from the data
without building). Reported: build wall and CPU time, peak resident memory of the building process,
free variables, constraints, kernel entries (pairs) and feature terms. Usage:

    python benchmarks/bench_models.py [--cap 300] [--datasets cleveland,sonar] [--data-dir ../shared/datasets]
"""
from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import resource
import time

import numpy as np
import pyomo.environ  # noqa: F401  (imported once here, so the forked builds do not time its import)

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.datasets import PAPER_DATASETS, load_dataset
from minlp_fs.instance import make_instance
from minlp_fs.models import build_model, model_size

from _common import add_io_args, command, machine, write_section



def estimated_terms(inst, rows) -> int:
    """Feature terms a build writes: nonzero t_j(x^i, x^h) over pairs i <= h of ``rows``."""
    X = inst.X[rows]
    total = 0
    for p in range(X.shape[0]):
        T = np.stack([inst.kernel.feature_term(X[p:p + 1], j, Z=X[p:])[0] for j in range(inst.n)], axis=1)
        total += int(np.count_nonzero(T))
    return total


def _build(inst, support, queue):
    cpu = time.process_time()
    model = build_model(inst, support=support)
    size = model_size(model)
    size["cpu"] = time.process_time() - cpu
    size["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(size)


def capped_build(inst, support, cap):
    """model_size of a build in a child process, or None past ``cap`` seconds."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_build, args=(inst, support, queue))
    proc.start()
    try:
        return queue.get(timeout=cap)
    except Exception:   # queue.Empty at the cap
        return None
    finally:
        proc.terminate()
        proc.join()


def row(name, inst, kernel, label, rows, cap):
    est = estimated_terms(inst, rows)
    size = capped_build(inst, None if label == "full" else rows, cap)
    if size is None:
        return (f"| {name} | {inst.m} | {inst.n} | {inst.B} | {kernel} | {label} | {len(rows)} | > {cap:g} (cap) "
                f"| - | - | - | - | {len(rows) * (len(rows) + 1) // 2} | {est} (estimated) |")
    assert size["terms"] == est
    return (f"| {name} | {inst.m} | {inst.n} | {inst.B} | {kernel} | {label} | {len(rows)} "
            f"| {size['build_time']:.2f} | {size['cpu']:.2f} | {size['rss_mb']:.0f} | {size['variables']} "
            f"| {size['constraints']} | {size['pairs']} | {size['terms']} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=float, default=300.0, help="wall-clock seconds allowed for one build")
    ap.add_argument("--datasets", default=",".join(PAPER_DATASETS), help="comma-separated dataset names")
    add_io_args(ap)
    args = ap.parse_args(argv)
    cmd = command("bench_models.py", argv)
    started, load0, t0 = datetime.datetime.now(datetime.timezone.utc), os.getloadavg(), time.perf_counter()
    out = ["| dataset | m | n | B | kernel | model | rows | build wall (s) | build CPU (s) | peak RSS (MB) "
           "| variables | constraints | kernel entries | feature terms |", "|---" * 14 + "|"]
    for name in args.datasets.split(","):
        d = load_dataset(name, args.data_dir)
        B = max(1, round(0.3 * d.X.shape[1]))
        for kernel in ("poly2", "rbf"):
            inst = make_instance(d.X, d.y, B, kernel, name=name)
            sv = np.flatnonzero(AlphaSubproblem(inst).solve(range(B)).alpha > 0)
            for label, rows in (("full", np.arange(inst.m)), ("support", sv)):
                out.append(row(name, inst, kernel, label, rows, args.cap))
                print(out[-1], flush=True)
    load1, elapsed = os.getloadavg(), time.perf_counter() - t0
    head = ["## Pyomo model build time and size (bench_models.py)", "",
            f"Command: `{cmd}` (from the repository root). Date: {started:%Y-%m-%d %H:%M} UTC, "
            f"total {elapsed:.0f} s.", f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, "
            f"at end {load1[0]:.1f}: other jobs on the machine inflate wall times more than CPU times.", "",
            "Paper sense, C = 10, gamma = 0.1 (c = 1 for poly2). \"support\": rows with alpha_i > 0 at the exact "
            "alpha of features 0..B-1 (`build_model(instance, support=rows)`). Feature terms are the nonzero "
            "t_j(x^i, x^h) written (the data's zeros are left out); a build past the cap is killed and its "
            "terms are counted from the data.", ""]
    write_section(args.output, "bench_models", "\n".join(head + out))
    print(f"wrote {args.output} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
