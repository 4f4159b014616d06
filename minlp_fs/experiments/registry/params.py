"""The parameter study (appendix app:param, reduced grid; Figures param-ls, param-ao)."""
from __future__ import annotations

from ...methods import canonical_name
from .. import figures, metrics, tables
from ..config import BenchConfig
from ..grids import PARAM_DEFAULTS, PARAM_VALUES, params_grid
from ..published import PARAM_CHOICE
from ..units import solve_unit as unit

TITLE = "Parameter study (appendix app:param, reduced grid)"


def build(cfg: BenchConfig, measure: bool = True):
    wanted = {canonical_name(m) for m in cfg.pick("methods")}
    values = {m: v for m, v in PARAM_VALUES.items() if m in wanted}
    return params_grid(cfg.pick("datasets"), cfg.data_dir, kernels=cfg.pick("kernels"), senses=cfg.pick("senses"),
                       fractions=cfg.slice.fractions, param_values=values), None


def render(cfg: BenchConfig, grid, plan, records) -> tuple:
    ps = metrics.params_summary(records, PARAM_DEFAULTS)
    lines = [tables.params_table(ps), "",
             "Gap to the best solution of all configurations on each case; bold = the paper's choice; "
             "`single` = re-fit only the best screened candidate. Paper figures are its means over 2160 "
             "cases (its text quotes them; `-` where it gives only a curve).", ""]
    return lines, [figures.params_figure(ps, cfg.figure("params"), PARAM_CHOICE)]
