"""The fixed-alpha child bounds' partner sums: compiled (:mod:`minlp_fs.exact.partners`) against the numpy sorts they
replaced, side by side in one process (issue 12).

A split of a fit-sense node by an order of its p free features gives child t (t = 0 .. p - need) the sum of its r =
need - 1 largest items own_k + 2 Q_tk + top_{r-1}{Q_kl : l in P_t - k} over its pool P_t = order[t+1:]. Before 6636444
each child sorted a copy of its pool's block of Q (``sorted_sums`` below, the code as it was); now one compiled pass
gives every item and each child's r largest by insertion. Per (p, need): random symmetric Q >= 0 (the work does not
depend on the values), both versions on the same inputs, alternating in rounds, the least time per split of
``--rounds`` rounds; the two answers agree to 1e-12 relative. p = 8-13: Cleveland's and BCW's splits; 24-34: German's
and Ionosphere's; 55-60: Sonar's.

    python benchmarks/bench_partners.py [--rounds 5] [--output benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import datetime
import os
import time

import numpy as np

from minlp_fs.exact.partners import partner_items, top_sums

from _common import add_io_args, timed_section, write_section

#: (p, need) per row
SIZES = [(8, 3), (12, 2), (12, 6), (24, 5), (34, 6), (55, 4), (60, 6)]


def sorted_sums(own: np.ndarray, Q: np.ndarray, need: int) -> np.ndarray:
    """Each child's partner sum as share_bounds and pair_bounds computed it before 6636444 (a sort per child)."""
    r, sums = need - 1, []
    for t in range(len(own) - need + 1):
        partners = 0.0
        if r > 1:
            pool = Q[t + 1:, t + 1:].copy()
            np.fill_diagonal(pool, -np.inf)
            partners = -np.sort(-pool, axis=1)[:, :r - 1].sum(axis=1)
        sums.append(-np.sort(-(own[t + 1:] + 2.0 * Q[t + 1:, t] + partners))[:r].sum())
    return np.array(sums)


def compiled_sums(own: np.ndarray, Q: np.ndarray, need: int) -> np.ndarray:
    return top_sums(partner_items(own, Q, need - 1), need - 1, np.arange(len(own) - need + 1))


def per_split(f, own, Q, need, repeats: int) -> float:
    t = time.perf_counter()
    for _ in range(repeats):
        f(own, Q, need)
    return (time.perf_counter() - t) / repeats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    add_io_args(ap)
    args = ap.parse_args()
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), os.getloadavg()
    rng = np.random.default_rng(0)
    rows = ["| p | need | children | sorted (us a split) | compiled (us a split) | sorted / compiled | same sums |",
            "|---|---|---|---|---|---|---|"]
    for p, need in SIZES:
        A = rng.random((p, p))
        Q, own = A + A.T, rng.normal(size=p)
        same = np.allclose(sorted_sums(own, Q, need), compiled_sums(own, Q, need), rtol=1e-12, atol=1e-12)
        repeats = max(20, 20_000 // p ** 2)
        best = {"sorted": np.inf, "compiled": np.inf}
        for _ in range(args.rounds):
            for name, f in (("sorted", sorted_sums), ("compiled", compiled_sums)):
                best[name] = min(best[name], per_split(f, own, Q, need, repeats))
        rows.append(f"| {p} | {need} | {p - need + 1} | {best['sorted'] * 1e6:.1f} | {best['compiled'] * 1e6:.1f} | "
                    f"{best['sorted'] / best['compiled']:.1f}x | {'yes' if same else 'NO'} |")
        print(rows[-1], flush=True)
    _, text = timed_section("## The fixed-alpha bounds' partner sums: compiled against sorted (bench_partners.py)",
                            "bench_partners.py", started, t0, load0,
                            f"One process, the least time per split over {args.rounds} alternating rounds (the "
                            "compiled code loaded before the first).", rows)
    write_section(args.output, "bench_partners", text)


if __name__ == "__main__":
    main()
