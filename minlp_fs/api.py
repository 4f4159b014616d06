"""The two calls most users need: :func:`build_instance` and :func:`solve`."""
from __future__ import annotations

from .datasets import load_dataset, make_synthetic
from .errors import InputError
from .heuristics.starts import resolve_start
from .instance import Instance, make_instance
from .methods import get_method, method_class

DEFAULT_B = 5


def build_instance(dataset: str = "bcd", data_dir=None, B: int | None = None, kernel: str = "poly2",
                   C: float = 10.0, gamma: float | None = None, coef0: float | None = None,
                   degree: int | None = None, sense: str = "paper", scaling: str = "minmax",
                   m: int | None = None, seed: int = 0, label: str | None = None) -> Instance:
    """An instance from a named dataset ('synthetic' for generated data); B defaults to min(5, n).
    ``label`` names the CSV's label column (default ``y``)."""
    data = make_synthetic(seed=seed) if dataset == "synthetic" else load_dataset(dataset, data_dir, label=label)
    if B is None:
        B = min(DEFAULT_B, data.X.shape[1])
    return make_instance(data.X, data.labels, B=B, kernel=kernel, C=C, gamma=gamma, coef0=coef0, degree=degree,
                         sense=sense, scaling=scaling, feature_names=data.feature_names, name=data.name,
                         m=m, seed=seed)


def solve(instance: Instance, method: str = "ls*", start=None, seed: int = 0, oracle=None, callback=None,
          **options):
    """Run a registered method on ``instance`` and return its :class:`~minlp_fs.result.Result`.

    ``start``: None (the method's default, the alpha-start), 'alpha-start', 'random' (drawn with
    ``seed``) or a list of feature indices; only for methods that use a start. ``seed`` is passed to
    methods that have a ``seed`` option. Other keyword arguments are the method's options.
    """
    cls = method_class(method)
    if "seed" in cls.options():
        options.setdefault("seed", seed)
    if start is not None and not cls.uses_start:
        raise InputError(f"method {method!r} does not take a start (it builds its own subset)")
    solver = get_method(method, **options)  # its options are checked before any work on the start
    # the alpha-start is left to the method, which builds it within its time limit
    default = start is None or (isinstance(start, str) and start == "alpha-start")
    subset = start if default else resolve_start(instance, start, seed=seed, oracle=oracle)
    return solver.solve(instance, start=subset, oracle=oracle, callback=callback)
