"""minlp-fs: embedded feature selection in nonlinear SVMs with an exact cardinality constraint.

>>> from minlp_fs import build_instance, solve
>>> inst = build_instance("bcd", B=5, kernel="poly2", sense="fit")
>>> result = solve(inst, method="ls*")

The public names are imported on first use (module ``__getattr__``, PEP 562), so that the command
line starts without importing scikit-learn or numba when a verb does not need them, and nothing
heavy runs before the command line's own error handling is in place (Ctrl-C during start-up is one line).
"""
import importlib

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_PUBLIC = {
    "AlphaSubproblem": "alpha", "build_instance": "api", "solve": "api", "load_dataset": "datasets",
    "make_synthetic": "datasets", "CapabilityError": "errors", "InputError": "errors",
    "MinlpFsError": "errors", "SolverUnavailableError": "errors", "CardinalitySVC": "estimators",
    "DegenerateSelectionWarning": "selector", "KernelFeatureSelector": "selector",
    "Instance": "instance", "make_instance": "instance", "GaussianKernel": "kernels",
    "PolynomialKernel": "kernels", "make_kernel": "kernels", "get_method": "methods",
    "dual_objective": "objective", "Result": "result", "PaperSenseWarning": "selector",
    "KernelFeatureSelectorCV": "selection_cv", "plot_cv_results": "selection_cv",
    "MulticlassInstance": "multiclass",
}

__all__ = list(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
