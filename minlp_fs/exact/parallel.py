"""Parallel and distributed branch-and-bound: disjoint subtrees in worker processes (issue 12, item 4).

``BranchAndBound(n_jobs=N)`` with N != 1 (or ``backend`` dask/ray; ``minlp-fs certify --jobs N
[--backend loky|dask|ray] [--scheduler ADDR]``) runs :func:`parallel_search`:

1. **Frontier.** The main process runs the incumbent heuristic, then expands nodes of the tree
   (:mod:`.tree`, with the bounds of the sequential search, :mod:`.search`) until :data:`SUBTREES`
   nodes are open or none can be expanded: always the open node holding the most subsets,
   C(|F|, need), the first in search order on ties. The tree's children partition their parent, so
   the open nodes are disjoint subtrees holding every subset not yet pruned.
2. **Waves.** The frontier, in search order (best child first), is cut into waves of :data:`WAVE`
   subtrees. Every subtree of a wave whose bound is below the incumbent's score runs the sequential
   depth-first search (``_Search.search_nodes``) in a worker, from the incumbent known when its wave
   starts (workers get the fresher incumbent of the earlier waves), for at most :data:`NODE_BUDGET`
   nodes: what it leaves open goes back to the front of the frontier, in search order, so one large
   subtree does not keep a wave waiting (subtrees differ in size by orders of magnitude after
   pruning). Workers are joblib's, through the experiments' route
   (:func:`minlp_fs.experiments.runner.backend_context`): loky processes on this machine, a Dask or
   Ray cluster with ``scheduler``.
3. **Merge** after each wave, in frontier order: the incumbent is the best of the subtrees' by score,
   then by the lexicographically smallest sorted subset; node and QP counts are summed; the subtrees'
   certificate records are appended to the frontier's (one proof: :mod:`.certificate`).

**Same answer for any number of workers.** The frontier, the waves and the node budget depend neither
on N nor on timing, and a subtree's search depends only on its node, the budget and the incumbent it
starts from, which is the merge of the earlier waves. So the subset, the value, the counts and the certificate
are the same for any N and backend (tests/exact/test_bnb_parallel.py); against the sequential search (N = 1) the value
is the same optimum and the subset too unless two subsets tie exactly. (What a time-limited run finishes depends on
the clock.)

**Anytime.** The global bound is the least of the incumbent's score and the bound of every subtree
not finished: the least bound over its open nodes when its worker stopped (time limit: every worker
checks the same wall-clock deadline), its frontier node's bound when it did not run (later waves, or
the whole wave a Ctrl-C interrupted: what its workers found is dropped, the bound stays valid). With a
relative gap (``gap_tol``), the least bound the main process or a worker pruned below the incumbent
(``floor``, :mod:`.search`) joins it. When the first wave would start with less time left than worker processes take
to start (:func:`minlp_fs.workers.no_time_for_workers`: under 2.5 s, whatever the backend, even with workers already
running), the waves run in this process instead (joblib's n_jobs = 1, as ``n_jobs=1`` here does; the same tree:
``info['parallel']['in_process']``): waiting for workers would overrun the limit by their start-up.
"""
from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
from tqdm.auto import tqdm

from ..alpha import AlphaSubproblem
from ..blas import one_blas_thread
from ..memory import heap_pad
from ..methods import Run
from ..result import Status, TracePoint
from ..stopping import Deadline, SearchStopped
from ..workers import cpu_count, no_time_for_workers
from . import tree
from .certificate import Recorder
from .search import _Search

#: open nodes the frontier is grown to (and waves of WAVE subtrees): fixed numbers, not multiples of
#: the workers, so that the tree and the answer do not depend on n_jobs
SUBTREES = 64
WAVE = 16
#: nodes a worker processes before it hands back what it left open (a count, not a time: deterministic)
NODE_BUDGET = 128


def _size(node) -> int:
    return math.comb(len(node.free), node.need)


def grow_frontier(search, nodes: list, target: int = SUBTREES) -> list:
    """Expand the open node holding the most subsets (the first on ties) until ``target`` nodes are
    open or every open node is a leaf; the open nodes in search order. A stop (time limit, Ctrl-C)
    propagates with ``nodes`` still holding every open node (a node is replaced only once expanded)."""
    while 0 < len(nodes) < target:
        k = max(range(len(nodes)), key=lambda i: (not tree.is_leaf(nodes[i].free, nodes[i].need), _size(nodes[i]), -i))
        if tree.is_leaf(nodes[k].free, nodes[k].need):
            break
        nodes[k:k + 1] = search.expand(nodes[k])
    return nodes


def _run_subtree(method, instance, node, incumbent: tuple, deadline_at, tol: float, record: bool,
                 budget: int = NODE_BUDGET) -> dict:
    """Worker: the sequential search of ``node``'s subtree from ``incumbent`` = (value, subset, alpha), for at
    most ``budget`` nodes; ``handed_back``: the nodes it left open (search order) when the budget ran out.
    ``method``: the worker's copy of the parent's method (no incumbent heuristic, no certificate file)."""
    cpu = time.process_time()
    with one_blas_thread(), heap_pad():
        run = Run(method, instance, None, AlphaSubproblem(instance, tol=tol), None)
        run.deadline = Deadline(None if deadline_at is None else deadline_at - time.time())
        value, subset, alpha = incumbent
        if value is not None:
            run.incumbent.offer(value, subset, alpha, "parallel")
        search = _Search(method, run)
        search.recorder = Recorder(instance) if record else None
        # a worker that starts after the deadline (process start-up: about 1.8 s for a wave's first workers on this
        # machine) leaves its subtree open at once, where the search would first process its node
        if run.deadline.expired():
            search.stack.append(node)
            status = Status.TIME_LIMIT
        else:
            status = search.search_nodes([node], budget)
        open_nodes = search.stack + ([search.current] if search.current is not None else [])
        handed_back = search.stack[::-1] if status == Status.OPTIMAL else []
        inc = run.incumbent
        found = inc.value is not None and (value is None or instance.better(inc.value, value))
        return {"status": status, "found": found, "value": inc.value, "subset": inc.subset, "alpha": inc.alpha,
                "counts": search.counts, "nodes": search.recorder.nodes if record else [],
                "cpu_s": time.process_time() - cpu, "handed_back": handed_back, "floor": search.floor,
                "open_bound": None if handed_back else min((n.bound for n in open_nodes), default=None),
                "open_nodes": 0 if handed_back else len(open_nodes)}


def _detached(node):
    """``node`` with its own copy of its siblings' universe bounds (:class:`.tree.Siblings`): joblib may pickle
    several tasks together, and sibling subtrees sharing one copy in a worker would make the tree depend on the
    batching, so on the number of workers."""
    return node if node.siblings is None else replace(node, siblings=node.siblings.copy())


def _merge_counts(total: dict, part: dict) -> None:
    for key, v in part.items():
        total[key] = max(total[key], v) if key == "max_open" else total[key] + v


class _Waves:
    """The waves of one parallel search (module docstring, item 2) and what they found: the bounds of the subtrees
    a worker left open, the counts of waves, tasks and the workers' CPU seconds."""

    def __init__(self, search, worker, record: bool):
        self.search, self.worker, self.record = search, worker, record
        self.open_bounds, self.n_waves, self.n_subtrees, self.worker_cpu = [], 0, 0, 0.0

    def run(self, parallel, frontier: list, bar) -> Status:
        """Run waves of ``frontier``'s subtrees through joblib's ``parallel`` until none is left or a worker stops;
        what is not finished stays in ``frontier``."""
        from joblib import delayed   # here, not at the top: importing the method bnb does not import joblib

        search = self.search
        inst, inc, deadline = search.inst, search.inc, search.run.deadline
        status = Status.OPTIMAL
        while frontier:
            deadline.check()
            wave, score = frontier[:WAVE], search._prune_at()
            todo = [n for n in wave if n.bound < score]
            for n in wave:
                if n.bound >= score:
                    search._pruned(n.bound)
            search.counts["pruned_bound"] += len(wave) - len(todo)
            start = (inc.value, inc.subset, inc.alpha)
            results = parallel(delayed(_run_subtree)(self.worker, inst, _detached(n), start, deadline.at,
                                                     search.qp.tol, self.record, NODE_BUDGET) for n in todo)
            del frontier[:WAVE]
            frontier[:0] = [n for r in results for n in r["handed_back"]]
            self.n_waves, self.n_subtrees = self.n_waves + 1, self.n_subtrees + len(todo)
            found = [r for r in results if r["found"]]
            if found:
                best = min(found, key=lambda r: (inst.score(r["value"]), tuple(sorted(r["subset"]))))
                inc.offer(best["value"], best["subset"], best["alpha"], "bnb")
            for r in results:
                self.worker_cpu += r["cpu_s"]
                search.floor = min(search.floor, r["floor"])
                _merge_counts(search.counts, r["counts"])
                if search.recorder is not None:
                    search.recorder.nodes.extend(r["nodes"])
                if r["open_bound"] is not None:
                    self.open_bounds.append(r["open_bound"])
                if r["status"] != Status.OPTIMAL:
                    status = r["status"]
            _bound_point(search, self.open_bounds, frontier)
            bar.update(len(wave))
            gap = search.gap(_bound(search, self.open_bounds, frontier))
            bar.set_postfix(qps=search.counts["qps"], gap=f"{gap:.3g}%", refresh=False)
            if status != Status.OPTIMAL:
                break
            if inc.proves_optimal:
                frontier.clear()
        return status


def parallel_search(method, run) -> Status:
    """:class:`~minlp_fs.exact.bnb.BranchAndBound`'s search with subtrees in workers (module docstring)."""
    from joblib import Parallel

    from ..experiments.runner import backend_context, check_backend

    check_backend(method.backend, method.scheduler)  # bad input before the heuristic and the frontier run
    inst = run.instance
    workers = cpu_count() if method.n_jobs < 0 else method.n_jobs
    search = _Search(method, run)
    worker = replace(method, incumbent="none", certificate=None, progress=False, n_jobs=1, backend="loky",
                     scheduler=None)
    waves = _Waves(search, worker, method.certificate is not None)
    frontier, in_process = [], False
    bar = tqdm(disable=not method.progress, unit="subtree", desc=f"bnb {inst.name} ({workers} workers)")
    try:
        frontier = search.start()
        grow_frontier(search, frontier)
        in_process = no_time_for_workers(run.deadline)   # workers would start after the deadline: no workers
        where = ("loky", 1, None) if in_process else (method.backend, workers, method.scheduler)
        with backend_context(*where) as jobs, Parallel(n_jobs=jobs) as pool:   # n_jobs = 1: in this process
            status = waves.run(pool, frontier, bar)
    except SearchStopped as stop:
        status = stop.status
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
    finally:
        bar.close()
    frontier += search.stack + ([search.current] if search.current is not None else [])  # a stop in the heuristic
    return search.finish(status, lambda: _bound(search, waves.open_bounds, frontier),
                         len(waves.open_bounds) + len(frontier), "open subtrees",
                         {"parallel": {"n_workers": workers, "backend": method.backend, "tasks": waves.n_subtrees,
                                       "waves": waves.n_waves, "worker_cpu_s": waves.worker_cpu,
                                       "in_process": in_process}})


def _bound(search, open_bounds: list, frontier: list) -> float:
    """Least score bound over the unfinished subtrees (module docstring, anytime) and the incumbent."""
    return min([search._score_inc(), search.floor, *open_bounds, *(n.bound for n in frontier)])


def _bound_point(search, open_bounds, frontier) -> None:
    bound, inc = _bound(search, open_bounds, frontier), search.inc
    if np.isfinite(bound) and bound > search.best_bound_seen and inc.value is not None:
        search.best_bound_seen = bound
        inc.trace.append(TracePoint(inc.elapsed(), float(inc.value), "bound", bound=float(search.inst.sign * bound)))
