"""The alpha-subproblem: exact SVM dual solves for a fixed feature subset."""
from .libsvm import libsvm_solve
from .oracle import BACKENDS, DEFAULT_TOL, AlphaSubproblem, Fit
from .smo import smo_solve

__all__ = ["AlphaSubproblem", "Fit", "BACKENDS", "DEFAULT_TOL", "libsvm_solve", "smo_solve"]
