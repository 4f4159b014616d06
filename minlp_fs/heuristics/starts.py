"""Starting subsets beta_in for the start-dependent methods (paper section 5).

``alpha-start`` (the deterministic case of the paper), ``random`` (a uniform B-subset drawn with a
seed: the random case), or an explicit list of feature indices.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, check_integer

START_KINDS = ("alpha-start", "random")


def random_subset(n: int, B: int, rng: np.random.Generator) -> tuple:
    """A uniformly random B-subset of range(n), sorted."""
    return tuple(sorted(int(j) for j in rng.choice(n, size=B, replace=False)))


def resolve_start(instance, start, seed: int = 0, oracle=None) -> tuple:
    """The start subset for ``start`` = None/'alpha-start', 'random' or a list of indices."""
    if start is None or (isinstance(start, str) and start == "alpha-start"):
        from .alpha_start import AlphaStart

        return tuple(AlphaStart().solve(instance, oracle=oracle).features)
    if isinstance(start, str):
        if start == "random":
            check_integer("random start", "seed", seed, 0)
            return random_subset(instance.n, instance.B, np.random.default_rng(seed))
        raise InputError(f"unknown start {start!r}; use 'alpha-start', 'random' or a list of feature indices")
    return instance.check_subset(start)
