"""A DFS-SVM instance: scaled data, labels in {-1, +1}, kernel, C, B and the sense of optimisation.

Two senses (the sense is data, not a branch in every method):

* ``paper``: minimise f(alpha, beta) jointly, exactly problem (4). Over beta this minimises
  g(beta) = min_alpha f(alpha, beta), the SVM dual optimum, which equals minus the SVM's primal
  optimum: it prefers features whose SVM fits *worst*, down to the trivial bound -2C min(|I+|,|I-|).
* ``fit``: maximise g(beta), i.e. minimise the SVM's primal optimum over beta: the features whose
  SVM fits best.

Every method minimises ``instance.sign * g(beta)``: sign = +1 for ``paper``, -1 for ``fit``.

Labels: two classes give an :class:`Instance` (labels in {-1, +1}); three or more give a
:class:`~minlp_fs.multiclass.MulticlassInstance` (one shared subset for K one-vs-rest machines; see
:mod:`minlp_fs.multiclass`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from numbers import Number
from functools import cached_property

import numpy as np

from .errors import InputError, check_integer, plain
from .kernels import Kernel, make_kernel
from .objective import attains_trivial_bound, check_kernel_range, dual_objective, trivial_bound

SENSES = ("paper", "fit")
SCALINGS = ("minmax", "standard", "none")
DEFAULT_C = 10.0


@dataclass(frozen=True, eq=False)
class Instance:
    """An instance of problem (4). Build it with :func:`make_instance`, which validates."""

    X: np.ndarray
    y: np.ndarray
    kernel: Kernel
    C: float
    B: int
    sense: str = "paper"
    feature_names: tuple = ()
    name: str = "data"
    classes: tuple = (-1, 1)
    rows: np.ndarray | None = field(default=None, repr=False)

    @property
    def m(self) -> int:
        return self.X.shape[0]

    @property
    def n(self) -> int:
        return self.X.shape[1]

    @property
    def sign(self) -> float:
        """+1 in the paper's sense (minimise g), -1 in the fit sense (maximise g)."""
        return 1.0 if self.sense == "paper" else -1.0

    @cached_property
    def trivial_bound(self) -> float:
        """-2C min(|I+|, |I-|) (Remark 1), computed once per instance: the hot paths test every fit."""
        return trivial_bound(self.y, self.C)

    def gram(self, subset) -> np.ndarray:
        """K_beta for the selected features."""
        return self.kernel.gram(self.X, subset)

    @property
    def n_classes(self) -> int:
        """2: one binary machine (a :class:`~minlp_fs.multiclass.MulticlassInstance` has K >= 3)."""
        return 2

    def objective(self, alpha: np.ndarray, subset) -> float:
        """f(alpha, beta) by the package's one objective function."""
        return self.gram_objective(alpha, self.gram(subset))

    def gram_objective(self, alpha: np.ndarray, K: np.ndarray) -> float:
        """f(alpha, beta) for the subset's Gram matrix K = K_beta, already built."""
        return dual_objective(alpha, K, self.y)

    def score(self, value: float) -> float:
        """What every method minimises: sign * value."""
        return self.sign * value

    def better(self, a: float, b: float) -> bool:
        """True when value a is strictly better than b in this instance's sense."""
        return self.sign * a < self.sign * b

    def is_degenerate(self, value: float) -> bool:
        """The value attains the trivial bound: one-class SVM, every minority alpha at C."""
        return attains_trivial_bound(value, self.y, self.C, bound=self.trivial_bound)

    def proves_optimal(self, value: float) -> bool:
        """In the paper sense a value at the trivial bound is globally optimal (Remark 1): stop there."""
        return self.sense == "paper" and self.is_degenerate(value)

    def check_subset(self, subset) -> tuple:
        """A sorted tuple of B distinct valid 0-based feature indices, or a clear error."""
        try:
            items = list(subset)
            idx = sorted(int(j) for j in items)
            integral = all(int(j) == j for j in items)
        except (TypeError, ValueError):
            raise InputError(f"a feature subset must be a list of integer indices; got {plain(subset)}") from None
        if not integral:
            raise InputError(f"a feature subset must be a list of integer indices; got {plain(items)}")
        if len(set(idx)) != len(idx):
            raise InputError(f"feature subset {idx} has repeated indices")
        if idx and (idx[0] < 0 or idx[-1] >= self.n):
            raise InputError(f"feature subset {idx} has indices outside 0..{self.n - 1}")
        if len(idx) != self.B:
            raise InputError(f"feature subset {idx} has {len(idx)} features; B = {self.B}")
        return tuple(idx)

    def with_params(self, **changes) -> "Instance":
        """A copy with other B, C, sense or kernel, validated again."""
        if "B" in changes:
            _check_B(changes["B"], self.n)
        if "sense" in changes:
            _check_sense(changes["sense"])
        if "C" in changes:
            _check_C(changes["C"])
            changes["C"] = float(changes["C"])
        if "kernel" in changes:
            changes["kernel"] = make_kernel(changes["kernel"])
        new = replace(self, **changes)
        if "kernel" in changes or "C" in changes:
            check_kernel_range(new.kernel, new.X, new.C)
        return new

    def describe(self) -> dict:
        """JSON-ready description of the instance (no data)."""
        return {"name": self.name, "m": self.m, "n": self.n, "B": self.B, "C": self.C,
                "kernel": self.kernel.params(), "sense": self.sense,
                "classes": list(self.classes), "class_counts": [int(np.sum(self.y < 0)), int(np.sum(self.y > 0))],
                "trivial_bound": self.trivial_bound}


def _check_sense(sense):
    if sense not in SENSES:
        raise InputError(f"unknown sense {sense!r}; choose 'paper' (problem (4) as written) or 'fit'")


def _check_C(C):
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) \
            or not np.isfinite(C) or C <= 0:
        raise InputError(f"C must be a finite number > 0; got {plain(C)}")


def _check_B(B, n):
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)):
        raise InputError(f"B must be an integer; got {plain(B)}")
    if not 1 <= B <= n:
        raise InputError(f"B = {B} is out of range: it must be between 1 and the number of features n = {n}")


def _as_matrix(X) -> np.ndarray:
    try:
        raw = np.asarray(X)
        if raw.dtype.kind == "c":
            raise InputError("X has complex entries; DFS-SVM needs real features (split real and imaginary "
                             "parts into columns of their own if both matter)")
        A = np.asarray(raw, dtype=float)
    except OverflowError:
        raise InputError("X has an integer too large for floating point (above about 1.8e308)") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError("X must be a numeric matrix (rows = samples, columns = features)") from None
    if A.ndim != 2:
        raise InputError(f"X must be 2-dimensional (samples x features); got shape {A.shape}")
    if A.shape[0] < 2 or A.shape[1] < 1:
        raise InputError(f"X must have at least 2 rows and 1 column; got shape {A.shape}")
    bad = ~np.isfinite(A)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        kind = "NaN" if np.isnan(A[r, c]) else "an infinite value"
        raise InputError(f"X contains {kind} (first at row {r}, column {c}); "
                         f"{int(bad.sum())} non-finite entries in all: remove or impute them first")
    return A


def encode_classes(y, m: int) -> tuple[np.ndarray, tuple]:
    """Labels as class indices 0..K-1 (classes sorted) and the K >= 2 original classes, validated."""
    yy = np.asarray(y)
    if yy.ndim == 2 and 1 in yy.shape:
        yy = yy.ravel()
    if yy.ndim != 1:
        raise InputError(f"y must be 1-dimensional; got shape {yy.shape}")
    if yy.shape[0] != m:
        raise InputError(f"X has {m} rows but y has {yy.shape[0]} labels")
    kinds = sorted({_label_kind(v) for v in np.asarray(y, dtype=object).ravel()})
    if len(kinds) > 1:
        raise InputError(f"y mixes label types ({', '.join(kinds)}); give labels of one type, e.g. -1/+1 "
                         "or class names")
    if kinds and kinds[0] not in ("boolean", "number", "string"):
        raise InputError(f"y holds {kinds[0]} labels; give numbers, strings or booleans")
    if yy.dtype.kind in "fc" and not np.all(np.isfinite(yy)):
        raise InputError("y contains NaN or infinite labels")
    classes, codes = np.unique(yy, return_inverse=True)
    if classes.size < 2:
        raise InputError(f"y has a single class ({plain(classes[0])} only): an SVM needs two classes")
    return codes.reshape(-1), tuple(c.item() if hasattr(c, "item") else c for c in classes)


def encode_labels(y, m: int) -> tuple[np.ndarray, tuple]:
    """Labels as floats in {-1, +1} and the original two classes (smaller -> -1, larger -> +1)."""
    codes, classes = encode_classes(y, m)
    if len(classes) > 2:
        raise InputError(f"y has {len(classes)} classes; binary only here: map them to two classes first "
                         f"(seen {plain(list(classes[:5]))}...)")
    return np.where(codes == 1, 1.0, -1.0), classes


def _label_kind(v) -> str:
    """'number', 'string', 'boolean' or the type's name: labels of two kinds cannot be ordered."""
    if isinstance(v, (bool, np.bool_)):
        return "boolean"
    if isinstance(v, Number):
        return "number"
    if isinstance(v, (str, np.str_, bytes)):
        return "string"
    return type(v).__name__


def scale(X: np.ndarray, scaling: str) -> np.ndarray:
    """Column scaling over the instance's rows: min-max to [0, 1], standard (z-score) or none."""
    if scaling == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        return (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    if scaling == "standard":
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if scaling == "none":
        return X.copy()
    raise InputError(f"unknown scaling {scaling!r}; choose one of {', '.join(SCALINGS)}")


def stratified_rows(y: np.ndarray, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` rows drawn with both classes in proportion (at least one each)."""
    total = y.size
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 2 <= m <= total:
        raise InputError(f"m = {plain(m)} rows requested; it must be an integer between 2 and {total}")
    check_integer("row sampling", "seed", seed, 0)
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    k_pos = int(round(m * pos.size / total))
    k_pos = min(max(k_pos, 1), pos.size, m - 1)
    k_neg = m - k_pos
    if k_neg > neg.size:
        k_neg, k_pos = neg.size, m - neg.size
    rows = np.concatenate([rng.choice(pos, k_pos, replace=False), rng.choice(neg, k_neg, replace=False)])
    return np.sort(rows)


def make_instance(X, y, B: int, kernel: "str | Kernel" = "poly2", C: float = DEFAULT_C,
                  gamma: float | None = None, coef0: float | None = None, degree: int | None = None,
                  sense: str = "paper", scaling: str = "minmax", feature_names=None,
                  name: str = "data", m: int | None = None, seed: int = 0) -> Instance:
    """Validate data and parameters and build an :class:`Instance`.

    ``m`` draws a reduced instance of m rows by a stratified sample with ``seed`` (the paper's Baron
    appendix); scaling is then fitted on those rows. Constant columns (over the instance's rows) are
    rejected by name: they carry no information and make min-max scaling undefined. Complex X,
    labels of mixed types and kernels whose values could overflow for some subset
    (:func:`~minlp_fs.objective.check_kernel_range`) are errors. A pandas DataFrame's column names
    become the feature names unless ``feature_names`` is given.
    """
    if feature_names is None and hasattr(X, "columns"):  # a pandas DataFrame keeps its column names
        feature_names = list(X.columns)
    A = _as_matrix(X)
    codes, classes = encode_classes(y, A.shape[0])
    signed = np.where(codes == 1, 1.0, -1.0)
    names = tuple(str(f) for f in feature_names) if feature_names is not None \
        else tuple(f"x{j}" for j in range(A.shape[1]))
    if len(names) != A.shape[1]:
        raise InputError(f"{len(names)} feature names given for {A.shape[1]} columns")
    _check_sense(sense)
    _check_C(C)
    _check_B(B, A.shape[1])
    k = make_kernel(kernel, gamma=gamma, coef0=coef0, degree=degree)
    rows = None
    if m is not None:
        if len(classes) == 2:
            rows = stratified_rows(signed, m, seed)
        else:
            from .multiclass import stratified_class_rows
            rows = stratified_class_rows(codes, m, seed)
        A, signed, codes = A[rows], signed[rows], codes[rows]
    with np.errstate(over="ignore"):  # a range that overflows is not constant (scaling refuses it below)
        constant = np.flatnonzero(np.ptp(A, axis=0) == 0)
    if constant.size:
        listed = ", ".join(names[j] for j in constant[:10]) + (" ..." if constant.size > 10 else "")
        raise InputError(f"{constant.size} constant column(s) over the instance's rows: {listed}; "
                         "drop them first (they carry no information)")
    with np.errstate(over="ignore", invalid="ignore"):
        Xs = np.ascontiguousarray(scale(A, scaling))
    if not np.isfinite(Xs).all():
        raise InputError(f"{scaling} scaling overflows on this data (its values span more than floating point "
                         "can hold); rescale the data first")
    check_kernel_range(k, Xs, float(C), where=f"{name}'s scaled data")
    if len(classes) > 2:  # one shared subset for K one-vs-rest machines; K = 2 stays the one binary machine
        from .multiclass import MulticlassInstance
        return MulticlassInstance(X=Xs, codes=codes, kernel=k, C=float(C), B=int(B), sense=sense,
                                  feature_names=names, name=name, classes=classes, rows=rows)
    return Instance(X=Xs, y=signed, kernel=k, C=float(C), B=int(B), sense=sense,
                    feature_names=names, name=name, classes=classes, rows=rows)
