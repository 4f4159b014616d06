"""How many workers a ``--jobs`` / ``n_jobs`` request may start: never more than the machine's CPUs; and whether
there is time to start them.

A request above the CPU count only adds processes that compete for the same cores (``--jobs 100000``
once started over 40 processes in seconds), so it is capped with a warning; -1 means one worker
per CPU; 0 and values below -1 mean nothing and are an error. Worker processes take seconds to start
(:data:`POOL_START_S`): a time-limited run with less time left than that does its work in its own process
(:func:`no_time_for_workers`), where waiting for the workers would overrun the limit by their start-up.
"""
from __future__ import annotations

import os
import warnings
from numbers import Integral

from .errors import InputError


#: seconds a pool of worker processes takes to return its first result (loky processes importing minlp_fs and
#: loading its compiled functions: about 1.8 s on the 2-core machine of benchmarks/RESULTS.md)
POOL_START_S = 2.5


class JobsCappedWarning(UserWarning):
    """A ``--jobs`` request above the CPU count was lowered to it."""


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def cap_jobs(n_jobs: int, what: str) -> int:
    """The number of workers to start for ``n_jobs`` requested by ``what`` (e.g. ``"certify --jobs"``).

    -1 -> every CPU; 1..cpus -> unchanged; above the CPU count -> the CPU count, with a
    :class:`JobsCappedWarning` naming ``what``; 0, below -1 or not an integer -> InputError.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0 or n_jobs < -1:
        raise InputError(f"{what} must be an integer >= 1 or -1 (one worker per CPU); got {n_jobs!r}")
    n_jobs = int(n_jobs)
    cpus = cpu_count()
    if n_jobs > cpus:
        warnings.warn(f"{what} {n_jobs} is more than the {cpus} CPU(s) of this machine; using {cpus}",
                      JobsCappedWarning, stacklevel=2)
    return n_workers(n_jobs)


def n_workers(n_jobs: int) -> int:
    """The workers ``n_jobs`` (already checked: >= 1 or -1) starts here, silently: -1 -> every CPU, else at
    most the CPU count. The warning is :func:`cap_jobs`'s, given once per request (the method's Run)."""
    cpus = cpu_count()
    return cpus if n_jobs == -1 else min(int(n_jobs), cpus)


def no_time_for_workers(deadline) -> bool:
    """Whether a run with this :class:`~minlp_fs.stopping.Deadline` (or None: no limit) has less than
    :data:`POOL_START_S` left: worker processes would start after it, so the work is done in this process."""
    left = None if deadline is None else deadline.remaining()
    return left is not None and left < POOL_START_S
