"""Pieces shared by the benchmark scripts (``benchmarks/bench_*.py``).

* :func:`machine`: one line describing the machine, for the report's header;
* :func:`command`: the command line that produced a report, as run from the repository root;
* :func:`add_io_args`: the ``--data-dir`` and ``--output`` options every script takes;
* :func:`add_kernels_arg` and :func:`of_kernels`: ``--kernels``, a workload's cases of some kernels only;
* :func:`write_section`: replace (or append) a script's marked section of ``RESULTS.md``, between
  ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``, leaving the other scripts' sections alone;
* :func:`timed_section`: a section's text with its title, command, date, total time, machine and load.

Results are kept in the experiments' results store (:mod:`minlp_fs.experiments.store`): JSON
lines, one run per line, appended as each run finishes under a writer's lock, so an interrupted
benchmark resumes where it stopped and a second run on the same file is refused.

The scripts are run as ``python benchmarks/bench_x.py``, so this folder is on ``sys.path`` and they
import this module as ``_common``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from minlp_fs.datasets import DATA_ENV
from minlp_fs.kernels import KERNEL_NAMES
from minlp_fs.experiments.report import machine, write_section  # noqa: F401 (shared with the experiments)

HERE = Path(__file__).resolve().parent
REPORT = HERE / "RESULTS.md"


def default_data_dir() -> str:
    """$MINLP_FS_DATA, else the shared datasets folder beside the repository (../shared/datasets)."""
    return os.environ.get(DATA_ENV) or str(HERE.parent.parent / "shared" / "datasets")


def add_io_args(parser) -> None:
    """Add ``--data-dir`` (the datasets' CSV folder) and ``--output`` (the markdown report to update)."""
    parser.add_argument("--data-dir", default=default_data_dir(), help="folder of the datasets' CSV files")
    parser.add_argument("--output", default=str(REPORT), help="markdown file to update")


def add_kernels_arg(parser) -> None:
    """Add ``--kernels``: only the workload's cases of these kernels (:func:`of_kernels`; default: all)."""
    parser.add_argument("--kernels", nargs="+", choices=KERNEL_NAMES,
                        help="only the workload's cases of these kernels (default: all)")


def of_kernels(cases, kernels) -> list:
    """The cases (dataset, kernel, ...) whose kernel is one of ``kernels`` (all of them when ``kernels`` is None);
    a selection with no case stops the script with a message naming the kernels."""
    chosen = [c for c in cases if not kernels or c[1] in kernels]
    if not chosen:
        raise SystemExit(f"the workload has no case of the kernels {' '.join(kernels)}")
    return chosen


def command(script: str, argv=None) -> str:
    """``python benchmarks/<script> <arguments>``: the command as typed, for the report."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", f"benchmarks/{script}", *args])


def timed_section(title: str, script: str, started, t0: float, load0, note: str, body: list) -> tuple:
    """(elapsed seconds, the section's text): ``title``, the command of ``script``, the start ``started`` (a UTC
    datetime) and the seconds since ``t0`` (perf_counter), the machine with the load average at the start
    (``load0``, os.getloadavg()) and now, ``note``, then ``body``'s lines."""
    elapsed, load1 = time.perf_counter() - t0, os.getloadavg()
    head = [title, "", f"Command: `{command(script)}` (from the repository root). Date: "
            f"{started:%Y-%m-%d %H:%M} UTC, total {elapsed:.0f} s.",
            f"Machine: {machine()}. Load average (1 min) at start {load0[0]:.1f}, at end {load1[0]:.1f}. {note}", ""]
    return elapsed, "\n".join(head + body)
