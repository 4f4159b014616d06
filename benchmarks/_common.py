"""Pieces shared by the benchmark scripts (``benchmarks/bench_*.py``).

* :func:`machine`: one line describing the machine, for the report's header;
* :func:`command`: the command line that produced a report, as run from the repository root;
* :func:`add_io_args`: the ``--data-dir`` and ``--output`` options every script takes;
* :func:`write_section`: replace (or append) a script's marked section of ``RESULTS.md``, between
  ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``, leaving the other scripts' sections alone;
* :func:`read_jsonl` / :func:`append_jsonl`: results kept as JSON lines, one run per line, written
  as each run finishes so an interrupted benchmark resumes where it stopped.

The scripts are run as ``python benchmarks/bench_x.py``, so this folder is on ``sys.path`` and they
import this module as ``_common``.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from minlp_fs.datasets import DATA_ENV
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


def command(script: str, argv=None) -> str:
    """``python benchmarks/<script> <arguments>``: the command as typed, for the report."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", f"benchmarks/{script}", *args])


def read_jsonl(path) -> list:
    """The rows of a JSON-lines file ([] when it does not exist yet)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_jsonl(path, row: dict) -> None:
    """Append one row and flush it to disk at once (the file and its folder are created if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
        fh.flush()
