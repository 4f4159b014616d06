"""A multiclass DFS-SVM instance: K >= 3 one-vs-rest binary instances sharing X, kernel, C, B and sense."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..binary import Instance
from ..errors import InputError, plain
from ..kernels import Kernel
from ..objective import attains_trivial_bound, stacked_objective

#: what takes a multiclass instance (for the messages of :func:`binary_only`)
MULTICLASS_METHODS = "alpha-start, ls, ls*, acso, acso*, rfe1, rfe2, enumerate and bnb"


def _shown(classes) -> str:
    return ", ".join(plain(c) for c in classes[:5]) + (", ..." if len(classes) > 5 else "")


@dataclass(frozen=True, eq=False)
class MulticlassInstance:
    """Problem (4) for K >= 3 classes with one shared subset (:mod:`minlp_fs.multiclass`).

    ``codes``: each row's class index into ``classes`` (sorted). ``parts``: the K one-vs-rest binary
    :class:`~minlp_fs.binary.Instance` objects (same X, kernel, C, B, sense); alphas are K x m stacks,
    row k for ``parts[k]``. Build it with :func:`~minlp_fs.instance.make_instance`.
    """

    X: np.ndarray
    codes: np.ndarray
    kernel: Kernel
    C: float
    B: int
    sense: str = "paper"
    feature_names: tuple = ()
    name: str = "data"
    classes: tuple = ()
    rows: np.ndarray | None = field(default=None, repr=False)

    # the binary instance's helpers that do not read labels, shared rather than copied
    m = Instance.m
    n = Instance.n
    sign = Instance.sign
    gram = Instance.gram
    objective = Instance.objective
    score = Instance.score
    better = Instance.better
    proves_optimal = Instance.proves_optimal
    check_subset = Instance.check_subset
    with_params = Instance.with_params

    def __post_init__(self):
        if len(self.classes) < 3 or np.bincount(self.codes, minlength=len(self.classes)).size != len(self.classes):
            raise InputError(f"a multiclass instance needs 3 or more classes and a class index below that count "
                             f"for every row; got classes {_shown(self.classes)} (two classes are the binary "
                             "Instance: make_instance builds it)")

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def oracle_class(self) -> type:
        """What ``AlphaSubproblem(instance)`` builds: the sum of the K one-vs-rest duals."""
        from .oracle import MulticlassSubproblem

        return MulticlassSubproblem

    @property
    def fixed_alpha_class(self) -> type:
        """What ``FixedAlpha(instance, A)`` builds: f at a fixed K x m stack of alphas."""
        from .screening import StackedFixedAlpha

        return StackedFixedAlpha

    @cached_property
    def parts(self) -> tuple:
        """The one-vs-rest binary instances, in the order of ``classes`` (labels +1: that class)."""
        return tuple(Instance(X=self.X, y=np.where(self.codes == k, 1.0, -1.0), kernel=self.kernel, C=self.C,
                              B=self.B, sense=self.sense, feature_names=self.feature_names,
                              name=f"{self.name}[{plain(c)} vs rest]", classes=(f"not {plain(c)}", c),
                              rows=self.rows)
                     for k, c in enumerate(self.classes))

    @cached_property
    def Y(self) -> np.ndarray:
        """The one-vs-rest labels, K x m (row k: +1 for class k, -1 otherwise)."""
        return np.stack([p.y for p in self.parts])

    @property
    def y(self):
        raise InputError(f"binary only; {self.name} has {self.n_classes} classes ({_shown(self.classes)}): this "
                         "operation needs a two-class instance (the one-vs-rest labels of class k are "
                         f"instance.parts[k].y); the methods {MULTICLASS_METHODS} take any number of classes")

    @cached_property
    def trivial_bound(self) -> float:
        """sum_k -2C min(|I+_k|, |I-_k|): Remark 1 for each one-vs-rest machine, summed."""
        return float(sum(p.trivial_bound for p in self.parts))

    @property
    def alpha_shape(self) -> tuple:
        """The shape of an alpha: a stack of one per one-vs-rest machine, (K, m)."""
        return (len(self.parts), self.m)

    def gram_objective(self, alpha: np.ndarray, K: np.ndarray) -> float:
        """f(A, beta) = sum_k f(alpha_k, beta) for a K x m stack A and the subset's Gram K."""
        return stacked_objective(alpha, K, self.Y)

    def is_degenerate(self, value: float) -> bool:
        """The value attains the summed trivial bound: every one-vs-rest machine is a one-class SVM."""
        return attains_trivial_bound(value, None, self.C, bound=self.trivial_bound)

    def describe(self) -> dict:
        """JSON-ready description of the instance (no data)."""
        return {"name": self.name, "m": self.m, "n": self.n, "B": self.B, "C": self.C,
                "kernel": self.kernel.params(), "sense": self.sense, "classes": list(self.classes),
                "class_counts": np.bincount(self.codes, minlength=self.n_classes).tolist(),
                "trivial_bound": self.trivial_bound}


def binary_only(instance, what: str) -> None:
    """InputError when ``instance`` has more than two classes: ``what`` handles binary instances only."""
    if instance.n_classes > 2:
        raise InputError(f"{what}: binary only; {instance.name} has {instance.n_classes} classes "
                         f"({_shown(instance.classes)}); the methods {MULTICLASS_METHODS} take any number of classes")


def machines(instance, alpha) -> list:
    """(binary instance, its alpha) of each SVM of ``instance``: itself, or the K one-vs-rest parts of a
    multiclass instance with the rows of the stacked alpha (module docstring of :mod:`minlp_fs.multiclass`:
    g = sum_k g_k, f(A, S) = sum_k f(alpha_k, S))."""
    parts = getattr(instance, "parts", None)
    return [(instance, alpha)] if parts is None else list(zip(parts, alpha))
