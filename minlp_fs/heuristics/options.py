"""Validation of the heuristics' common options, by field name, with messages naming the option."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def check_options(method) -> None:
    """Raise InputError for a bad value of any common option the method (a dataclass) has."""
    name = getattr(method, "name", type(method).__name__)
    opts = vars(method)
    if "time_limit" in opts:
        t = opts["time_limit"]
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating))
                              or not math.isfinite(t) or t <= 0):
            raise InputError(f"{name}: time_limit must be None or a number of seconds > 0; got {t!r}")
    if "n_jobs" in opts and (not _is_int(opts["n_jobs"]) or opts["n_jobs"] == 0):
        raise InputError(f"{name}: n_jobs must be a non-zero integer (-1 = one thread per candidate); "
                         f"got {opts['n_jobs']!r}")
    if "max_iter" in opts and opts["max_iter"] is not None \
            and (not _is_int(opts["max_iter"]) or opts["max_iter"] < 1):
        raise InputError(f"{name}: max_iter must be None or an integer >= 1; got {opts['max_iter']!r}")
    for key in ("pool_size", "opt_window"):
        if key in opts and (not _is_int(opts[key]) or opts[key] < 1):
            raise InputError(f"{name}: {key} must be an integer >= 1; got {opts[key]!r}")
    if "allow_nonsubmodular" in opts and not isinstance(opts["allow_nonsubmodular"], bool):
        raise InputError(f"{name}: allow_nonsubmodular must be True or False; got {opts['allow_nonsubmodular']!r}")
