"""The certified grid (Tables cert-poly, cert-rbf, cert-rfe, cert-coverage; appendix app:cert).

Each instance is certified by the fastest exact method, ``minlp-fs certify --method auto``'s choice
(:func:`~minlp_fs.experiments.grids.exact_method`: branch-and-bound where its bounds hold, the polynomial
kernels and the Gaussian kernel's fit sense, above its subset threshold; enumeration otherwise). Enumeration's
B_max per dataset comes from measured seconds per QP (:mod:`~minlp_fs.experiments.budget`), cached in
``experiments/raw/<tag>.qp_times.json`` so that a resumed run keeps its grid; without measuring
(``--dry-run``, ``--report-only``) an unmeasured time bounds B_max by C(n, B) and n/2 only. Every family goes
on to the paper's B_max (Table cert-coverage; :func:`grid_bmax`): the ones bnb certifies because
branch-and-bound's cost cannot be planned from C(n, B) (benchmarks/RESULTS.md, bench_bnb (e): times of single
runs at the paper's B_max), and the ones enumeration certifies (the Gaussian kernel's paper sense) beyond
enumeration's plan with the exact units' time limit, because the paper sense stops at the trivial bound as soon
as its incumbent (LS*'s) attains it: German's Gaussian paper sense at B = 6 and 7 in 8 and 1 s, where C(n, B) at
its 20 ms per QP plans 0.75 and 1.9 one-core hours. Both kinds of exact unit, stopped at their limit, report the
gap of their bound.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import replace

from .. import figures, metrics, published, tables
from ..budget import choose_bmax, measure_qp_time
from ...workers import cpu_count
from ..config import BenchConfig
from ..grids import certified_grid, dataset_shape, exact_method, solver_budget
from ..store import StoreWarning, match_records, read_json, read_records, write_json
from ..units import solve_unit as unit
from ...exact.bounds import bnb_bounds
from ...kernels import make_kernel

TITLE = "Certified grid (Tables cert-poly, cert-rbf, cert-rfe, cert-coverage)"
EXTERNAL_SOLVERS = True


def _valid_time(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def qp_times(cfg: BenchConfig, datasets, kernels, measure: bool = True) -> dict:
    """Seconds per QP for each ``"dataset|kernel"``, cached in experiments/raw/<tag>.qp_times.json.

    The cache also keeps the 1-minute load average at the last measurement (other jobs slow it
    down). Entries that are not positive numbers are dropped with a warning (and measured again).
    ``measure=False``: the cached times only (nothing is timed, nothing written).
    """
    path = cfg.path("raw", ".qp_times.json")
    cache = read_json(path)
    bad = [k for k, v in cache.items() if k != "load_average" and not _valid_time(v)]
    if bad:
        warnings.warn(f"{path}: ignored {len(bad)} entr(ies) that are not times ({', '.join(bad[:5])})",
                      StoreWarning, stacklevel=2)
    cache = {k: v for k, v in cache.items() if k not in bad}
    for ds in datasets:
        for k in kernels:
            if measure and f"{ds}|{k}" not in cache:
                cache[f"{ds}|{k}"] = measure_qp_time(ds, k, cfg.data_dir)
                cache["load_average"] = round(os.getloadavg()[0], 2)
                path.parent.mkdir(parents=True, exist_ok=True)
                write_json(path, cache)
    return cache


def enumerated_families(cfg: BenchConfig) -> list:
    """The (kernel, sense) of the slice that enumeration certifies: with certify's ``auto`` those without bnb
    bounds (the Gaussian kernel's paper sense), else all; none left: all (a plan for the small B of the others)."""
    families = [(k, s) for k in cfg.pick("kernels") for s in cfg.pick("senses")]
    enumerated = [(k, s) for k, s in families if cfg.exact_method != "auto" or not bnb_bounds(make_kernel(k), s)]
    return enumerated or families


def plans(cfg: BenchConfig, measure: bool = True) -> list:
    """Enumeration's B_max of each dataset of the grid (appendix app:cert), from the measured QP times (NaN =
    unmeasured), for the families enumeration certifies (:func:`enumerated_families`); beyond it the grid goes on
    to :func:`grid_bmax` with time-limited exact units."""
    datasets, families = cfg.pick("datasets"), enumerated_families(cfg)
    kernels = sorted({k for k, _ in families})
    times = qp_times(cfg, datasets, kernels, measure)
    out = []
    for ds in datasets:
        m, n = dataset_shape(ds, cfg.data_dir)
        t = sum(times.get(f"{ds}|{k}", math.nan) for k, _ in families) / len(families)
        out.append(choose_bmax(ds, n, m, t, len(families), 1, cfg.pick("hours"),
                               n_cores=cpu_count(), b_cap=cfg.slice.b_cap))
    return out


def grid_bmax(cfg: BenchConfig, plan) -> dict:
    """B_max per dataset of the grid, every family: the paper's (Table cert-coverage), at least enumeration's
    plan, at most floor(n/2) and the slice's cap (module docstring)."""
    out = {}
    for p in plan:
        paper = published.COVERAGE.get(p.dataset, (0, 0, p.bmax))[2]
        top = max(1, p.n // 2) if cfg.slice.b_cap is None else max(1, min(p.n // 2, cfg.slice.b_cap))
        out[p.dataset] = max(p.bmax, min(paper, top))
    return out


def build(cfg: BenchConfig, measure: bool = True):
    p = plans(cfg, measure)
    grid = certified_grid(cfg.pick("datasets"), grid_bmax(cfg, p), kernels=cfg.pick("kernels"),
                          senses=cfg.pick("senses"), methods=cfg.pick("methods"),
                          solver_time_limit=cfg.pick("solver_time_limit"),
                          exact=exact_method({x.dataset: x.n for x in p}, cfg.exact_method),
                          exact_time_limit=cfg.pick("exact_time_limit"), planned={x.dataset: x.bmax for x in p})
    return grid, p


def _unmeasured(plan) -> list:
    return [p.dataset for p in plan if math.isnan(p.qp_time_s)]


def _hours(plan, digits: int) -> str:
    """Estimated wall hours of the plan's enumeration ("unknown" while a QP time is unmeasured)."""
    return "unknown" if _unmeasured(plan) else f"{sum(p.hours for p in plan):.{digits}f} h"


def plan_lines(cfg: BenchConfig, grid, plan) -> list:
    unmeasured = _unmeasured(plan)
    lines = ["", tables.coverage_table(plan, [], cpu_count(), grid_bmax(cfg, plan)),
             f"\nestimated enumeration: {_hours(plan, 2)} wall on {cpu_count()} core(s)"]
    if unmeasured:
        lines.append(f"QP time not measured yet for {', '.join(unmeasured)} (the run measures it, about 1.5 s per "
                     "dataset and kernel): their B_max is bounded by C(n, B) <= 1e8 and n/2 only")
    return lines


def _load_note(cfg: BenchConfig) -> str:
    load = read_json(cfg.path("raw", ".qp_times.json")).get("load_average")
    return "" if load is None else f" (ms/QP measured at a load average of {load:g})"


#: the issue's budget for certifying the polynomial kernels at the paper's B_max on this 2-core machine (hours)
TARGET_HOURS = 8.0


def reach_lines(cfg: BenchConfig, grid, records) -> list:
    """The per-kernel, per-sense coverage (:func:`tables.reach_table`) and the hours spent against
    :data:`TARGET_HOURS`."""
    reach = metrics.certification_reach(records, grid.units)
    exact_h = sum(e["exact_s"] for e in reach.values()) / 3600
    all_h = sum(e["all_s"] for e in reach.values()) / 3600
    limit = cfg.pick("exact_time_limit")
    superseded = match_records(read_records(cfg.path("raw", ".jsonl")), grid.units)[1]
    super_h = sum(map(metrics.core_seconds, superseded)) / 3600
    poly = [(k, e) for k, e in reach.items() if metrics.family(k[1]) == "poly" and k[0] in published.COVERAGE]
    at_paper = sum(e["reach"] >= published.COVERAGE[k[0]][2] for k, e in poly)
    rbf = {s: [e["reach"] >= published.COVERAGE[k[0]][2] for k, e in reach.items()
               if k[1] == "rbf" and k[2] == s and k[0] in published.COVERAGE] for s in cfg.pick("senses")}
    rbf_text = "; Gaussian kernel: " + ", ".join(f"{sum(v)} of {len(v)} datasets in the {s} sense"
                                                 for s, v in rbf.items() if v) if any(rbf.values()) else ""
    return ["#### Coverage per kernel and sense: largest B certified for every B' <= B (paper's B_max beside)", "",
            "Exact method: `bnb` (branch-and-bound, "
            + (f"{limit:g} s per run" if limit else "no time limit")
            + ("; longer where the section's header names a re-run" if superseded else "")
            + ") or `enumerate` (certify `--method auto`'s choice; beyond enumeration's plan with the same time "
              "limit); an exact run stopped at its time limit is not certified: its gap is 100 |global bound - "
              "incumbent| / |incumbent| when it stopped (enumeration's bound: the paper sense's trivial one), and the "
              "quality tables leave its instance out. Hours are sums of unit times in one-core hours (a unit run "
              "on k processes counts k times its wall time).", "",
            tables.reach_table(reach, cfg.pick("senses")), "",
            f"Polynomial kernels certified up to the paper's B_max: {at_paper} of {len(poly)} (dataset, kernel, "
            f"sense){rbf_text}. Hours spent: {exact_h:.2f} h by the exact units, {all_h:.2f} h by all units of the grid"
            + (f", plus {super_h:.2f} h of the runs that other runs superseded (longer re-runs, or another exact "
               f"method's answer) ({all_h + super_h:.2f} h in all)"
               if superseded else "")
            + f"; {(all_h + super_h) / cpu_count():.2f} h of this machine's time with its {cpu_count()} core(s) "
            f"busy (the issue's target: the paper's B_max certified for every polynomial instance, both senses, "
            f"within {TARGET_HOURS:g} h on this 2-core machine).", ""]


def render(cfg: BenchConfig, grid, plan, records) -> tuple:
    lines = ["#### Coverage (Table cert-coverage); <u>B_max</u> < floor(n/2)", "",
             f"Budget: {cfg.pick('hours'):g} h of enumeration per dataset on this machine's "
             f"{cpu_count()} core(s){_load_note(cfg)}, "
             f"C(n, B) <= 1e8" + (f", B <= {cfg.slice.b_cap}" if cfg.slice.b_cap else "")
             + "; QPs planned count the (kernel, sense) families enumeration certifies ("
             + ", ".join(f"{k} {s}" for k, s in enumerated_families(cfg))
             + "), and the paper sense stops early at the trivial bound, so it solves fewer. B_max (grid): every "
               "family goes on to the paper's B_max, by bnb or, beyond enumeration's plan, by enumeration with the "
               "exact units' time limit. Paper: 128 vCPUs.", "",
             tables.coverage_table(plan, records, cpu_count(), grid_bmax(cfg, plan)), ""]
    lines += reach_lines(cfg, grid, records)
    full = replace(cfg, quick=False)
    if cfg.quick and full.path("raw", ".qp_times.json").is_file():
        full_grid, p = build(full, measure=False)
        lines += [f"Plan of the full grid (`minlp-fs bench certified --dry-run`, {full.pick('hours'):g} h per "
                  f"dataset{_load_note(full)}): {_hours(p, 1)} of enumeration in all; "
                  f"{solver_budget(full_grid.units)}; not run yet.", "",
                  tables.coverage_table(p, [], cpu_count(), grid_bmax(full, p)), ""]
    summ = metrics.certified_summary(records)
    figs = []
    for sense in cfg.pick("senses"):
        for fam in ("poly", "rbf"):
            if any(r["key"][:2] == (sense, fam) for r in summ["rows"]):
                lines += [f"#### Sense `{sense}`, {'polynomial kernels' if fam == 'poly' else 'Gaussian kernel'}"
                          + (" (paper: Tables cert-poly/cert-rfe)" if fam == "poly" else
                             " (paper: Tables cert-rbf/cert-rfe)") * (sense == "paper"), "",
                          tables.certified_table(summ, sense, fam), ""]
                figs += [figures.cert_gap_by_B(summ, sense, cfg.figure(f"gapB-{fam}-{sense}"), fam),
                         figures.cert_times(summ, sense, cfg.figure(f"time-{fam}-{sense}"), fam)]
    lines.append(f"`gap %` = mean gap to the certified optimum (failed runs excluded); `# solved` = gap <= "
                 f"{metrics.REACHED_PCT:g} %; times are each method's own wall time.")
    return lines, figs
