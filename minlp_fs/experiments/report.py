"""benchmarks/RESULTS.md: the experiments' section, rebuilt from one markdown file per experiment run.

Each ``minlp-fs bench`` run writes ``experiments/tables/<tag>.md`` (tag = experiment, plus
``-quick`` for a quick slice) under the output folder; :func:`update_results` then replaces only the text between
``<!-- experiments:start -->`` and ``<!-- experiments:end -->`` of RESULTS.md by those files, in a
fixed order (the file is created when absent; other sections are left untouched). Files are
replaced atomically (:func:`~minlp_fs.experiments.store.write_text`).
"""
from __future__ import annotations

import os
import platform
import shlex
import sys
from pathlib import Path

from .store import write_text


def machine() -> str:
    """CPU model, logical cores and memory of this machine, in one line."""
    cpu = platform.processor() or platform.machine()
    mem = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 2**20:.0f} GB RAM"
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores{mem}, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def command_line() -> str:
    """The command that is running, as a user would type it."""
    prog = Path(sys.argv[0]).name
    head = ["minlp-fs"] if prog == "minlp-fs" else ["python", sys.argv[0]]
    return shlex.join(head + sys.argv[1:])


def update_results(results_md, tables_dir, order: tuple) -> Path:
    """Replace the experiments section of ``results_md`` by the files ``tables_dir/*.md``, the
    experiments in ``order`` (each full grid before its quick slice), unknown names last."""
    results_md, tables_dir = Path(results_md), Path(tables_dir)

    def rank(path: Path):
        stem = path.stem
        base = stem.removesuffix("-quick")
        return (order.index(base) if base in order else len(order), stem.endswith("-quick"), stem)

    files = sorted(tables_dir.glob("*.md"), key=rank)
    done = [p.stem for p in files]
    missing = [e for e in order if e not in done]
    intro = (f"Runs reported below: {', '.join(done) or 'none'} (`-quick` = the quick slice). "
             + (f"Full grids not run yet: {', '.join(missing)} (`minlp-fs bench EXPERIMENT --jobs N`; "
                "`--dry-run` prints the plan). " if missing else "")
             + "Paper numbers (its sense only, C = 10, gamma = 0.1, Apple M1 / 128-vCPU enumeration) are "
               "printed beside ours for the same rows; with a smaller B_max or a slice, the instance sets differ.")
    body = "\n\n".join(p.read_text().strip() for p in files)
    write_section(results_md, "experiments", "\n".join([
        "## Experiments of the paper's section 5 (certified grid, multistart, parameter study, held-out accuracy)",
        "", intro, "", body]))
    return results_md


def write_section(path, name: str, text: str) -> None:
    """Put ``text`` between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` of the markdown file
    ``path``, leaving the rest alone (the section is appended, the file created, when absent)."""
    path = Path(path)
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    section = f"{start}\n{text.rstrip()}\n{end}"
    if start in old and end in old:
        new = old[:old.index(start)] + section + old[old.index(end) + len(end):]
    else:
        new = old.rstrip() + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, new)
