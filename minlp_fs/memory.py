"""The C heap while a method runs: keep HEAP_PAD bytes of free heap instead of returning it to the system.

A search allocates and frees matrices of a few MB thousands of times (kernel matrices, the degree shares' Kronecker
factors). With glibc's defaults the free top of the heap is given back to the system (trimmed) and the next
allocation faults the same pages in again, zeroed: measured on Ionosphere poly5 fit B = 5 (m = 351) in a fresh
process, bnb 40-45 s against 22-26 s with ``mallopt(M_TOP_PAD, 64 MB)`` (16 MB: 26 s), the same tree. Any mallopt
also freezes glibc's dynamic mmap threshold where it stands (128 kB in a fresh process), after which every kernel
matrix above it would be mapped and faulted in on its own (BCD rbf fit B = 4: 0.45 s against 0.26 s), so the
threshold is set to MMAP_THRESHOLD with the pad. Measured with both (CPU s, with / without): BCD rbf fit B = 4
0.25-0.28 / 0.34-0.35, BCD poly3 paper B = 6 bnb 0.37 / 0.44-0.47; Parkinsons poly2 paper B = 6 bnb, Ionosphere
poly5 fit B = 4 enumeration, Sonar rbf fit B = 3 bnb unchanged. :func:`heap_pad` sets them while a method runs
and restores glibc's default pad after the outermost one (nested and concurrent solves share one setting); the
mmap threshold stays where glibc's dynamic one climbs to. A user's own ``MALLOC_TOP_PAD_`` is left alone, and so
is any C library without ``mallopt`` (macOS, musl).
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
#: allocations from this size on are mapped on their own (mmap) rather than taken from the heap: glibc's largest
#: (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems), where its dynamic threshold climbs to
MMAP_THRESHOLD = 32 * 2 ** 20
#: mallopt's parameter numbers and glibc's default pad (mallopt(3))
M_TOP_PAD, M_MMAP_THRESHOLD, DEFAULT_TOP_PAD = -2, -3, 128 * 1024

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


#: what the outermost block sets (the pad, then the mmap threshold any mallopt freezes, fixed where glibc's dynamic
#: one would climb to) and what it restores
ENTER = ((M_TOP_PAD, HEAP_PAD), (M_MMAP_THRESHOLD, MMAP_THRESHOLD))
LEAVE = ((M_TOP_PAD, DEFAULT_TOP_PAD),)


def _apply(settings) -> None:
    mallopt = _mallopt()
    if mallopt is not None:
        for param, value in settings:
            mallopt(param, value)


@contextmanager
def heap_pad():
    """Keep HEAP_PAD bytes of free heap inside the block (module docstring); reentrant and thread-safe."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            _apply(ENTER)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _apply(LEAVE)
