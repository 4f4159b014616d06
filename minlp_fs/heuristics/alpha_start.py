"""The method ``alpha-start``: the paper's deterministic starting point (section 5) on its own.

Its steps (two SVM solves and a greedy elimination at the all-features alpha) are
:func:`~minlp_fs.heuristics.starts.alpha_start`, the start every start-dependent method takes by default.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..blas import on_one_blas_thread
from ..errors import InputError
from ..methods import Method
from ..result import Status
from .greedy import uses_lazy
from .starts import alpha_start


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
