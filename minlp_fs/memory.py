"""The C heap while a method runs: keep HEAP_PAD bytes of free heap instead of returning it to the system.

A search allocates and frees matrices of a few MB thousands of times (kernel matrices, the degree shares' Kronecker
factors). With glibc's defaults the free top of the heap is given back to the system (trimmed) and the next
allocation faults the same pages in again, zeroed: measured on Ionosphere poly5 fit B = 5 (m = 351), bnb 40 s
against 22 s with ``mallopt(M_TOP_PAD, 64 MB)`` (16 MB: 26 s), the same tree; German (m = 1,000), enumeration and
the heuristics unchanged. :func:`heap_pad` sets the pad while a method runs and restores glibc's default after the
outermost one (nested and concurrent solves share one setting). A user's own ``MALLOC_TOP_PAD_`` is left alone, and
so is any C library without ``mallopt`` (macOS, musl).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from contextlib import contextmanager
from functools import cache

#: bytes of free heap kept while a method runs
HEAP_PAD = 64 * 2 ** 20
#: mallopt's parameter number for the pad, and glibc's default value (mallopt(3))
M_TOP_PAD, DEFAULT_TOP_PAD = -2, 128 * 1024

_lock = threading.Lock()
_depth = 0


@cache
def _mallopt():
    """glibc's ``mallopt``, or None (another C library, or the user's MALLOC_TOP_PAD_ decides)."""
    if "MALLOC_TOP_PAD_" in os.environ:
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return None


def _set_pad(value: int) -> None:
    mallopt = _mallopt()
    if mallopt is not None:
        mallopt(M_TOP_PAD, value)


@contextmanager
def heap_pad():
    """Keep HEAP_PAD bytes of free heap inside the block (module docstring); reentrant and thread-safe."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            _set_pad(HEAP_PAD)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _set_pad(DEFAULT_TOP_PAD)
