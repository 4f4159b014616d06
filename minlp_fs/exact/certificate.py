"""Certificates of branch-and-bound proofs: written by ``bnb``, replayed by ``minlp-fs verify``.

A certificate is JSON data: the instance (scaled X, labels, kernel, C, B, sense), the claimed optimum
(subset and value) and the nodes of the tree (:mod:`.tree`) the search expanded or solved:

* ``probes`` (paper sense): (I, F, need), the order of F its children were split by, and the probes
  the search used as [j, g(I + j), score bound, alpha] (the value None for a probe stopped early once
  proven worse than the incumbent, solved loosely (an inner node's probe: its score bound is then a
  weak-duality bound) or not solved (a lazy probe: its score bound is an ancestor's probe of I' + j,
  I' in I, by monotonicity); alpha: the point its solve ended at, sparse);
* ``fit`` (fit sense): (I, F, need), ``value`` None (bnb bounds the universe I u F by f(alpha, I u F) at the
  alpha its capped QP reached, a bound the verifier recomputes; certificates written before that held g(I u F)
  there, which verify still compares with its own), the alpha its children's fixed-alpha bounds were computed at
  (sparse), and the order of the children with ``marginal`` whether those bounds (:func:`.bounds.fit_child_bounds`:
  pair, degree shares or chords) were used (order None: the node was closed by its universe's bound alone);
* ``split`` (Gaussian kernel, paper sense or no fixed-alpha bounds): (I, F, need) and the order of a split
  made without bounds;
* ``leaf``: a solved one-subset node, its value (None if stopped early) and its alpha;
* the claim's alpha (the incumbent's).

The alphas only make checks cheap: :func:`verify` trusts none of the numbers and recomputes every
bound itself, with the package's objective (:mod:`minlp_fs.objective`), from these two facts of
the SVM dual (3), g(S) = min over the polytope Delta of f(alpha, S):

* **upper bound**: g(S) <= f(alpha, S) for ANY feasible alpha (clipped into [0, C]^m, then |y'alpha|
  checked to 1e-12 C m);
* **lower bound** (weak duality): for ANY vector a and bias b, the SVM primal point
  w = sum_i a_i y_i phi(x_i), b, xi_i = max(0, 1 - y_i (w'phi(x_i) + b)) is feasible, so
  g(S) = -min P >= -P(w, b, xi) = -(1/2 (a*y)'K_S(a*y) + C sum_i xi_i) (:func:`dual_lower_bound`,
  with the b minimising the hinge sum, a convex piecewise-linear function of b, exactly).

So a fit-sense bound (g at most something) needs one f(alpha, S) and a paper-sense bound (g at least
something) one primal value: one kernel product each, no QP. Only where such a cheap bound does not
close what it must (an alpha missing, or a gap wider than the tolerance) the verifier solves the dual
with the libsvm backend and bounds g by the same two facts at libsvm's alpha (and once more at
:data:`TIGHT_TOL` where libsvm's duality gap is still too wide); at a node of probes, only the probes
whose bounds an open child reads (:func:`_to_refine`), keeping the larger of the cheap and the exact bound. The claimed optimum's value
must be attained within the tolerance: f(alpha, S*) <= claim + tol (paper sense), or -P >= claim - tol
(fit sense), at the claim's stored alpha, else at libsvm's.

The verifier walks the tree from the root: each child must be closed by a recomputed bound
(:mod:`.bounds`) that is at least the claimed optimum's score minus ``rtol * max(1, |optimum|)``, or be
a node the certificate expands, splits or closes (a certificate of a search with a relative gap states the
absolute tolerance it pruned within, ``claim['tolerance']``, which the verifier adds to its own). The proof
holds when no open node remains; the verdict ``proven`` then means: no subset's g is better than the claimed
value by more than that tolerance (rtol = :data:`VERIFY_RTOL`), every bound being rigorous up to floating-point
rounding.
The per-record bounds are independent of each other, so ``jobs`` computes them in worker processes
(joblib) before the walk.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..alpha import AlphaSubproblem
from ..errors import InputError
from ..instance import make_instance
from ..kernels import make_kernel
from ..multiclass import binary_only
from ..objective import dual_objective, feasibility_violation, primal_point
from . import tree
from .bounds import fit_child_bounds, fixed_alpha, monotone, probe_bounds

FORMAT = "minlp-fs/bnb-certificate"
#: version 2 stores the alphas of probes and leaves; version 1 certificates verify by libsvm solves there
VERSION = 2
VERSIONS = (1, 2)
#: relative tolerance of the verifier (the package's values are accurate to about 1e-7 relative)
VERIFY_RTOL = 1e-6
#: KKT tolerance of the libsvm solves of the verifier (libsvm_solve's default; at 1e-8 libsvm took 30x longer
#: on Parkinsons paper-sense probes for the same values to 1e-14)
VERIFY_TOL = 1e-7
#: KKT tolerance of the verifier's second solve (the package's SMO) where libsvm's duality gap is wider than the
#: verdict's tolerance (German, m = 1000: 1.2e-6 relative)
TIGHT_TOL = 1e-10
#: largest |y'alpha| accepted for an upper bound f(alpha, S) (after clipping alpha into its box), times C m:
#: rounding level (an honest solve keeps y'alpha = 0 to about 1e-16 C per step)
FEASIBLE_RTOL = 1e-12


def _key(fixed, free, need) -> tuple:
    return tuple(int(j) for j in fixed), tuple(int(j) for j in free), int(need)


def _num(v):
    return None if v is None else float(v)


def _sparse(alpha) -> dict | None:
    if alpha is None:
        return None
    nz = np.flatnonzero(alpha)
    return {"m": int(alpha.size), "index": nz.tolist(), "value": alpha[nz].tolist()}


def _dense(d: dict | None, m: int) -> np.ndarray | None:
    if d is None:
        return None
    if int(d["m"]) != m:
        raise ValueError(f"an alpha of length {d['m']} for {m} points")
    alpha = np.zeros(m)
    alpha[np.asarray(d["index"], dtype=int)] = np.asarray(d["value"], dtype=float)
    if not np.isfinite(alpha).all():   # JSON allows NaN/Infinity: a NaN bound would pass every comparison
        raise ValueError("an alpha with a non-finite entry")
    return alpha


class Recorder:
    """Collects the nodes of a search for its certificate."""

    def __init__(self, instance):
        binary_only(instance, "bnb's certificate (minlp-fs verify replays it on the binary problem)")
        self.instance = instance
        self.nodes: list[dict] = []

    def _node(self, kind, fixed, free, need, **rest) -> None:
        self.nodes.append({"kind": kind, "fixed": [int(j) for j in fixed], "free": [int(j) for j in free],
                           "need": int(need), **rest})

    def probes(self, fixed, free, need, order, values, scores, alphas=None) -> None:
        probes = [[int(j), _num(values[j]), float(scores[j]), _sparse(alphas[j]) if alphas else None] for j in order]
        self._node("probes", fixed, free, need, order=[int(j) for j in order], probes=probes)

    def split(self, fixed, free, need, order) -> None:
        self._node("split", fixed, free, need, order=[int(j) for j in order])

    def fit(self, fixed, free, need, alpha, order, marginal: bool) -> None:
        self._node("fit", fixed, free, need, value=None, alpha=_sparse(alpha),
                   order=None if order is None else [int(j) for j in order], marginal=bool(marginal))

    def leaf(self, subset, value, alpha=None) -> None:
        self.nodes.append({"kind": "leaf", "subset": [int(j) for j in subset], "value": _num(value),
                           "alpha": _sparse(alpha)})

    def document(self, incumbent, complete: bool, bound, tolerance: float = 0.0) -> dict:
        inst = self.instance
        return {"format": FORMAT, "version": VERSION,
                "instance": {"name": inst.name, "X": inst.X.tolist(), "y": inst.y.tolist(),
                             "kernel": inst.kernel.params(), "C": inst.C, "B": inst.B, "sense": inst.sense},
                "claim": {"subset": sorted(int(j) for j in incumbent.subset) if incumbent.subset else None,
                          "value": incumbent.value, "alpha": _sparse(incumbent.alpha), "complete": complete,
                          "bound": bound, "tolerance": float(tolerance)},
                "nodes": self.nodes}

    def write(self, path, incumbent, complete: bool, bound, tolerance: float = 0.0) -> None:
        with open(path, "w") as fh:
            json.dump(self.document(incumbent, complete, bound, tolerance), fh)


@dataclass
class Verdict:
    """Outcome of :func:`verify`: ``proven`` and why (``reason``), with the work it took.

    ``n_qps``: libsvm solves (the claimed optimum and the fallbacks); ``n_cheap``: bounds computed
    without a QP; ``tolerance``: the absolute tolerance of the verdict, rtol * max(1, |value|) plus the
    certificate's stated tolerance (bnb's ``gap_tol``; 0 without one).
    """

    proven: bool
    reason: str
    value: float | None = None
    n_qps: int = 0
    n_cheap: int = 0
    n_closed: int = 0
    max_value_error: float = 0.0
    tolerance: float | None = None
    details: dict = field(default_factory=dict)


def _instance(doc: dict):
    d = doc["instance"]
    k = dict(d["kernel"])
    name = k.pop("name")
    if name == "rbf":
        kernel = make_kernel("rbf", gamma=k["gamma"])
    else:
        kernel = make_kernel("poly", gamma=k["gamma"], coef0=k["coef0"], degree=k["degree"])
    return make_instance(np.asarray(d["X"], dtype=float), np.asarray(d["y"], dtype=float), B=int(d["B"]),
                         kernel=kernel, C=float(d["C"]), sense=d["sense"], scaling="none", name=d.get("name", "data"))


def load(path) -> dict:
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read certificate {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path} is not a minlp-fs branch-and-bound certificate")
    if doc.get("version") not in VERSIONS:
        raise InputError(f"certificate version {doc.get('version')!r} is not supported (expected one of {VERSIONS})")
    return doc


# ---- the two facts every bound rests on ------------------------------------------------------
def dual_lower_bound(inst, subset, a: np.ndarray) -> float:
    """-P(w, b, xi) <= g(subset) for the primal point of ANY vector ``a`` (module docstring, weak duality):
    :func:`~minlp_fs.objective.primal_point` with the bias minimising the hinge sum (the strongest for
    this w), its decision values o = K_S (a*y) from the columns of a's support only. ``a`` is first clipped into
    the box [0, C]^m (an honest alpha is inside it): the bound holds for any vector in exact arithmetic, but in
    floating point a vector of huge entries along the null space of a low-rank K_S (a few features of a degree-2
    kernel) makes w'w pure rounding noise of either sign, large enough to "prove" any value; inside the box that
    noise is at most about m eps (C m)^2 max|K| (the worst case, every rounding error of one sign), the size the
    package's own bounds have."""
    a = np.clip(a, 0.0, inst.C)
    sv = np.flatnonzero(a)
    K_sv = inst.kernel.gram(inst.X, list(subset), Z=inst.X[sv])      # K_S[:, sv]
    o = K_sv @ (a[sv] * inst.y[sv])
    return -primal_point(a, inst.y, inst.C, o, bias="hinge").value


def _objective(inst, subset, alpha) -> float:
    """f(alpha, subset) by the package's objective on alpha's support (the other terms are 0)."""
    sv = np.flatnonzero(alpha)
    X = inst.X[sv]
    return dual_objective(alpha[sv], inst.kernel.gram(X, list(subset), Z=X), inst.y[sv])


def _feasible(inst, alpha) -> np.ndarray | None:
    """``alpha`` clipped into the box [0, C]^m (exact for an honest alpha, which is inside it; a dishonest
    one gains no slack from the box) when then |y'alpha| <= FEASIBLE_RTOL C m, else None: the point at
    which f(alpha, S) bounds g(S) from above."""
    if alpha is None or alpha.shape != (inst.m,):
        return None
    point = np.clip(alpha, 0.0, inst.C)
    return point if feasibility_violation(point, inst.y, inst.C) <= FEASIBLE_RTOL * inst.C * inst.m else None


def score_bound(inst, subset, alpha) -> float | None:
    """A lower bound of score(g(subset)) from ``alpha`` without a QP, or None when alpha gives none:
    paper sense, -P at alpha's primal point; fit sense, -f(alpha, subset) for a feasible alpha. A value
    that is not a number or +inf (a finite but huge alpha overflows) bounds nothing: None, so the
    probe is solved instead (-inf is a valid, useless bound)."""
    if alpha is None:
        return None
    if inst.sense == "paper":
        return _usable(dual_lower_bound(inst, subset, alpha))
    point = _feasible(inst, alpha)
    return None if point is None else _usable(-_objective(inst, subset, point))


def _usable(bound: float) -> float | None:
    """``bound`` if it can bound a score from below (a number below +inf), else None."""
    return None if np.isnan(bound) or bound == np.inf else float(bound)


class _Exact:
    """Solves of the verifier: the bracket [lower, upper] of g at libsvm's alpha (module docstring), at
    :data:`VERIFY_TOL`, or at the package's SMO's alpha at :data:`TIGHT_TOL` where libsvm's bracket is
    too wide for the tolerance. Both ends are rigorous for any alpha, so the solver need not be trusted:
    it only has to come close (libsvm's own stopping rule left a KKT violation of 4e-5 on German, m =
    1000 with 74 distinct rows on 3 features, even at tol 1e-10: a duality gap of 7e-3)."""

    def __init__(self, inst):
        self.inst = inst
        self.oracles = {False: AlphaSubproblem(inst, backend="libsvm", tol=VERIFY_TOL),
                        True: AlphaSubproblem(inst, backend="smo", tol=TIGHT_TOL)}

    def bracket(self, subset, tight: bool = False) -> tuple:
        K = self.inst.gram(subset)
        alpha, _ = self.oracles[tight].solve_gram(K, None)
        point = _feasible(self.inst, alpha)        # the upper end needs a feasible point: checked, not trusted
        return dual_lower_bound(self.inst, subset, alpha), np.inf if point is None else dual_objective(point, K, self.inst.y)

    def score_bound(self, subset, tight: bool = False) -> tuple:
        """(lower bound of score(g), g's value at libsvm's alpha)."""
        lower, upper = self.bracket(subset, tight)
        return (lower if self.inst.sense == "paper" else -upper), upper

    @property
    def n_solves(self) -> int:
        return sum(o.n_solves for o in self.oracles.values())


# ---- phase 1: the cheap bounds of every record (independent: in worker processes with jobs > 1) ------
def _record_bounds(inst, rec: dict):
    """The cheap numbers of one record: {j: score bound} of its probes, (universe score bound, its
    children's fixed-alpha score bounds) of a fit node, the score bound of a leaf; None where alpha gives
    nothing."""
    m = inst.m
    if rec["kind"] == "leaf":
        return score_bound(inst, tuple(rec["subset"]), _dense(rec.get("alpha"), m))
    fixed, free = tuple(rec["fixed"]), tuple(rec["free"])
    if rec["kind"] == "probes":
        return {int(p[0]): score_bound(inst, tree.probe_set(fixed, int(p[0])),
                                       _dense(p[3] if len(p) > 3 else None, m)) for p in rec["probes"]}
    if rec["kind"] == "fit":
        alpha = _feasible(inst, _dense(rec.get("alpha"), m))
        if alpha is None:
            return None
        universe = -np.inf                  # g(I u F) bounds the node for monotone kernels only
        if monotone(inst.kernel):
            universe = _usable(-_objective(inst, tree.universe(fixed, free), alpha))
            if universe is None:
                return None
        children = None
        if rec["order"] is not None and rec["marginal"]:
            children = fit_child_bounds(inst, alpha, fixed, free, int(rec["need"]), [int(j) for j in rec["order"]])
            if not all(np.isfinite(b) or b == -np.inf for b in children):
                children = None
        return universe, children
    return None


def _chunk_bounds(doc_instance: dict, records: list) -> list:
    inst = _instance({"instance": doc_instance})
    return [_record_bounds(inst, rec) for rec in records]


def _all_bounds(doc: dict, inst, jobs: int) -> list:
    nodes = doc["nodes"]
    if jobs == 1 or len(nodes) < 2:
        return [_record_bounds(inst, rec) for rec in nodes]
    from joblib import Parallel, delayed

    size = max(1, -(-len(nodes) // (4 * jobs)))
    chunks = [nodes[i:i + size] for i in range(0, len(nodes), size)]
    parts = Parallel(n_jobs=jobs)(delayed(_chunk_bounds)(doc["instance"], c) for c in chunks)
    return [b for part in parts for b in part]


def _to_refine(order, scores: dict, first: int, target: float) -> list:
    """The probes of a node split by ``order`` whose exact solve can close its open children, the first
    open one being child ``first``: child t's bound reads the scores of order[t:] alone
    (:func:`.bounds.probe_bounds`: max(its parent's bound, scores[order[t]], the need-th smallest over
    order[t:])), and is nondecreasing in each, so only the probes of order[first:] can raise an open
    child's bound, and of those only the ones still below ``target`` (one at or above it already counts as
    closed) or without a score. The others keep their cheap bounds: the children they bound are closed."""
    return [j for j in order[first:] if scores[j] is None or scores[j] < target]


def verify(doc: dict, rtol: float = VERIFY_RTOL, jobs: int = 1, max_gap: float = 0.0) -> Verdict:
    """Replay a certificate independently (module docstring); never raises on a wrong proof.
    ``jobs``: worker processes computing the records' cheap bounds. ``max_gap``: the largest relative gap
    a certificate may state (``claim['tolerance']`` <= max_gap * max(1, |value|), and consistent with its
    claimed bound); the default 0 accepts exact proofs only, so a proof within a gap is never taken for
    one of optimality unless asked for. A certificate that cannot be read as one (a missing field, a value of
    the wrong type, an invalid instance) is not proven, with ``details["malformed"]`` set."""
    try:
        return _verify(doc, rtol, jobs, max_gap)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, InputError) as exc:
        what = (str(exc) if isinstance(exc, InputError) else f"a field is missing: {exc}" if isinstance(exc, KeyError)
                else f"a value cannot be read: {exc}" if isinstance(exc, (ValueError, OverflowError))
                else f"a field has the wrong type or length ({exc})")
        return Verdict(False, f"malformed certificate: {what}", details={"malformed": True})


def _stated_tolerance(inst, claim: dict, claimed: float, max_gap: float):
    """(the tolerance the certificate states, or None, and why not): a finite number >= 0 that is the
    claim's own gap, score(value) - score(bound) (to rounding), and at most max_gap * max(1, |value|)."""
    stated = claim.get("tolerance", 0.0)
    if isinstance(stated, bool) or not isinstance(stated, (int, float)) or not 0.0 <= float(stated) < np.inf:
        return None, f"the certificate states a tolerance that is not a finite number >= 0: {stated!r}"
    stated = float(stated)
    if stated == 0.0:
        return 0.0, ""
    bound = claim.get("bound")
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not np.isfinite(float(bound)) \
            or abs(inst.score(claimed) - inst.score(float(bound)) - stated) > 1e-9 * max(1.0, abs(claimed)):
        return None, (f"the certificate's stated tolerance {stated:g} is not the gap between its value {claimed} "
                      f"and its bound {bound!r}")
    if stated > max_gap * max(1.0, abs(claimed)):
        return None, (f"the certificate proves its value only within {stated:.6g} (a relative gap of "
                      f"{stated / max(1.0, abs(claimed)):.3g}, bnb's gap_tol); accept it with --max-gap (verify's "
                      f"max_gap) of at least that")
    return stated, ""


def _verify(doc: dict, rtol: float, jobs: int, max_gap: float) -> Verdict:
    inst = _instance(doc)
    exact = _Exact(inst)
    claim = doc["claim"]
    if claim["subset"] is None or claim["value"] is None:
        return Verdict(False, "the certificate claims no incumbent")
    subset = inst.check_subset(claim["subset"])
    claimed = float(claim["value"])
    stated, why = _stated_tolerance(inst, claim, claimed, max_gap)   # bnb's gap_tol: what its search pruned within
    if stated is None:
        return Verdict(False, why)
    own = rtol * max(1.0, abs(claimed))
    tol = own + stated
    paper = inst.sense == "paper"

    def attained(bracket) -> bool:  # g(S*) at least as good as the claim, within the verifier's own tolerance
        lower, upper = bracket
        return upper <= claimed + own if paper else lower >= claimed - own

    alpha = _dense(claim.get("alpha"), inst.m)
    bracket = (-np.inf, np.inf)
    if alpha is not None:  # the claim's own alpha: no QP when it is close enough
        point = _feasible(inst, alpha)
        bracket = (dual_lower_bound(inst, subset, alpha), np.inf if point is None else _objective(inst, subset, point))
    for tight in (False, True):
        if not attained(bracket):
            bracket = exact.bracket(subset, tight)
    value = bracket[1] if np.isfinite(bracket[1]) else bracket[0]
    n_cheap = 0

    def fail(reason):
        return Verdict(False, reason, value=value, n_qps=exact.n_solves, n_cheap=n_cheap, tolerance=tol)

    if not attained(bracket):
        return fail(f"the claimed optimum {claim['value']} of subset {list(subset)} recomputes to g in "
                    f"[{bracket[0]}, {bracket[1]}]")
    target = inst.score(claimed) - tol
    index, cheap = {}, {}
    for rec, b in zip(doc["nodes"], _all_bounds(doc, inst, jobs)):
        key = tuple(rec["subset"]) if rec["kind"] == "leaf" else _key(rec["fixed"], rec["free"], rec["need"])
        index[(rec["kind"], key)] = rec
        cheap[(rec["kind"], key)] = b
    bounds_hold = monotone(inst.kernel)
    fit_bounds_hold = fixed_alpha(inst.kernel)
    max_err, closed = abs(value - claimed) / max(1.0, abs(value)), 0
    fixed, free, need = tree.root(inst.n, inst.B)
    stack = [(fixed, free, need, inst.trivial_bound if paper else -np.inf)]

    def leaf_closed(leaf) -> bool:
        nonlocal n_cheap
        b = cheap.get(("leaf", leaf))
        if b is not None and b >= target:
            n_cheap += 1
            return True
        return exact.score_bound(leaf)[0] >= target or exact.score_bound(leaf, tight=True)[0] >= target

    #: node key -> {j: a verified lower bound of the score of probe I + j}: its parent's probe I_parent + j
    #: (g is monotone, I_parent in I), what lets a lazy probe (one the search skipped: no alpha) close
    inherited: dict = {}

    def probe_children(fixed, free, need, bound, order, scores):
        bounds = probe_bounds(scores, order, need, bound)
        children = [(f_t, F_t, need - 1, bounds[t]) for t, f_t, F_t in tree.split(fixed, free, need, order)]
        for f_t, F_t, r, _ in children:
            inherited[_key(f_t, F_t, r)] = {k: scores[k] for k in F_t}
        return children

    def is_open(child) -> bool:
        f, F, r, b = child
        if b >= target:
            return False
        if tree.is_leaf(F, r):
            return True  # its bound must come from its own solve: cheaper to refine the parent's probes first
        k = _key(f, F, r)
        return not any((kind, k) in index for kind in ("probes", "fit", "split"))

    while stack:
        fixed, free, need, bound = stack.pop()
        key = _key(fixed, free, need)
        node = f"node (I={list(fixed)}, F={list(free)}, need={need})"
        if bound >= target:
            closed += 1
            continue
        if tree.is_leaf(free, need):
            leaf = tree.leaf_subset(fixed, free, need)
            if ("leaf", leaf) not in index:
                return fail(f"subset {list(leaf)} is neither solved nor bounded by the certificate")
            if not leaf_closed(leaf):
                return fail(f"subset {list(leaf)} is better than the claimed optimum")
            closed += 1
            continue
        probes, fit, split = (index.get((kind, key)) for kind in ("probes", "fit", "split"))
        if probes is not None and bounds_hold and paper:
            order = [int(j) for j in probes["order"]]
            if sorted(order) != sorted(free):
                return fail(f"{node}: its order is not a permutation of its free set")
            own, parent = cheap[("probes", key)], inherited.get(key, {})
            scores = {j: max((b for b in (own.get(j), parent.get(j)) if b is not None), default=None) for j in order}
            n_cheap += sum(s is not None for s in scores.values())
            children = None
            if all(s is not None for s in scores.values()):
                children = probe_children(fixed, free, need, bound, order, scores)
            claimed_values = {int(p[0]): p[1] for p in probes["probes"]}
            for tight in (False, True):  # refine by libsvm, then by a tighter solve: what an open child reads
                first = 0 if children is None else next((t for t, c in enumerate(children) if is_open(c)), None)
                if first is None:
                    break
                for j in _to_refine(order, scores, first, target):
                    lower, g_j = exact.score_bound(tree.probe_set(fixed, j), tight)
                    scores[j] = lower if scores[j] is None else max(scores[j], lower)   # both rigorous
                    if claimed_values.get(j) is not None:
                        max_err = max(max_err, abs(g_j - claimed_values[j]) / max(1.0, abs(g_j)))
                children = probe_children(fixed, free, need, bound, order, scores)
            for child in children:
                if child[3] < target and need == 1:
                    return fail(f"probe {list(child[0])} is better than the claimed optimum")
            stack.extend(children)
        elif fit is not None and fit_bounds_hold and not paper:
            numbers = cheap[("fit", key)]
            universe = tree.universe(fixed, free)
            g_bound = None if bounds_hold else -np.inf    # Gaussian: g(I u F) bounds nothing, the chords only
            if numbers is not None:
                n_cheap += 1
                g_bound = numbers[0]
            for tight in (False, True):
                if not bounds_hold or g_bound is not None and (max(bound, g_bound) >= target or fit["order"] is not None):
                    break
                g_bound, g = exact.score_bound(universe, tight)
                if fit["value"] is not None:
                    max_err = max(max_err, abs(g - fit["value"]) / max(1.0, abs(g)))
            bound = max(bound, g_bound)
            if bound >= target:
                closed += 1
                continue
            if fit["order"] is None:
                return fail(f"{node}: its universe's value does not reach the claimed optimum" if bounds_hold else
                            f"{node}: no bound of its children (a Gaussian kernel's node is bounded by its chords only)")
            order = [int(j) for j in fit["order"]]
            children = [bound] * (len(order) - need + 1)
            if fit["marginal"]:
                if numbers is None or numbers[1] is None:
                    return fail(f"{node}: its alpha gives no fixed-alpha bound (not a feasible point of the SVM dual, or the bounds are not finite)")
                children = [max(bound, b) for b in numbers[1]]
            for (t, f_t, F_t), child in zip(tree.split(fixed, free, need, order), children):
                stack.append((f_t, F_t, need - 1, child))
        elif split is not None:
            for _, f_t, F_t in tree.split(fixed, free, need, [int(j) for j in split["order"]]):
                stack.append((f_t, F_t, need - 1, bound))
        else:
            return fail(f"{node} is open: the certificate neither bounds nor expands it")
    how = f"rtol {rtol:g} x max(1, |value|)" + (f" + the certificate's stated {stated:.3g} (bnb's gap_tol)" if stated else "")
    return Verdict(True, f"proven: no subset beats {claimed:.10g} by more than {tol:.3g} ({how})", value=value,
                   n_qps=exact.n_solves, n_cheap=n_cheap, n_closed=closed, max_value_error=max_err, tolerance=tol)


def verify_file(path, rtol: float = VERIFY_RTOL, jobs: int = 1) -> Verdict:
    return verify(load(path), rtol, jobs)
