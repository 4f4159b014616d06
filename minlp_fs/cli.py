"""Command line: ``minlp-fs solve | certify | verify | solvers | export | datasets | bench``.

Instance flags are shared by every verb; method options become flags automatically from the
registered methods' dataclass fields (``--refit-fraction``, ``--n-samples``, ...), so this file
never switches on method names. Errors are printed as one line, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
import types
import typing

from . import __version__
from .api import build_instance, solve
from .errors import MinlpFsError
from .exact.cli import CERTIFY_METHODS, add_verify_parser, certify_method, run_verify
from .experiments.cli import add_bench_parser, run_bench
from .methods import ALIASES, REGISTRY, method_class

#: options that map to flags of their own (not auto-generated)
_SHARED = {"time_limit": "time_limit", "seed": "seed", "n_jobs": "jobs", "progress": None}


def _instance_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("instance")
    g.add_argument("--dataset", default="bcd",
                   help="paper dataset name, 'synthetic', or NAME with NAME.csv in --data-dir (default: bcd, built in)")
    g.add_argument("--data-dir", help="folder of the datasets' CSV files (or set MINLP_FS_DATA)")
    g.add_argument("--kernel", default="poly2", help="poly2, poly3, poly5 (c=1) or rbf (default: poly2)")
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
    """Add one flag per distinct option of the registered methods; returns dest -> option name."""
    g = p.add_argument_group("method options (each applies to the methods that have it)")
    seen: dict = {}
    for name in REGISTRY:
        try:
            cls = method_class(name)
        except (ImportError, AttributeError):  # a broken optional module must not break the CLI
            continue
        for opt, (hint, default) in cls.options().items():
            if opt in _SHARED or opt in seen:
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


def _parser() -> tuple[argparse.ArgumentParser, dict]:
    p = argparse.ArgumentParser(prog="minlp-fs", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"minlp-fs {__version__}")
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("solve", help="select B features with a method (default: LS* from the alpha-start)")
    _instance_flags(s)
    names = ", ".join(list(REGISTRY) + list(ALIASES)) + ", hybrid:SOLVER"
    s.add_argument("--method", default="ls*", help=f"one of {names} (default: ls*)")
    s.add_argument("--start", default=None,
                   help="start for LS/LS*/ACSO/solvers: alpha-start (default), random (uses --seed) or i,j,k")
    s.add_argument("--time-limit", type=float, default=None, help="seconds")
    s.add_argument("--jobs", type=int, default=None, help="parallel candidate re-fits (methods with n_jobs)")
    dests = _method_option_flags(s)
    c = sub.add_parser("certify", help="certified optimum by branch-and-bound or enumeration of all C(n,B) subsets")
    _instance_flags(c)
    c.add_argument("--jobs", type=int, default=1, help="worker processes")
    c.add_argument("--time-limit", type=float, default=None, help="seconds")
    c.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    c.add_argument("--method", default="auto", choices=CERTIFY_METHODS,
                   help="auto (default): bnb for polynomial kernels, enumeration for rbf; or enumerate, bnb")
    c.add_argument("--certificate", default=None, help="bnb: write the proof to this JSON file (minlp-fs verify FILE)")
    add_verify_parser(sub)
    sv = sub.add_parser("solvers", help="list the solver adapters with availability and the reason")
    sv.add_argument("--json", action="store_true")
    e = sub.add_parser("export", help="write the MINLP as .nl (with .row/.col) or .gms")
    _instance_flags(e)
    e.add_argument("--format", required=True, choices=("nl", "gms"))
    e.add_argument("--out", required=True, help="output file")
    e.add_argument("--start", default=None, help="starting point: alpha-start (default), random or i,j,k")
    sub.add_parser("datasets", help="list the paper's datasets")
    add_bench_parser(sub)
    return p, dests


def _start(text):
    if text is None or text in ("alpha-start", "random"):
        return text
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise MinlpFsError(f"--start must be alpha-start, random or comma-separated indices; got {text!r}") from None


def _instance(args):
    return build_instance(dataset=args.dataset, data_dir=args.data_dir, kernel=args.kernel, B=args.B,
                          C=args.C, gamma=args.gamma, coef0=args.coef0, degree=args.degree,
                          sense=args.sense, scaling=args.scaling, m=args.m, seed=args.seed)


def _print_table(result, instance) -> None:
    d = instance.describe()
    k = ", ".join(f"{a}={b}" for a, b in d["kernel"].items() if a != "name")
    rows = [
        ("instance", f"{d['name']} (m={d['m']}, n={d['n']}), {d['kernel']['name']} ({k}), C={d['C']:g}, "
                     f"B={d['B']}, sense={d['sense']}"),
        ("method", result.method),
        ("status", result.status + ("  [certified optimal]" if result.certified else "")),
        ("objective", "-" if result.objective is None else f"{result.objective:.6f}"),
        ("features", ", ".join(f"{j}:{nm}" for j, nm in zip(result.features, result.feature_names)) or "-"),
        ("time", f"{result.wall_time_s:.2f} s, {result.n_svm_solves} SVM solves"),
    ]
    if result.objective is not None and not result.degenerate and instance.sense == "paper":
        above = (result.objective - d["trivial_bound"]) / abs(d["trivial_bound"])
        rows.append(("bound", f"trivial lower bound {d['trivial_bound']:g} = -2C*min(|I+|,|I-|); "
                              f"the objective is {100 * above:.3g}% above it"))
    if result.degenerate:
        rows.append(("DEGENERATE", f"attains the trivial bound {d['trivial_bound']:g} = -2C*min(|I+|,|I-|): "
                                   "a one-class SVM. Use --sense fit for informative features."))
    if result.message and not result.degenerate:
        rows.append(("note", result.message))
    width = max(len(r[0]) for r in rows)
    for key, val in rows:
        print(f"{key:<{width}}  {val}")


def _run_solve(args, dests) -> int:
    inst = _instance(args)
    options = {opt: getattr(args, dest) for dest, opt in dests.items() if getattr(args, dest) is not None}
    for opt, value in (("time_limit", args.time_limit), ("n_jobs", args.jobs)):
        if value is not None:
            options[opt] = value
    result = solve(inst, method=args.method, start=_start(args.start), seed=args.seed, **options)
    _emit(args, result, inst)
    return 0 if result.ok or result.status == "unavailable" else 1


def _run_certify(args) -> int:
    inst = _instance(args)
    method = certify_method(inst, args.method, args.certificate)
    extra = {"certificate": args.certificate} if method == "bnb" else {}
    result = solve(inst, method=method, n_jobs=args.jobs, time_limit=args.time_limit,
                   progress=not args.no_progress, **extra)
    _emit(args, result, inst)
    return 0


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
        print(f"{r['name']:<12} {state:<12} {r['scope']:<7} {r['reason']}")
    return 0


def _run_export(args) -> int:
    from .models.export import export

    inst = _instance(args)
    for path in export(inst, args.format, args.out, start=_start(args.start)):
        print(path)
    return 0


def _run_datasets(args) -> int:
    from .datasets import PAPER_DATASETS

    for name, (m, n) in PAPER_DATASETS.items():
        print(f"{name:<11} m={m:<5} n={n}" + ("   (built in)" if name == "bcd" else ""))
    return 0


def main(argv=None) -> int:
    parser, dests = _parser()
    args = parser.parse_args(argv)
    try:
        if args.verb == "bench":
            return run_bench(args)
        if args.verb == "solve":
            return _run_solve(args, dests)
        if args.verb == "certify":
            return _run_certify(args)
        if args.verb == "verify":
            return run_verify(args)
        if args.verb == "solvers":
            return _run_solvers(args)
        if args.verb == "export":
            return _run_export(args)
        return _run_datasets(args)
    except MinlpFsError as exc:
        print(f"minlp-fs: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("minlp-fs: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
