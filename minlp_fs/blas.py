"""BLAS threads: one per process while our own code runs (parallelism is across independent solves).

Our dense products are small (m x m, m up to a few thousand); with several threads OpenBLAS spins,
and on a loaded machine a 2 ms product was measured at 20 ms.
"""
from __future__ import annotations

import functools
from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def _blas() -> ThreadpoolController:
    """Found once: ``threadpool_limits`` rescans the loaded libraries on every call (ms each)."""
    return ThreadpoolController()


def one_blas_thread():
    """Context manager limiting BLAS to one thread (parallelism is across independent solves)."""
    return _blas().limit(limits=1)


def on_one_blas_thread(solve):
    """Decorator: run a method's ``solve`` with one BLAS thread."""
    @functools.wraps(solve)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return solve(*args, **kwargs)
    return wrapper
