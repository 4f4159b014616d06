"""Command-line parts of exact certification: ``certify --method`` and ``verify`` (used by minlp_fs.cli)."""
from __future__ import annotations

import json
import math

from ..errors import InputError
from ..output import output_file, write_error
from .bounds import bnb_bounds, monotone
from .certificate import load, verify
from .graph import write_graphml

CERTIFY_METHODS = ("auto", "enumerate", "bnb")

#: ``auto`` enumerates up to this many subsets: measured, bnb is at best even below it (CPU ratio
#: enumeration / bnb 0.3-2.7x at C(n, B) <= 126) and faster above (1.2-35x from C(n, B) = 1,716 up, against
#: the fourteenth session's enumeration; benchmarks/RESULTS.md, bench_bnb (a))
AUTO_ENUMERATE_UP_TO = 1000
#: the same for the Gaussian kernel's fit sense (its chord bounds cost O(m^2) per child and prune less where
#: the rows are many): CPU ratio enumeration / bnb 0.25-1.0x up to C(n, B) = 1,716 (Cleveland B = 3-6, BCW,
#: Diabetes), 0.37x on German B = 3 (2,024) and about 0.4x on German B = 4 (10,626: bnb 64 s), 3.3x and 8.4x on
#: Parkinsons B = 3 and 4 (1,540 and 7,315), 6x on Sonar B = 4 (487,635: bnb 29 s)
AUTO_ENUMERATE_UP_TO_GAUSSIAN = 20_000
#: ``auto``'s bnb hedges (:mod:`.fallback`): it enumerates once it has run this share of enumeration's estimated
#: time. Measured (benchmarks/RESULTS.md, bench_fallback, twenty-eighth session): 0.57-1.92x the faster of bnb and
#: enumeration on the five instances of both kinds where the hedged run finished within its 300 s limit (bnb alone
#: took up to 1.5x enumeration's time there); on the sixth, German rbf fit B = 5, enumeration alone took 532 s, and
#: the hedged run and bnb alone stopped at the limit
AUTO_FALLBACK_SHARE = 0.5


def certify_method(instance, method: str, certificate) -> str:
    """The exact method to run (the certified grid plans its units with it): ``auto`` is bnb where its bounds hold
    (:func:`.bounds.bnb_bounds`) on more than :data:`AUTO_ENUMERATE_UP_TO` subsets (Gaussian:
    :data:`AUTO_ENUMERATE_UP_TO_GAUSSIAN`), or when a certificate is wanted; else enumeration (the Gaussian
    kernel's paper sense: bnb has no bound to prune with but the trivial one, and enumeration's revolving
    door makes each leaf cheaper). :func:`certify_choice` adds the options ``certify`` runs it with."""
    if method not in CERTIFY_METHODS:
        raise InputError(f"unknown certify method {method!r}; choose one of {', '.join(CERTIFY_METHODS)}")
    if method == "enumerate" and certificate:
        raise InputError("--certificate needs --method bnb (or auto): enumeration writes no certificate")
    if method == "auto":
        up_to = AUTO_ENUMERATE_UP_TO if monotone(instance.kernel) else AUTO_ENUMERATE_UP_TO_GAUSSIAN
        large = math.comb(instance.n, instance.B) > up_to
        return "bnb" if certificate or (bnb_bounds(instance.kernel, instance.sense) and large) else "enumerate"
    return method


def certify_choice(instance, method: str, certificate) -> tuple:
    """(:func:`certify_method`'s method, its options): ``auto``'s bnb falls back to enumeration where that is
    measured faster (``fallback_share``, :mod:`.fallback`), unless a certificate is wanted (enumeration writes
    none)."""
    name = certify_method(instance, method, certificate)
    hedged = method == "auto" and name == "bnb" and not certificate
    return name, ({"fallback_share": AUTO_FALLBACK_SHARE} if hedged else {})



def add_verify_parser(sub) -> None:
    v = sub.add_parser("verify", help="replay a bnb certificate (every bound recomputed: weak duality, feasible alphas, libsvm where those do not close); exit 0 if it proves its optimum, 1 if not, 2 if the file is not a readable certificate")
    v.add_argument("file", help="certificate written by certify --certificate")
    v.add_argument("--json", action="store_true", help="print one JSON object instead of a line")
    v.add_argument("--graphml", default=None, help="also write the certificate's tree as GraphML (needs networkx)")
    v.add_argument("--max-gap", type=float, default=0.0,
                   help="accept a certificate of certify --gap-tol that proves its value within this relative gap "
                        "(default 0: exact proofs only)")
    v.add_argument("--jobs", type=int, default=1,
                   help="worker processes recomputing the recorded bounds (-1 = one per CPU, capped at the CPUs)")


def run_verify(args) -> int:
    from ..workers import cap_jobs

    jobs = cap_jobs(args.jobs, "verify --jobs")
    if args.graphml:
        output_file(args.graphml, "--graphml")
    doc = load(args.file)
    if not 0.0 <= args.max_gap < 1.0:
        raise InputError(f"verify --max-gap must be a number in [0, 1); got {args.max_gap}")
    verdict = verify(doc, jobs=jobs, max_gap=args.max_gap)
    if verdict.details.get("malformed"):   # not a proof that fails: a file that is not a readable certificate
        raise InputError(f"{args.file}: {verdict.reason}")
    if args.json:
        print(json.dumps({"proven": verdict.proven, "reason": verdict.reason, "value": verdict.value,
                          "tolerance": verdict.tolerance, "n_qps": verdict.n_qps, "n_cheap": verdict.n_cheap,
                          "n_closed": verdict.n_closed, "max_value_error": verdict.max_value_error}), flush=True)
    else:
        print(("PROVEN: " if verdict.proven else "NOT PROVEN: ") + verdict.reason
              + f" ({verdict.n_cheap} bounds without a QP, {verdict.n_qps} libsvm solves)", flush=True)
    if args.graphml:   # after the verdict, which a failed write must not hide
        try:
            write_graphml(doc, args.graphml)
        except OSError as exc:
            raise write_error(exc, args.graphml) from None
    return 0 if verdict.proven else 1
