"""The experiment grids of the paper's section 5 and appendix app:param, as lists of units.

* **certified** (Tables cert-poly, cert-rbf, cert-rfe): datasets x {poly2, poly3, poly5, rbf} x
  B in [1, B_max] x senses (B_max per kernel and sense); per instance one exact unit (the certified
  optimum: ``enumerate``, or ``bnb`` where certify's ``auto`` picks it) and one unit
  per method, every start-dependent method from the same deterministic alpha-start.
* **multistart** (Table b2-summary): B = floor(n/2); every start-dependent method from the same
  ``n_starts`` random subsets (:func:`~minlp_fs.heuristics.multistart.shared_starts`, written into
  the units, run i with ``seed`` i), the deterministic ones (RFE) once; an ``enumerate`` unit where
  C(n, B) <= ``certify_max_subsets``.
* **params** (appendix app:param, reduced): B in {0.1n, ..., 0.5n}; LS* varying re-fit fraction,
  #Samples and OptWindow one at a time, ACSO* varying #SolPool and OptWindow (polynomial kernels),
  the others at the paper's values, all from the alpha-start.

Methods whose module cannot be imported, or which do not apply to a kernel (ACSO* needs a
polynomial kernel), are left out and reported in ``skipped``.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from ..datasets import DATA_ENV, PAPER_DATASETS, load_dataset, make_synthetic
from ..heuristics.multistart import shared_starts
from ..methods import canonical_name, method_class
from .store import unit_key
from .units import exact_options, solver_options, unavailable_reason

KERNELS = ("poly2", "poly3", "poly5", "rbf")
SENSES = ("paper", "fit")
CERTIFIED_METHODS = ("ls*", "acso*", "ipopt", "rfe1", "rfe2")
MULTISTART_METHODS = ("ls*", "acso*", "rfe1", "rfe2", "ipopt")
N_STARTS = 10
#: the parameter study: method -> option -> values (the paper's ranges); 1e-9 re-fits the single best
PARAM_VALUES = {
    "ls*": {"refit_fraction": (1e-9, 0.05, 0.1, 0.5, 1.0), "n_samples": (100, 200, 500, 1000),
            "opt_window": (5, 10, 15)},
    "acso*": {"pool_size": (10, 50, 100, 200), "opt_window": (5, 10, 15)},
}
PARAM_DEFAULTS = {"ls*": {"refit_fraction": 0.1, "n_samples": 200, "opt_window": 10},
                  "acso*": {"pool_size": 100, "opt_window": 10}}
B_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass
class Grid:
    """The distinct units of an experiment, in order, and the methods left out with the reason."""

    units: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)
    keys: set = field(default_factory=set, repr=False)

    def add(self, unit: dict) -> None:
        key = unit_key(unit)
        if key not in self.keys:
            self.keys.add(key)
            self.units.append(unit)


def dataset_shape(dataset: str, data_dir=None) -> tuple:
    """(m, n) of a named dataset without building an instance from it.

    ``synthetic``: the generator's default shape; a ``<name>.csv`` in ``data_dir`` (or
    ``$MINLP_FS_DATA``): its header (n = columns - 1, the label) and its number of data lines;
    otherwise the paper's table (``bcd`` is built in). A name none of these knows goes to the
    loader, which says what is missing.
    """
    if dataset == "synthetic":
        return make_synthetic(seed=0).X.shape
    key = str(dataset).strip().lower()
    folder = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    path = None if folder is None else Path(folder) / f"{key}.csv"
    if path is not None and path.is_file():
        with path.open(newline="", encoding="utf-8", errors="replace") as fh:
            header = next(csv.reader(fh), [])
            m = sum(1 for line in fh if line.strip())
        return m, len(header) - 1
    if key in PAPER_DATASETS and (key == "bcd" or folder is None):
        return PAPER_DATASETS[key]
    return load_dataset(dataset, data_dir).X.shape


def solver_budget(units) -> str:
    """How much the external solvers may add: runs x their time limit, in wall hours on this machine."""
    limits = [u["options"]["time_limit"] for u in units if "time_limit" in u.get("options", {})]
    return (f"external solver runs: {len(limits)}, at most {sum(limits) / 3600 / (os.cpu_count() or 1):.1f} h wall "
            f"on {os.cpu_count()} core(s) at their time limits") if limits else "no external solver runs"


def usable(grid: Grid, method: str, kernel: str) -> bool:
    reason = unavailable_reason(method, kernel)
    if reason is not None:
        grid.skipped.setdefault(canonical_name(method), reason)
    return reason is None


def certified_grid(datasets, bmax: dict, kernels=KERNELS, senses=SENSES, methods=CERTIFIED_METHODS,
                   solver_time_limit: float | None = None, exact=None, exact_time_limit: float | None = None,
                   planned: dict | None = None) -> Grid:
    """The exact method plus every method on B = 1..B_max (one deterministic run each).

    ``bmax[dataset]``: B_max, or ``{kernel: B_max}``, or ``{kernel: {sense: B_max}}``.
    ``exact(dataset, kernel, B, sense)``: the name of the exact method certifying an instance (default:
    ``enumerate`` everywhere; the certified experiment passes :func:`exact_method`, certify's ``auto``
    choice). ``exact_time_limit``: seconds per bnb unit, in the unit's options
    (:func:`~minlp_fs.experiments.units.exact_options`), and per enumeration unit above ``planned[dataset]``
    (the B_max of enumeration's hours budget; default: every enumeration unit is planned, none gets a limit)."""
    grid = Grid()
    for ds in datasets:
        for kernel in kernels:
            tops = bmax[ds][kernel] if isinstance(bmax[ds], dict) else bmax[ds]
            tops = tops if isinstance(tops, dict) else dict.fromkeys(senses, tops)
            for B in range(1, max(tops[s] for s in senses) + 1):
                for sense in (s for s in senses if B <= tops[s]):
                    base = {"dataset": ds, "kernel": kernel, "B": B, "sense": sense}
                    name = "enumerate" if exact is None else exact(ds, kernel, B, sense)
                    opts = exact_options(name, exact_time_limit, planned is None or B <= planned[ds])
                    grid.add({**base, "method": name, **({"options": opts} if opts else {})})
                    for meth in methods:
                        if usable(grid, meth, kernel):
                            opts = solver_options(meth, solver_time_limit)
                            grid.add({**base, "method": canonical_name(meth), **({"options": opts} if opts else {})})
    return grid


def exact_method(n: int, method: str = "auto"):
    """``exact(dataset, kernel, B, sense)`` for :func:`certified_grid`: ``minlp-fs certify --method``'s choice
    (:func:`minlp_fs.exact.cli.certify_method`; ``auto``: bnb where its bounds hold (polynomial kernels, the
    Gaussian kernel's fit sense) above its subset threshold, else enumeration) on a dataset with ``n[dataset]``
    features."""
    from ..exact.cli import certify_method
    from ..kernels import make_kernel

    def choose(ds, kernel, B, sense):
        return certify_method(SimpleNamespace(n=n[ds], B=B, kernel=make_kernel(kernel), sense=sense), method, None)
    return choose


def multistart_grid(datasets, data_dir=None, kernels=KERNELS, senses=SENSES, methods=MULTISTART_METHODS,
                    n_starts: int = N_STARTS, solver_time_limit: float | None = None,
                    certify_max_subsets: int = 0, start_seed: int = 0) -> Grid:
    """B = floor(n/2); the same ``n_starts`` random subsets (drawn with ``start_seed``) for every method."""
    grid = Grid()
    for ds in datasets:
        n = dataset_shape(ds, data_dir)[1]
        B = max(1, n // 2)
        starts = shared_starts(SimpleNamespace(n=n, B=B), n_starts, seed=start_seed)  # reads n and B only
        for kernel in kernels:
            for sense in senses:
                base = {"dataset": ds, "kernel": kernel, "B": B, "sense": sense}
                if math.comb(n, B) <= certify_max_subsets:
                    grid.add({**base, "method": "enumerate"})
                for meth in methods:
                    if not usable(grid, meth, kernel):
                        continue
                    name = canonical_name(meth)
                    opts = solver_options(meth, solver_time_limit)
                    extra = {"options": opts} if opts else {}
                    if method_class(name).uses_start:
                        for i, start in enumerate(starts):
                            grid.add({**base, "method": name, "start": list(start), "seed": i, **extra})
                    else:
                        grid.add({**base, "method": name, **extra})
    return grid


def budgets(n: int, fractions=B_FRACTIONS) -> list:
    """The distinct budgets round(f n) (at least 1) for the fractions f."""
    return sorted({max(1, int(round(f * n))) for f in fractions})


def params_grid(datasets, data_dir=None, kernels=KERNELS, senses=("paper",), fractions=B_FRACTIONS,
                param_values=PARAM_VALUES) -> Grid:
    """One-at-a-time variation of each heuristic's parameters around the paper's values."""
    grid = Grid()
    for ds in datasets:
        n = dataset_shape(ds, data_dir)[1]
        for kernel in kernels:
            for B in budgets(n, fractions):
                for sense in senses:
                    base = {"dataset": ds, "kernel": kernel, "B": B, "sense": sense}
                    for meth, studied in param_values.items():
                        if not usable(grid, meth, kernel):
                            continue
                        for opt, values in studied.items():
                            for value in values:
                                options = {**PARAM_DEFAULTS[meth], opt: value}
                                grid.add({**base, "method": meth, "options": options})
    return grid
