"""B_max per dataset: the largest budget whose certification fits an enumeration budget (appendix app:cert).

Certifying one instance (dataset, kernel, B, sense) enumerates its C(n, B) subsets, one convex QP
each. With a measured time t per QP (swap-updated, warm-started: what the enumeration really costs
here), certifying every B' <= B for the grid's k kernels and s senses costs about

    T(B) = t * k * s * sum_{B'=1}^{B} C(n, B') / n_cores        (wall seconds on this machine)

and B_max is the largest B <= floor(n/2) with C(n, B) <= ``max_subsets`` (the paper's 10^8) and
T(B) <= ``hours``. As in the paper, budgets beyond floor(n/2) mirror smaller ones
(C(n, B) = C(n, n - B)) and are not enumerated. T over-estimates the paper sense, whose enumeration
stops at the first subset attaining the trivial bound.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..api import build_instance, solve
from .grids import dataset_shape

#: the paper's cap on C(n, B_max)
PAPER_MAX_SUBSETS = 10**8
#: largest enumeration a probe may ask for (keeps the probe's chunk list small)
PROBE_MAX_SUBSETS = 10**5


def measure_qp_time(dataset: str, kernel: str, data_dir=None, seconds: float = 1.5) -> float:
    """Seconds per QP of the enumeration on the full dataset (fit sense: no early stop), one core."""
    n = dataset_shape(dataset, data_dir)[1]
    B = max(b for b in range(1, max(1, n // 2) + 1) if b == 1 or math.comb(n, b) <= PROBE_MAX_SUBSETS)
    inst = build_instance(dataset, data_dir, B=B, kernel=kernel, sense="fit")
    res = solve(inst, "enumerate", time_limit=seconds)
    return res.wall_time_s / max(1, res.info["n_done"])


@dataclass
class Plan:
    """B_max of one dataset and what certifying B = 1..B_max is expected to cost."""

    dataset: str
    n: int
    m: int
    bmax: int
    binding: str          # "n/2", "subsets" or "time": what stopped B_max
    subsets_at_bmax: int  # C(n, B_max)
    qps: int              # QPs of B = 1..B_max over the kernels and senses
    hours: float          # estimated wall hours on n_cores
    qp_time_s: float

    def to_dict(self) -> dict:
        return asdict(self)


def choose_bmax(dataset: str, n: int, m: int, qp_time_s: float, n_kernels: int, n_senses: int,
                hours: float, n_cores: int = 1, max_subsets: int = PAPER_MAX_SUBSETS,
                b_cap: int | None = None) -> Plan:
    """The largest B <= min(floor(n/2), b_cap) within ``max_subsets`` and ``hours`` (at least B = 1)."""
    top = max(1, n // 2) if b_cap is None else max(1, min(n // 2, b_cap))
    per_instance = n_kernels * n_senses

    def wall_hours(qps: int) -> float:
        return qps * qp_time_s / max(1, n_cores) / 3600.0

    bmax, qps = 1, n * per_instance
    for B in range(2, top + 1):
        total = qps + math.comb(n, B) * per_instance
        if math.comb(n, B) > max_subsets:
            binding = "subsets"
            break
        if wall_hours(total) > hours:
            binding = "time"
            break
        bmax, qps = B, total
    else:
        binding = "n/2" if top == max(1, n // 2) else "cap"
    return Plan(dataset, n, m, bmax, binding, math.comb(n, bmax), qps, wall_hours(qps), qp_time_s)
