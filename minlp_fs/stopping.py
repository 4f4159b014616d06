"""When a search stops early: one :class:`Deadline` for time limits, one :class:`SearchStopped` signal.

Every method gets a Deadline from :meth:`minlp_fs.methods.Method.solve` and checks it between units
of work (a greedy elimination step, a chunk of re-fits, an iteration, a chunk of enumerated subsets);
:meth:`Deadline.check` raises :class:`SearchStopped` with status ``time_limit``. A callback raises
``SearchStopped()`` (status ``interrupted``) to stop a run; Ctrl-C (``KeyboardInterrupt``) is turned
into the same status by ``Method.solve``. Either way the method returns its incumbent.

The deadline is an instant of the wall clock (``time.time``), so it can be sent to worker processes
(the enumeration's chunks) and still mean the same moment.

A unit of work in progress when the deadline passes is finished (an SVM solve, a solver's uninterruptible
phase such as SCIP's expression canonicalisation in presolve), so a run ends a little after its limit. When it
ends later than :func:`overrun` allows, its Result says so (``info["time_limit_overrun_s"]``, the message) and a
:class:`TimeLimitOverrunWarning` is issued: a limit that did not hold is never silent.
"""
from __future__ import annotations

import time

from .result import Status


class SearchStopped(Exception):
    """Stop the running search and return the incumbent with ``status`` (interrupted by default)."""

    def __init__(self, status: Status = Status.INTERRUPTED, message: str = ""):
        super().__init__(message or str(status))
        self.status = Status(status)


class Deadline:
    """A time limit as an instant: ``Deadline(seconds)``; ``Deadline(None)`` never expires."""

    def __init__(self, seconds: float | None = None):
        self.seconds = seconds
        self.at = None if seconds is None else time.time() + float(seconds)

    def remaining(self) -> float | None:
        """Seconds left (may be negative), or None without a limit."""
        return None if self.at is None else self.at - time.time()

    def expired(self) -> bool:
        return self.at is not None and time.time() >= self.at

    def check(self) -> None:
        """Raise :class:`SearchStopped` (status ``time_limit``) once the deadline has passed."""
        if self.expired():
            raise SearchStopped(Status.TIME_LIMIT, f"time limit of {self.seconds:g} s reached")



#: how late a run may end after its time limit before :func:`overrun` reports it: OVERRUN_GRACE_S seconds plus
#: OVERRUN_RTOL of the limit (the unit of work in progress: one SVM solve, one chunk, one solver callback)
OVERRUN_GRACE_S = 0.5
OVERRUN_RTOL = 0.1


class TimeLimitOverrunWarning(RuntimeWarning):
    """A run ended later after its time limit than :func:`overrun` allows (the Result's message says where)."""


def overrun(limit: float | None, elapsed: float) -> float | None:
    """Seconds ``elapsed`` went beyond ``limit`` when that is more than the grace (OVERRUN_GRACE_S +
    OVERRUN_RTOL * limit), else None (also without a limit)."""
    if limit is None or elapsed <= limit * (1.0 + OVERRUN_RTOL) + OVERRUN_GRACE_S:
        return None
    return elapsed - limit
