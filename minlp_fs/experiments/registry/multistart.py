"""Multistart at B = floor(n/2) (Table b2-summary, Figures b2-box, b2-time, b2-pp; section 5.1.2)."""
from __future__ import annotations

from .. import figures, metrics, tables
from ..config import BenchConfig
from ..grids import multistart_grid
from ..units import solve_unit as unit

TITLE = "Multistart at B = floor(n/2) (Table b2-summary)"
EXTERNAL_SOLVERS = True


def build(cfg: BenchConfig, measure: bool = True):
    s = cfg.slice
    return multistart_grid(cfg.pick("datasets"), cfg.data_dir, kernels=cfg.pick("kernels"), senses=cfg.pick("senses"),
                           methods=cfg.pick("methods"), n_starts=s.n_starts,
                           solver_time_limit=cfg.pick("solver_time_limit"),
                           certify_max_subsets=s.certify_max_subsets), None


def render(cfg: BenchConfig, grid, plan, records) -> tuple:
    ms = metrics.multistart_summary(records)
    lines, figs = [], []
    kernels = cfg.pick("kernels")
    box_k = "poly3" if "poly3" in kernels else kernels[0]
    for sense in cfg.pick("senses"):
        lines += [f"#### Sense `{sense}`" + (" (paper: Table b2-summary)" if sense == "paper" else ""), "",
                  tables.multistart_table(ms, sense), "", "By dataset (its kernels):", "",
                  tables.multistart_by_dataset(ms, sense), ""]
        figs += [figures.multistart_box(ms, sense, cfg.figure(f"box-{box_k}-{sense}"), box_k),
                 figures.multistart_profiles(ms, sense, cfg.figure(f"profiles-{sense}")),
                 figures.multistart_times(ms, sense, cfg.figure(f"time-{sense}"))]
        if "rbf" in kernels and box_k != "rbf":
            figs.append(figures.multistart_box(ms, sense, cfg.figure(f"box-rbf-{sense}"), "rbf"))
    lines.append(f"Best known = best value of any method, start or enumeration; certified at B = floor(n/2) "
                 f"(enumeration) on {ms['n_certified']} instances, where the best known equals the certified "
                 f"optimum on {ms['n_best_is_certified']}. Spread = gap of the worst start - gap of the best.")
    return lines, figs
