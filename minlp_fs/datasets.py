"""The paper's nine UCI datasets (Table 1), scikit-learn's copy of BCD, and synthetic data.

CSV format (as in the project's shared datasets folder): UTF-8, a header row of unique names,
numeric feature columns and a label column found by name (``y`` unless told otherwise): two values
(mapped to -1/+1) or more (class values kept: a multiclass instance).
The folder comes from ``data_dir``, else the environment variable ``MINLP_FS_DATA``; ``bcd`` needs no
folder (scikit-learn ships the same data).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError, plain
from .options import check_integer

#: the paper's datasets in the order of its Table 1, with (m, n) of the shared CSVs
PAPER_DATASETS = {
    "wholesale": (440, 7), "diabetes": (768, 8), "bcw": (683, 9), "cleveland": (297, 13),
    "parkinsons": (195, 22), "german": (1000, 24), "bcd": (569, 30), "ionosphere": (351, 33),
    "sonar": (208, 60),
}
DATA_ENV = "MINLP_FS_DATA"


@dataclass(frozen=True)
class Dataset:
    """Raw (unscaled) data: X (m x n), y in {-1, +1} (or, with K >= 3 classes, the class values), feature
    names, the dataset's name and the original class values (``classes``, sorted: the CSV's own labels;
    with two classes, classes[0] is -1 and classes[1] is +1)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    classes: tuple = (-1, 1)

    @property
    def shape(self) -> tuple:
        return self.X.shape

    @property
    def labels(self) -> np.ndarray:
        """The labels by their original values (two classes: ``classes[0]`` where y = -1, ``classes[1]``
        where y = +1; more: y itself)."""
        if len(self.classes) > 2:
            return self.y
        return np.asarray(self.classes)[(self.y > 0).astype(int)]


def read_csv(path: "str | Path", name: str | None = None, label: str | None = None) -> Dataset:
    """Read a UTF-8 CSV with a header, numeric features and a label column; clear errors otherwise.

    The label column is found by name: ``label``, else the column ``y`` (else a single ``Y``); it may
    stand anywhere and must hold at least two distinct values (numbers or strings; with two, the
    smaller becomes -1; with more, y keeps the values: a multiclass instance). Header names must be unique and non-empty; a UTF-8 byte-order mark is dropped; blank
    lines are skipped and messages give the file's own line numbers. A file that is not UTF-8 (e.g.
    Latin-1) is an error naming the line: Latin-1 cannot be told from other 8-bit encodings (every byte
    sequence is valid Latin-1), so reading it as such could silently give wrong feature names.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = _rows(csv.reader(fh))
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text ({_first_bad_byte(path)}); save it as UTF-8, "
                         "e.g. iconv -f latin1 -t utf-8") from None
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV file ({exc})") from None
    except OSError as exc:
        raise InputError(f"cannot read dataset file {path}: {exc.strerror or exc}") from None
    if len(rows) < 3:
        raise InputError(f"{path}: a header and at least two data rows are needed")
    header = [h.strip() for h in rows[0][1]]
    body = rows[1:]
    _check_header(path, header)
    j_label = _label_column(path, header, label)
    width = len(header)
    for line, r in body:
        if len(r) != width:
            raise InputError(f"{path}, line {line}: {len(r)} fields where the header has {width}")
    features = [j for j in range(width) if j != j_label]
    if not features:
        raise InputError(f"{path}: no feature columns besides the label column {header[j_label]!r}")
    X = np.empty((len(body), len(features)))
    for i, (line, r) in enumerate(body):
        for k, j in enumerate(features):
            X[i, k] = _number(path, line, header[j], r[j])
    values = _labels(path, header[j_label], [(line, r[j_label].strip()) for line, r in body])
    classes = np.unique(values)
    if classes.size < 2:
        raise InputError(f"{path}: the label column {header[j_label]!r} has a single value ({plain(classes[0])}); "
                         "it needs at least two classes (pick another column with --label / label=)")
    # two classes: -1/+1; more: the class values themselves (a multiclass instance, minlp_fs.multiclass)
    y = np.where(values == classes[1], 1.0, -1.0) if classes.size == 2 else values
    return Dataset(name or path.stem, X, y, tuple(header[j] for j in features), tuple(c.item() for c in classes))


def _rows(reader) -> list:
    """(first line number, fields) of every non-blank row (a quoted field may span lines)."""
    rows, line = [], 1
    for fields in reader:
        if any(f.strip() for f in fields):
            rows.append((line, fields))
        line = reader.line_num + 1
    return rows


def _first_bad_byte(path: Path) -> str:
    """'byte B, line L' of the first byte that is not UTF-8."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return f"byte {exc.start} cannot be decoded, line {line}"
    return "it cannot be decoded"


def _check_header(path: Path, header: list) -> None:
    """Header names are non-empty and unique (a repeated name would make selections ambiguous)."""
    empty = [j + 1 for j, h in enumerate(header) if not h]
    if empty:
        raise InputError(f"{path}: the header has an empty name in column(s) {', '.join(map(str, empty))}")
    seen, repeated = set(), []
    for h in header:
        if h in seen and h not in repeated:
            repeated.append(h)
        seen.add(h)
    if repeated:
        raise InputError(f"{path}: the header repeats the column name(s) {', '.join(map(repr, repeated))}; "
                         "names must be unique")


def _label_column(path: Path, header: list, label: str | None) -> int:
    """Index of the label column: ``label`` if given, else ``y``, else a single ``Y``."""
    if label is not None:
        if label not in header:
            raise InputError(f"{path}: no column named {label!r} for the labels; the columns are "
                             f"{_listed(header)}")
        return header.index(label)
    if "y" in header:
        return header.index("y")
    if "Y" in header:
        return header.index("Y")
    raise InputError(f"{path}: no label column named 'y'; name the label column with --label COLUMN "
                     f"(label= in the API); the columns are {_listed(header)}")


def _listed(names: list) -> str:
    return ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")


#: label texts that mean a missing value (case-insensitive), never a class name
MISSING_LABELS = frozenset({"", "na", "n/a", "nan", "null", "none", "?"})


def _labels(path: Path, column: str, fields: list) -> np.ndarray:
    """The label column from its (line, text) fields: all numbers (finite) or all class names; a missing
    label, a non-finite number, or a column mixing numbers and names (where "1" and "1.0" would be two
    classes) is an InputError naming the line."""
    numeric = {}
    for line, text in fields:
        if text.lower() in MISSING_LABELS:
            raise InputError(f"{path}, line {line}, column {column!r}: the label {text!r} is missing "
                             "(every row needs a class label)")
        try:
            numeric[line] = float(text)
        except ValueError:
            continue
        if not np.isfinite(numeric[line]):
            raise InputError(f"{path}, line {line}, column {column!r}: the label {text!r} is not a finite number")
    if numeric and len(numeric) < len(fields):
        number = next(f for f in fields if f[0] in numeric)
        name = next(f for f in fields if f[0] not in numeric)
        raise InputError(f"{path}: the label column {column!r} mixes numbers ({number[1]!r}, line {number[0]}) "
                         f"and names ({name[1]!r}, line {name[0]}); use one kind for every row")
    return np.array([numeric[line] for line, _ in fields]) if numeric else np.array([t for _, t in fields])


def _number(path: Path, line: int, column: str, text: str) -> float:
    """A finite float from a CSV field, or an InputError naming file, line and column."""
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{path}, line {line}, column {column!r}: {text.strip()!r} is not a number "
                         "(every field must be numeric; missing values are not supported)") from None
    if not np.isfinite(v):
        raise InputError(f"{path}, line {line}, column {column!r}: {text.strip()!r} is not a finite number")
    return v


#: the breast cancer set's measurements and statistics, in scikit-learn's column order (mean, standard error, worst
#: of each measurement), named as the paper's CSVs name them ("mean concave points" -> concave_points_mean)
_BCD_MEASURES = ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave_points",
                 "symmetry", "fractal_dimension")
_BCD_NAMES = tuple(f"{base}_{stat}" for stat in ("mean", "se", "worst") for base in _BCD_MEASURES)


def _sklearn_bcd_file() -> "Path | None":
    """scikit-learn's copy of the breast cancer CSV (``sklearn/datasets/data/breast_cancer.csv``: a header line
    ``569,30,malignant,benign``, then 30 features and the target per row), found without importing scikit-learn
    (1.5-3 s of the ``make run`` job's start-up); None when it is not where scikit-learn has kept it."""
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "breast_cancer.csv"
    return path if path.is_file() else None


def _sklearn_bcd() -> Dataset:
    """scikit-learn's breast cancer set as the paper's BCD: malignant (target 0) -> +1, benign (1) -> -1. Read from
    scikit-learn's CSV directly (:func:`_sklearn_bcd_file`; the values of ``load_breast_cancer``, which parses the
    same file), or through ``load_breast_cancer`` when that file is not found or not as expected."""
    path = _sklearn_bcd_file()
    table = None
    if path is not None:
        with open(path, encoding="utf-8") as f:
            head = f.readline().strip().split(",")
            if head == ["569", "30", "malignant", "benign"]:
                table = np.loadtxt(f, delimiter=",", dtype=float)
    if table is None or table.shape != (569, 31):
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer()
        table = np.column_stack([data.data, data.target])
    y = np.where(table[:, 30] == 0, 1.0, -1.0)
    return Dataset("bcd", np.ascontiguousarray(table[:, :30]), y, _BCD_NAMES, ("benign", "malignant"))


def load_dataset(name: str, data_dir: "str | Path | None" = None, label: str | None = None) -> Dataset:
    """One of the paper's datasets (or any ``<name>.csv`` in the folder); ``label`` names the label column.

    ``name`` is a file name in the folder, not a path (``../x`` or ``/x`` cannot leave it); ``.csv``
    may be given or not, and letter case need not match when one file matches (``mydata`` finds
    ``MyData.csv``). ``bcd`` falls back to scikit-learn's copy when no folder is given or the file is
    absent there.
    """
    text = str(name).strip()
    if not text or Path(text).name != text or text in (".", "..") or "\\" in text:
        raise InputError(f"dataset {name!r} must be a file name in the data folder, not a path; to use a file "
                         "elsewhere, pass its folder as --data-dir (data_dir=)")
    stem = text[:-4] if text.lower().endswith(".csv") else text
    key = stem.lower()
    folder = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    if folder is not None:
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"data directory {folder} is a file, not a folder: pass the folder that holds "
                             "the CSV files")
        if not folder.is_dir():
            raise InputError(f"data directory {folder} does not exist")
        path = _find_csv(folder, stem)
        if path is not None:
            return read_csv(path, key, label=label)
        if key != "bcd":
            known = sorted(p.stem for p in folder.glob("*.csv"))
            raise InputError(f"dataset {name!r} not found: no file {folder / (stem + '.csv')}"
                             + (f" (this folder has: {', '.join(known)})" if known else ""))
    if key == "bcd":
        if label not in (None, "y"):
            raise InputError(f"the built-in bcd has its labels in 'y'; label={label!r} needs a bcd.csv in --data-dir")
        return _sklearn_bcd()
    if key in PAPER_DATASETS:
        raise InputError(f"dataset {name!r} needs its CSV file: pass --data-dir (or data_dir=) or set "
                         f"{DATA_ENV} to a folder holding {key}.csv; only 'bcd' is built in")
    raise InputError(f"unknown dataset {name!r}; the paper's are {', '.join(PAPER_DATASETS)} "
                     "(generated data: make_synthetic(), or --dataset synthetic on the command line); "
                     "other names need a <name>.csv in --data-dir")


def _find_csv(folder: Path, stem: str) -> Path | None:
    """``folder/<stem>.csv``, else the one CSV whose name matches ignoring case (None if none or several)."""
    exact = folder / f"{stem}.csv"
    if exact.is_file():
        return exact
    matches = [p for p in folder.glob("*") if p.is_file() and p.name.lower() == f"{stem}.csv".lower()]
    if len(matches) > 1:
        raise InputError(f"dataset {stem!r} matches {', '.join(sorted(p.name for p in matches))} in {folder} "
                         "(names differing only in case); give the exact name")
    return matches[0] if matches else None


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
