"""Compare methods on one instance or a small grid: ``minlp-fs compare --methods a,b,c``.

Every method (a heuristic, ``enumerate``, a solver adapter, ``hybrid:SOLVER``: any name
:func:`minlp_fs.methods.get_method` accepts) runs on the same instance, one after the other in this
process, with the same time limit (for the methods that have one) and from its own default start
(the paper's alpha-start, section 5.1, computed inside each run as in ``benchmarks/bench_solvers.py``).
Every objective is the method's polished g(beta), recomputed by our objective.

Each row carries the gap (in %, in the instance's sense: 100 sign (f - f_ref) / |f_ref|, section 5.1.2)
to a reference: the best certified optimum when a method of the comparison certified one, else the
best value found by any of them (``reference`` says which, and names any method that beat a
certified optimum beyond the 1e-6 accuracy of every value: that gap stays negative). ``bound`` is the method's own bound on the
optimum, in the units of g, when it has one (enumeration, global solvers).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from .errors import InputError, MinlpFsError
from .objective import TRIVIAL_RTOL
from .options import check_value

#: instance parameters a grid may vary (``--B 3,4``, ``--kernel poly2,rbf``)
GRID_PARAMS = ("B", "kernel")


@dataclass
class Row:
    """One method on one instance: its Result, and its gap to the comparison's reference."""

    instance: dict
    method: str
    result: object
    gap_pct: float | None = None
    reference: str = ""

    def to_dict(self) -> dict:
        return {"instance": self.instance, "method": self.method, "gap_pct": self.gap_pct,
                "reference": self.reference, "result": self.result.to_dict()}


def parse_list(text: str, kind=str, flag: str = "") -> list:
    """``"a,b"`` -> ["a", "b"] (each converted by ``kind``); an empty or bad list is an InputError."""
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    try:
        values = [kind(t) for t in items]
    except ValueError:
        raise InputError(f"{flag or 'the list'} must be comma-separated {kind.__name__} values; got {text!r}") from None
    if not values:
        raise InputError(f"{flag or 'the list'} is empty")
    return values


def _check_time_limit(time_limit) -> None:
    """A bad limit is the caller's error, raised once (by the package's one option checker), not an
    error row per method."""
    check_value("compare", "time_limit", time_limit, float, low=0, low_open=True, none=True)


def _check_methods(methods) -> list:
    from .methods import canonical_name, method_class

    names = [canonical_name(m) for m in methods]   # unknown names fail here, before any run
    for name in names:
        method_class(name)
    if len(set(names)) != len(names):
        raise InputError(f"a method is listed twice in {', '.join(methods)}")
    return names


def run_method(instance, method: str, time_limit: float | None = None, seed: int = 0,
               solver_options: dict | None = None):
    """The Result of one method under the comparison's rules; a method that refuses the instance (e.g. ACSO
    on a Gaussian kernel) or the ``solver_options`` (given to every method that has them: the solver
    adapters and hybrids) is a row with status ``error`` and the reason, not the end of the comparison."""
    from .api import solve
    from .methods import method_class
    from .result import Result

    known = method_class(method).options()
    opts = {key: value for key, value in (("time_limit", time_limit), ("solver_options", solver_options))
            if value is not None and key in known}
    try:
        return solve(instance, method=method, seed=seed, **opts)
    except MinlpFsError as exc:
        status, message = "error", str(exc)
    except KeyboardInterrupt:   # Ctrl-C before the method had an answer (with one, its Result says interrupted)
        status, message = "interrupted", "interrupted (Ctrl-C) before it found an answer"
    return Result(method=method, sense=instance.sense, objective=None, features=[], feature_names=[],
                  alpha=None, status=status, message=message)


def compare(instance, methods, time_limit: float | None = None, seed: int = 0,
            solver_options: dict | None = None) -> list:
    """One :class:`Row` per method, in the given order, with gaps to the reference (module docstring).
    Ctrl-C ends the comparison: the method running then gives a row with status ``interrupted`` (its best
    answer so far, if any) and the methods after it are not started (no rows)."""
    names = _check_methods(methods)
    _check_time_limit(time_limit)
    desc = instance.describe()
    rows = []
    for name in names:
        rows.append(Row(desc, name, run_method(instance, name, time_limit, seed, solver_options)))
        if rows[-1].result.status == "interrupted":
            break
    _add_gaps(instance, rows)
    return rows


#: every value is accurate to 1e-6 relative (the oracle's KKT tolerance), so gaps within 1e-4 % are rounding
GAP_ROUNDING_PCT = 1e-4


def _add_gaps(instance, rows) -> None:
    """Gaps to the best certified value (the best found when nothing was certified). A negative gap
    beyond rounding (a method better than a certified optimum) is kept, not clipped, and the reference
    says so: two certifiers disagreeing or a heuristic beating one is a finding, not noise."""
    from .experiments.metrics import gap_pct

    found = [r.result for r in rows if r.result.objective is not None]
    certified = [r for r in found if r.certified]
    pool = certified or found
    if not pool:
        return
    best = min(pool, key=lambda r: instance.sign * r.objective)
    ref = best.objective
    label = f"certified optimum ({best.method})" if certified else f"best found ({best.method})"
    beaten = [r.method for r in found if gap_pct(r.objective, ref, instance.sense) < -GAP_ROUNDING_PCT]
    if beaten:
        label += f"; beaten by {', '.join(beaten)} beyond the 1e-6 accuracy of every value"
    for row in rows:
        row.reference = label
        if row.result.objective is not None:
            gap = gap_pct(row.result.objective, ref, instance.sense)
            row.gap_pct = 0.0 if abs(gap) <= GAP_ROUNDING_PCT else gap


def compare_grid(build, methods, grid: dict | None = None, time_limit: float | None = None,
                 seed: int = 0, solver_options: dict | None = None) -> list:
    """:func:`compare` on every combination of ``grid`` (e.g. ``{"B": [3, 4], "kernel": ["poly2", "rbf"]}``);
    ``build(**params)`` returns the instance for one combination (all are built before any method runs, so a
    bad combination is refused first). Rows of all instances, grid order; after
    an interrupted row (Ctrl-C, see :func:`compare`) no further instance is started."""
    grid = {k: v for k, v in (grid or {}).items() if v}
    bad = sorted(set(grid) - set(GRID_PARAMS))
    if bad:
        raise InputError(f"a comparison grid varies only {', '.join(GRID_PARAMS)}; got {', '.join(bad)}")
    names = _check_methods(methods)
    _check_time_limit(time_limit)
    keys = list(grid)
    # every instance first: a bad value anywhere in the grid is refused before any method runs
    instances = [build(**dict(zip(keys, values))) for values in itertools.product(*(grid[k] for k in keys))]
    rows = []
    for instance in instances:
        rows += compare(instance, names, time_limit, seed, solver_options)
        if rows[-1].result.status == "interrupted":
            break
    return rows


#: solvers report "no bound" as +-1e20 (SCIP's infinity, GAMS's NA); beyond this a bound is shown as none
NO_BOUND = 1e19


def _bound(result):
    b = result.bound
    return None if b is None or not abs(b) < NO_BOUND else b


def _num(v, fmt=".6g") -> str:
    return "-" if v is None else format(v, fmt)


def _gap(v) -> str:
    return "-" if v is None else ("0" if v < 1e-9 else format(v, ".3g"))  # below 1e-9 %: rounding


def _label(desc: dict) -> str:
    return f"{desc['name']} m={desc['m']} n={desc['n']} B={desc['B']} {desc['kernel']['name']} {desc['sense']}"


def format_table(rows) -> str:
    """The ``minlp-fs compare`` table: one block per instance, one line per method."""
    head = ("method", "objective", "bound", "gap %", "time s", "status", "SVM solves", "certified")
    out = []
    for label, group in itertools.groupby(rows, key=lambda r: _label(r.instance)):
        group = list(group)
        table = [head] + [(r.method, _num(r.result.objective, ".8g"), _num(_bound(r.result), ".8g"),
                           _gap(r.gap_pct), f"{r.result.wall_time_s:.2f}", r.result.status,
                           str(r.result.n_svm_solves), "yes" if r.result.certified else "no") for r in group]
        widths = [max(len(line[k]) for line in table) for k in range(len(head))]
        out.append(f"{label}   (gap to the {group[0].reference or 'reference: none found'})")
        out += ["  ".join(c.ljust(w) if k in (0, 5) else c.rjust(w) for k, (c, w) in enumerate(zip(line, widths)))
                .rstrip() for line in table]
        notes = [f"  {r.method}: {r.result.message}" for r in group
                 if r.result.status in ("unavailable", "error") and r.result.message]
        if any(r.result.certified for r in group):
            notes.append(f"  certified: optimal to {TRIVIAL_RTOL:g} relative, the accuracy of every value")
        out += notes + [""]
    return "\n".join(out).rstrip() + "\n"


def _pyplot():
    try:
        from .experiments.figures import _plt
        return _plt()
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'minlp-fs[plots]'") from None


def plot_file(path):
    """The file :func:`plot` is to write for ``--plot PATH``, checked before the comparison runs: a folder is
    refused; a name without a suffix gets ``.png`` (as ``export`` adds its format's suffix), any other
    suffix must be a format matplotlib writes (.png, .pdf, .svg, ...). Needs matplotlib."""
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        raise InputError(f"--plot {path} is a folder; give a file name such as {path / 'compare.png'}")
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if not path.suffix:
        return path.with_name(path.name + ".png")
    if path.suffix[1:].lower() not in formats:
        raise InputError(f"--plot {path}: matplotlib cannot write {path.suffix} files; use one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")
    return path


def plot(rows, path) -> None:
    """Incumbent value over time per method (steps from ``Result.trace``) and, dashed, each method's
    final bound where it has one; one panel per instance, written to ``path`` (its suffix names the
    format: see :func:`plot_file`). Needs matplotlib (``minlp-fs[plots]``)."""
    plt = _pyplot()
    groups = [(label, list(g)) for label, g in itertools.groupby(rows, key=lambda r: _label(r.instance))]
    fig, axes = plt.subplots(len(groups), 1, figsize=(7, 3.6 * len(groups)), squeeze=False)
    for ax, (label, group) in zip(axes[:, 0], groups):
        for k, row in enumerate(group):
            res, colour = row.result, f"C{k % 10}"
            if not res.trace:
                continue
            times = [p.time_s for p in res.trace] + [max(res.wall_time_s, res.trace[-1].time_s)]
            values = [p.value for p in res.trace]
            ax.step(times, values + values[-1:], where="post", color=colour, label=row.method)
            if _bound(res) is not None:
                ax.hlines(res.bound, 0, times[-1], colors=colour, linestyles="--", linewidth=0.8)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("g(beta)  (dashed: bound)")
        ax.set_xscale("symlog", linthresh=0.01)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
