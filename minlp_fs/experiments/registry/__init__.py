"""The experiments of ``minlp-fs bench``, one module each: its grid, its unit function and its renderer.

Each module here defines ``TITLE`` (the section's heading), ``build(cfg, measure)`` (the units, a
:class:`~minlp_fs.experiments.grids.Grid`, and a plan or None; ``measure=False`` never times
anything, for ``--dry-run`` and ``--report-only``), ``unit(unit, data_dir)`` (one unit's record,
run in a worker) and ``render(cfg, grid, plan, records)`` (the section's markdown lines and its
figures); optionally ``plan_lines(cfg, grid, plan)`` (what ``--dry-run`` prints beyond the unit
count) and ``EXTERNAL_SOLVERS`` (its methods may include external solvers, limited by
``--solver-time-limit``). Adding an experiment = one module, its slices in
:mod:`~minlp_fs.experiments.slices`, one entry in :data:`EXPERIMENTS`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import accuracy, certified, multistart, params


def _nothing(cfg, grid, plan) -> list:
    return []


@dataclass(frozen=True)
class Experiment:
    """One experiment of the paper, as the pipeline runs it."""

    name: str
    title: str
    build: Callable
    unit: Callable
    render: Callable
    plan_lines: Callable = _nothing
    external_solvers: bool = False


def _from(name: str, module) -> Experiment:
    return Experiment(name, module.TITLE, module.build, module.unit, module.render,
                      getattr(module, "plan_lines", _nothing), getattr(module, "EXTERNAL_SOLVERS", False))


#: the experiments, in the order of their sections in RESULTS.md
EXPERIMENTS = {name: _from(name, module) for name, module in
               (("certified", certified), ("multistart", multistart), ("params", params), ("accuracy", accuracy))}
