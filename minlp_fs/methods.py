"""Methods that search beta, and the registry that names them.

A method is a small dataclass whose fields are its typed options, with one entry point
``solve(instance, start=None, oracle=None, callback=None) -> Result``:

* ``start``: a feature subset (tuple of 0-based indices) for start-dependent methods, or None for
  the method's own default (the paper's alpha-start for LS/LS*/ACSO/ACSO*);
* ``oracle``: an :class:`~minlp_fs.alpha.AlphaSubproblem` to share (a fresh one by default);
* ``callback``: called with each :class:`~minlp_fs.result.TracePoint` as the incumbent improves.

The registry maps names to ``"module:Class"`` strings, imported on first use, so the command
line, the estimator and the benchmarks never switch on names, and a plain install never imports
an optional solver package.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .errors import InputError, check_integer

REGISTRY = {
    "enumerate": "minlp_fs.solvers.enumeration:Enumeration",
    "bnb": "minlp_fs.exact.search:BranchAndBound",
    "alpha-start": "minlp_fs.heuristics.alpha_start:AlphaStart",
    "ls": "minlp_fs.heuristics.local_search:LocalSearch",
    "ls*": "minlp_fs.heuristics.local_search:LocalSearchStar",
    "acso": "minlp_fs.heuristics.acso:ACSO",
    "acso*": "minlp_fs.heuristics.acso:ACSOStar",
    "rfe1": "minlp_fs.heuristics.rfe:RFE1",
    "rfe2": "minlp_fs.heuristics.rfe:RFE2",
    "ipopt": "minlp_fs.solvers.ipopt:IpoptRelaxation",
    "ipopt-pyomo": "minlp_fs.solvers.ipopt:IpoptPyomo",
    "scip": "minlp_fs.solvers.scip:Scip",
    "knitro": "minlp_fs.solvers.knitro:Knitro",
    "baron": "minlp_fs.solvers.gams:Baron",
    "gams-knitro": "minlp_fs.solvers.gams:GamsKnitro",
    "gams-ipopt": "minlp_fs.solvers.gams:GamsIpopt",
}
ALIASES = {"ls-star": "ls*", "acso-star": "acso*", "enumeration": "enumerate", "alphastart": "alpha-start"}
HYBRID_PREFIX = "hybrid:"


@dataclass
class Method(ABC):
    """Base of every method; subclasses are dataclasses whose fields are their options."""

    #: registry name, set by each subclass
    name: typing.ClassVar[str] = ""
    #: the method improves a given start (LS, LS*, ACSO, ACSO*, solvers with warm start)
    uses_start: typing.ClassVar[bool] = False
    #: the method can prove global optimality (enumeration, global MINLP solvers)
    certifies: typing.ClassVar[bool] = False

    @abstractmethod
    def solve(self, instance, start=None, oracle=None, callback=None):
        """Search beta for ``instance``; return a :class:`~minlp_fs.result.Result`."""

    @classmethod
    def options(cls) -> dict:
        """Option name -> (type hint, default) for the command line and documentation."""
        hints = typing.get_type_hints(cls)
        return {f.name: (hints.get(f.name, object), f.default) for f in dataclasses.fields(cls)}


def canonical_name(name: str) -> str:
    """The registry key for a method name or alias (``hybrid:SOLVER`` passes through)."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key.startswith(HYBRID_PREFIX):
        return HYBRID_PREFIX + canonical_name(key[len(HYBRID_PREFIX):])
    if key not in REGISTRY:
        raise InputError(f"unknown method {name!r}; choose one of {', '.join(method_names())} "
                         f"(aliases: {', '.join(ALIASES)}; or hybrid:SOLVER)")
    return key


def method_class(name: str) -> type:
    """The Method subclass registered under ``name``."""
    key = canonical_name(name)
    if key.startswith(HYBRID_PREFIX):
        key = "hybrid"
        path = "minlp_fs.solvers.hybrid:Hybrid"
    else:
        path = REGISTRY[key]
    module, cls = path.split(":")
    return getattr(importlib.import_module(module), cls)


def get_method(name: str, **options) -> Method:
    """An instance of the named method with the given options; unknown options are an error."""
    cls = method_class(name)
    known = cls.options()
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(f"method {canonical_name(name)!r} has no option(s) {', '.join(unknown)}; "
                         f"its options are {', '.join(known) or 'none'}")
    key = canonical_name(name)
    if key.startswith(HYBRID_PREFIX):
        options.setdefault("solver", key[len(HYBRID_PREFIX):])
    return cls(**options)


def method_names() -> list:
    return list(REGISTRY)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


#: integer options and their least value (``seed`` feeds numpy's generators, which refuse negatives)
_INTEGER_OPTIONS = {"pool_size": 1, "opt_window": 1, "n_samples": 0, "seed": 0}


def check_options(method) -> None:
    """Raise InputError, naming the option, for a bad value of any common option a method has."""
    name = getattr(method, "name", type(method).__name__)
    opts = vars(method)
    if "time_limit" in opts:
        t = opts["time_limit"]
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating))
                              or not math.isfinite(t) or t <= 0):
            raise InputError(f"{name}: time_limit must be None or a number of seconds > 0; got {t!r}")
    if "n_jobs" in opts and (not _is_int(opts["n_jobs"]) or opts["n_jobs"] == 0):
        raise InputError(f"{name}: n_jobs must be a non-zero integer (-1 = one thread per candidate); "
                         f"got {opts['n_jobs']!r}")
    if "max_iter" in opts and opts["max_iter"] is not None \
            and (not _is_int(opts["max_iter"]) or opts["max_iter"] < 1):
        raise InputError(f"{name}: max_iter must be None or an integer >= 1; got {opts['max_iter']!r}")
    for key, lowest in _INTEGER_OPTIONS.items():
        if key in opts:
            check_integer(name, key, opts[key], lowest)
    if "allow_nonsubmodular" in opts and not isinstance(opts["allow_nonsubmodular"], bool):
        raise InputError(f"{name}: allow_nonsubmodular must be True or False; got {opts['allow_nonsubmodular']!r}")
