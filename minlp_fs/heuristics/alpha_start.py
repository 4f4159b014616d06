"""The alpha-start: the paper's deterministic starting point (section 5, end of its introduction).

1. Solve the SVM dual (3) on all n features: alpha_full.
2. Keep alpha fixed at alpha_full and remove features greedily until B remain, each time the one
   whose removal gives the best f(alpha_full, S) in the instance's sense (paper: the smallest) —
   the beta-step of :mod:`.greedy`: Minoux's lazy greedy on H of problem (11) for polynomial
   kernels in the paper's sense, the plain greedy otherwise (Gaussian kernel, fit sense).
3. Solve the alpha-subproblem on the B kept features (warm-started from alpha_full).

Two SVM solves in all; the result is a feasible point of problem (4).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..blas import on_one_blas_thread
from ..errors import InputError
from ..methods import Method
from ..result import Status
from .greedy import Greedy, greedy_step, uses_lazy
from .screening import FixedAlpha


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


@dataclass
class AlphaStart(Method):
    """Greedy elimination at the all-features alpha, then one exact fit (no options)."""

    name = "alpha-start"

    @on_one_blas_thread
    def _search(self, run):
        if run.requested_start is not None:
            raise InputError("alpha-start builds its own subset and takes no start")
        full, step, fit = alpha_start(run.instance, run.oracle, run.deadline)
        run.incumbent.offer(fit.value, fit.subset, fit.alpha, source="alpha-start")
        run.info.update(greedy="lazy" if uses_lazy(run.instance.kernel, run.instance.sign) else "plain",
                        n_evaluations=step.n_evals, elimination_order=step.order,
                        all_features_objective=full.value)
        return Status.CONVERGED
