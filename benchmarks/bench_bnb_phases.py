"""Where branch-and-bound spends its time, phase by phase, beside enumeration (issue 12's time target).

Per case, enumeration and bnb (n_jobs = 1, one BLAS thread, after a warm-up of both) alternate for ``--repeat``
rounds in this process; the round of median bnb CPU time is reported, with enumeration's median. bnb's CPU time
is split by timers around the search's phases, each instant charged to the innermost phase open:

* heuristic: the incumbent heuristic (``_Search._heuristic``);
* universe: the fit sense's QP of a node's universe U = I u F and its kernel matrix;
* relaxed: the relaxed beta's kernel matrix (:func:`minlp_fs.exact.bounds.relaxed_gram`) and QP;
* split: the fixed-alpha order and child bounds (:func:`minlp_fs.exact.bounds.fit_split`);
* probes: the paper sense's expansion of a node by its probes (:mod:`minlp_fs.exact.paper_probes`) but for
  tighten (its straddling loose probes re-solved to TIGHTEN_TOL, ``_tighten_one``) and subsets (a need-1 node's
  probes, which are B-subsets solved to the search's tolerance, ``_subset_probe``);
* leaves: a one-subset node's kernel matrix and QP;
* rest: the fit sense's expansion outside the above, the loop, pruning and bookkeeping.

The last column, "ratio if only these remained": enumeration's CPU over the CPU of the phases every expanded
node pays whatever its children (relaxed + split in the fit sense, probes + tighten + subsets in the paper sense):
the time ratio bnb would reach with every other phase free, the same tree. A ratio target above it needs those
phases cheaper or a smaller tree, not the leaves, universes or heuristic.

    python benchmarks/bench_bnb_phases.py [--repeat 7] [--data-dir ../shared/datasets] [--output RESULTS.md]
"""
from __future__ import annotations

import argparse
import datetime
import os
import time
from collections import defaultdict
from contextlib import contextmanager

from threadpoolctl import threadpool_limits

from minlp_fs import build_instance, solve
from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.exact import search

from _common import add_io_args, timed_section, write_section

#: (dataset, kernel, sense, B): issue 12's four misses (Cleveland B = 6, the rows below 5x), then the rows nearest
#: the line and two that pass by far, for contrast
CASES = [("cleveland", "poly2", "fit", 6), ("cleveland", "poly3", "fit", 6), ("cleveland", "poly5", "fit", 6),
         ("cleveland", "poly5", "paper", 6), ("parkinsons", "poly2", "paper", 6), ("cleveland", "poly2", "paper", 6),
         ("parkinsons", "poly3", "fit", 6), ("parkinsons", "poly3", "paper", 6)]
PHASES = ("heuristic", "universe", "relaxed", "split", "probes", "tighten", "subsets", "leaves", "rest")


class Phases:
    """CPU time charged to the innermost open phase (:meth:`timed` wraps a function as one)."""

    def __init__(self):
        self.spent, self.stack, self.last = defaultdict(float), [], 0.0

    def _switch(self) -> None:
        now = time.process_time()
        self.spent[self.stack[-1] if self.stack else "outside"] += now - self.last
        self.last = now

    def timed(self, name, func, inside=None):
        """``func`` as phase ``name`` (``inside``: only when that phase is the innermost open)."""
        def wrapper(*args, **kwargs):
            if inside is not None and (self.stack[-1] if self.stack else None) != inside:
                return func(*args, **kwargs)
            self._switch()
            self.stack.append(name)
            try:
                return func(*args, **kwargs)
            finally:
                self._switch()
                self.stack.pop()
        return wrapper

    def run(self, fn):
        """(fn(), its CPU time), every instant of which is charged to one phase (``outside``: none open)."""
        self.spent.clear()
        self.last = time.process_time()
        t0 = self.last
        out = fn()
        self._switch()
        return out, self.last - t0


@contextmanager
def instrumented(phases: Phases):
    """The search's phases (module docstring) wrapped as timed phases of ``phases`` inside the block, restored after
    it: the search's code is observed, not changed."""
    S = search._Search
    wraps = [(S, "_heuristic", "heuristic", {}), (S, "_leaf", "leaves", {}), (S, "_expand_fit", "expand", {}),
             (S, "_universe_gram", "universe", {}),
             (S, "_solve", "universe", {"inside": "expand"}),   # the universe's QP (a leaf's is in "leaves")
             (S, "_expand_probes", "probes", {}), (S, "_tighten_one", "tighten", {}),
             (S, "_subset_probe", "subsets", {}), (search, "relaxed_gram", "relaxed", {}),
             (search, "fit_split", "split", {}),
             (AlphaSubproblem, "solve_gram", "relaxed", {"inside": "expand"})]   # the relaxed QP
    real = [(owner, attr, getattr(owner, attr), attr in vars(owner)) for owner, attr, _, _ in wraps]
    try:
        for (owner, attr, name, how), (_, _, func, _) in zip(wraps, real):
            setattr(owner, attr, phases.timed(name, func, **how))
        yield phases
    finally:
        for owner, attr, func, own in real:   # an inherited method (PaperProbes') is inherited again
            setattr(owner, attr, func) if own else delattr(owner, attr)


def case_row(case, data_dir, repeat: int, phases: Phases) -> str:
    dataset, kernel, sense, B = case
    inst = build_instance(dataset, data_dir=data_dir, kernel=kernel, sense=sense, B=B)
    enum = solve(inst, "enumerate")
    solve(inst, "bnb")
    runs, enums = [], []
    for _ in range(repeat):
        t0 = time.process_time()
        solve(inst, "enumerate")
        enums.append(time.process_time() - t0)
        res, cpu = phases.run(lambda: solve(inst, "bnb"))
        runs.append((cpu, defaultdict(float, phases.spent), res))
    runs.sort(key=lambda r: r[0])
    cpu, spent, res = runs[len(runs) // 2]
    e = sorted(enums)[len(enums) // 2]
    spent["rest"] = spent.pop("expand", 0.0) + spent.pop("outside", 0.0)
    same = abs(res.objective - enum.objective) <= 1e-6 * max(1.0, abs(enum.objective))
    core = spent["relaxed"] + spent["split"] if sense == "fit" else spent["probes"] + spent["tighten"] + spent["subsets"]
    cells = " | ".join(f"{1e3 * spent[p]:.1f}" for p in PHASES)
    return (f"| {dataset} | {kernel} | {sense} | {B} | {'yes' if same else 'NO'} | {res.info['nodes']} | "
            f"{1e3 * e:.1f} | {1e3 * cpu:.1f} | {e / cpu:.1f}x | {cells} | {e / core:.1f}x |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="rounds of enumeration and bnb per case (median reported)")
    add_io_args(ap)
    args = ap.parse_args(argv)
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    phases = Phases()
    rows = ["| dataset | kernel | sense | B | same optimum | bnb nodes | enumeration CPU (ms) | bnb CPU (ms) | ratio | "
            + " | ".join(f"{p} (ms)" for p in PHASES) + " | ratio if only relaxed + split (fit) or probes + tighten + "
            "subsets (paper) remained |", "|---" * (10 + len(PHASES)) + "|"]
    with threadpool_limits(1), instrumented(phases):
        for case in CASES:
            rows.append(case_row(case, args.data_dir, args.repeat, phases))
            print(rows[-1], flush=True)
    _, text = timed_section("## Where bnb spends its time, phase by phase (bench_bnb_phases.py)", "bench_bnb_phases.py",
                            started, t0, load0, f"One process, one BLAS thread; per case {args.repeat} alternating "
                            "rounds of enumeration and bnb, the medians (bnb's phases: its median round).", rows)
    write_section(args.output, "bench_bnb_phases", text)


if __name__ == "__main__":
    main()
