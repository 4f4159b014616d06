"""Exceptions raised on bad input or an unusable solver.

Every check in the package raises one of these with a message that names the problem,
so that the command line can print it as one line instead of a traceback.
"""
from enum import Enum


class MinlpFsError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(MinlpFsError, ValueError):
    """Bad data or parameters: shape, NaN/inf, labels, B out of range, unknown kernel or dataset."""


class NotConvergedError(InputError):
    """An SVM dual (the alpha-subproblem) that no solver here brought to its KKT tolerance within its
    iteration limit: a kernel matrix too ill-conditioned for the data's scale (the message says what to do)."""


class UnavailableKind(str, Enum):
    """Why a solver cannot run here (the message gives the details and the fix)."""

    MISSING_PACKAGE = "missing_package"    # its Python package or executable is not installed
    NO_LICENSE = "no_license"              # installed, but no (or an expired) licence
    SIZE_LIMIT = "size_limit"              # the instance exceeds a demo licence's or a model size limit
    CHECK_FAILED = "check_failed"          # the availability check itself failed

    def __str__(self) -> str:
        return self.value


class SolverUnavailableError(MinlpFsError, RuntimeError):
    """A solver that cannot run here; the message says why, ``kind`` (an :class:`UnavailableKind`) what kind."""

    def __init__(self, message: str = "", kind: UnavailableKind | None = None):
        super().__init__(message)
        self.kind = None if kind is None else UnavailableKind(kind)


class CapabilityError(MinlpFsError, ValueError):
    """A method asked of a kernel what it does not offer (e.g. ACSO on a Gaussian kernel)."""


def plain_integer(value) -> str:
    """:func:`plain` for a message asking for an integer: a float keeps its decimal point (``m = 10.0 rows
    requested; it must be an integer``, where ``10`` would read as a contradiction)."""
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f"):
        return repr(float(value))
    return plain(value)


def plain(value) -> str:
    """A value as a message shows it: numbers as users write them (1, 0.5, 1e+70), never numpy reprs
    such as ``np.float64(1.0)``; strings quoted; lists, tuples and dicts element by element."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{plain(k)}: {plain(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)
