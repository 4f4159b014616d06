"""One experiment end to end: grid -> units run (resumable) -> tables, figures, RESULTS.md section.

Files under the output folder ``out`` (``benchmarks/`` by default), tag = experiment name plus
``-quick`` for the quick slice: ``experiments/raw/<tag>.jsonl`` (one record per unit, written as
units finish), ``experiments/raw/<tag>.meta.json`` (the command, machine and date of the last run),
``experiments/raw/<tag>.qp_times.json`` (certified: the measured time per QP that fixes B_max,
reused on resume so the grid does not move), ``experiments/tables/<tag>.md`` (the section) and
``figures/<tag>-*.png``; then the experiments section of ``out/RESULTS.md`` is rebuilt.
"""
from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from ..api import build_instance
from ..methods import canonical_name
from . import figures, metrics, paper, tables
from .accuracy import accuracy_grid, accuracy_unit
from .budget import choose_bmax, measure_qp_time
from .grids import (
    PARAM_DEFAULTS,
    PARAM_VALUES,
    certified_grid,
    multistart_grid,
    params_grid,
)
from .report import command_line, machine, update_results
from .runner import read_records, run_units, unit_key
from .slices import SLICES
from .units import OWN_METHODS, solve_unit

EXPERIMENTS = tuple(SLICES)


@dataclass
class BenchConfig:
    """What ``minlp-fs bench`` was asked; None fields take the slice's values."""

    experiment: str
    quick: bool = False
    data_dir: str | None = None
    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    out: Path = Path("benchmarks")
    senses: tuple | None = None
    datasets: tuple | None = None
    methods: tuple | None = None
    hours: float | None = None
    solver_time_limit: float | None = None
    run: bool = True
    progress: bool = True
    kernels: tuple | None = None

    @property
    def tag(self) -> str:
        return self.experiment + ("-quick" if self.quick else "")

    @property
    def slice(self):
        return SLICES[self.experiment]["quick" if self.quick else "full"]

    def pick(self, name: str):
        mine = getattr(self, name, None)
        return getattr(self.slice, name) if mine is None else mine

    def path(self, kind: str, suffix: str) -> Path:
        """``out/figures/<tag><suffix>`` for figures, ``out/experiments/<kind>/<tag><suffix>`` otherwise."""
        folder = Path(self.out) / "figures" if kind == "figures" else Path(self.out) / "experiments" / kind
        return folder / f"{self.tag}{suffix}"


def _qp_times(cfg: BenchConfig, datasets, kernels) -> dict:
    """Measured seconds per QP for each (dataset, kernel), cached in experiments/raw/<tag>.qp_times.json.

    The cache also keeps the 1-minute load average at the last measurement (other jobs slow it down).
    """
    path = cfg.path("raw", ".qp_times.json")
    cache = json.loads(path.read_text()) if path.is_file() else {}
    for ds in datasets:
        for k in kernels:
            if f"{ds}|{k}" not in cache:
                cache[f"{ds}|{k}"] = measure_qp_time(ds, k, cfg.data_dir)
                cache["load_average"] = round(os.getloadavg()[0], 2)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(cache, indent=1))
    return cache


def plans(cfg: BenchConfig) -> list:
    """B_max of each dataset of the certified grid (appendix app:cert), from measured QP times."""
    s, datasets, kernels, senses = cfg.slice, cfg.pick("datasets"), cfg.pick("kernels"), cfg.pick("senses")
    times = _qp_times(cfg, datasets, kernels)
    out = []
    for ds in datasets:
        inst = build_instance(ds, cfg.data_dir, B=1)
        n, m = inst.n, inst.m
        t = sum(times[f"{ds}|{k}"] for k in kernels) / len(kernels)
        out.append(choose_bmax(ds, n, m, t, len(kernels), len(senses), cfg.pick("hours"),
                               n_cores=os.cpu_count() or 1, b_cap=s.b_cap))
    return out


def build_grid(cfg: BenchConfig):
    """The experiment's units (a Grid), and the certified grid's plans (else None)."""
    s = cfg.slice
    common = dict(kernels=cfg.pick("kernels"), senses=cfg.pick("senses"), methods=cfg.pick("methods"))
    if cfg.experiment == "certified":
        p = plans(cfg)
        return certified_grid(cfg.pick("datasets"), {x.dataset: x.bmax for x in p},
                              solver_time_limit=cfg.pick("solver_time_limit"), **common), p
    if cfg.experiment == "multistart":
        return multistart_grid(cfg.pick("datasets"), cfg.data_dir, n_starts=s.n_starts,
                               solver_time_limit=cfg.pick("solver_time_limit"),
                               certify_max_subsets=s.certify_max_subsets, **common), None
    if cfg.experiment == "params":
        wanted = {canonical_name(m) for m in cfg.pick("methods")}
        values = {m: v for m, v in PARAM_VALUES.items() if m in wanted}
        return params_grid(cfg.pick("datasets"), cfg.data_dir, kernels=common["kernels"], senses=common["senses"],
                           fractions=s.fractions, param_values=values), None
    return accuracy_grid(cfg.pick("datasets"), B=s.B, **common), None


def dry_run(cfg: BenchConfig) -> str:
    """What a run would do: the number of units, the methods left out, the certified grid's plan."""
    grid, plan = build_grid(cfg)
    lines = [f"{cfg.tag}: {len(grid.units)} units"] + [f"left out: {m} ({r})" for m, r in grid.skipped.items()]
    if plan is not None:
        lines += ["", tables.coverage_table(plan, [], os.cpu_count() or 1),
                  f"\nestimated enumeration: {sum(p.hours for p in plan):.2f} h wall on {os.cpu_count()} core(s)"]
    lines.append(_solver_budget(grid.units))
    return "\n".join(lines)


def _solver_budget(units) -> str:
    """How much the external solvers may add: runs x their time limit, in wall hours on this machine."""
    limits = [u["options"]["time_limit"] for u in units if "time_limit" in u.get("options", {})]
    return (f"external solver runs: {len(limits)}, at most {sum(limits) / 3600 / (os.cpu_count() or 1):.1f} h wall "
            f"on {os.cpu_count()} core(s) at their time limits") if limits else "no external solver runs"


def run_experiment(cfg: BenchConfig):
    """Run (unless ``cfg.run`` is False) and report one experiment; returns (RunSummary or None, section path)."""
    if cfg.data_dir is None and os.environ.get("MINLP_FS_DATA"):
        cfg.data_dir = os.environ["MINLP_FS_DATA"]
    if cfg.data_dir is not None:
        cfg.data_dir = str(Path(cfg.data_dir).resolve())  # the workers may run elsewhere
    grid, plan = build_grid(cfg)
    fn = accuracy_unit if cfg.experiment == "accuracy" else solve_unit
    summary, meta_path = None, cfg.path("raw", ".meta.json")
    if cfg.run:
        summary = run_units(grid.units, fn, cfg.path("raw", ".jsonl"), n_jobs=cfg.jobs, backend=cfg.backend,
                            scheduler=cfg.scheduler, progress=cfg.progress, context={"data_dir": cfg.data_dir},
                            desc=cfg.tag)
        meta = {"command": command_line(), "machine": machine(), "date": datetime.date.today().isoformat(),
                "workers": f"{cfg.jobs} worker(s), joblib backend `{cfg.backend}`",
                "last_run": f"{summary.n_run} run, {summary.n_skipped} resumed from the file, "
                            f"{summary.wall_time_s / 60:.1f} min wall" + (", interrupted" if summary.interrupted else "")}
        meta_path.write_text(json.dumps(meta, indent=1))
    keys = {unit_key(u) for u in grid.units}
    records = [r for r in read_records(cfg.path("raw", ".jsonl")) if unit_key(r["unit"]) in keys]
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    section = render(cfg, grid, plan, records, meta)
    path = cfg.path("tables", ".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(section)
    update_results(Path(cfg.out) / "RESULTS.md", Path(cfg.out) / "experiments" / "tables")
    return summary, path


TITLES = {"certified": "Certified grid (Tables cert-poly, cert-rbf, cert-rfe, cert-coverage)",
          "multistart": "Multistart at B = floor(n/2) (Table b2-summary)",
          "params": "Parameter study (appendix app:param, reduced grid)",
          "accuracy": "Held-out accuracy (stratified 5-fold CV, selection on the training folds)"}


def _header(cfg: BenchConfig, grid, records, meta: dict) -> list:
    n_err = sum("error" in r for r in records)
    unit_s = sum(r.get("unit_time_s", 0.0) for r in records)
    lines = [f"### {TITLES[cfg.experiment]}" + (" — quick slice" if cfg.quick else ""), "",
             f"- command: `{meta.get('command', command_line())}`",
             f"- machine: {meta.get('machine', machine())}; {meta.get('workers', '')}",
             f"- date: {meta.get('date', '?')}; units in the grid: {len(grid.units)}, in the raw file: "
             f"{len(records)} ({n_err} failed), sum of unit times {unit_s / 60:.1f} min"
             + (f"; last run: {meta['last_run']}" if "last_run" in meta else ""),
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


def _load_note(cfg: BenchConfig) -> str:
    path = cfg.path("raw", ".qp_times.json")
    load = json.loads(path.read_text()).get("load_average") if path.is_file() else None
    return "" if load is None else f" (ms/QP measured at a load average of {load:g})"


def _has_external_solver(cfg: BenchConfig) -> bool:
    """Some method of the run is an external solver (gets the solver time limit)."""
    return cfg.experiment in ("certified", "multistart") and \
        any(canonical_name(m) not in OWN_METHODS for m in cfg.pick("methods"))


def _fig(cfg: BenchConfig, name: str) -> Path:
    return cfg.path("figures", f"-{name}.png")


def _link(cfg: BenchConfig, path: Path) -> str:
    return f"![{path.stem}]({path.relative_to(Path(cfg.out)).as_posix()})"


def render(cfg: BenchConfig, grid, plan, records, meta: dict) -> str:
    """The markdown section of one experiment (``meta``: how the raw file was made), and its figures."""
    lines = _header(cfg, grid, records, meta)
    senses = cfg.pick("senses")
    figs = []
    if cfg.experiment == "certified":
        lines += ["#### Coverage (Table cert-coverage); <u>B_max</u> < floor(n/2)", "",
                  f"Budget: {cfg.pick('hours'):g} h of enumeration per dataset on this machine's "
                  f"{os.cpu_count()} core(s){_load_note(cfg)}, "
                  f"C(n, B) <= 1e8" + (f", B <= {cfg.slice.b_cap}" if cfg.slice.b_cap else "")
                  + "; QPs planned count both senses and all kernels of the slice (the paper sense stops early "
                    "at the trivial bound, so it solves fewer). Paper: 128 vCPUs.", "",
                  tables.coverage_table(plan, records, os.cpu_count() or 1), ""]
        full = replace(cfg, quick=False)
        if cfg.quick and full.path("raw", ".qp_times.json").is_file():
            p = plans(full)
            lines += [f"Plan of the full grid (`minlp-fs bench certified --dry-run`, {full.pick('hours'):g} h per "
                      f"dataset{_load_note(full)}): {sum(x.hours for x in p):.1f} h of enumeration in all; "
                      f"{_solver_budget(build_grid(full)[0].units)}; not run yet.", "",
                      tables.coverage_table(p, [], os.cpu_count() or 1), ""]
        summ = metrics.certified_summary(records)
        for sense in senses:
            for fam in ("poly", "rbf"):
                if any(r["key"][:2] == (sense, fam) for r in summ["rows"]):
                    lines += [f"#### Sense `{sense}`, {'polynomial kernels' if fam == 'poly' else 'Gaussian kernel'}"
                              + (" (paper: Tables cert-poly/cert-rfe)" if fam == "poly" else
                                 " (paper: Tables cert-rbf/cert-rfe)") * (sense == "paper"), "",
                              tables.certified_table(summ, sense, fam), ""]
                    figs += [figures.cert_gap_by_B(summ, sense, _fig(cfg, f"gapB-{fam}-{sense}"), fam),
                             figures.cert_times(summ, sense, _fig(cfg, f"time-{fam}-{sense}"), fam)]
        lines.append(f"`gap %` = mean gap to the certified optimum (failed runs excluded); `# solved` = gap <= "
                     f"{metrics.REACHED_PCT:g} %; times are each method's own wall time.")
    elif cfg.experiment == "multistart":
        ms = metrics.multistart_summary(records)
        for sense in senses:
            lines += [f"#### Sense `{sense}`" + (" (paper: Table b2-summary)" if sense == "paper" else ""), "",
                      tables.multistart_table(ms, sense), "", "By dataset (its kernels):", "",
                      tables.multistart_by_dataset(ms, sense), ""]
            kernels = cfg.pick("kernels")
            box_k = "poly3" if "poly3" in kernels else kernels[0]
            figs += [figures.multistart_box(ms, sense, _fig(cfg, f"box-{box_k}-{sense}"), box_k),
                     figures.multistart_profiles(ms, sense, _fig(cfg, f"profiles-{sense}")),
                     figures.multistart_times(ms, sense, _fig(cfg, f"time-{sense}"))]
            if "rbf" in kernels and box_k != "rbf":
                figs.append(figures.multistart_box(ms, sense, _fig(cfg, f"box-rbf-{sense}"), "rbf"))
        lines.append(f"Best known = best value of any method, start or enumeration; certified at B = floor(n/2) "
                     f"(enumeration) on {ms['n_certified']} instances, where the best known equals the certified "
                     f"optimum on {ms['n_best_is_certified']}. Spread = gap of the worst start - gap of the best.")
    elif cfg.experiment == "params":
        ps = metrics.params_summary(records, PARAM_DEFAULTS)
        lines += [tables.params_table(ps), "",
                  "Gap to the best solution of all configurations on each case; bold = the paper's choice; "
                  "`single` = re-fit only the best screened candidate. Paper figures are its means over 2160 "
                  "cases (its text quotes them; `-` where it gives only a curve).", ""]
        figs.append(figures.params_figure(ps, _fig(cfg, "params"), paper.PARAM_CHOICE))
    else:
        rows = metrics.accuracy_summary(records)
        lines += [tables.accuracy_table(rows), "",
                  "The paper reports no held-out accuracy; `sk-rfe-linear` = scikit-learn RFE ranked by a linear "
                  "SVM, `sk-sfs` = SequentialFeatureSelector (forward, 3-fold inner CV) with the same kernel SVC; "
                  "the evaluated classifier is always the kernel SVC (C = 10, gamma = 0.1, c = 1).", ""]
        figs.append(figures.accuracy_figure(rows, _fig(cfg, "accuracy")))
    lines += ["", "Figures:", ""] + [_link(cfg, f) for f in figs]
    return "\n".join(lines) + "\n"
