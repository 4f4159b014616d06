"""Re-evaluate an answer with our objective: a feature list, an AMPL ``.sol`` or a GAMS ``.gdx``.

Whatever produced beta (a method of this package, or an external solver run on a model written by
:mod:`minlp_fs.models.export`), its value is computed the one way the package computes every value,
the *polish* of the solver adapters (:mod:`minlp_fs.solvers.base`):

1. beta -> S = its B largest entries, ties by the lower index (:func:`minlp_fs.solvers.base.top_b`),
   so a fractional beta (a relaxation's answer) is rounded as in the paper's section 5.1;
2. g(S) = min over alpha in Delta of f(alpha, beta_S), problem (4) with beta fixed, i.e. the SVM
   dual (3), solved exactly by the alpha-subproblem oracle (:class:`minlp_fs.alpha.AlphaSubproblem`).

The value is compared with the certified optimum when one is known: a paper-sense value at the
trivial bound -2C min(|I+|, |I-|) is optimal (Remark 1); otherwise the optimum comes from the
enumeration of all C(n, B) subsets (appendix app:cert), run when asked (``certify=True``) or when
C(n, B) <= ``max_subsets``. The gap is 100 sign (g(S) - g*) / |g*| (section 5.1.2), 0 for an optimal S.
"""
from __future__ import annotations

import json

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .errors import InputError

#: C(n, B) up to which the certified optimum is computed without being asked (about a second or two)
AUTO_CERTIFY_SUBSETS = 5000


@dataclass
class Evaluation:
    """Our value of an answer and how it stands against the certified optimum.

    ``status``: ``optimal`` (gap at most :data:`minlp_fs.experiments.metrics.REACHED_PCT` %),
    ``suboptimal`` or ``unknown`` (no certified value). ``file_objective``: f(alpha, beta_S) of the
    file's own alpha (paper sense; what the external solver's objective should be) and
    ``file_alpha_violation`` its largest violation of y'alpha = 0, 0 <= alpha <= C.
    """

    source: str
    sense: str
    objective: float
    features: list
    feature_names: list
    status: str
    certified_objective: float | None = None
    certified_features: list | None = None
    gap_pct: float | None = None
    degenerate: bool = False
    beta_max_fractionality: float | None = None
    file_objective: float | None = None
    file_alpha_violation: float | None = None
    message: str = ""
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def read_gdx(instance, gdx_path, gms_path=None) -> tuple:
    """(alpha, beta) from a GAMS solution ``.gdx`` of a model written by ``write_gms``.

    The ``.gdx`` holds the levels of the GAMS symbols (``x1``, ``b5``, ...; e.g. from
    ``gams model.gms gdx=solution.gdx``); the symbol table in the header of the ``.gms``
    (``gms_path``, default: the ``.gdx`` path with suffix ``.gms``) maps them to the model's names.
    """
    from .models.export import gms_symbol_table
    from .models.dfs_svm import solution_from_values
    from .models.provenance import read_gms_provenance

    gdx_path = Path(gdx_path)
    gms_path = Path(gms_path) if gms_path is not None else gdx_path.with_suffix(".gms")
    for path, what in ((gdx_path, "GAMS solution"), (gms_path, "exported .gms (for its symbol table)")):
        if not path.is_file():
            raise InputError(f"{what} {path} does not exist")
    table = gms_symbol_table(gms_path)
    _check_beta_count(instance, [name for _, name in table], gms_path)
    _check_provenance(instance, read_gms_provenance(gms_path), gms_path)
    try:
        import gamspy_base
        from gams import transfer as gt
    except ImportError:
        raise InputError("reading a .gdx needs gamspy: pip install 'minlp-fs[gams]'") from None
    try:
        container = gt.Container(str(gdx_path), system_directory=gamspy_base.directory)
    except Exception as exc:  # gams.transfer raises its own exception types for unreadable files
        raise InputError(f"cannot read GAMS solution {gdx_path}: {exc}") from None
    missing = [s for s, _ in table if s not in container.data]
    if missing:
        raise InputError(f"{gdx_path} has no level for {', '.join(missing[:5])}"
                         f"{' ...' if len(missing) > 5 else ''}: is it a solution of {gms_path}?")
    values = {}
    for symbol, name in table:
        records = container[symbol].records
        # GDX leaves out records at their default (level 0)
        values[name] = 0.0 if records is None or len(records) == 0 else float(records["level"].iloc[0])
    return solution_from_values(instance, values)


def read_sol(instance, sol_path, col_path=None) -> tuple:
    """(alpha, beta) from an AMPL ``.sol`` (``col_path`` default: the ``.sol`` path with suffix ``.col``)."""
    from .models.export import read_sol as read_ampl

    sol_path = Path(sol_path)
    col_path = Path(col_path) if col_path is not None else sol_path.with_suffix(".col")
    for path, what in ((sol_path, "AMPL solution"), (col_path, ".col file (the variable names of the .nl)")):
        if not path.is_file():
            raise InputError(f"{what} {path} does not exist")
    _check_beta_count(instance, col_path.read_text().split(), col_path)
    sidecar = sol_path.with_suffix(".json")
    if sidecar.is_file():
        try:
            info = json.loads(sidecar.read_text())
        except ValueError:
            raise InputError(f"{sidecar} (the model's provenance) is not valid JSON") from None
        _check_provenance(instance, info if isinstance(info, dict) else {}, sidecar)
    return read_ampl(instance, sol_path, col_path)


#: what the provenance of an exported model must agree on with the instance a solution is valued on
_PROVENANCE_KEYS = ("m", "n", "B", "C", "sense", "kernel", "rows")


def _check_provenance(instance, info: dict, path) -> None:
    """The solution's model was exported for this instance: m, n, B, C, sense, kernel and the dataset's rows
    as the file's provenance records them (keys it lacks are not checked), or an InputError listing each
    difference. (The scaling is not part of an instance: the rows and parameters are what can be checked.)"""
    from .models.provenance import instance_rows

    ours = {"m": instance.m, "n": instance.n, "B": instance.B, "C": instance.C, "sense": instance.sense,
            "kernel": instance.kernel.params(), "rows": instance_rows(instance)}
    diff = [f"{k} {info[k]!r} there, {ours[k]!r} here" for k in _PROVENANCE_KEYS
            if k in info and not _same(info[k], ours[k])]
    if diff:
        raise InputError(f"{path} records a model of another instance ({'; '.join(diff)}): give the instance "
                         "flags used for the export" + (f" ({info['regenerate']})" if "regenerate" in info else ""))


def _same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return a == b


def _check_beta_count(instance, names, path) -> None:
    count = sum(1 for name in names if str(name).startswith("beta["))
    if count != instance.n:
        raise InputError(f"{path} names {count} beta variables but the instance has n = {instance.n} features: "
                         "give the instance flags used for the export")


def certified_optimum(instance, certify: bool | None = None, max_subsets: int = AUTO_CERTIFY_SUBSETS,
                      time_limit: float | None = None, n_jobs: int = 1, oracle=None):
    """The exact method's :class:`~minlp_fs.result.Result` (certified when it finished; the method is
    ``certify``'s auto choice, :func:`minlp_fs.exact.cli.certify_choice`), or None when ``certify`` is
    False, or None and C(n, B) > ``max_subsets``."""
    from .exact.cli import certify_choice
    from .methods import get_method

    if certify is False or (certify is None and math.comb(instance.n, instance.B) > max_subsets):
        return None
    method, options = certify_choice(instance, "auto", None)
    return get_method(method, time_limit=time_limit, n_jobs=n_jobs, **options).solve(instance, oracle=oracle)


def evaluate(instance, features=None, alpha=None, beta=None, source: str = "features",
             certify: bool | None = None, max_subsets: int = AUTO_CERTIFY_SUBSETS,
             time_limit: float | None = None, n_jobs: int = 1) -> Evaluation:
    """Our value of ``features`` (B indices) or of ``beta`` (length n, possibly fractional, with the
    file's ``alpha`` if any), and its status against the certified optimum (see the module docstring)."""
    from .alpha import AlphaSubproblem
    from .experiments.metrics import REACHED_PCT, gap_pct
    from .objective import feasibility_violation
    from .solvers.base import top_b

    if (features is None) == (beta is None):
        raise InputError("give either a feature list or a beta vector to evaluate")
    fractionality = None
    if beta is not None:
        beta = np.asarray(beta, dtype=float)
        if beta.shape != (instance.n,) or not np.all(np.isfinite(beta)):
            raise InputError(f"beta must be {instance.n} finite numbers; got shape {beta.shape}")
        fractionality = float(np.max(np.minimum(np.abs(beta), np.abs(1 - beta))))
        subset = top_b(beta, instance.B)
    else:
        subset = instance.check_subset(features)
    oracle = AlphaSubproblem(instance)
    fit = oracle.solve(subset)
    value = float(fit.value)
    file_value = violation = None
    if alpha is not None and instance.sense == "paper":
        file_value = instance.objective(alpha, subset)
        violation = feasibility_violation(alpha, instance.y, instance.C)

    ref, message = None, ""
    if instance.proves_optimal(value):
        ref_value, ref_features = value, list(subset)
        message = "attains the trivial bound -2C*min(|I+|,|I-|): optimal (Remark 1), and degenerate"
    else:
        ref = certified_optimum(instance, certify, max_subsets, time_limit, n_jobs, oracle=oracle)
        if ref is not None and ref.certified:
            ref_value, ref_features = ref.objective, list(ref.features)
        else:
            ref_value = ref_features = None
            if certify is False:
                message = "no certified optimum (not asked for)"
            elif ref is None:
                message = (f"no certified optimum: C(n,B) = {math.comb(instance.n, instance.B)} > {max_subsets} "
                           "subsets (pass certify=True / --certify to enumerate them)")
            else:
                message = f"the enumeration did not finish ({ref.status}): no certified optimum"
    gap = status = None
    if ref_value is None:
        status = "unknown"
    else:
        gap = gap_pct(value, ref_value, instance.sense)
        gap = gap if gap > 0 else 0.0  # never -0 or below (rounding)
        status = "optimal" if gap <= REACHED_PCT else "suboptimal"
    info = {"n_subsets": math.comb(instance.n, instance.B)}
    if ref is not None:
        info.update(certify_time_s=ref.wall_time_s, certify_status=ref.status)
    return Evaluation(source=source, sense=instance.sense, objective=value, features=list(subset),
                      feature_names=[instance.feature_names[j] for j in subset], status=status,
                      certified_objective=ref_value, certified_features=ref_features, gap_pct=gap,
                      degenerate=instance.is_degenerate(value), beta_max_fractionality=fractionality,
                      file_objective=file_value, file_alpha_violation=violation, message=message, info=info)


def format_evaluation(ev: Evaluation) -> str:
    """The ``minlp-fs evaluate`` table: one ``key  value`` line per item."""
    from .experiments.metrics import REACHED_PCT
    from .objective import TRIVIAL_RTOL, degenerate_advice

    rows = [("source", ev.source), ("objective", f"{ev.objective:.9g}  (g(S) by the exact alpha-subproblem)"),
            ("features", ", ".join(f"{j}:{nm}" for j, nm in zip(ev.features, ev.feature_names)))]
    if ev.beta_max_fractionality is not None:
        rows.append(("beta", f"max fractionality {ev.beta_max_fractionality:.3g} (rounded to its top B)"))
    if ev.file_objective is not None:
        rows.append(("file value", f"{ev.file_objective:.9g}  (f of the file's alpha; y'alpha and box violation "
                                   f"{ev.file_alpha_violation:.2g})"))
    certified = "-" if ev.certified_objective is None else (
        f"{ev.certified_objective:.9g}  features {', '.join(map(str, ev.certified_features))}")
    status = ev.status + (f" (within {REACHED_PCT:g} % of the certified optimum, itself optimal to {TRIVIAL_RTOL:g} "
                          "relative: the accuracy of every value)" if ev.status == "optimal" else "")
    rows += [("certified", certified), ("status", status),
             ("gap", "-" if ev.gap_pct is None else f"{ev.gap_pct:.4g} %")]
    if ev.degenerate:
        rows.append(("DEGENERATE", f"attains the trivial bound (one-class SVM). {degenerate_advice(ev.sense)}"))
    if ev.message:
        rows.append(("note", ev.message))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def parse_features(text: str) -> list:
    """``"3,4,5"`` -> [3, 4, 5] (checked against the instance by ``Instance.check_subset``)."""
    try:
        return [int(t) for t in str(text).split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--features must be comma-separated feature indices; got {text!r}") from None
