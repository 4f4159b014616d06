"""Options declared once, checked in one place: methods, solver adapters, estimators, helpers.

A method's option is a dataclass field declared with :func:`option`, which stores an :class:`Opt`
(kind, bounds, whether None is allowed, the choices, a doc string) in the field's metadata;
:func:`check_options` checks every declared field of an object, and :func:`check_value` one value
(for function arguments such as multistart's ``k``). Every failure is one
:class:`~minlp_fs.errors.InputError` in one format::

    <owner>: <option> must be <what Opt.describe() says>; got <value, as errors.plain shows it>

e.g. ``ls*: pool_size must be an integer >= 1; got True``. A bool is never accepted where an
integer or a number is required (``True`` is an ``int`` to Python, not to a user).

The ``dict`` kind is a mapping of names to scalars (a solver's own parameters, ``solver_options``):
keys are non-empty strings without spaces or ``=``, values strings of one line, integers, finite
numbers or True/False. :func:`parse_assignments` turns command-line ``KEY=VALUE`` texts into such a
mapping, each value converted by :func:`parse_scalar` (int, float, bool where it parses, else str).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .errors import InputError, plain

KINDS = (int, float, bool, str, dict)


@dataclass(frozen=True)
class Opt:
    """What an option accepts: ``kind`` (int, float, bool, str or dict: see the module docstring),
    ``low``/``high`` bounds (open with ``low_open``/``high_open``), ``nonzero``, ``none`` (None
    allowed), ``choices`` (for str), ``doc``."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    nonzero: bool = False
    none: bool = False
    choices: tuple | None = None
    doc: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise TypeError(f"option kind must be one of {KINDS}; got {self.kind!r}")

    def describe(self) -> str:
        """What a valid value is, in words: 'an integer >= 1', 'None or a number in (0, 1]'."""
        if self.kind is bool:
            what = "True or False"
        elif self.kind is dict:
            what = f"a mapping of {MAPPING_WORDS}"
        elif self.kind is str:
            what = f"one of {', '.join(map(str, self.choices))}" if self.choices else "a string"
        else:
            what = "a non-zero integer" if self.nonzero else ("an integer" if self.kind is int else "a number")
            if self.nonzero and self.kind is int and self.low == -1 and self.high is None:
                what = "an integer >= 1 or -1"    # a worker count: -1 = one per CPU
            elif self.low is not None and self.high is not None:
                what += (f" in {'(' if self.low_open else '['}{_num(self.low)}, "
                         f"{_num(self.high)}{')' if self.high_open else ']'}")
            elif self.low is not None:
                what += f" {'>' if self.low_open else '>='} {_num(self.low)}"
            elif self.high is not None:
                what += f" {'<' if self.high_open else '<='} {_num(self.high)}"
        return f"None or {what}" if self.none else what

    def accepts(self, value) -> bool:
        if value is None:
            return self.none
        if self.kind is bool:
            return isinstance(value, (bool, np.bool_))
        if self.kind is dict:
            return isinstance(value, Mapping) and all(_key_ok(k) and _scalar_ok(v) for k, v in value.items())
        if self.kind is str:
            return isinstance(value, str) and (self.choices is None or value in self.choices)
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is int and not isinstance(value, Integral):
            return False
        if not isinstance(value, Real) or not math.isfinite(value):
            return False
        if self.nonzero and value == 0:
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def check(self, owner: str, key: str, value) -> None:
        """InputError in the one format unless ``value`` is accepted."""
        if not self.accepts(value):
            raise InputError(f"{owner}: {key} must be {self.describe()}; got {plain(value)}")


#: what the entries of a ``dict`` option may be, in words
MAPPING_WORDS = ("names (no spaces or '=') to strings of one line, integers, finite numbers or True/False")


def _key_ok(key) -> bool:
    return isinstance(key, str) and key != "" and "=" not in key and not any(c.isspace() for c in key)


def _scalar_ok(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, str):
        return "\n" not in value and "\r" not in value
    return isinstance(value, Real) and math.isfinite(value)


def parse_scalar(text: str):
    """A command-line value as the scalar it spells: ``"10"`` -> 10, ``"1e-6"`` -> 1e-06,
    ``"true"``/``"false"`` (any case) -> True/False, anything else the string itself (``"nan"``, ``"inf"``
    too: a solver value is never non-finite)."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return text


def parse_assignments(items, owner: str, key: str) -> dict:
    """``["limits/nodes=10", "presolving/maxrounds=0"]`` -> ``{"limits/nodes": 10, ...}``; each value
    converted by :func:`parse_scalar`; a text without ``=`` or a name given twice is an InputError
    naming it, and the mapping is checked as a ``dict`` option."""
    out: dict = {}
    for item in items:
        name, sep, text = str(item).partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"{owner}: {key} must be KEY=VALUE; got {plain(item)}")
        if name in out:
            raise InputError(f"{owner}: {key} {name!r} is given twice")
        out[name] = parse_scalar(text.strip())
    Opt(dict).check(owner, key, out)
    return out


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def option(default, kind: type, doc: str = "", **constraints):
    """A dataclass field whose metadata declares the option (see :class:`Opt`)."""
    return dataclasses.field(default=default, metadata={"option": Opt(kind, doc=doc, **constraints)})


def declared(cls_or_obj) -> dict:
    """Field name -> :class:`Opt` for the declared options of a dataclass (class or instance)."""
    return {f.name: f.metadata["option"] for f in dataclasses.fields(cls_or_obj) if "option" in f.metadata}


def check_options(obj, owner: str | None = None) -> None:
    """Check every declared option of the dataclass ``obj``; ``owner`` defaults to ``obj.name``."""
    owner = owner or getattr(obj, "name", "") or type(obj).__name__
    for key, spec in declared(obj).items():
        spec.check(owner, key, getattr(obj, key))


def check_value(owner: str, key: str, value, kind: type, **constraints) -> None:
    """Check one value (a function argument) against an ad-hoc :class:`Opt`."""
    Opt(kind, **constraints).check(owner, key, value)


def check_integer(owner: str, key: str, value, lowest: int) -> None:
    """InputError naming ``owner`` and ``key`` unless ``value`` is an integer (not a bool) >= ``lowest``
    (:func:`check_value` for the integer arguments of callers outside a method: seeds, job counts)."""
    check_value(owner, key, value, int, low=lowest)


#: the options several methods share, declared once (``time_limit`` of the heuristics may be None)
def time_limit_option(default=None):
    return option(default, float, low=0, low_open=True, none=default is None,
                  doc="wall-clock seconds for the whole solve (start construction included)")


def n_jobs_option(default=1):
    return option(default, int, low=-1, nonzero=True,
                  doc="workers (-1 = one per CPU; more than the CPUs are lowered to them, with a warning)")


def seed_option(default=0):
    return option(default, int, low=0, doc="seed of the random start and of any random draw")
