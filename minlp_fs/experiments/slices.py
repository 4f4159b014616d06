"""The full grids and their ``--quick`` slices (a few minutes on 2 cores each), per experiment.

Full grids: the paper's nine datasets and four kernels. B_max of the certified grid comes from the
enumeration budget (``hours`` per dataset on this machine, C(n, B) <= 10^8); the external solvers
get ``solver_time_limit`` seconds per run (the paper: 1800 s; here 300 s, so that the full grid
fits in about a day on 2 cores); branch-and-bound gets ``exact_time_limit`` seconds per instance (its
cost cannot be planned from C(n, B); a run stopped there is recorded uncertified, with its gap). The
parameter study is the reduced grid of appendix app:param (C = 10, gamma = 0.1, five small datasets,
three kernels) meant to run in about an hour here.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..datasets import PAPER_DATASETS
from .accuracy import ACCURACY_METHODS
from .grids import B_FRACTIONS, CERTIFIED_METHODS, KERNELS, MULTISTART_METHODS

ALL = tuple(PAPER_DATASETS)


@dataclass(frozen=True)
class Slice:
    datasets: tuple
    kernels: tuple
    methods: tuple
    senses: tuple = ("paper", "fit")
    b_cap: int | None = None                 # certified: largest B enumerated
    hours: float = 1.0                        # certified: enumeration budget per dataset (wall, this machine)
    solver_time_limit: float | None = 300.0   # external solvers, seconds per run
    exact_time_limit: float | None = 120.0    # certified: branch-and-bound, seconds per run
    n_starts: int = 10                        # multistart
    certify_max_subsets: int = 0              # multistart: enumerate B = floor(n/2) up to this C(n, B)
    fractions: tuple = B_FRACTIONS            # params: B = round(f n)
    B: int = 5                                # accuracy


SLICES = {
    "certified": {
        "full": Slice(ALL, KERNELS, CERTIFIED_METHODS),
        "quick": Slice(("wholesale", "cleveland"), ("poly2", "rbf"), CERTIFIED_METHODS, b_cap=3, hours=0.05,
                       solver_time_limit=10.0),
    },
    "multistart": {
        "full": Slice(ALL, KERNELS, MULTISTART_METHODS, certify_max_subsets=10**6),
        "quick": Slice(("wholesale", "cleveland"), ("poly3", "rbf"), ("ls*", "acso*", "rfe1", "rfe2"),
                       certify_max_subsets=10**4),
    },
    "params": {
        "full": Slice(("wholesale", "diabetes", "bcw", "cleveland", "parkinsons"), ("poly2", "poly3", "rbf"),
                      ("ls*", "acso*"), senses=("paper",)),
        "quick": Slice(("wholesale", "cleveland"), ("poly2",), ("ls*", "acso*"), senses=("paper",),
                       fractions=(0.3, 0.5)),
    },
    "accuracy": {
        "full": Slice(ALL, ("poly2", "rbf"), ACCURACY_METHODS),
        "quick": Slice(("bcd", "cleveland", "sonar"), ("poly2",), ACCURACY_METHODS),
    },
}
