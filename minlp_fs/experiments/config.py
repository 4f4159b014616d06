"""What ``minlp-fs bench`` was asked (:class:`BenchConfig`) and where its files go.

Files under the output folder ``out`` (``benchmarks/`` by default), tag = experiment name plus
``-quick`` for the quick slice: ``experiments/raw/<tag>.jsonl`` (the results store: one record per
unit), ``experiments/raw/<tag>.meta.json`` (the command, machine and date of the last run),
``experiments/raw/<tag>.qp_times.json`` (certified: the measured time per QP that fixes B_max),
``experiments/tables/<tag>.md`` (the section) and ``figures/<tag>-*.png``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..options import check_integer, check_value
from ..workers import cap_jobs
from .slices import SLICES


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
    exact_time_limit: float | None = None
    exact_method: str = "auto"

    def __post_init__(self):
        check_integer("bench", "--jobs", self.jobs, 1)
        for flag, value in (("--solver-time-limit", self.solver_time_limit),
                            ("--exact-time-limit", self.exact_time_limit), ("--hours", self.hours)):
            check_value("bench", flag, value, float, low=0, low_open=True, none=True)
        if self.scheduler is None:  # workers on this machine: at most its CPUs (a cluster has its own)
            self.jobs = cap_jobs(self.jobs, "bench --jobs")

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

    def figure(self, name: str) -> Path:
        return self.path("figures", f"-{name}.png")

    def link(self, path: Path) -> str:
        """A markdown image link to a figure, relative to the output folder."""
        return f"![{path.stem}]({path.relative_to(Path(self.out)).as_posix()})"
