"""The instance library (``minlp-fs export-library``): the paper's instances as ``.gms`` + ``.nl`` + a CSV.

The **reduced instances** are those of the appendix on general MINLP solvers (sec:baron, Tables "baron
results clev / on bcd / iono / sonar", run by ``benchmarks/bench_solvers.py``, which reads them from
here): problem (4) in the paper sense with the polynomial kernels d in {2, 3, 5} (gamma = 0.1, c = 1),
C = 10, on Cleveland, BCD, Ionosphere and Sonar reduced to m in {10, 50, 100, 150, 200} rows by a
stratified sample (seed 0), B = floor(n/2). ``certified_grid=True`` adds the certified grid of
section 5 (Tables cert-poly, cert-rbf: all rows, kernels poly2/poly3/poly5/rbf, both senses) at every
B whose C(n, B) is at most :data:`CERTIFY_MAX_SUBSETS`.

``library.csv`` has one row per instance in MINLPLib's style: the counts of the model as written
(variables and constraints with ``objvar`` and the objective's row, binaries, Jacobian nonzeros and
the nonlinear ones, as in the ``.gms`` header), the objective sense of the file (always ``min``:
paper, g; fit, the SVM primal P = -g, see :mod:`minlp_fs.models.formulation`), the best known value
and the best bound **in the file's units**, whether the value is certified, and the source
parameters. Values are certified by `certify`'s exact method (``enumerate`` or ``bnb``; the best bound is
then the optimum) when C(n, B) <= :data:`CERTIFY_MAX_SUBSETS`, and also when a value attains the
paper sense's trivial bound (Remark 1). Otherwise the best known value is the better of LS* and
ACSO* (section 3, from the alpha-start; ACSO* only on polynomial kernels, the ``method`` column
names the winner) and the best bound the
formulation's valid objective bound L (paper: the trivial bound -2C min(|I+|, |I-|); fit: P >= 0).
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from ..datasets import PAPER_DATASETS
from ..errors import InputError

#: the reduced instances of the appendix sec:baron (see the module docstring)
REDUCED_DATASETS = ("cleveland", "bcd", "ionosphere", "sonar")
REDUCED_DEGREES = (2, 3, 5)
REDUCED_SIZES = (10, 50, 100, 150, 200)
REDUCED_C, REDUCED_GAMMA, REDUCED_SEED = 10.0, 0.1, 0
#: the certified grid's datasets and kernels (section 5) and the senses written
CERTIFIED_DATASETS = tuple(PAPER_DATASETS)
CERTIFIED_KERNELS = ("poly2", "poly3", "poly5", "rbf")
SENSES = ("paper", "fit")
#: enumerate (certify) an instance only when it has at most this many subsets: seconds per instance
CERTIFY_MAX_SUBSETS = 2000
#: ``--quick``: a handful of reduced instances (m = 10), certified and not
QUICK = (("cleveland", 2, 10), ("bcd", 2, 10), ("cleveland", 3, 10), ("sonar", 2, 10))
#: ``--quick --certified-grid``: the certified grid's smallest dataset (all its rows), rbf, B = 1
QUICK_CERTIFIED = (("parkinsons", "rbf", 1),)

COLUMNS = ("name", "variables", "binaries", "constraints", "nonzeros", "nonlinear_nonzeros", "sense",
           "objective_sense", "best_known", "best_bound", "certified", "method", "dataset", "m", "seed",
           "kernel", "gamma", "coef0", "degree", "C", "B", "scaling")


@dataclass(frozen=True)
class Entry:
    """One library instance: ``minlp_fs.api.build_instance`` arguments and the file name."""

    dataset: str
    kernel: str
    B: int
    m: int | None = None          # None: all rows
    sense: str = "paper"
    C: float = REDUCED_C
    gamma: float = REDUCED_GAMMA
    seed: int = REDUCED_SEED

    @property
    def name(self) -> str:
        rows = "" if self.m is None else f"_m{self.m}"
        return f"dfs_{self.dataset}_{self.kernel}{rows}_b{self.B}_{self.sense}"

    def build(self, data_dir=None):
        from ..api import build_instance
        return build_instance(self.dataset, data_dir, B=self.B, kernel=self.kernel, C=self.C, gamma=self.gamma,
                              m=self.m, seed=self.seed, sense=self.sense)

    def source(self) -> dict:
        """The provenance's ``source`` (what an Instance does not hold)."""
        return {"dataset": self.dataset, "scaling": "minmax", "seed": self.seed, "m": self.m}


def reduced_entry(dataset: str, degree: int, m: int) -> Entry:
    """A reduced instance of the appendix sec:baron: poly``degree``, m rows, B = floor(n/2)."""
    return Entry(dataset, f"poly{degree}", max(1, PAPER_DATASETS[dataset][1] // 2), m)


def reduced_instance(dataset: str, degree: int, m: int, data_dir=None):
    """The Instance of :func:`reduced_entry` (what ``benchmarks/bench_solvers.py`` solves)."""
    return reduced_entry(dataset, degree, m).build(data_dir)


def entries(quick: bool = False, certified_grid: bool = False, data_dir=None) -> list:
    """The library's instances: the reduced ones, then (``certified_grid``) the certified grid's."""
    from ..experiments.grids import dataset_shape

    reduced = QUICK if quick else [(ds, d, m) for ds in REDUCED_DATASETS for d in REDUCED_DEGREES
                                   for m in REDUCED_SIZES]
    out = [reduced_entry(*r) for r in reduced]
    if certified_grid:
        if quick:
            grid = QUICK_CERTIFIED
        else:
            grid = []
            for ds in CERTIFIED_DATASETS:
                n = dataset_shape(ds, data_dir)[1]
                grid += [(ds, k, B) for k in CERTIFIED_KERNELS for B in range(1, n // 2 + 1)
                         if math.comb(n, B) <= CERTIFY_MAX_SUBSETS]
        out += [Entry(ds, k, B, sense=s) for ds, k, B in grid for s in SENSES]
    return out


def best_known(instance, form) -> dict:
    """Best known value of g, its bound (both in g's units), whether certified, and the method that found it."""
    from ..api import solve
    from ..exact.cli import certify_choice

    if math.comb(instance.n, instance.B) <= CERTIFY_MAX_SUBSETS:
        method, options = certify_choice(instance, "auto", None)  # certify's own choice: enumeration or bnb
        r = solve(instance, method, **options)
        if r.certified:
            return {"value": r.objective, "bound": r.objective, "certified": True, "method": method}
    best = None
    for name in ("ls*", "acso*"):
        if name == "acso*" and not instance.kernel.submodular:
            continue   # ACSO*'s beta-step needs a polynomial kernel (submodular only then)
        r = solve(instance, name, start="alpha-start")
        if r.objective is not None and (best is None or instance.better(r.objective, best[0].objective)):
            best = (r, name)
    r, name = best
    if r.certified:   # the paper sense's trivial bound attained (Remark 1)
        return {"value": r.objective, "bound": r.objective, "certified": True, "method": name}
    return {"value": r.objective, "bound": instance.sign * form.objective_range[0], "certified": False,
            "method": name}


def library_row(entry: Entry, instance, model) -> dict:
    """The CSV row of one written instance (see the module docstring)."""
    from .export import model_counts

    form = model.dfs["formulation"]
    rows, cols = form.size()
    counts = model_counts(model)
    best = best_known(instance, form)
    kernel = instance.kernel.params()
    return {"name": entry.name, "variables": cols, "binaries": instance.n, "constraints": rows,
            "nonzeros": counts["nonzeros"], "nonlinear_nonzeros": counts["nonlinear"], "sense": instance.sense,
            "objective_sense": "min", "best_known": repr(instance.sign * best["value"]),
            "best_bound": repr(instance.sign * best["bound"]), "certified": str(best["certified"]).lower(),
            "method": best["method"], "dataset": entry.dataset, "m": instance.m, "seed": entry.seed,
            "kernel": kernel["name"], "gamma": kernel["gamma"], "coef0": kernel.get("coef0", ""),
            "degree": kernel.get("degree", ""), "C": instance.C, "B": instance.B, "scaling": "minmax"}


def export_library(out, quick: bool = False, certified_grid: bool = False, data_dir=None, progress=None) -> Path:
    """Write every instance of :func:`entries` as ``NAME.gms`` and ``NAME.nl`` (+ .row, .col, .json) into
    ``out`` (created if missing), and ``library.csv``; returns the CSV's path. ``progress(entry)`` is
    called before each instance."""
    from ..datasets import load_dataset
    from .export import started_model, write_gms_model, write_nl_model

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder for the library")
    todo = entries(quick, certified_grid, data_dir)
    for dataset in dict.fromkeys(e.dataset for e in todo):   # a missing dataset before anything is written
        load_dataset(dataset, data_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from None
    path = out / "library.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for entry in todo:
            if progress is not None:
                progress(entry)
            instance = entry.build(data_dir)
            model = started_model(instance, source=entry.source())
            write_gms_model(model, out / f"{entry.name}.gms")
            write_nl_model(model, out / f"{entry.name}.nl")
            writer.writerow(library_row(entry, instance, model))
            fh.flush()
    return path
