"""The results store: a JSON-lines file of records, its writer's lock, and its JSON side files.

One harness for the experiments (``minlp-fs bench``, :mod:`~minlp_fs.experiments.runner`) and the
benchmark scripts (``benchmarks/bench_*.py``). A record is a JSON object; ``key(record)`` says which
unit of work it answers (the experiments: the canonical JSON of its ``unit``).

* **Reading** (:func:`read_records`): a line that is not a JSON object with a key — ``42``, ``null``,
  ``[]``, ``{}``, a line torn by a killed writer — is skipped with a :class:`StoreWarning` naming
  its line number. Records with the same key count once: the first successful one (a record
  without ``error``) is kept, a failed record is superseded by a later one (a retry), and
  successful repeats are reported as duplicates.
* **Writing** (:func:`writer`): one writer at a time per file. The writer holds an exclusive
  ``flock`` on ``<file>.lock`` (which records its pid); a second writer gets an
  :class:`~minlp_fs.errors.InputError` naming that pid. The kernel drops the lock of a process
  that dies, so a lock file left by a killed run is taken over (with a warning). Each record is
  appended by one ``write`` call; a line torn by a killed writer is cut off before the first append.
* **Side files** (:func:`write_json`, :func:`read_json`): written to a temporary file in the same
  folder and renamed over the old one (a reader sees the old file or the new one, never half of
  one); a damaged or unreadable one reads as empty, with a warning, so its owner rebuilds it.

The output folder must be writable: :func:`writable_folder` turns the operating system's refusal
into one InputError.
"""
from __future__ import annotations

import contextlib
import json
import os
import warnings
from pathlib import Path

from ..errors import InputError


class StoreWarning(UserWarning):
    """A line, record or side file of the results store was skipped, superseded or rebuilt."""


def unit_key(unit: dict) -> str:
    """The canonical JSON of a unit: equal units, equal keys, whatever the order of their fields."""
    return json.dumps(unit, sort_keys=True, separators=(",", ":"))


def _without_time_limit(unit: dict) -> tuple:
    """(key of ``unit`` without its ``options.time_limit``, that limit or None)."""
    options = dict(unit.get("options") or {})
    limit = options.pop("time_limit", None)
    rest = {k: v for k, v in unit.items() if k != "options"}
    return unit_key({**rest, **({"options": options} if options else {})}), limit


def _instance_of(unit: dict) -> str:
    """The key of a unit's instance: the unit without its method and options."""
    return unit_key({k: v for k, v in unit.items() if k not in ("method", "options")})


def match_records(records: list, units: list) -> tuple[list, list]:
    """(the records of ``units``, the superseded ones). A record answers a unit when its unit is that unit or
    the same unit with a longer ``options.time_limit``: a re-run with a longer limit (of a unit stopped at
    its own, e.g. ``minlp-fs bench certified --exact-time-limit``) stands for it. A unit of an exact method
    (bnb, enumerate) is also answered by a certified record of another exact method on the same instance,
    whatever its options (an optimum proved one way stands for the other's run). Of several, a successful one
    is kept before a failed one (``error``), a certified before one that is not, the unit's own method before
    another, and then the longest limit (of equal limits, the later in the file); the unit's own others are
    returned as superseded (another method's run that does not answer it is left out, as any record of no unit)."""
    from .metrics import EXACT_METHODS, certifies

    def proven(record: dict) -> bool:   # an exact method's certified answer
        return record["unit"].get("method") in EXACT_METHODS and "result" in record and certifies(record)

    family, exact = {}, {}
    for u in units:
        rest, limit = _without_time_limit(u)
        family[rest] = limit
        if u.get("method") in EXACT_METHODS:
            exact[_instance_of(u)] = rest
    chosen, superseded = {}, []
    for r in records:
        rest, limit = _without_time_limit(r["unit"])
        foreign = rest not in family
        if foreign:   # another exact method's certified answer on an exact unit's instance
            rest = exact.get(_instance_of(r["unit"]))
            if rest is None or not proven(r):
                continue
        else:
            own = family[rest]
            if limit != own and (limit is None or own is None or limit < own):
                continue
        rank = (failed(r), not proven(r), foreign, -(limit or 0.0))
        old = chosen.get(rest)
        if old is not None:
            loser = r if old[0] < rank else old[1]
            if loser is old[1]:
                chosen[rest] = (rank, r)
            if _without_time_limit(loser["unit"])[0] in family:   # another method's run never was the unit's
                superseded.append(loser)
            continue
        chosen[rest] = (rank, r)
    return [r for _, r in chosen.values()], superseded


def record_key(record: dict) -> str:
    """The key of an experiment record: its ``unit`` (a JSON object), canonically serialised."""
    unit = record["unit"]
    if not isinstance(unit, dict):
        raise TypeError("the record's unit is not a JSON object")
    return unit_key(unit)


def failed(record: dict) -> bool:
    """A record of a unit that raised (it holds ``error`` instead of a result)."""
    return "error" in record


def read_records(path, key=record_key) -> list:
    """The records of a JSON-lines file, one per key, in file order ([] when the file does not exist).

    Lines that are not JSON objects with a key are skipped with a warning naming them (the key
    function raising KeyError, TypeError or ValueError means "no key"). Per key, the first
    successful record is kept, else the last failed one; successful repeats are counted and
    reported in one warning.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise InputError(f"cannot read the results file {path}: {exc.strerror or exc}") from None
    kept, order, bad, n_dup = {}, [], [], 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            k = key(record) if isinstance(record, dict) else None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            k = None
        if k is None:
            bad.append(number)
            continue
        if k not in kept:
            order.append(k)
            kept[k] = record
        elif failed(kept[k]):
            kept[k] = record        # a retry supersedes the failure
        elif not failed(record):
            n_dup += 1              # a second result for a unit already answered
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        warnings.warn(f"{path}: skipped {len(bad)} line(s) that are not records (line {shown})",
                      StoreWarning, stacklevel=2)
    if n_dup:
        warnings.warn(f"{path}: {n_dup} duplicated record(s) counted once", StoreWarning, stacklevel=2)
    return [kept[k] for k in order]


def writable_folder(folder) -> Path:
    """Create ``folder`` (and its parents) and check that a file can be made there; InputError if not."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"cannot write to the output folder {folder}: {exc.strerror or exc}") from None
    return folder


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def writer(path):
    """Hold the writer's lock of the results file ``path`` for the block; yields an append function.

    ``append(record)`` writes the record as one JSON line in one ``write`` call. A second writer
    on the same file raises InputError naming the holder's pid; a lock left by a dead process is
    taken over.
    """
    import fcntl

    path = Path(path)
    writable_folder(path.parent)
    lock = _lock_path(path)
    while True:  # the lock file may be replaced between open and flock: lock the file that is there
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"cannot write the lock file {lock}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise InputError(f"{path} is being written by another run (pid {holder}, lock file {lock}); "
                             "wait for it to finish, or write to another output folder (--out)") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    previous = os.read(fd, 64).decode(errors="replace").strip()
    if previous:
        warnings.warn(f"{path}: took over the lock of pid {previous}, which is no longer running",
                      StoreWarning, stacklevel=3)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    out = None
    try:
        _cut_torn_tail(path)
        out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

        def append(record: dict) -> None:
            os.write(out, (json.dumps(record) + "\n").encode())

        yield append
    finally:
        if out is not None:
            os.close(out)
        os.unlink(lock)  # still locked: a process waiting on the old file sees it replaced and retries
        os.close(fd)


def _cut_torn_tail(path: Path) -> None:
    """Truncate the file after its last newline (drops a line torn by a killed writer)."""
    if not path.is_file():
        return
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        line = data.count(b"\n") + 1
        warnings.warn(f"{path}: cut a torn last line (line {line}) left by a killed run",
                      StoreWarning, stacklevel=4)
        with path.open("r+b") as fh:
            fh.truncate(keep)


def write_json(path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (see :func:`write_text`)."""
    write_text(path, json.dumps(obj, indent=1))


def write_text(path, text: str) -> None:
    """Write a text file atomically: a temporary file in the same folder, flushed, then renamed over ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def read_json(path) -> dict:
    """A JSON side file as a dict; {} when it is missing, and {} with a warning when it is damaged."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.warn(f"{path} is damaged ({type(exc).__name__}); ignored, it is rebuilt by the next run",
                      StoreWarning, stacklevel=2)
        return {}
    if not isinstance(obj, dict):
        warnings.warn(f"{path} is damaged (not a JSON object); ignored, it is rebuilt by the next run",
                      StoreWarning, stacklevel=2)
        return {}
    return obj
