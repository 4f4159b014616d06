"""Methods that search beta, and the registry that names them.

A method is a small dataclass whose fields are its typed options, with one entry point
``solve(instance, start=None, oracle=None, callback=None) -> Result``:

* ``start``: a feature subset (tuple of 0-based indices) for start-dependent methods, or None for
  the method's own default (the paper's alpha-start for LS/LS*/ACSO/ACSO*);
* ``oracle``: an :class:`~minlp_fs.alpha.AlphaSubproblem` to share (a fresh one by default);
* ``callback``: called with each :class:`~minlp_fs.result.TracePoint` as the incumbent improves;
  it may raise :class:`~minlp_fs.stopping.SearchStopped` to stop the run (status ``interrupted``,
  the incumbent kept).

``solve`` is written once, in :class:`Method`; a method implements only ``_search(run)`` (see :class:`Run`).

The registry maps names to ``"module:Class"`` strings, imported on first use, so the command
line, the estimator and the benchmarks never switch on names, and a plain install never imports
an optional solver package.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import typing
import warnings
from abc import ABC
from dataclasses import dataclass

from .errors import InputError, SolverUnavailableError
from .memory import heap_pad
from .options import check_options, declared
from .result import Incumbent, Status
from .stopping import Deadline, SearchStopped, TimeLimitOverrunWarning, overrun

REGISTRY = {
    "enumerate": "minlp_fs.solvers.enumeration:Enumeration",
    "bnb": "minlp_fs.exact.bnb:BranchAndBound",
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
    """Base of every method; subclasses are dataclasses whose fields are their options.

    Options are declared with :func:`minlp_fs.options.option` and checked by :meth:`check` at
    construction and again at :meth:`solve`. ``solve`` is the one template of every method: it
    builds the :class:`Run` (default oracle, incumbent, deadline, solve counter), calls the
    subclass's :meth:`_search`, turns a stop (:class:`~minlp_fs.stopping.SearchStopped` from the
    deadline or a callback, Ctrl-C, :class:`~minlp_fs.errors.SolverUnavailableError`) into a status,
    and builds the :class:`~minlp_fs.result.Result` from the incumbent.
    """

    #: registry name, set by each subclass
    name: typing.ClassVar[str] = ""
    #: the method improves a given start (LS, LS*, ACSO, ACSO*, solvers with warm start)
    uses_start: typing.ClassVar[bool] = False
    #: the method can prove global optimality (enumeration, global MINLP solvers)
    certifies: typing.ClassVar[bool] = False

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """InputError, in the one format of :mod:`minlp_fs.options`, for a bad option value."""
        check_options(self)

    @property
    def label(self) -> str:
        """The method's name in its Result."""
        return self.name

    def solve(self, instance, start=None, oracle=None, callback=None):
        """Search beta for ``instance``; return a :class:`~minlp_fs.result.Result`.

        A Ctrl-C before the first incumbent is re-raised (there is nothing to return); a time limit
        reached before it gives a Result with status ``time_limit`` and no answer.
        """
        self.check()
        run = Run(self, instance, start, oracle, callback)
        try:
            with heap_pad():
                status = self._search(run)
        except SearchStopped as stop:
            status = stop.status
        except KeyboardInterrupt:
            if run.incumbent.value is None and not run.keep_empty_interrupt:
                raise
            status = Status.INTERRUPTED
        except SolverUnavailableError as exc:  # found before or while running (e.g. a licence check)
            run.message = str(exc)
            run.info.setdefault("unavailable_kind", exc.kind.value if exc.kind else None)
            status = Status.UNAVAILABLE
        return run.result(status)

    def _search(self, run: "Run") -> Status:
        """The method's own search: offer candidates to ``run.incumbent``, check ``run.deadline``,
        set ``run.info`` (and ``certified``, ``bound``, ``message``); return the final status."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _search nor solve")

    @classmethod
    def options(cls) -> dict:
        """Option name -> (type hint, default) for the command line and documentation."""
        hints = _type_hints(cls)
        return {f.name: (hints.get(f.name, object), f.default) for f in dataclasses.fields(cls)}

    @classmethod
    def option_docs(cls) -> dict:
        """Option name -> what it accepts and what it does (from its declaration)."""
        return {key: f"{spec.describe()}; {spec.doc}" if spec.doc else spec.describe()
                for key, spec in declared(cls).items()}


@functools.cache
def _type_hints(cls) -> dict:
    """``typing.get_type_hints`` of a method class, resolved once (0.2 ms a call: a quarter of a millisecond of
    every solve, which reads the options four times)."""
    return typing.get_type_hints(cls)


class Run:
    """One call of :meth:`Method.solve`: what every search shares.

    ``oracle`` (the given :class:`~minlp_fs.alpha.AlphaSubproblem`, or a fresh one on first use),
    ``incumbent`` (:class:`~minlp_fs.result.Incumbent` with the callback), ``deadline`` (the method's
    ``time_limit``, one :class:`~minlp_fs.stopping.Deadline` for every stage), :meth:`start` (the
    requested start subset, the paper's alpha-start by default), and the parts of the Result a
    search sets: ``info``, ``certified``, ``bound``, ``message``, ``n_svm_solves`` (default: the
    oracle's solves during the run).
    """

    def __init__(self, method: Method, instance, start, oracle, callback):
        self.method, self.instance, self.requested_start = method, instance, start
        self._oracle = oracle
        self._solves0 = 0 if oracle is None else oracle.n_solves
        self.incumbent = Incumbent(instance, callback)
        self.deadline = Deadline(getattr(method, "time_limit", None))
        self.info: dict = {}
        self.certified, self.bound, self.message = False, None, ""
        self.n_svm_solves: int | None = None
        #: a Ctrl-C before any incumbent gives an empty Result instead of re-raising (enumeration)
        self.keep_empty_interrupt = False
        #: SVM solves of :meth:`seed_incumbent`
        self.seed_solves = 0
        if hasattr(method, "n_jobs"):   # the CLI's rule for --jobs: above the CPU count, a warning (workers.n_workers caps)
            from .workers import cap_jobs

            cap_jobs(method.n_jobs, f"{method.name}: n_jobs")

    def seed_incumbent(self, heuristic: str, tol: float) -> None:
        """Offer the incumbent what an exact method starts from: the requested start (a subset, or a start by
        name as for every method), solved, then the registered heuristic ``heuristic`` ("none": the start
        only) within the method's time limit. Their SVM solves are left in ``seed_solves``; a Ctrl-C that
        reached the heuristic is raised again once its incumbent is offered."""
        from .alpha import AlphaSubproblem
        from .heuristics.starts import resolve_start

        oracle = AlphaSubproblem(self.instance, tol=tol)
        start = self.requested_start
        if start is not None:
            subset = (resolve_start(self.instance, start, oracle=oracle, deadline=self.deadline)
                      if isinstance(start, str) else self.instance.check_subset(start))
            fit = oracle.solve(subset)
            self.incumbent.offer(fit.value, fit.subset, fit.alpha, "start")
            self.seed_solves = oracle.n_solves
        if heuristic != "none" and not self.incumbent.proves_optimal:
            cls = method_class(heuristic)
            options = {}
            if "time_limit" in cls.options() and self.deadline.seconds is not None:
                options["time_limit"] = self.deadline.seconds
            res = get_method(heuristic, **options).solve(self.instance, start=start if cls.uses_start else None,
                                                         oracle=oracle)
            self.seed_solves = oracle.n_solves
            if res.objective is not None:
                self.incumbent.offer(res.objective, res.features, res.alpha, canonical_name(heuristic))
            if res.status == "interrupted":  # Ctrl-C reached the heuristic, which returned its incumbent
                raise KeyboardInterrupt

    @property
    def oracle(self):
        if self._oracle is None:
            from .alpha import AlphaSubproblem

            self._oracle = AlphaSubproblem(self.instance)
        return self._oracle

    @property
    def has_oracle(self) -> bool:
        return self._oracle is not None

    def start(self) -> tuple:
        """The start subset: the requested one, a seeded random one, or the alpha-start (within the deadline)."""
        from .heuristics.starts import resolve_start

        return resolve_start(self.instance, self.requested_start, seed=getattr(self.method, "seed", 0),
                             oracle=self.oracle, deadline=self.deadline)

    def result(self, status: Status):
        """The Result of the incumbent with ``status`` and what the search set."""
        solves = self.n_svm_solves
        if solves is None:   # less the solves a parallel chunk made past a stop, whose fits were dropped (their
            # number depends on n_jobs; info["discarded_svm_solves"] keeps it): the same count for any n_jobs
            solves = (self._oracle.n_solves - self._solves0 if self._oracle is not None else 0) \
                - self.info.get("discarded_svm_solves", 0)
        message = self.message
        if not message and self.incumbent.value is None and status == Status.TIME_LIMIT:
            message = "the time limit was reached before a feasible subset was found"
        result = self.incumbent.result(self.method.label, Status(status), solves, certified=self.certified,
                                       bound=self.bound, message=message, info=self.info)
        late = overrun(self.deadline.seconds, result.wall_time_s)
        if late is not None:
            note = (f"the run ended {late:.3g} s after its time limit of {self.deadline.seconds:g} s"
                    + (f" ({self.info['overrun_cause']})" if self.info.get("overrun_cause") else ""))
            result.info["time_limit_overrun_s"] = late
            result.message = f"{result.message}; {note}" if result.message else note
            warnings.warn(f"{self.method.label}: {note}", TimeLimitOverrunWarning, stacklevel=3)
        if result.certified and "tolerance" not in result.info:   # a certified claim states its tolerance
            result.info["tolerance"] = self._tolerance(result)
            if not result.message and "kkt" in result.info["tolerance"]:
                result.message = (f"optimal: every subset's SVM dual and every bound to KKT tolerance "
                                  f"{result.info['tolerance']['kkt']:g} (value accuracy: benchmarks/RESULTS.md)")
        return result

    def _tolerance(self, result) -> dict:
        """What a certified result is optimal to: the trivial bound's relative tolerance (Remark 1); a general
        solver's proof, to its gap and the relative agreement of our polished value with it
        (``certify_rtol``); or the KKT tolerance of the alpha-subproblems an exact method's search solved."""
        from .objective import TRIVIAL_RTOL

        if self.instance.proves_optimal(result.objective):
            return {"trivial_bound_rtol": TRIVIAL_RTOL}
        if hasattr(self.method, "certify_rtol"):
            return {"solver_gap": self.info.get("gap"), "certify_rtol": self.method.certify_rtol}
        from .alpha import DEFAULT_TOL

        return {"kkt": self._oracle.tol if self._oracle is not None else DEFAULT_TOL}


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


def check_incumbent(method: str, name: str, also=("none",)) -> None:
    """An exact method's ``incumbent`` option: a registered heuristic, or one of ``also``; the error names both."""
    if name in also:
        return
    try:
        cls = method_class(name)
    except InputError as exc:
        raise InputError(f"{method}: incumbent: {exc}") from None
    if cls.certifies:
        raise InputError(f"{method}: incumbent must be a heuristic (or {' / '.join(map(repr, also))}); got {name!r}")


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


def nameable_methods() -> list:
    """(label, name to load its class by) of every method a user can name: the registry's, then ``hybrid:SOLVER``
    (its class is the same whatever the solver, loaded here through ``hybrid:scip``)."""
    return [(name, name) for name in REGISTRY] + [(HYBRID_PREFIX + "SOLVER", HYBRID_PREFIX + "scip")]
