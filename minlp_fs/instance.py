"""Building a DFS-SVM instance from data: :func:`make_instance` validates X, the labels and the
parameters, scales the columns, optionally samples rows, and gives

* two classes: an :class:`~minlp_fs.binary.Instance` (labels in {-1, +1}; the senses of optimisation
  are described there);
* three or more: a :class:`~minlp_fs.multiclass.MulticlassInstance` (one shared subset for K
  one-vs-rest machines; see :mod:`minlp_fs.multiclass`).

The two row-sampling rules (:func:`stratified_rows`, :func:`stratified_class_rows`) serve it and the
large-m mode (:mod:`minlp_fs.large_m`).
"""
from __future__ import annotations

from collections import Counter
from numbers import Number

import numpy as np

from .binary import DEFAULT_C, Instance, check_B, check_C, check_sense
from .errors import InputError, plain, plain_integer
from .kernels import Kernel, make_kernel
from .multiclass.instance import MulticlassInstance
from .objective import check_kernel_range
from .options import check_integer

SCALINGS = ("minmax", "standard", "none")

__all__ = ["Instance", "MulticlassInstance", "encode_classes", "encode_labels", "make_instance", "scale",
           "stratified_class_rows", "stratified_rows"]


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
        if _has_missing(X):
            raise InputError("X contains missing values (NA); remove or impute them first") from None
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


def _has_missing(X) -> bool:
    """Whether a pandas X holds missing values (pd.NA of a nullable column, which numpy cannot convert)."""
    return hasattr(X, "isna") and bool(X.isna().to_numpy().any())


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
    if yy.dtype.kind == "f" and classes.size > 2 and not np.all(classes == np.round(classes)):
        example = classes[np.flatnonzero(classes != np.round(classes))[0]]   # (two values are two classes, any)
        raise InputError(f"y looks continuous ({classes.size} distinct numbers, some not integers, e.g. "
                         f"{plain(example)}): a class label is needed, e.g. -1/+1, 0/1 or class names")
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
    """Column scaling over the instance's rows: min-max to [0, 1], standard (z-score) or none.

    A near-constant column is shifted, not divided, by scikit-learn's rules (``MinMaxScaler``: a range below
    10 eps; ``StandardScaler``: a variance within the rounding error of its computation, m eps var +
    (m mean eps)^2), so the selection sees the columns the estimators' final SVC sees (their scalers:
    :mod:`minlp_fs.selector`). A column of range 1e-15 was min-max scaled to 0/1 here and left near 0 there."""
    eps = np.finfo(float).eps
    if scaling == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        return (X - lo) / np.where(hi - lo < 10 * eps, 1.0, hi - lo)
    if scaling == "standard":
        mean, var = X.mean(axis=0), X.var(axis=0)
        if not np.isfinite(var).all():   # inf would count as "constant" below, the column left unscaled
            cols = np.flatnonzero(~np.isfinite(var))
            raise InputError(f"standard scaling overflows on column(s) {plain(cols[:10].tolist())}: their variance "
                             "is beyond floating point (values near 1e154 or above); rescale them first, or use "
                             "--scaling minmax")
        constant = var <= X.shape[0] * eps * var + (X.shape[0] * mean * eps) ** 2
        return (X - mean) / np.where(constant, 1.0, np.sqrt(var))
    if scaling == "none":
        return X.copy()
    raise InputError(f"unknown scaling {scaling!r}; choose one of {', '.join(SCALINGS)}")


def stratified_rows(y: np.ndarray, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` rows drawn with both classes in proportion (at least one each)."""
    total = y.size
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 2 <= m <= total:
        raise InputError(f"m = {plain_integer(m)} rows requested; it must be an integer between 2 and {total}")
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


def stratified_class_rows(codes: np.ndarray, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` rows drawn with every class in proportion (at least one each; largest
    remainders get the rounding), as :func:`stratified_rows` does for two classes."""
    counts = np.bincount(codes)
    total, K = int(codes.size), counts.size
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not K <= m <= total:
        raise InputError(f"m = {plain_integer(m)} rows requested; it must be an integer between {K} (one row per "
                         f"class) and {total}")
    check_integer("row sampling", "seed", seed, 0)
    share = m * counts / total
    take = np.minimum(np.maximum(np.floor(share).astype(int), 1), counts)
    while take.sum() > m:  # the ones forced up to 1 overshot: take from the largest
        take[np.argmax(np.where(take > 1, take, -1))] -= 1
    while take.sum() < m:
        take[np.argmax(np.where(take < counts, share - take, -np.inf))] += 1
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(np.flatnonzero(codes == k), take[k], replace=False) for k in range(K)])
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
    repeated = sorted(nm for nm, k in Counter(names).items() if k > 1)
    if repeated:   # a selection would name two features alike (the CSV reader refuses them too)
        raise InputError(f"feature names repeated: {plain(repeated[:10])}; give every column a name of its own")
    check_sense(sense)
    check_C(C)
    check_B(B, A.shape[1])
    k = make_kernel(kernel, gamma=gamma, coef0=coef0, degree=degree)
    rows = None
    if m is not None:
        if len(classes) == 2:
            rows = stratified_rows(signed, m, seed)
        else:
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
        return MulticlassInstance(X=Xs, codes=codes, kernel=k, C=float(C), B=int(B), sense=sense,
                                  feature_names=names, name=name, classes=classes, rows=rows)
    return Instance(X=Xs, y=signed, kernel=k, C=float(C), B=int(B), sense=sense,
                    feature_names=names, name=name, classes=classes, rows=rows)
