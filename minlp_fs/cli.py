"""Command line: ``minlp-fs solve | certify | verify | solvers | methods | export | export-library | evaluate |
compare | datasets | bench``.

Instance flags are shared by every verb; method options become flags automatically from the
registered methods' dataclass fields (``--refit-fraction``, ``--n-samples``, ...), so this file
never switches on method names. Errors are printed as one line, never a traceback, and the exit
status says how a verb ended (README, "Reliability"):

    0 finished   1 a solver ran and failed   2 bad input   3 unavailable (method or solver)
    4 a solver's limit other than time (iterations, nodes, memory) stopped it: the best answer so far is printed
    124 time limit reached (the best answer so far is printed)   130 interrupted (Ctrl-C)

The package is imported inside :func:`main`, so Ctrl-C during start-up is one line too.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import types
import typing
import warnings

from . import __version__
from .errors import InputError, MinlpFsError, SolverUnavailableError
from .output import output_file, write_error

#: options that map to flags of their own (not auto-generated)
_SHARED = {"time_limit": "time_limit", "seed": "seed", "n_jobs": "jobs", "progress": None,
           "solver_options": "solver_option"}
#: exit statuses (README, "Reliability")
EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_UNAVAILABLE, EXIT_TIME_LIMIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 124, 130
EXIT_LIMIT = 4
#: a Result's status -> exit status
_STATUS_EXIT = {"optimal": EXIT_OK, "converged": EXIT_OK, "time_limit": EXIT_TIME_LIMIT, "limit": EXIT_LIMIT,
                "interrupted": EXIT_INTERRUPTED, "unavailable": EXIT_UNAVAILABLE, "error": EXIT_FAILED}


def _instance_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("instance")
    g.add_argument("--dataset", default="bcd",
                   help="paper dataset name, 'synthetic', or NAME with NAME.csv in --data-dir (default: bcd, built in)")
    g.add_argument("--data-dir", help="folder of the datasets' CSV files (or set MINLP_FS_DATA)")
    g.add_argument("--label", default=None,
                   help="name of the CSV's label column (default: y); two values, or more for a multiclass instance")
    g.add_argument("--kernel", default="poly2",
                   help="poly2, poly3, poly5 (c=1; any polyD, or poly with --degree D) or rbf (default: poly2)")
    g.add_argument("--B", type=int, default=None, help="number of features to select (default: min(5, n))")
    g.add_argument("--C", type=float, default=10.0, help="SVM C (default 10, the paper's)")
    g.add_argument("--gamma", type=float, default=None, help="kernel gamma (default 0.1, the paper's)")
    g.add_argument("--coef0", type=float, default=None, help="polynomial c (default 1)")
    g.add_argument("--degree", type=int, default=None, help="polynomial degree (overrides polyD)")
    g.add_argument("--sense", default="paper", choices=("paper", "fit"),
                   help="paper: problem (4) as written; fit: maximise the SVM dual value (best-fitting features)")
    g.add_argument("--scaling", default="minmax", choices=("minmax", "standard", "none"))
    g.add_argument("--m", type=int, default=None, help="reduced instance: m rows by a stratified sample (uses --seed)")
    g.add_argument("--seed", type=int, default=0, help="seed for random starts, sampling and randomised methods")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _flag_type(hint):
    """argparse type for an option's type hint (Optional[X] -> X); None when not a simple scalar."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 else None
    return hint if hint in (int, float, str, bool) else None


def _method_option_flags(p: argparse.ArgumentParser) -> dict:
    """Add one flag per distinct option of the registered methods and of ``hybrid:SOLVER`` (its SOLVER is in the
    method's name, so it has no flag); returns dest -> option name."""
    from .methods import HYBRID_PREFIX, method_class, nameable_methods

    g = p.add_argument_group("method options (each applies to the methods that have it)")
    seen: dict = {}
    for name, key in nameable_methods():
        try:
            cls = method_class(key)
        except (ImportError, AttributeError):  # a broken optional module must not break the CLI
            continue
        for opt, (hint, default) in cls.options().items():
            if opt in _SHARED or (opt == "solver" and name.startswith(HYBRID_PREFIX)):  # hybrid:SOLVER names it
                continue
            if opt in seen:
                seen[opt][1].append(name)
                continue
            kind = _flag_type(hint)
            if kind is None:
                continue
            seen[opt] = (kind, [name])
    dests = {}
    for opt, (kind, owners) in sorted(seen.items()):
        flag = "--" + opt.replace("_", "-")
        if kind is bool:
            g.add_argument(flag, dest="opt_" + opt, action=argparse.BooleanOptionalAction, default=None,
                           help=f"({', '.join(owners)})")
        else:
            g.add_argument(flag, dest="opt_" + opt, type=kind, default=None, help=f"({', '.join(owners)})")
        dests["opt_" + opt] = opt
    return dests


def _solver_option_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the solver itself, repeatable (SCIP: limits/nodes=100; GAMS solvers: "
                        "a line of their option file; Ipopt, Knitro: their option names); values are read as "
                        "integers, numbers or true/false where they parse")


def _solver_options(args):
    """``--solver-option`` texts as the ``solver_options`` mapping (None when there are none)."""
    from .options import parse_assignments

    return parse_assignments(args.solver_option, args.verb, "--solver-option") if args.solver_option else None


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are the package's one line (README, "Reliability"), not a usage block:
    a bad flag raises InputError, which :func:`main` prints as ``minlp-fs: error: VERB: ...`` with exit 2.
    Sub-parsers are of the same class (``add_subparsers`` makes them with ``type(self)``)."""

    def error(self, message, prog=None):
        prog = prog or self.prog
        verb = prog.partition(" ")[2]
        raise InputError(f"{verb + ': ' if verb else ''}{message} (see '{prog} --help')")

    def parse_args(self, args=None, namespace=None):
        """argparse's, with the flags no parser knows named with their verb (argparse's top level reports them)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            verb = getattr(parsed, "verb", None)
            self.error(f"unrecognized arguments: {' '.join(extra)}", f"{self.prog} {verb}" if verb else None)
        return parsed


def _parser() -> tuple[argparse.ArgumentParser, dict]:
    from .exact.cli import CERTIFY_METHODS, add_verify_parser
    from .experiments.cli import add_bench_parser
    from .methods import ALIASES, REGISTRY

    p = _Parser(prog="minlp-fs", description=" ".join(__doc__.split("\n\n")[0].split()))
    p.add_argument("--version", action="version", version=f"minlp-fs {__version__}")
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("solve", help="select B features with a method (default: LS* from the alpha-start)")
    _instance_flags(s)
    names = ", ".join(list(REGISTRY) + list(ALIASES)) + ", hybrid:SOLVER"
    s.add_argument("--method", default="ls*", help=f"one of {names} (default: ls*)")
    s.add_argument("--start", default=None,
                   help="start for LS/LS*/ACSO/solvers: alpha-start (default), random (uses --seed) or i,j,k")
    s.add_argument("--time-limit", type=float, default=None, help="seconds")
    s.add_argument("--jobs", type=int, default=None,
                   help="parallel candidate re-fits (methods with n_jobs; -1 = one per CPU, capped at the CPUs)")
    _solver_option_flag(s)
    dests = _method_option_flags(s)
    c = sub.add_parser("certify", help="certified optimum by branch-and-bound or enumeration of all C(n,B) subsets")
    _instance_flags(c)
    c.add_argument("--jobs", type=int, default=1, help="worker processes (-1 = one per CPU, capped at the CPUs)")
    c.add_argument("--time-limit", type=float, default=None, help="seconds")
    c.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    c.add_argument("--method", default="auto", choices=CERTIFY_METHODS,
                   help="auto (default): bnb for polynomial kernels on more than 1000 subsets, for the Gaussian "
                        "kernel's fit sense on more than 20000, or with --certificate, else enumeration; auto's bnb "
                        "enumerates instead once it has run half of enumeration's estimated time (without "
                        "--certificate); or enumerate, bnb")
    c.add_argument("--certificate", default=None, help="bnb: write the proof to this JSON file (minlp-fs verify FILE)")
    c.add_argument("--gap-tol", type=float, default=0.0,
                   help="bnb: relative optimality gap to stop at (default 0: exact); the answer states the gap it is "
                        "proven within (enumeration, which --method auto may pick, is always exact)")
    c.add_argument("--backend", default="loky", choices=("loky", "dask", "ray"),
                   help="bnb: joblib backend of the --jobs workers (dask/ray: a cluster, see --scheduler)")
    c.add_argument("--scheduler", default=None, help="bnb: dask/ray scheduler address (default: a local cluster)")
    add_verify_parser(sub)
    sv = sub.add_parser("solvers", help="list the solver adapters with availability and the reason")
    sv.add_argument("--json", action="store_true")
    mt = sub.add_parser("methods", help="list the methods with their options, defaults and meaning")
    mt.add_argument("--json", action="store_true")
    e = sub.add_parser("export", help="write the MINLP as .nl (with .row/.col) or .gms; prints the files written "
                                      "(--json: {files, instance})")
    _instance_flags(e)
    e.add_argument("--format", required=True, choices=("nl", "gms"))
    e.add_argument("--out", required=True,
                   help="output file; its suffix must be the format's (.nl or .gms), which is added when missing")
    e.add_argument("--start", default=None, help="starting point: alpha-start (default), random or i,j,k")
    lib = sub.add_parser("export-library", help="write the paper's instances as .gms + .nl and a MINLPLib-style "
                                                "library.csv (counts, best known value, bound, certified)")
    lib.add_argument("--out", required=True, help="output folder (created if missing)")
    lib.add_argument("--quick", action="store_true", help="a handful of small instances (seconds)")
    lib.add_argument("--certified-grid", action="store_true",
                     help="also the certified grid (all rows, both senses, B with few enough subsets to enumerate)")
    lib.add_argument("--data-dir", help="folder of the datasets' CSV files (or set MINLP_FS_DATA)")
    ev = sub.add_parser("evaluate", help="our objective and status of a feature list, an AMPL .sol or a GAMS .gdx")
    _instance_flags(ev)
    src = ev.add_mutually_exclusive_group(required=True)
    src.add_argument("--features", help="comma-separated 0-based feature indices (B of them)")
    src.add_argument("--sol", help="AMPL .sol of a model written by `export --format nl`")
    src.add_argument("--gdx", help="GAMS .gdx (levels) of a model written by `export --format gms`")
    ev.add_argument("--col", help="the .nl's .col file (default: the .sol's name with suffix .col)")
    ev.add_argument("--gms", help="the exported .gms, for its symbol table (default: the .gdx's name, .gms)")
    ev.add_argument("--certify", action=argparse.BooleanOptionalAction, default=None,
                    help="enumerate all C(n,B) subsets for the certified optimum (default: when C(n,B) <= 5000)")
    ev.add_argument("--jobs", type=int, default=1, help="worker processes of the enumeration")
    ev.add_argument("--time-limit", type=float, default=None, help="seconds for the enumeration")
    cp = sub.add_parser("compare", conflict_handler="resolve",
                        help="run several methods on one instance (or a small grid) and tabulate them")
    _instance_flags(cp)
    cp.add_argument("--B", default=None, help="features to select, or a list for a grid: 3,4 (default: min(5, n))")
    cp.add_argument("--kernel", default="poly2", help="kernel, or a list for a grid: poly2,rbf (default: poly2)")
    cp.add_argument("--methods", required=True, help="comma-separated method names, e.g. ls*,acso*,scip,enumerate")
    cp.add_argument("--time-limit", type=float, default=None, help="seconds, for each method that has a limit")
    cp.add_argument("--plot", help="image file: incumbent (and bound) over time per method; its suffix names the "
                                   "format (.png, .pdf, .svg, ...; .png added when there is none)")
    _solver_option_flag(cp)
    sub.add_parser("datasets", help="list the paper's datasets")
    add_bench_parser(sub)
    return p, dests


def _start(text):
    if text is None or text in ("alpha-start", "random"):
        return text
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--start must be alpha-start, random or comma-separated indices; got {text!r}") from None


#: flags whose value may begin with '-' (``--start -1,2`` must reach our check of the indices)
_DASH_VALUES = ("--start",)


def _join_dash_values(argv: list) -> list:
    """``--start -1,2`` -> ``--start=-1,2``: argparse would take ``-1,2`` for an option and refuse it."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in _DASH_VALUES and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1][1:2].isdigit():
            out.append(f"{a}={argv[i + 1]}")
            i += 2
        else:
            out.append(a)
            i += 1
    return out


def _instance(args):
    """The instance the instance flags describe. Refused: ``--data-dir``/``--label`` with ``--dataset synthetic``
    (no file to read), and ``--kernel poly`` without ``--degree`` (which degree is meant is not said)."""
    from .api import build_instance

    if args.dataset == "synthetic":
        given = [flag for flag, value in (("--data-dir", args.data_dir), ("--label", args.label)) if value is not None]
        if given:
            raise InputError(f"--dataset synthetic generates its data: {' and '.join(given)} (for a CSV dataset) "
                             f"would have no effect; drop {'them' if len(given) > 1 else 'it'}")
    if args.kernel.strip().lower() == "poly" and args.degree is None:   # not silently the paper's degree 2
        raise InputError("--kernel poly needs a degree: poly2, poly3, poly5 (any polyD), or poly with --degree D")
    return build_instance(dataset=args.dataset, data_dir=args.data_dir, kernel=args.kernel, B=args.B,
                          C=args.C, gamma=args.gamma, coef0=args.coef0, degree=args.degree,
                          sense=args.sense, scaling=args.scaling, m=args.m, seed=args.seed, label=args.label)


def _print_table(result, instance) -> None:
    from .objective import degenerate_advice

    d = instance.describe()
    k = ", ".join(f"{a}={b}" for a, b in d["kernel"].items() if a != "name")
    multiclass = len(d["classes"]) > 2
    classes = f", {len(d['classes'])} classes one-vs-rest" if multiclass else ""
    bound = "-2C*min(|I+|,|I-|)" + (" summed over the classes" if multiclass else "")
    signs = [f"{c}" for c in d["classes"]] if multiclass else ["-1 = ", "+1 = "]
    rows = [
        ("instance", f"{d['name']} (m={d['m']}, n={d['n']}{classes}), {d['kernel']['name']} ({k}), C={d['C']:g}, "
                     f"B={d['B']}, sense={d['sense']}"),
        ("classes", ", ".join(f"{sign}{'' if multiclass else c} ({count})"
                              for sign, c, count in zip(signs, d["classes"], d["class_counts"]))),
        ("method", result.method),
        ("status", result.status + ("  [certified optimal]" if result.certified else "")),
        ("objective", "-" if result.objective is None else f"{result.objective:.6f}"),
        ("features", ", ".join(f"{j}:{nm}" for j, nm in zip(result.features, result.feature_names)) or "-"),
        ("time", f"{result.wall_time_s:.2f} s, {result.n_svm_solves} SVM solves"),
    ]
    if result.objective is not None and not result.degenerate and instance.sense == "paper":
        above = (result.objective - d["trivial_bound"]) / abs(d["trivial_bound"])
        rows.append(("bound", f"trivial lower bound {d['trivial_bound']:g} = {bound}; "
                              f"the objective is {100 * above:.3g}% above it"))
    if result.degenerate:
        rows.append(("DEGENERATE", f"attains the trivial bound {d['trivial_bound']:g} = {bound}: "
                                   f"a one-class SVM. {degenerate_advice(instance.sense)}"))
    if result.message:   # a certified claim's tolerance among others
        rows.append(("note", result.message))
    width = max(len(r[0]) for r in rows)
    for key, val in rows:
        print(f"{key:<{width}}  {val}")


def _run_solve(args, dests) -> int:
    from .api import solve
    from .workers import cap_jobs

    options = {opt: getattr(args, dest) for dest, opt in dests.items() if getattr(args, dest) is not None}
    jobs = None if args.jobs is None else cap_jobs(args.jobs, "solve --jobs")
    start = _start(args.start)
    inst = _instance(args)
    for opt, value in (("time_limit", args.time_limit), ("n_jobs", jobs),
                       ("solver_options", _solver_options(args))):
        if value is not None:
            options[opt] = value
    result = solve(inst, method=args.method, start=start, seed=args.seed, **options)
    _emit(args, result, inst)
    return _STATUS_EXIT[result.status]


def _run_certify(args) -> int:
    from .api import solve
    from .exact.cli import certify_choice
    from .workers import cap_jobs

    jobs = cap_jobs(args.jobs, "certify --jobs")
    if args.certificate is not None:
        output_file(args.certificate, "--certificate")
    inst = _instance(args)
    method, extra = certify_choice(inst, args.method, args.certificate)
    if method == "bnb":
        extra.update(certificate=args.certificate, backend=args.backend, scheduler=args.scheduler, gap_tol=args.gap_tol)
    from .exact.bnb import BranchAndBound
    from .options import declared

    declared(BranchAndBound)["gap_tol"].check("certify", "--gap-tol", args.gap_tol)   # whichever method auto picks
    if args.method == "enumerate" and args.gap_tol:
        raise InputError("--gap-tol needs --method bnb (or auto): enumeration is exact")
    if method != "bnb" and (args.backend != "loky" or args.scheduler):
        raise InputError("--backend/--scheduler need --method bnb (enumeration runs loky processes)")
    with warnings.catch_warnings():   # a certificate that could not be written is an error line after the answer
        warnings.filterwarnings("ignore", message="cannot write the certificate", category=RuntimeWarning)
        result = solve(inst, method=method, n_jobs=jobs, time_limit=args.time_limit,
                       progress=not args.no_progress, **extra)
    if result.certified and "kkt" in result.info["tolerance"]:  # the Result states it; here, how it was proven
        by = result.info.get("completed_by") or method   # auto's bnb may have fallen back to enumeration
        how = (f"over all {math.comb(inst.n, inst.B)} subsets" if by == "enumerate"
               else "by branch-and-bound (every bound proven, see `minlp-fs verify`)")
        result.message = (f"optimal {how}, each SVM dual solved to KKT tolerance "
                          f"{result.info['tolerance']['kkt']:g} (value accuracy: benchmarks/RESULTS.md)")
    _emit(args, result, inst)
    if "certificate_error" in result.info:
        raise InputError(result.info["certificate_error"])
    return _STATUS_EXIT[result.status]


def _emit(args, result, inst) -> None:
    if args.json:
        out = result.to_dict()
        out["instance"] = inst.describe()
        print(json.dumps(out))
    else:
        _print_table(result, inst)


def _run_solvers(args) -> int:
    from .solvers.base import list_solvers

    rows = list_solvers()
    if args.json:
        print(json.dumps(rows))
        return 0
    for r in rows:
        state = "available" if r["available"] else "unavailable"
        limit = f"demo: rows, columns <= {r['demo_limit']}" if r.get("demo_limit") else "-"
        print(f"{r['name']:<12} {state:<12} {r['scope']:<7} {limit:<30} {r['reason']}")
    return 0


def _run_methods(args) -> int:
    from .catalog import format_catalog, method_catalog

    rows = method_catalog()
    print(json.dumps(rows, default=repr) if args.json else format_catalog(rows).rstrip())
    return 0


def _export_target(fmt: str, out: str):
    """The file ``--out`` names for ``--format``: its suffix must be the format's (in any case; added when
    missing), and :func:`~minlp_fs.output.output_file` can write it."""
    from pathlib import Path

    path = Path(out)
    if path.is_dir():
        raise InputError(f"--out {out} is a folder; give a file name such as {path / ('model.' + fmt)}")
    if path.suffix and path.suffix.lower() != f".{fmt}":
        raise InputError(f"--out {out} ends in {path.suffix} but --format is {fmt}: use a .{fmt} file name "
                         f"or --format {path.suffix[1:]}" if path.suffix[1:] in ("nl", "gms") else
                         f"--out {out} ends in {path.suffix} but --format {fmt} writes a .{fmt} file")
    if not path.suffix:
        path = path.with_name(path.name + f".{fmt}")
    return output_file(path, "--out")


def _run_export(args) -> int:
    from .models.export import export

    target = _export_target(args.format, args.out)
    start = _start(args.start)
    inst = _instance(args)
    source = {"dataset": args.dataset, "scaling": args.scaling, "seed": args.seed, "m": args.m,
              "label": getattr(args, "label", None)}
    try:
        paths = export(inst, args.format, target, start=start, source=source, seed=args.seed)
    except OSError as exc:
        raise write_error(exc, target) from None
    if args.json:
        print(json.dumps({"files": [str(path) for path in paths], "instance": inst.describe()}))
    else:
        for path in paths:
            print(path)
    return 0


def _run_export_library(args) -> int:
    from .models.library import export_library

    def progress(entry):
        print(f"writing {entry.name}", file=sys.stderr, flush=True)

    try:
        path = export_library(args.out, quick=args.quick, certified_grid=args.certified_grid,
                              data_dir=args.data_dir, progress=progress)
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename or args.out}: {exc.strerror or exc}") from None
    print(path)
    return 0


def _run_evaluate(args) -> int:
    from .evaluate import evaluate, format_evaluation, parse_features, read_gdx, read_sol
    from .workers import cap_jobs

    inst = _instance(args)
    if args.features is not None:
        kw = {"features": parse_features(args.features)}
    else:
        alpha, beta = read_sol(inst, args.sol, args.col) if args.sol else read_gdx(inst, args.gdx, args.gms)
        kw = {"alpha": alpha, "beta": beta, "source": args.sol or args.gdx}
    ev = evaluate(inst, certify=args.certify, time_limit=args.time_limit,
                  n_jobs=cap_jobs(args.jobs, "evaluate --jobs"), **kw)
    print(json.dumps({**ev.to_dict(), "instance": inst.describe()}) if args.json else format_evaluation(ev))
    return _STATUS_EXIT.get(ev.info.get("certify_status"), EXIT_OK)  # a stopped enumeration: 124 / 130


def _run_compare(args) -> int:
    from .compare import compare_grid, format_table, parse_list, plot, plot_file

    target = output_file(plot_file(args.plot), "--plot") if args.plot else None
    grid = {"B": None if args.B is None else parse_list(args.B, int, "--B"),
            "kernel": parse_list(args.kernel, str, "--kernel")}
    rows = compare_grid(lambda **p: _instance(argparse.Namespace(**{**vars(args), **p})),
                        parse_list(args.methods, str, "--methods"), grid, args.time_limit, args.seed,
                        _solver_options(args))
    print(json.dumps([r.to_dict() for r in rows]) if args.json else format_table(rows).rstrip(), flush=True)
    if rows[-1].result.status == "interrupted":
        print(f"minlp-fs: interrupted during {rows[-1].method}: the comparison stopped there", file=sys.stderr)
    if target is not None:
        try:
            plot(rows, target)
        except OSError as exc:
            raise write_error(exc, target) from None
    return max(_STATUS_EXIT[r.result.status] for r in rows)  # the most severe row's status (README table)


def _run_datasets(args) -> int:
    from .datasets import PAPER_DATASETS

    for name, (m, n) in PAPER_DATASETS.items():
        print(f"{name:<11} m={m:<5} n={n}" + ("   (built in)" if name == "bcd" else ""))
    return 0


def _flag_names(message: str, dests: dict) -> str:
    """An API message as the command line says it: ``allow_nonsubmodular=True`` -> ``--allow-nonsubmodular``.
    A quoted name (``'max_iter'``, a key the user typed, e.g. in ``--solver-option``) is left as it is."""
    names = {opt: "--" + opt.replace("_", "-") for opt in dests.values()}
    names.update({opt: "--" + flag.replace("_", "-") for opt, flag in _SHARED.items() if flag})
    for opt, flag in names.items():
        message = re.sub(rf"\b{re.escape(opt)}=True\b", flag, message)
        message = re.sub(rf"\b{re.escape(opt)}=False\b", "--no-" + flag[2:], message)
        if "_" in opt:  # a bare identifier (n_samples), never an ordinary word (seed, solver)
            message = re.sub(rf"(?<![\w'-]){re.escape(opt)}\b(?!')", flag, message)
    return message


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"minlp-fs: warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    argv = _join_dash_values(list(sys.argv[1:] if argv is None else argv))
    dests: dict = {}
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            parser, dests = _parser()
            args = parser.parse_args(argv)
            return _run(args, dests)
    except SolverUnavailableError as exc:
        print(f"minlp-fs: unavailable: {_flag_names(str(exc), dests)}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except MinlpFsError as exc:
        print(f"minlp-fs: error: {_flag_names(str(exc), dests)}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("minlp-fs: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:   # the reader went away (`minlp-fs ... --json | head`): no traceback, no output left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # Python's recipe: flushing at exit fails too
        return EXIT_BROKEN_PIPE


#: exit status after the reader of the output closed the pipe (128 + SIGPIPE, as a shell reports it)
EXIT_BROKEN_PIPE = 141


def _run(args, dests) -> int:
    if args.verb == "bench":
        from .experiments.cli import run_bench

        return run_bench(args)
    if args.verb == "solve":
        return _run_solve(args, dests)
    if args.verb == "certify":
        return _run_certify(args)
    if args.verb == "solvers":
        return _run_solvers(args)
    if args.verb == "methods":
        return _run_methods(args)
    if args.verb == "export":
        return _run_export(args)
    if args.verb == "verify":
        from .exact.cli import run_verify

        return run_verify(args)
    if args.verb == "export-library":
        return _run_export_library(args)
    if args.verb == "evaluate":
        return _run_evaluate(args)
    if args.verb == "compare":
        return _run_compare(args)
    return _run_datasets(args)


if __name__ == "__main__":
    sys.exit(main())
