"""One unit of an experiment: build the instance it names, run one method through the API, keep a record.

A solve unit is a dict with ``dataset``, ``kernel``, ``B``, ``sense``, ``method`` and optionally
``C``, ``gamma`` (the paper's C = 10, gamma = 0.1 by default), ``m`` (a reduced instance), ``start``
('random' or None = the method's default, the alpha-start), ``seed`` and ``options`` (the method's
options). Its record holds the :class:`~minlp_fs.result.Result` without alpha and trace (the
objective is f(alpha, beta) recomputed by :func:`~minlp_fs.objective.dual_objective`, as for every
method) and the instance's n, m and trivial bound.
"""
from __future__ import annotations

from ..api import build_instance, solve
from ..kernels import make_kernel
from ..methods import canonical_name, method_class

#: result fields kept in a record
RESULT_FIELDS = ("method", "sense", "objective", "features", "status", "certified", "degenerate",
                 "wall_time_s", "n_svm_solves", "bound", "message")
#: methods of this package (the grids impose a time limit on the external solvers only)
OWN_METHODS = ("enumerate", "alpha-start", "ls", "ls*", "acso", "acso*", "rfe1", "rfe2")


def instance_of(unit: dict, data_dir=None):
    """The instance a unit names (C, gamma and m default to the paper's values and the full data)."""
    return build_instance(unit["dataset"], data_dir, B=unit["B"], kernel=unit["kernel"],
                          C=unit.get("C", 10.0), gamma=unit.get("gamma"), sense=unit["sense"],
                          m=unit.get("m"), seed=unit.get("data_seed", 0))


def solve_or_stop(instance, method: str, **kwargs):
    """:func:`minlp_fs.api.solve`, except that a run stopped by Ctrl-C raises ``KeyboardInterrupt``.

    A method returns its incumbent with status ``interrupted`` when Ctrl-C reaches it; that is not
    the unit's result, so the experiment must stop there and leave the unit to a rerun, not record it.
    """
    res = solve(instance, method, **kwargs)
    if res.status == "interrupted":
        raise KeyboardInterrupt
    return res


def solve_unit(unit: dict, data_dir=None) -> dict:
    """Run ``unit['method']`` on the unit's instance; the record of :data:`RESULT_FIELDS`."""
    inst = instance_of(unit, data_dir)
    res = solve_or_stop(inst, unit["method"], start=unit.get("start"), seed=unit.get("seed", 0),
                        **unit.get("options", {}))
    full = res.to_dict()
    record = {k: v for k, v in full.items() if k in RESULT_FIELDS}
    record["info"] = {k: v for k, v in full["info"].items()
                      if v is None or isinstance(v, (bool, int, float, str))}
    return {"result": record, "instance": {"n": inst.n, "m": inst.m, "trivial_bound": inst.trivial_bound}}


def unavailable_reason(method: str, kernel: str | None = None) -> str | None:
    """Why ``method`` cannot run (its module is not importable, or it needs a polynomial kernel), or None."""
    try:
        method_class(method)
    except (ImportError, AttributeError) as exc:
        return f"not importable ({type(exc).__name__}: {exc})"
    if kernel is not None and canonical_name(method) in ("acso", "acso*") and not make_kernel(kernel).submodular:
        return f"needs a polynomial kernel (its beta-step is submodular only then; got {kernel})"
    return None


def solver_options(method: str, time_limit: float | None) -> dict:
    """``{'time_limit': t}`` for the methods with a ``time_limit`` option that are not our heuristics."""
    if time_limit is None or canonical_name(method) in OWN_METHODS:
        return {}
    return {"time_limit": float(time_limit)} if "time_limit" in method_class(method).options() else {}


def exact_options(method: str, time_limit: float | None, planned: bool = True) -> dict:
    """``{'time_limit': t}`` for an exact unit certified by branch-and-bound, or by enumeration beyond its plan;
    else ``{}``.

    Enumeration's planned units get none: the certified grid sizes them by its hours budget (B_max from the
    measured seconds per QP), while bnb's cost cannot be planned from C(n, B). Enumeration beyond that plan
    (``planned=False``: up to the paper's B_max) gets ``t`` as bnb does: it certifies where its incumbent
    attains the trivial bound (the paper sense stops there), else it stops at ``t``. A unit stopped at ``t``
    keeps its incumbent, global bound and gap with ``certified = False``, so it is no reference."""
    limited = canonical_name(method) == "bnb" or (canonical_name(method) == "enumerate" and not planned)
    return {"time_limit": float(time_limit)} if time_limit is not None and limited else {}
