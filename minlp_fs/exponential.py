"""exp(x) over arrays, compiled and vectorised: every exponential of the Gaussian kernel's matrices.

numpy's float64 exp is vectorised only with AVX-512, and a compiled loop's exp calls libm one value at a time
(5-12 ns a value on the project's 2-core Zen 3 test machine, AVX2), where the Gaussian kernel's exponentials took
36 % of LS*'s CPU. This one runs in SIMD lanes (2-3 ns a value there; ``benchmarks/bench_exp.py``):

    x = k ln2 + r,  k = round(x / ln2),  |r| <= ln2 / 2 (Cody-Waite: ln2 = LN2_HI + LN2_LO, k LN2_HI exact),
    exp(x) = 2^k exp(r),  exp(r) = sum_{i <= 13} r^i / i!  (Horner),

k rounded by adding SHIFT, 2^k written into a double's exponent bits. The Taylor remainder |r|^14 / 14! < 4e-18 is
below a twentieth of an ulp of exp(r) >= 0.7, so the result is within one ulp of the correctly rounded value (the
tests compare it with exp in extended precision; about 6 % of values are one ulp off, libm's 0.1 %).

Domain: x in [LOW, HIGH] = [-708, 709], the result a normal double; x < LOW gives 0 (exp(x) < 3.3e-308 there,
libm's a subnormal or 0), x > HIGH gives inf (libm: inf from 709.78 on), NaN gives NaN, so a non-finite exponent
still reaches the callers' finiteness checks. Gaussian exponents -gamma s, s >= 0, are at most a rounding error
above 0.

Every Gaussian kernel matrix the package builds (:class:`~minlp_fs.kernels.GaussianKernel`'s ``apply``, its Gram
and neighbour passes, its batched quadratic forms) goes through this function, so they agree with each other as
they did with libm's. The chord bounds of :mod:`minlp_fs.exact.chords` keep libm's scalar exp: they bound the
function itself, one value per pair, with the verifier's tolerance.
"""
from __future__ import annotations

import numpy as np
from numba import njit

LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # ln 2 with its low 32 bits zero: k * LN2_HI is exact for |k| < 2^20
LN2_LO = 1.90821492927058770002e-10  # ln 2 - LN2_HI
LOW, HIGH = -708.0, 709.0
#: 1.5 * 2^52: t / ln2 + SHIFT rounds t / ln2 to an integer k held in the double's low mantissa bits, so that
#: its int64 view + 1023, shifted left by 52, is 2^k's bits (no float-to-int conversion, which AVX2 lacks)
SHIFT = 6755399441055744.0
#: values per call of :func:`exp_span` from :func:`exp`: a chunk's scratch stays in L1 between the passes
CHUNK = 1024


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_span(x, out, work, lo, hi):  # pragma: no cover - compiled
    """out[i] = exp(x[i]) for lo <= i < hi, ``work`` a float64 scratch of at least 2 (hi - lo) values; out may be x.

    Three vectorised passes: exp(r) into work[:n] and k + SHIFT into work[n:2n], then 2^k's bits over the latter,
    then their product into out. No pass both reads x and writes out, so that the loops stay vectorised when they
    are the same array (LLVM vectorises behind a run-time overlap check, which an in-place call would fail).
    Compiled on its own with "contract" only: LLVM fuses the Horner steps into multiply-adds where the CPU has them
    (2.5 against 3.4 ns a value without them on Zen 3, and fewer values an ulp off); a caller that inlined it would
    lose the flag."""
    n = hi - lo
    xs, outs = x[lo:hi], out[lo:hi]  # views indexed from 0: no wraparound code, contiguous vector loads
    poly, shifted = work[:n], work[n:2 * n]
    for i in range(n):
        v = xs[i]
        t = min(max(v, LOW), HIGH)
        kd = t * LOG2E + SHIFT
        k = kd - SHIFT
        r = (t - k * LN2_HI) - k * LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        p = 0.0 if v < LOW else p
        p = np.inf if v > HIGH else p
        p = v if v != v else p
        poly[i] = p
        shifted[i] = kd
    bits = shifted.view(np.int64)
    for i in range(n):
        bits[i] = (bits[i] + 1023) << 52  # 2^k
    for i in range(n):
        outs[i] = poly[i] * shifted[i]


@njit(cache=True, nogil=True)
def _exp_flat(x, out):  # pragma: no cover - compiled
    work = np.empty(2 * CHUNK)
    for lo in range(0, x.size, CHUNK):
        exp_span(x, out, work, lo, min(x.size, lo + CHUNK))


def exp(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """exp(x) elementwise for a float64 array of any shape (``out`` may be ``x``); see the module docstring."""
    x = np.asarray(x, dtype=float)
    if out is None:
        out = np.empty_like(x, order="C")
    if x.flags.c_contiguous and out.flags.c_contiguous and out.shape == x.shape:
        _exp_flat(x.reshape(-1), out.reshape(-1))
        return out
    flat = np.empty(x.size)
    _exp_flat(np.ascontiguousarray(x).reshape(-1), flat)
    out[...] = flat.reshape(x.shape)
    return out
