"""Run an experiment: independent units through joblib, one JSON line per unit as it finishes.

An experiment is a list of *units*: JSON-ready dicts (dataset, kernel, B, sense, method, start,
seed, options, ...), each run by one top-level function ``fn(unit, **context) -> dict``. Units are
independent, so they go through :class:`joblib.Parallel` under any joblib backend: loky processes
on this machine, a Dask cluster (``backend="dask"`` with a ``dask.distributed`` scheduler
address, or a local cluster) or Ray (``backend="ray"``: a Ray cluster's address, or a local Ray) — no
scheduler of our own. The runner gives Ray's tasks to Ray itself (:func:`_ray_records`): joblib's Ray
backend returns a whole list at the end, and records must be written as their units finish.

Each record is appended to the raw file (the results store, :mod:`~minlp_fs.experiments.store`:
JSON lines, one writer at a time) as soon as its unit finishes. A record's key is its unit
(canonical JSON): a rerun skips the units answered in the file, runs again the units whose record
is a failure (``error``), and resumes where the previous run stopped. Ctrl-C, or a worker process
killed in the middle of a unit, stops the run and keeps what was written.
"""
from __future__ import annotations

import contextlib
import socket
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


def check_backend(backend: str = "loky", scheduler: str | None = None) -> None:
    """Refuse, with one :class:`InputError` naming the problem, what :func:`backend_context` cannot run: an
    unknown backend, a scheduler with loky, dask or ray not installed, a scheduler address that accepts no
    connection (checked in a few seconds here, before the cluster's own connect, which waits 30 s to
    minutes before it fails). Cheap enough to call before the work that precedes the workers."""
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "loky":
        if scheduler is not None:
            raise InputError("--scheduler needs --backend dask or ray")
        return
    try:
        if backend == "dask":
            import distributed  # noqa: F401
        else:
            import ray.util.joblib  # noqa: F401
    except ImportError:
        need = "dask.distributed: pip install 'dask[distributed]'" if backend == "dask" else "Ray: pip install 'ray[default]'"
        raise InputError(f"backend {backend!r} needs {need}") from None
    if scheduler:
        _check_reachable(backend, scheduler)


def _check_reachable(backend: str, address: str, timeout: float = 5.0) -> None:
    """A TCP connection to ``address`` (``[scheme://]host:port``; a scheme of tcp, tls, ray, ws(s), http(s)),
    or InputError. Addresses of other forms (Ray's ``auto``, dask's ``inproc://``) are left to the cluster."""
    scheme, _, rest = address.rpartition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in ("", "tcp", "tls", "ray", "ws", "wss", "http", "https") or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"cannot reach the {backend} scheduler at {address!r}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def backend_context(backend: str = "loky", n_jobs: int = 1, scheduler: str | None = None):
    """joblib configuration for ``backend``; yields the ``n_jobs`` to give :class:`Parallel`.

    dask: a ``distributed.Client`` on ``scheduler`` (an address such as ``tcp://host:8786``), or a
    local cluster of ``n_jobs`` single-threaded worker processes when no address is given.
    ray: ``ray.init(address=scheduler)``, or a local Ray of ``n_jobs`` CPUs (no dashboard) when None;
    a Ray already started in this process (``ray.init()`` by the caller) is used as it is, and left running
    (a scheduler must then be its address).
    Bad input: :func:`check_backend`'s errors, and InputError when the cluster's connect fails.
    """
    check_backend(backend, scheduler)
    if backend == "loky":
        with parallel_config(backend="loky", n_jobs=n_jobs):
            yield n_jobs
        return
    if backend == "dask":
        from distributed import Client, LocalCluster

        cluster = None if scheduler else LocalCluster(n_workers=max(1, n_jobs), threads_per_worker=1,
                                                      processes=True, dashboard_address=None)
        try:
            client = Client(scheduler or cluster)
        except OSError as exc:
            if cluster is not None:
                cluster.close()
            raise InputError(f"cannot connect to the dask scheduler at {scheduler!r}: {exc}") from None
        try:
            with parallel_config(backend="dask"):
                yield -1
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        return
    import ray
    from ray.util.joblib import register_ray

    register_ray()
    started = not ray.is_initialized()
    if not started and scheduler and scheduler != ray.get_runtime_context().gcs_address:
        raise InputError(f"Ray is already started in this process on {ray.get_runtime_context().gcs_address}, "
                         f"not on the scheduler {scheduler!r}: call ray.shutdown() first, or give no scheduler")
    if started:
        try:
            if scheduler:
                ray.init(address=scheduler)
            else:
                ray.init(num_cpus=max(1, n_jobs), include_dashboard=False)
        except ConnectionError as exc:
            raise InputError(f"cannot connect to the ray cluster at {scheduler!r}: {exc}") from None
    try:
        with parallel_config(backend="ray"):
            yield -1
    finally:
        if started:
            ray.shutdown()


def _ray_records(fn, todo: list, context: dict):
    """The records of ``todo``'s units as they finish, each unit a Ray task (one CPU, not retried: a worker
    killed mid-unit stops the run, as with loky, by :class:`BrokenExecutor`). A task that fails outside
    :func:`_call` (its function cannot be unpickled on the worker) is its unit's ``error`` record. Closing the
    generator (end of the run, Ctrl-C) cancels the units not finished."""
    import ray
    from ray.exceptions import OutOfMemoryError, RayTaskError, WorkerCrashedError

    call = ray.remote(num_cpus=1, max_retries=0)(_call)
    units = {call.remote(fn, unit, context): unit for unit in todo}
    pending = list(units)
    try:
        while pending:
            (ref,), pending = ray.wait(pending, num_returns=1)
            try:
                record = ray.get(ref)
            except (WorkerCrashedError, OutOfMemoryError) as exc:
                raise BrokenExecutor(f"a Ray worker died in the middle of a unit: {exc}") from None
            except RayTaskError as exc:
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                record = {"error": f"{type(cause).__name__}: {cause}", "unit": units[ref], "unit_time_s": 0.0}
            yield record
    finally:   # the generator may be closed after the runner's own Ray was shut down (Ctrl-C, an error)
        if pending and ray.is_initialized():
            for ref in pending:
                ray.cancel(ref, force=True)
            # force-cancelling kills the workers running those units: wait for the cancellations to land, so
            # that the next run on the same Ray is less likely to be leased a worker that is being destroyed
            ray.wait(pending, num_returns=len(pending), timeout=10)


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
    check_backend(backend, scheduler)  # bad input before the raw file is opened
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
            elif backend == "ray":
                results = _ray_records(fn, todo, context)
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
