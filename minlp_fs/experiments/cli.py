"""``minlp-fs bench certified|multistart|params|accuracy``: run an experiment, write its tables and figures.

Wired into the main command line by :func:`add_bench_parser` (the ``bench`` verb) and
:func:`run_bench`; ``benchmarks/run_experiments.py`` calls the same parser.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from pathlib import Path

from ..errors import MinlpFsError
from ..exact.cli import AUTO_ENUMERATE_UP_TO, AUTO_ENUMERATE_UP_TO_GAUSSIAN, CERTIFY_METHODS
from .config import BenchConfig
from .pipeline import dry_run, run_experiment
from .registry import EXPERIMENTS
from .runner import BACKENDS
from .store import StoreWarning

SENSE_CHOICES = {"paper": ("paper",), "fit": ("fit",), "both": ("paper", "fit")}


def _names(text):
    return None if text is None else tuple(t.strip() for t in text.split(",") if t.strip())


def add_bench_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``bench`` verb to an ``argparse`` subparsers object; returns its parser."""
    b = subparsers.add_parser("bench", help="reproduce the paper's experiments (tables, figures, RESULTS.md)",
                              description=__doc__.splitlines()[0])
    b.add_argument("experiment", choices=tuple(EXPERIMENTS))
    b.add_argument("--quick", action="store_true", help="a small slice that runs in a few minutes")
    b.add_argument("--data-dir", help="folder of the datasets' CSV files (or set MINLP_FS_DATA)")
    b.add_argument("--jobs", type=int, default=1, help="parallel units (loky processes; dask local workers)")
    b.add_argument("--backend", default="loky", choices=BACKENDS, help="joblib backend (default loky)")
    b.add_argument("--scheduler", help="dask scheduler address (tcp://host:8786) or ray address")
    b.add_argument("--out", default="benchmarks", help="output folder: experiments/raw/, experiments/tables/, figures/, RESULTS.md")
    b.add_argument("--sense", choices=tuple(SENSE_CHOICES), default=None,
                   help="paper, fit or both (default: both; paper for params)")
    b.add_argument("--datasets", help="comma-separated datasets (default: the slice's)")
    b.add_argument("--kernels", help="comma-separated kernels (default: the slice's)")
    b.add_argument("--methods", help="comma-separated methods (default: the slice's), e.g. ls*,acso*,ipopt,scip")
    b.add_argument("--hours", type=float, default=None,
                   help="certified: enumeration budget per dataset, wall hours on this machine's cores (sets B_max)")
    b.add_argument("--solver-time-limit", type=float, default=None, help="seconds per external-solver run")
    b.add_argument("--exact-time-limit", type=float, default=None,
                   help="certified: seconds per branch-and-bound run (default: the slice's, 120 s on the full grid); "
                        "a run stopped there is kept uncertified with its gap (enumeration is sized by --hours)")
    b.add_argument("--exact-method", default="auto", choices=CERTIFY_METHODS,
                   help="certified: the exact method of every instance (default auto, certify's choice: bnb for the "
                        f"polynomial kernels above {AUTO_ENUMERATE_UP_TO:,} subsets and the Gaussian fit sense above "
                        f"{AUTO_ENUMERATE_UP_TO_GAUSSIAN:,}, else enumeration); another exact "
                        "method's certified answer stands for an instance's own in the tables")
    b.add_argument("--report-only", action="store_true", help="rebuild tables and figures from the raw file")
    b.add_argument("--dry-run", action="store_true",
                   help="print the number of units (and the certified grid's B_max plan); run nothing")
    b.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return b


def config_from_args(args) -> BenchConfig:
    return BenchConfig(experiment=args.experiment, quick=args.quick, data_dir=args.data_dir, jobs=args.jobs,
                       backend=args.backend, scheduler=args.scheduler, out=Path(args.out),
                       senses=None if args.sense is None else SENSE_CHOICES[args.sense],
                       datasets=_names(args.datasets), kernels=_names(args.kernels), methods=_names(args.methods),
                       hours=args.hours, solver_time_limit=args.solver_time_limit, run=not args.report_only,
                       progress=not args.no_progress, exact_time_limit=args.exact_time_limit,
                       exact_method=args.exact_method)


@contextlib.contextmanager
def store_warnings_on_stderr():
    """Print the results store's warnings (skipped lines, duplicates, damaged side files) once, one line each."""
    shown = set()

    def show(message, category, filename, lineno, file=None, line=None):
        if str(message) not in shown:
            shown.add(str(message))
            print(f"warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always", StoreWarning)
        warnings.showwarning = show
        yield


def run_bench(args) -> int:
    """Run the experiment ``args`` names; 0 when complete, 1 if units failed or a worker died, 130 when
    interrupted."""
    with store_warnings_on_stderr():
        if getattr(args, "dry_run", False):
            print(dry_run(config_from_args(args)))
            return 0
        summary, section = run_experiment(config_from_args(args))
    print(f"section written to {section}; RESULTS.md updated under {args.out}", file=sys.stderr)
    if summary is None:
        return 0
    retried = f" ({summary.n_retried} of them retried after a failure)" if summary.n_retried else ""
    print(f"{summary.n_run} units run{retried}, {summary.n_skipped} already in the raw file, {summary.n_errors} failed"
          + (" (interrupted: rerun the same command to resume)" if summary.interrupted else ""), file=sys.stderr)
    for line in summary.errors[:10]:
        print(f"  failed: {line}", file=sys.stderr)
    if summary.worker_died:
        print(f"stopped: a worker process died in the middle of a unit ({summary.worker_died}); the units it "
              "had not finished are run by the next run of the same command", file=sys.stderr)
    return 130 if summary.interrupted else (1 if summary.n_errors or summary.worker_died else 0)


def main(argv=None) -> int:
    """``python benchmarks/run_experiments.py EXPERIMENT [options]`` (the same flags as ``minlp-fs bench``)."""
    parser = argparse.ArgumentParser(prog="run_experiments")
    add_bench_parser(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["bench", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run_bench(args)
    except MinlpFsError as exc:
        print(f"run_experiments: error: {exc}", file=sys.stderr)
        return 2
