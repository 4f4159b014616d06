"""Starting subsets beta_in for the start-dependent methods (paper section 5).

``alpha-start`` (the deterministic case of the paper), ``random`` (a uniform B-subset drawn with a
seed: the random case), or an explicit list of feature indices.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..options import check_value

START_KINDS = ("alpha-start", "random")


def random_subset(n: int, B: int, rng: np.random.Generator) -> tuple:
    """A uniformly random B-subset of range(n), sorted."""
    return tuple(sorted(int(j) for j in rng.choice(n, size=B, replace=False)))


def resolve_start(instance, start, seed: int = 0, oracle=None, deadline=None) -> tuple:
    """The start subset for ``start`` = None/'alpha-start', 'random' or a list of indices.

    The alpha-start is built within ``deadline`` (a :class:`~minlp_fs.stopping.Deadline`): past it,
    :class:`~minlp_fs.stopping.SearchStopped` (status ``time_limit``) is raised.
    """
    if start is None or (isinstance(start, str) and start == "alpha-start"):
        from .alpha_start import alpha_start

        return alpha_start(instance, oracle, deadline).fit.subset
    if isinstance(start, str):
        if start == "random":
            check_value("random start", "seed", seed, int, low=0)
            return random_subset(instance.n, instance.B, np.random.default_rng(seed))
        raise InputError(f"unknown start {start!r}; use 'alpha-start', 'random' or a list of feature indices")
    return instance.check_subset(start)
