"""Method ``bnb``: the certified optimum of problem (4) by branch-and-bound (issue 12).

The search itself is :mod:`.search` (the tree, bounds and anytime stop: its module docstring); with
``n_jobs != 1`` or a dask/ray backend, :mod:`.parallel` runs it on disjoint subtrees in worker processes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..blas import on_one_blas_thread
from ..errors import InputError
from ..methods import Method, check_incumbent
from ..options import n_jobs_option, option, time_limit_option
from .fallback import search_with_fallback
from .parallel import parallel_search
from .search import _Search

#: ``incumbent="auto"`` runs LS* first in the paper sense above this many subsets, else the alpha-start (2 QPs).
#: Measured (benchmarks/RESULTS.md, bench_bnb_incumbent, CPU alpha-start / LS*): where LS*'s incumbent attains the
#: trivial bound the search ends at the root (German B = 6 and 8: 2.5-198x, poly3 B = 6 8.1 -> 0.18 s); elsewhere its
#: better incumbent prunes about as much as it costs (Parkinsons, BCD, Ionosphere, Sonar: 0.81-1.40x). In the fit sense
#: (0.18-1.08x) and below it the depth-first search finds as good an incumbent within a few nodes
AUTO_LS_FROM = 100_000


@dataclass
class BranchAndBound(Method):
    """Certified optimum of problem (4) by branch-and-bound (module docstring); both senses, any kernel.

    ``incumbent``: the registered heuristic run first ("none": only the start, if given, is solved; "auto", the
    default: LS* in the paper sense above AUTO_LS_FROM subsets, whose incumbent often attains the trivial bound
    and so ends the search at once, else the alpha-start, 2 QPs: the depth-first search, best child first, finds
    LS*'s incumbent within a few nodes, and LS* costs hundreds of QPs; benchmarks/RESULTS.md, bench_bnb);
    ``marginal``: use the fixed-alpha bounds (pair, degree shares or the Gaussian kernel's chords) at the
    relaxed alpha (fit sense);
    ``gap_tol``: relative optimality gap the search may leave (0: exact); a node whose bound is within
    gap_tol * max(1, |incumbent|) of the incumbent is pruned, and the certified answer states the gap it
    is proven within (:mod:`.search`, relative gap).
    ``fallback_share``: hedge against bounds that do not prune: after a short search, enumeration's time E is
    estimated and the search gets fallback_share x E seconds before every subset is enumerated instead
    (:mod:`.fallback`; ``minlp-fs certify --method auto`` sets 0.5).
    ``certificate``: path of a JSON proof to write. ``n_jobs``: 1, this sequential search; otherwise
    worker processes (-1: one per core) searching disjoint subtrees, through joblib's ``backend``
    (loky, or a dask/ray cluster at ``scheduler``): :mod:`.parallel`, whose tree and answer are the
    same for any n_jobs (the optimum's value is the sequential one's too). The fit sense solves two
    QPs per node (one with the Gaussian kernel).
    An ``oracle`` passed to :meth:`solve` lends its KKT tolerance (the search solves its own QPs).
    """

    time_limit: float | None = time_limit_option()
    n_jobs: int = n_jobs_option()
    progress: bool = option(False, bool, doc="show a progress bar (nodes, open nodes, QPs, gap)")
    incumbent: str = option("auto", str, doc="heuristic run first for the incumbent ('none': only the start; "
                                              f"'auto': ls* in the paper sense above {AUTO_LS_FROM:,} subsets, else "
                                              "alpha-start)")
    marginal: bool = option(True, bool, doc="fixed-alpha bounds at the relaxed alpha (fit sense: polynomial kernels, Gaussian chords)")
    gap_tol: float = option(0.0, float, low=0, high=1, high_open=True,
                            doc="relative optimality gap to stop at (0: exact); the answer states the gap it is proven within")
    fallback_share: float | None = option(None, float, low=0, none=True,
                                          doc="enumerate instead once the search has run this share of enumeration's "
                                              "estimated time (None: never; certify --method auto: 0.5)")
    certificate: str | None = option(None, str, none=True, doc="JSON file to write the proof to (minlp-fs verify)")
    backend: str = option("loky", str, choices=("loky", "dask", "ray"),
                          doc="joblib backend of the worker processes (with n_jobs != 1, or dask/ray)")
    scheduler: str | None = option(None, str, none=True, doc="dask/ray scheduler address (default: a local cluster)")

    name = "bnb"
    uses_start = True
    certifies = True

    def check(self) -> None:
        super().check()
        check_incumbent("bnb", self.incumbent, also=("none", "auto"))
        if self.scheduler is not None and self.backend == "loky":
            raise InputError("bnb: a scheduler needs backend 'dask' or 'ray'")
        if self.certificate is not None and self.fallback_share is not None:
            raise InputError("bnb: a certificate needs the search to finish by branch-and-bound: fallback_share must "
                             "be None (an enumeration writes no proof)")
        if self.certificate is not None and not Path(self.certificate).resolve().parent.is_dir():
            raise InputError(f"bnb: cannot write the certificate {self.certificate}: its folder "
                             f"{Path(self.certificate).resolve().parent} does not exist")

    def heuristic(self, instance) -> str:
        """The incumbent heuristic for ``instance`` (``auto``: see AUTO_LS_FROM)."""
        if self.incumbent != "auto":
            return self.incumbent
        large = math.comb(instance.n, instance.B) > AUTO_LS_FROM
        return "ls*" if instance.sense == "paper" and large else "alpha-start"

    @on_one_blas_thread
    def _search(self, run):
        if self.fallback_share is not None:   # bnb, then enumeration where bnb is measured slower (:mod:`.fallback`)
            return search_with_fallback(self, run)
        if self.n_jobs != 1 or self.backend != "loky":  # subtrees in worker processes
            return parallel_search(self, run)
        return _Search(self, run).search()
