"""The paper's nine UCI datasets (Table 1), scikit-learn's copy of BCD, and synthetic data.

CSV format (as in the project's shared datasets folder): a header row, numeric feature columns,
and a last column ``y`` in {-1, +1}. The folder comes from ``data_dir``, else the environment
variable ``MINLP_FS_DATA``; ``bcd`` needs no folder (scikit-learn ships the same data).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError, check_integer

#: the paper's datasets in the order of its Table 1, with (m, n) of the shared CSVs
PAPER_DATASETS = {
    "wholesale": (440, 7), "diabetes": (768, 8), "bcw": (683, 9), "cleveland": (297, 13),
    "parkinsons": (195, 22), "german": (1000, 24), "bcd": (569, 30), "ionosphere": (351, 33),
    "sonar": (208, 60),
}
DATA_ENV = "MINLP_FS_DATA"


@dataclass(frozen=True)
class Dataset:
    """Raw (unscaled) data: X (m x n), y in {-1, +1}, feature names, and the dataset's name."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple

    @property
    def shape(self) -> tuple:
        return self.X.shape


def read_csv(path: "str | Path", name: str | None = None) -> Dataset:
    """Read a CSV with a header, numeric features and a last label column; clear errors otherwise."""
    path = Path(path)
    try:
        with path.open(newline="") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise InputError(f"cannot read dataset file {path}: {exc.strerror or exc}") from None
    header, body = (rows[0], [r for r in rows[1:] if r]) if rows else ([], [])
    if len(body) < 2:
        raise InputError(f"{path}: a header and at least two data rows are needed")
    width = len(header)
    for i, r in enumerate(body, start=2):
        if len(r) != width:
            raise InputError(f"{path}, line {i}: {len(r)} fields where the header has {width}")
    try:
        data = np.array(body, dtype=float)
    except ValueError:
        raise InputError(f"{path}: every field must be numeric (missing values are not supported)") from None
    return Dataset(name or path.stem, data[:, :-1], data[:, -1], tuple(header[:-1]))


def _sklearn_bcd() -> Dataset:
    """scikit-learn's breast cancer set as the paper's BCD: malignant -> +1, benign -> -1."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    y = np.where(data.target == 0, 1.0, -1.0)

    def csv_name(s: str) -> str:  # "mean concave points" -> "concave_points_mean"
        words = s.split()
        if words[0] in ("mean", "worst"):
            stat, base = words[0], words[1:]
        else:
            stat, base = "se", words[:-1]
        return "_".join(base + [stat])

    return Dataset("bcd", np.asarray(data.data, dtype=float), y,
                   tuple(csv_name(f) for f in data.feature_names))


def load_dataset(name: str, data_dir: "str | Path | None" = None) -> Dataset:
    """One of the paper's datasets (or any ``<name>.csv`` in the folder).

    ``bcd`` falls back to scikit-learn's copy when no folder is given or the file is absent there.
    """
    key = str(name).strip().lower()
    folder = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    if folder is not None:
        folder = Path(folder)
        if not folder.is_dir():
            raise InputError(f"data directory {folder} does not exist")
        path = folder / f"{key}.csv"
        if path.is_file():
            return read_csv(path, key)
        if key != "bcd":
            known = sorted(p.stem for p in folder.glob("*.csv"))
            raise InputError(f"dataset {name!r} not found: no file {path}"
                             + (f" (this folder has: {', '.join(known)})" if known else ""))
    if key == "bcd":
        return _sklearn_bcd()
    if key in PAPER_DATASETS:
        raise InputError(f"dataset {name!r} needs its CSV file: pass --data-dir (or data_dir=) or set "
                         f"{DATA_ENV} to a folder holding {key}.csv; only 'bcd' is built in")
    raise InputError(f"unknown dataset {name!r}; the paper's are {', '.join(PAPER_DATASETS)} "
                     "(generated data: make_synthetic(), or --dataset synthetic on the command line); "
                     "other names need a <name>.csv in --data-dir")


def make_synthetic(m: int = 200, n_informative: int = 3, n_noise: int = 7, seed: int = 0,
                   flip: float = 0.05) -> Dataset:
    """Nonlinear two-class data: the label depends on the informative features only.

    y = sign(sum_k (x_k - 1/2)^2 - median) over the informative features (a ball, which no linear
    classifier separates), with a share ``flip`` of labels flipped; noise features are uniform.
    Informative features come first: ``inf0..``, then ``noise0..``.
    """
    if n_informative < 1 or n_noise < 0 or m < 4:
        raise InputError("synthetic data needs m >= 4, n_informative >= 1 and n_noise >= 0")
    check_integer("synthetic data", "seed", seed, 0)
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, n_informative + n_noise))
    r = ((X[:, :n_informative] - 0.5) ** 2).sum(axis=1)
    y = np.where(r > np.median(r), 1.0, -1.0)
    y[rng.uniform(size=m) < flip] *= -1
    names = tuple(f"inf{k}" for k in range(n_informative)) + tuple(f"noise{k}" for k in range(n_noise))
    return Dataset("synthetic", X, y, names)
