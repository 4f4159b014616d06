"""The package's vectorised exp (minlp_fs.exponential) against numpy's and libm's, side by side in one run.

    python benchmarks/bench_exp.py [--repeats 30] [--output RESULTS.md]

Per range of exponents (1,000,000 values drawn with a fixed seed), ns per value of ``minlp_fs.exponential.exp``,
``np.exp`` and a compiled loop of scalar exps (libm, as the Gaussian kernel's compiled passes called it before),
timed in turns (ours, numpy, libm, ours, ...) ``--repeats`` times: the least and the median; and how far each is
from the correctly rounded value (exp in long double rounded to double): the largest error in ulps and the share
of values that are not the correctly rounded one. Then the Gaussian Gram of m = 1,000 rows on 10 features, the
package's compiled pass (``GaussianKernel.gram``) against the same pass with libm's exp (the Gram of 5971ada,
compiled here), least and median over the repetitions. Writes the section ``bench_exp``.
"""
from __future__ import annotations

import argparse
import datetime
import os
import time

import numpy as np
from numba import njit

from _common import add_io_args, timed_section, write_section
from minlp_fs.exponential import exp
from minlp_fs.kernels import GaussianKernel

RANGES = [(-3.0, 0.0), (-40.0, 0.0), (-708.0, 0.0)]


@njit(cache=True)
def _libm_exp(x, out):  # pragma: no cover - compiled
    for i in range(x.size):
        out[i] = np.exp(x[i])


@njit(cache=True)
def _libm_gram(A, gamma, out):  # pragma: no cover - compiled
    """kernels._gram_sqdist as it was before the package's exp (one libm exp per pair)."""
    m, B = A.shape
    AT = np.ascontiguousarray(A.T)
    s = np.empty(m)
    for a in range(m):
        out[a, a] = 1.0
        rest = m - a - 1
        s[:rest] = 0.0
        for j in range(B):
            x, Tj = A[a, j], AT[j, a + 1:]
            for b in range(rest):
                d = x - Tj[b]
                s[b] += d * d
        for b in range(rest):
            r = np.exp(-gamma * s[b])
            out[a, a + 1 + b] = r
            out[a + 1 + b, a] = r


def turns(runs: dict, repeats: int, per: int) -> dict:
    """name -> (least, median) ns per unit over ``repeats`` turns of every run, ``per`` units a call."""
    times = {name: [] for name in runs}
    for f in runs.values():
        f()
    for _ in range(repeats):
        for name, f in runs.items():
            t = time.perf_counter()
            f()
            times[name].append((time.perf_counter() - t) / per * 1e9)
    return {name: (min(v), float(np.median(v))) for name, v in times.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    add_io_args(ap)
    args = ap.parse_args(argv)
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    rng = np.random.default_rng(0)
    lines = ["| exponents | ours: least / median ns | np.exp | libm loop | np.exp / ours (least) | libm / ours (least) "
             "| ours: max ulp, share not correctly rounded | libm: max ulp, share |", "|---|---|---|---|---|---|---|---|"]
    for lo, hi in RANGES:
        x = rng.uniform(lo, hi, 1_000_000)
        ours, lib = np.empty_like(x), np.empty_like(x)
        t = turns({"ours": lambda: exp(x, out=ours), "numpy": lambda: np.exp(x, out=lib),
                   "libm": lambda: _libm_exp(x, lib)}, args.repeats, x.size)
        ref = np.exp(x.astype(np.longdouble)).astype(float)
        errs = [(float((np.abs(v - ref) / np.spacing(ref)).max()), float(np.mean(v != ref))) for v in (ours, lib)]
        lines.append(f"| [{lo:g}, {hi:g}] | {t['ours'][0]:.2f} / {t['ours'][1]:.2f} | {t['numpy'][0]:.2f} / "
                     f"{t['numpy'][1]:.2f} | {t['libm'][0]:.2f} / {t['libm'][1]:.2f} | "
                     f"{t['numpy'][0] / t['ours'][0]:.2f}x | {t['libm'][0] / t['ours'][0]:.2f}x | "
                     f"{errs[0][0]:.0f}, {errs[0][1]:.3f} | {errs[1][0]:.0f}, {errs[1][1]:.3f} |")
    A = rng.normal(size=(1000, 10))
    kernel, K0 = GaussianKernel(gamma=0.1), np.empty((1000, 1000))
    t = turns({"ours": lambda: kernel.gram(A), "libm": lambda: _libm_gram(A, kernel.gamma, K0)},
              max(3, args.repeats // 3), 1000 * 999 // 2)
    diff = np.abs(kernel.gram(A) - K0) / np.spacing(K0)
    lines += ["", "| Gram, m = 1,000, 10 features | ours: least / median ns a pair | libm pass | libm / ours (least) | "
              "max ulp apart |", "|---|---|---|---|---|",
              f"| exp(-0.1 ||a - b||^2) | {t['ours'][0]:.2f} / {t['ours'][1]:.2f} | {t['libm'][0]:.2f} / "
              f"{t['libm'][1]:.2f} | {t['libm'][0] / t['ours'][0]:.2f}x | {diff.max():.0f} |"]
    _, text = timed_section("## The Gaussian kernel's exp: the package's against numpy's and libm's (bench_exp.py)",
                            "bench_exp.py", started, t0, load0, "One thread; times per value (per pair for the Gram).",
                            lines)
    write_section(args.output, "bench_exp", text)
    print(text)


if __name__ == "__main__":
    main()
