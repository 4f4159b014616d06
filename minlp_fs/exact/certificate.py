"""Certificates of branch-and-bound proofs: written by ``bnb``, replayed by ``minlp-fs verify``.

A certificate is JSON data: the instance (scaled X, labels, kernel, C, B, sense), the claimed optimum
(subset and value) and the nodes of the tree (:mod:`.tree`) the search expanded or solved:

* ``probes`` (paper sense): (I, F, need), the order of F its children were split by, and the probes
  the search used as [j, g(I + j), score bound] (the value None for a probe stopped early once
  proven worse than the incumbent; its score bound is then the incumbent's score);
* ``fit`` (fit sense): (I, F, need), g(I u F) (None if its solve stopped early), the alpha its
  children's fixed-alpha bounds were computed at (sparse), and the order of the children with
  ``marginal`` whether those bounds (:func:`.bounds.fit_child_bounds`) were used (order None: the
  node was closed by g(I u F) alone);
* ``split`` (Gaussian kernel): (I, F, need) and the order of a split made without bounds;
* ``leaf``: a solved one-subset node and its value (None if stopped early).

:func:`verify` trusts none of the numbers. It rebuilds the instance, recomputes the claimed optimum and
every probe, universe and leaf by an exact SVM solve with the libsvm backend, recomputes every
fixed-alpha bound from its alpha by the package's objective (after checking that alpha is feasible),
and walks the tree from the root: each child must be closed by a recomputed bound (:mod:`.bounds`)
that is at least the claimed optimum's score minus
``rtol * max(1, |optimum|)``, or be a node the certificate expands, splits or closes. The proof holds
when no open node remains: then no subset beats the claimed value by more than that tolerance.
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
from ..objective import feasibility_violation
from . import tree
from .bounds import fit_child_bounds, monotone, probe_bound

FORMAT = "minlp-fs/bnb-certificate"
VERSION = 1
#: relative tolerance of the verifier (the package's values are accurate to about 1e-7 relative)
VERIFY_RTOL = 1e-6
#: KKT tolerance of the libsvm solves of the verifier (libsvm_solve's default; at 1e-8 libsvm took 30x longer
#: on Parkinsons paper-sense probes for the same values to 1e-14)
VERIFY_TOL = 1e-7


def _key(fixed, free, need) -> tuple:
    return tuple(int(j) for j in fixed), tuple(int(j) for j in free), int(need)


def _num(v):
    return None if v is None else float(v)


def _sparse(alpha) -> dict:
    nz = np.flatnonzero(alpha)
    return {"m": int(alpha.size), "index": nz.tolist(), "value": alpha[nz].tolist()}


def _dense(d: dict) -> np.ndarray:
    alpha = np.zeros(int(d["m"]))
    alpha[np.asarray(d["index"], dtype=int)] = np.asarray(d["value"], dtype=float)
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

    def probes(self, fixed, free, need, order, values, scores) -> None:
        probes = [[int(j), _num(values[j]), float(scores[j])] for j in order]
        self._node("probes", fixed, free, need, order=[int(j) for j in order], probes=probes)

    def split(self, fixed, free, need, order) -> None:
        self._node("split", fixed, free, need, order=[int(j) for j in order])

    def fit(self, fixed, free, need, value, alpha, order, marginal: bool) -> None:
        self._node("fit", fixed, free, need, value=_num(value), alpha=_sparse(alpha),
                   order=None if order is None else [int(j) for j in order], marginal=bool(marginal))

    def leaf(self, subset, value) -> None:
        self.nodes.append({"kind": "leaf", "subset": [int(j) for j in subset], "value": _num(value)})

    def document(self, incumbent, complete: bool, bound) -> dict:
        inst = self.instance
        return {"format": FORMAT, "version": VERSION,
                "instance": {"name": inst.name, "X": inst.X.tolist(), "y": inst.y.tolist(),
                             "kernel": inst.kernel.params(), "C": inst.C, "B": inst.B, "sense": inst.sense},
                "claim": {"subset": sorted(int(j) for j in incumbent.subset) if incumbent.subset else None,
                          "value": incumbent.value, "complete": complete, "bound": bound},
                "nodes": self.nodes}

    def write(self, path, incumbent, complete: bool, bound) -> None:
        with open(path, "w") as fh:
            json.dump(self.document(incumbent, complete, bound), fh)


@dataclass
class Verdict:
    """Outcome of :func:`verify`: ``proven`` and why (``reason``), with the work it took."""

    proven: bool
    reason: str
    value: float | None = None
    n_qps: int = 0
    n_closed: int = 0
    max_value_error: float = 0.0
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
    if doc.get("version") != VERSION:
        raise InputError(f"certificate version {doc.get('version')!r} is not supported (expected {VERSION})")
    return doc


def verify(doc: dict, rtol: float = VERIFY_RTOL) -> Verdict:
    """Replay a certificate independently (module docstring); never raises on a wrong proof."""
    try:
        return _verify(doc, rtol)
    except (KeyError, TypeError, ValueError, IndexError, InputError) as exc:
        return Verdict(False, f"malformed certificate: {type(exc).__name__}: {exc}")


def _verify(doc: dict, rtol: float) -> Verdict:
    inst = _instance(doc)
    oracle = AlphaSubproblem(inst, backend="libsvm", tol=VERIFY_TOL)
    claim = doc["claim"]
    if claim["subset"] is None or claim["value"] is None:
        return Verdict(False, "the certificate claims no incumbent")
    subset = inst.check_subset(claim["subset"])
    value = oracle.solve(subset).value
    tol = rtol * max(1.0, abs(value))

    def fail(reason):
        return Verdict(False, reason, value=value, n_qps=oracle.n_solves)

    err = abs(value - float(claim["value"]))
    if err > tol:
        return fail(f"the claimed optimum {claim['value']} of subset {list(subset)} recomputes to {value}")
    target = inst.score(value) - tol
    index = {}
    for rec in doc["nodes"]:
        key = tuple(rec["subset"]) if rec["kind"] == "leaf" else _key(rec["fixed"], rec["free"], rec["need"])
        index[(rec["kind"], key)] = rec
    bounds_hold = monotone(inst.kernel)
    paper = inst.sense == "paper"
    max_err, closed = err / max(1.0, abs(value)), 0
    fixed, free, need = tree.root(inst.n, inst.B)
    stack = [(fixed, free, need, inst.trivial_bound if paper else -np.inf)]
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
            if inst.score(oracle.solve(leaf).value) < target:
                return fail(f"subset {list(leaf)} is better than the claimed optimum")
            closed += 1
            continue
        probes, fit, split = (index.get((kind, key)) for kind in ("probes", "fit", "split"))
        if probes is not None and bounds_hold and paper:
            order = [int(j) for j in probes["order"]]
            claimed = {int(p[0]): p[1] for p in probes["probes"]}
            scores = {}
            for j in order:
                g = oracle.solve(tree.probe_set(fixed, j)).value
                scores[j] = inst.score(g)
                if claimed.get(j) is not None:
                    max_err = max(max_err, abs(g - claimed[j]) / max(1.0, abs(g)))
            for t, f_t, F_t in tree.split(fixed, free, need, order):
                child = probe_bound(scores, order, t, need, bound)
                if child < target and need == 1:
                    return fail(f"probe {list(tree.probe_set(fixed, order[t]))} is better than the claimed optimum")
                stack.append((f_t, F_t, need - 1, child))
        elif fit is not None and bounds_hold and not paper:
            g = oracle.solve(tree.universe(fixed, free)).value
            bound = max(bound, inst.score(g))
            if bound >= target:
                closed += 1
                continue
            if fit["order"] is None:
                return fail(f"{node}: its universe's value {g} does not reach the claimed optimum")
            order = [int(j) for j in fit["order"]]
            children = [bound] * (len(order) - need + 1)
            if fit["marginal"]:
                alpha = _dense(fit["alpha"])
                if alpha.shape != (inst.m,) or feasibility_violation(alpha, inst.y, inst.C) > 1e-9 * inst.C * inst.m:
                    return fail(f"{node}: its alpha is not a feasible point of the SVM dual")
                children = [max(bound, b) for b in fit_child_bounds(inst, alpha, fixed, free, need, order)]
            for (t, f_t, F_t), child in zip(tree.split(fixed, free, need, order), children):
                stack.append((f_t, F_t, need - 1, child))
        elif split is not None:
            for _, f_t, F_t in tree.split(fixed, free, need, [int(j) for j in split["order"]]):
                stack.append((f_t, F_t, need - 1, bound))
        else:
            return fail(f"{node} is open: the certificate neither bounds nor expands it")
    return Verdict(True, f"proven: no subset beats {value:.10g} by more than {tol:.3g}", value=value,
                   n_qps=oracle.n_solves, n_closed=closed, max_value_error=max_err)


def verify_file(path, rtol: float = VERIFY_RTOL) -> Verdict:
    return verify(load(path), rtol)
