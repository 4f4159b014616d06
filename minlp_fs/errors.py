"""Exceptions raised on bad input or an unusable solver.

Every check in the package raises one of these with a message that names the problem,
so that the command line can print it as one line instead of a traceback.
"""
from numbers import Integral


class MinlpFsError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(MinlpFsError, ValueError):
    """Bad data or parameters: shape, NaN/inf, labels, B out of range, unknown kernel or dataset."""


class SolverUnavailableError(MinlpFsError, RuntimeError):
    """A solver that cannot run here; the message says why (package absent, no license, size limit)."""


class CapabilityError(MinlpFsError, ValueError):
    """A method asked of a kernel what it does not offer (e.g. ACSO on a Gaussian kernel)."""


def check_integer(owner: str, key: str, value, lowest: int) -> None:
    """InputError naming ``owner`` and ``key`` unless ``value`` is an integer (not a bool) >= ``lowest``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < lowest:
        raise InputError(f"{owner}: {key} must be an integer >= {lowest}; got {plain(value)}")


def plain(value) -> str:
    """A value as a message shows it: numbers as users write them (1, 0.5, 1e+70), never numpy reprs
    such as ``np.float64(1.0)``; strings quoted; lists and tuples element by element."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)
