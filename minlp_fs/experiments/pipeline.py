"""One experiment end to end: grid -> units run (resumable) -> tables, figures, RESULTS.md section.

The experiment's grid, unit function and renderer come from the registry
(:data:`~minlp_fs.experiments.registry.EXPERIMENTS`); the files it writes are listed in
:mod:`~minlp_fs.experiments.config`. The raw file is the results store
(:mod:`~minlp_fs.experiments.store`): one writer at a time, failed units retried by the next run;
the side files are written atomically and a damaged one is ignored with a warning. A dry run
times nothing and writes nothing.
"""
from __future__ import annotations

import contextlib
import datetime
import os
from pathlib import Path

from ..methods import canonical_name
from .config import BenchConfig
from .grids import solver_budget
from .registry import EXPERIMENTS
from .report import command_line, machine, update_results
from .runner import run_units
from .store import match_records, read_json, read_records, unit_key, writable_folder, write_json, write_text, writer
from .tables import write_table_csvs
from .units import OWN_METHODS


def build_grid(cfg: BenchConfig, measure: bool = True):
    """The experiment's units (a Grid), and its plan (the certified grid's B_max per dataset, else None)."""
    return EXPERIMENTS[cfg.experiment].build(cfg, measure)


def dry_run(cfg: BenchConfig) -> str:
    """What a run would do: the number of units, the methods left out, the plan (nothing timed or written)."""
    grid, plan = build_grid(cfg, measure=False)
    lines = [f"{cfg.tag}: {len(grid.units)} units"] + [f"left out: {m} ({r})" for m, r in grid.skipped.items()]
    lines += EXPERIMENTS[cfg.experiment].plan_lines(cfg, grid, plan)
    lines.append(solver_budget(grid.units))
    return "\n".join(lines)


def run_experiment(cfg: BenchConfig):
    """Run (unless ``cfg.run`` is False) and report one experiment; returns (RunSummary or None, section path)."""
    if cfg.data_dir is None and os.environ.get("MINLP_FS_DATA"):
        cfg.data_dir = os.environ["MINLP_FS_DATA"]
    if cfg.data_dir is not None:
        cfg.data_dir = str(Path(cfg.data_dir).resolve())  # the workers may run elsewhere
    for kind in ("raw", "tables", "figures"):
        writable_folder(cfg.path(kind, "").parent)
    experiment = EXPERIMENTS[cfg.experiment]
    summary, meta_path, raw = None, cfg.path("raw", ".meta.json"), cfg.path("raw", ".jsonl")
    with writer(raw) if cfg.run else contextlib.nullcontext() as append:  # one run per --out: its lock first
        grid, plan = experiment.build(cfg, cfg.run)
        if cfg.run:
            summary = run_units(grid.units, experiment.unit, raw, n_jobs=cfg.jobs, backend=cfg.backend,
                                scheduler=cfg.scheduler, progress=cfg.progress, context={"data_dir": cfg.data_dir},
                                desc=cfg.tag, append=append)
            write_json(meta_path, {
                "command": command_line(), "machine": machine(), "date": datetime.date.today().isoformat(),
                "workers": f"{cfg.jobs} worker(s), joblib backend `{cfg.backend}`",
                "last_run": f"{summary.n_run} run, {summary.n_skipped} resumed from the file, "
                            f"{summary.wall_time_s / 60:.1f} min wall" + (", interrupted" if summary.interrupted else "")})
    records, superseded = match_records(read_records(raw), grid.units)
    lines, figs = experiment.render(cfg, grid, plan, records)
    lines = _header(cfg, grid, records, superseded, read_json(meta_path)) + lines
    lines += ["", "Figures:", ""] + [cfg.link(f) for f in figs]
    path = cfg.path("tables", ".md")
    write_text(path, "\n".join(lines) + "\n")
    write_table_csvs(path)
    update_results(Path(cfg.out) / "RESULTS.md", Path(cfg.out) / "experiments" / "tables", tuple(EXPERIMENTS))
    return summary, path


def _limits(records) -> str:
    limits = sorted({r["unit"]["options"]["time_limit"] for r in records})
    return ", ".join(f"{t:g} s" for t in limits)


def _header(cfg: BenchConfig, grid, records, superseded, meta: dict) -> list:
    n_err = sum("error" in r for r in records)
    unit_s = sum(r.get("unit_time_s", 0.0) for r in records)
    keys = {unit_key(u) for u in grid.units}
    answered = [r for r in records if unit_key(r["unit"]) not in keys]   # by other runs than their own
    longer = [r for r in answered if "time_limit" in (r["unit"].get("options") or {})]
    other = [r for r in answered if "time_limit" not in (r["unit"].get("options") or {})]
    by = ([f"{len(longer)} unit(s) answered by a re-run with a longer time limit ({_limits(longer)})"] if longer else []) \
        + ([f"{len(other)} by another exact method's certified run "
            f"({', '.join(sorted({r['unit']['method'] for r in other}))})"] if other else [])
    lines = [f"### {EXPERIMENTS[cfg.experiment].title}" + (" — quick slice" if cfg.quick else ""), "",
             f"- command: `{meta.get('command', command_line())}`",
             f"- machine: {meta.get('machine', machine())}; {meta.get('workers', '')}",
             f"- date: {meta.get('date', '?')}; units in the grid: {len(grid.units)}, in the raw file: "
             f"{len(records)} ({n_err} failed), sum of unit times {unit_s / 60:.1f} min"
             + (f"; last run: {meta['last_run']}" if "last_run" in meta else ""),
             *([f"- {' and '.join(by)}, which superseded {len(superseded)} record(s) of "
                f"{sum(r.get('unit_time_s', 0.0) for r in superseded) / 60:.1f} min (not in the sum above)"]
               if answered else []),
             f"- slice: datasets {', '.join(cfg.pick('datasets'))}; kernels {', '.join(cfg.pick('kernels'))}; "
             f"senses {', '.join(cfg.pick('senses'))}; methods {', '.join(cfg.pick('methods'))}"
             + (f"; external solvers limited to {cfg.pick('solver_time_limit'):g} s per run"
                if cfg.pick("solver_time_limit") and _has_external_solver(cfg) else ""),
             f"- raw results: `{cfg.path('raw', '.jsonl').as_posix()}`"]
    for method, reason in grid.skipped.items():
        lines.append(f"- left out: {method} ({reason})")
    if len(records) < len(grid.units):
        lines.append(f"- **incomplete**: {len(grid.units) - len(records)} units not run yet (rerun the command to resume)")
    if cfg.quick:
        full = f"minlp-fs bench {cfg.experiment} --jobs {max(2, cfg.jobs)}" + (
            " --data-dir DIR" if cfg.data_dir else "")
        lines.append(f"- this is the quick slice of the full grid, `{full}`")
    return lines + [""]


def _has_external_solver(cfg: BenchConfig) -> bool:
    """Some method of the run is an external solver (gets the solver time limit)."""
    return EXPERIMENTS[cfg.experiment].external_solvers and \
        any(canonical_name(m) not in OWN_METHODS for m in cfg.pick("methods"))
