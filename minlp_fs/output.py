"""The files the command line writes (``export --out``, ``certify --certificate``, ``verify --graphml``,
``compare --plot``): :func:`output_file` checks one before the work that will fill it starts, and
:func:`write_error` is the one-line error of a write that fails afterwards."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError


def output_file(path, flag: str):
    """Check, before any long work, that ``flag``'s file ``path`` can be written: it is not a folder, its
    folder exists, and a file can be opened there for writing (tried: permissions, read-only and special
    file systems). Returns it as a Path; an InputError naming the flag and the path otherwise. An existing
    file is left as it is; a file the check had to create is removed again."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{flag} {path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise InputError(f"{flag}: cannot write {path}: folder {path.parent} does not exist")
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as exc:
        raise InputError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None
    return path


def write_error(exc: OSError, path) -> InputError:
    """The one-line error of a write that failed after the checks of :func:`output_file` (disk full, ...)."""
    return InputError(f"cannot write {exc.filename or path}: {exc.strerror or exc}")
