"""The binary DFS-SVM instance: scaled data, labels in {-1, +1}, kernel, C, B and the sense of optimisation.

Two senses (the sense is data, not a branch in every method):

* ``paper``: minimise f(alpha, beta) jointly, exactly problem (4). Over beta this minimises
  g(beta) = min_alpha f(alpha, beta), the SVM dual optimum, which equals minus the SVM's primal
  optimum: it prefers features whose SVM fits *worst*, down to the trivial bound -2C min(|I+|,|I-|).
* ``fit``: maximise g(beta), i.e. minimise the SVM's primal optimum over beta: the features whose
  SVM fits best.

Every method minimises ``instance.sign * g(beta)``: sign = +1 for ``paper``, -1 for ``fit``.

:class:`Instance` and the checks of its parameters live here; building one from raw data (validation,
labels, scaling, row sampling) is :func:`minlp_fs.instance.make_instance`, which gives an
:class:`Instance` for two classes and a :class:`~minlp_fs.multiclass.MulticlassInstance` (K one-vs-rest
binary instances of this class) for three or more.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from .errors import InputError, plain, plain_integer
from .kernels import Kernel, make_kernel
from .objective import attains_trivial_bound, check_kernel_range, dual_objective, trivial_bound

SENSES = ("paper", "fit")
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
        alpha = np.asarray(alpha, dtype=float)
        if alpha.shape != self.alpha_shape:
            raise InputError(f"alpha must have shape {self.alpha_shape} (one number per row and machine); got shape "
                             f"{alpha.shape}")
        return self.gram_objective(alpha, self.gram(subset))

    @property
    def alpha_shape(self) -> tuple:
        """The shape of an alpha: one number per row (m,)."""
        return (self.m,)

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
        """A copy with other B, C, sense, kernel or feature names, validated again."""
        unknown = sorted(set(changes) - {"B", "C", "sense", "kernel", "feature_names"})
        if unknown:
            raise InputError(f"with_params: cannot change {plain(unknown)}; it changes B, C, sense, kernel (e.g. "
                             "kernel='poly3' or make_kernel('rbf', gamma=0.5)) and feature_names")
        if "B" in changes:
            check_B(changes["B"], self.n)
        if "sense" in changes:
            check_sense(changes["sense"])
        if "C" in changes:
            check_C(changes["C"])
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


def check_sense(sense):
    if sense not in SENSES:
        raise InputError(f"unknown sense {sense!r}; choose 'paper' (problem (4) as written) or 'fit'")


def check_C(C):
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) \
            or not np.isfinite(C) or C <= 0:
        raise InputError(f"C must be a finite number > 0; got {plain(C)}")


def check_B(B, n):
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)):
        raise InputError(f"B must be an integer; got {plain_integer(B)}")
    if not 1 <= B <= n:
        raise InputError(f"B = {B} is out of range: it must be between 1 and the number of features n = {n}")
