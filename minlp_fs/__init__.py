"""minlp-fs: embedded feature selection in nonlinear SVMs with an exact cardinality constraint.

>>> from minlp_fs import build_instance, solve
>>> inst = build_instance("bcd", B=5, kernel="poly2", sense="fit")
>>> result = solve(inst, method="ls*")
"""
__version__ = "0.1.0"

from .alpha import AlphaSubproblem
from .api import build_instance, solve
from .datasets import load_dataset, make_synthetic
from .errors import CapabilityError, InputError, MinlpFsError, SolverUnavailableError
from .estimators import (
    CardinalitySVC,
    DegenerateSelectionWarning,
    KernelFeatureSelector,
    PaperSenseWarning,
)
from .instance import Instance, make_instance
from .kernels import GaussianKernel, PolynomialKernel, make_kernel
from .methods import get_method
from .objective import dual_objective
from .result import Result
from .selection_cv import KernelFeatureSelectorCV, plot_cv_results

__all__ = [
    "AlphaSubproblem", "build_instance", "solve", "load_dataset", "make_synthetic", "CapabilityError",
    "InputError", "MinlpFsError", "SolverUnavailableError", "Instance", "make_instance", "GaussianKernel",
    "PolynomialKernel", "make_kernel", "get_method", "dual_objective", "Result",
    "CardinalitySVC", "DegenerateSelectionWarning", "KernelFeatureSelector", "KernelFeatureSelectorCV",
    "PaperSenseWarning", "plot_cv_results",
]
