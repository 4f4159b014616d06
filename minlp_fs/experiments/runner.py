"""Run an experiment: independent units through joblib, one JSON line per unit as it finishes.

An experiment is a list of *units*: JSON-ready dicts (dataset, kernel, B, sense, method, start,
seed, options, ...), each run by one top-level function ``fn(unit, **context) -> dict``. Units are
independent, so they go through :class:`joblib.Parallel` under any joblib backend: loky processes
on this machine, a Dask cluster (``backend="dask"`` with a ``dask.distributed`` scheduler
address, or a local cluster) or Ray (``ray.util.joblib``) — no scheduler of our own.

Each record is appended to the raw file (the results store, :mod:`~minlp_fs.experiments.store`:
JSON lines, one writer at a time) as soon as its unit finishes. A record's key is its unit
(canonical JSON): a rerun skips the units answered in the file, runs again the units whose record
is a failure (``error``), and resumes where the previous run stopped. Ctrl-C, or a worker process
killed in the middle of a unit, stops the run and keeps what was written.
"""
from __future__ import annotations

import contextlib
import time
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from pathlib import Path

from joblib import Parallel, delayed, parallel_config
from tqdm.auto import tqdm

from ..blas import one_blas_thread
from ..errors import InputError
from .store import failed, read_records, unit_key, writer

BACKENDS = ("loky", "dask", "ray")


def _call(fn, unit: dict, context: dict) -> dict:
    """Run one unit on one thread; any failure becomes an ``error`` record instead of a crash."""
    t0 = time.perf_counter()
    try:
        with one_blas_thread():
            record = dict(fn(unit, **context))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a unit's failure is data (the other units must still run)
        record = {"error": f"{type(exc).__name__}: {exc}"}
    record["unit"] = unit
    record["unit_time_s"] = time.perf_counter() - t0
    return record


@contextlib.contextmanager
def backend_context(backend: str = "loky", n_jobs: int = 1, scheduler: str | None = None):
    """joblib configuration for ``backend``; yields the ``n_jobs`` to give :class:`Parallel`.

    dask: a ``distributed.Client`` on ``scheduler`` (an address such as ``tcp://host:8786``), or a
    local cluster of ``n_jobs`` single-threaded worker processes when no address is given.
    ray: ``ray.init(address=scheduler)`` (a local Ray with ``n_jobs`` CPUs when None).
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "loky":
        if scheduler is not None:
            raise InputError("--scheduler needs --backend dask or ray")
        with parallel_config(backend="loky", n_jobs=n_jobs):
            yield n_jobs
        return
    if backend == "dask":
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError("backend 'dask' needs dask.distributed: pip install 'dask[distributed]'") from None
        cluster = None if scheduler else LocalCluster(n_workers=max(1, n_jobs), threads_per_worker=1,
                                                      processes=True, dashboard_address=None)
        client = Client(scheduler or cluster)
        try:
            with parallel_config(backend="dask"):
                yield -1
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        return
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError:
        raise InputError("backend 'ray' needs Ray: pip install 'ray[default]'") from None
    register_ray()
    if scheduler:
        ray.init(address=scheduler)
    else:
        ray.init(num_cpus=max(1, n_jobs))
    try:
        with parallel_config(backend="ray"):
            yield -1
    finally:
        ray.shutdown()


@dataclass
class RunSummary:
    """What a run did: units in the experiment, skipped (answered in the file), run now (of which
    retried after a failure recorded by an earlier run), failed now."""

    n_units: int
    n_skipped: int
    n_retried: int = 0
    n_run: int = 0
    n_errors: int = 0
    interrupted: bool = False
    worker_died: str | None = None
    wall_time_s: float = 0.0
    errors: list = field(default_factory=list)


def run_units(units, fn, raw_path, n_jobs: int = 1, backend: str = "loky", scheduler: str | None = None,
              progress: bool = True, context: dict | None = None, desc: str = "units", append=None) -> RunSummary:
    """Run the units not answered in ``raw_path`` and append one record per unit as it finishes.

    ``fn(unit, **context)`` must be a module-level function (it is pickled to the workers) and
    return a JSON-ready dict; the record is that dict plus ``unit`` and ``unit_time_s`` (or
    ``error`` when ``fn`` raised). Duplicate units run once; units whose record is a failure run
    again. The file is locked for the run (:func:`~minlp_fs.experiments.store.writer`), unless the
    caller holds its lock already and passes the writer's ``append``.
    """
    raw_path = Path(raw_path)
    with contextlib.nullcontext(append) if append is not None else writer(raw_path) as append:
        records = read_records(raw_path)
        done = {unit_key(r["unit"]) for r in records if not failed(r)}
        retry = {unit_key(r["unit"]) for r in records if failed(r)}
        todo, seen = [], set(done)
        for unit in units:
            key = unit_key(unit)
            if key not in seen:
                seen.add(key)
                todo.append(unit)
        n_units = len({unit_key(u) for u in units})
        summary = RunSummary(n_units=n_units, n_skipped=n_units - len(todo),
                             n_retried=sum(unit_key(u) in retry for u in todo))
        if todo:
            _run(todo, fn, append, summary, n_jobs, backend, scheduler, progress, dict(context or {}), desc)
    return summary


def _run(todo, fn, append, summary, n_jobs, backend, scheduler, progress, context, desc) -> None:
    t0 = time.perf_counter()
    bar = tqdm(total=len(todo), disable=not progress, desc=desc, unit="unit")
    results = None
    try:
        with backend_context(backend, n_jobs, scheduler) as jobs:
            tasks = (delayed(_call)(fn, unit, context) for unit in todo)
            if jobs == 1:
                results = (f(*a, **kw) for f, a, kw in tasks)
            else:
                results = Parallel(n_jobs=jobs, return_as="generator_unordered")(tasks)
            for record in results:
                append(record)
                summary.n_run += 1
                if failed(record):
                    summary.n_errors += 1
                    summary.errors.append(f"{unit_key(record['unit'])}: {record['error']}")
                bar.update(1)
    except KeyboardInterrupt:
        summary.interrupted = True
    except BrokenExecutor as exc:  # a worker process killed mid-unit (out of memory, a signal): stop, keep the file
        summary.worker_died = str(exc).splitlines()[0]
    finally:
        if results is not None and hasattr(results, "close"):
            results.close()
        bar.close()
        summary.wall_time_s = time.perf_counter() - t0
