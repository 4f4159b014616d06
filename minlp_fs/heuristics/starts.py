"""Starting subsets beta_in for the start-dependent methods (paper section 5).

``alpha-start`` (the deterministic case of the paper, :func:`alpha_start`), ``random`` (a uniform
B-subset drawn with a seed: the random case), or an explicit list of feature indices.

The alpha-start (section 5, end of its introduction):

1. Solve the SVM dual (3) on all n features: alpha_full.
2. Keep alpha fixed at alpha_full and remove features greedily until B remain, each time the one
   whose removal gives the best f(alpha_full, S) in the instance's sense (paper: the smallest) —
   the beta-step of :mod:`.greedy`: Minoux's lazy greedy on H of problem (11) for polynomial
   kernels in the paper's sense, the plain greedy otherwise (Gaussian kernel, fit sense).
3. Solve the alpha-subproblem on the B kept features (warm-started from alpha_full).

Two SVM solves in all; the result is a feasible point of problem (4). The method ``alpha-start``
(:mod:`.alpha_start`) is this start on its own.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..options import check_value
from .greedy import Greedy, greedy_step
from .screening import FixedAlpha

START_KINDS = ("alpha-start", "random")


class AlphaStartSteps(NamedTuple):
    """The three steps: the all-features fit, the greedy elimination at its alpha, the final fit."""

    full: object
    step: Greedy
    fit: object


def alpha_start(instance, oracle, deadline=None) -> AlphaStartSteps:
    """Steps 1-3 above with ``oracle`` (a fresh one if None); the greedy checks ``deadline``
    (``SearchStopped`` past it)."""
    if oracle is None:
        from ..alpha import AlphaSubproblem

        oracle = AlphaSubproblem(instance)
    full = oracle.solve(range(instance.n))
    step = greedy_step(FixedAlpha(instance, full.alpha, deadline), instance.B)
    return AlphaStartSteps(full, step, oracle.solve(step.subset, warm_start=full.alpha))


def random_subset(n: int, B: int, rng: np.random.Generator) -> tuple:
    """A uniformly random B-subset of range(n), sorted."""
    return tuple(sorted(int(j) for j in rng.choice(n, size=B, replace=False)))


def resolve_start(instance, start, seed: int = 0, oracle=None, deadline=None) -> tuple:
    """The start subset for ``start`` = None/'alpha-start', 'random' or a list of indices.

    The alpha-start is built within ``deadline`` (a :class:`~minlp_fs.stopping.Deadline`): past it,
    :class:`~minlp_fs.stopping.SearchStopped` (status ``time_limit``) is raised.
    """
    if start is None or (isinstance(start, str) and start == "alpha-start"):
        return alpha_start(instance, oracle, deadline).fit.subset
    if isinstance(start, str):
        if start == "random":
            check_value("random start", "seed", seed, int, low=0)
            return random_subset(instance.n, instance.B, np.random.default_rng(seed))
        raise InputError(f"unknown start {start!r}; use 'alpha-start', 'random' or a list of feature indices")
    return instance.check_subset(start)
