"""Certificates of branch-and-bound proofs: written by ``bnb``, replayed by ``minlp-fs verify``.

A certificate is JSON data: the instance (scaled X, labels, kernel, C, B, sense), the claimed optimum
(subset and value), the tree's direction (:mod:`.tree`) and its closed and expanded nodes:

* ``expanded``: (I, F, need), the order of F its children were split by, and the probe values the
  search used (``value``, or None for a probe stopped early once proven worse than the incumbent, with
  ``score_bound`` the score it was proven beyond);
* ``split``: (I, F, need) and an order: a node split without probes (Gaussian kernel);
* ``leaf``: a node holding one subset, and that subset's value (None if stopped early);
* ``marginal``: (I, F, need), the alpha and the fixed-alpha marginal bound (fit sense, polynomial kernels).

:func:`verify` trusts none of the numbers. It rebuilds the instance, recomputes the claimed optimum and
every probe and leaf by an exact SVM solve with the libsvm backend, recomputes every marginal bound
from its alpha by the package's objective, and walks the tree from the root: each child must be closed
by a recomputed bound (:mod:`.bounds`) that is at least the claimed optimum's score minus
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
from ..objective import feasibility_violation
from . import tree
from .bounds import marginal_bound, monotone, probe_bound

FORMAT = "minlp-fs/bnb-certificate"
VERSION = 1
#: relative tolerance of the verifier (the package's values are accurate to about 1e-7 relative)
VERIFY_RTOL = 1e-6
#: KKT tolerance of the libsvm solves of the verifier
VERIFY_TOL = 1e-8


def _key(fixed, free, need) -> tuple:
    return tuple(int(j) for j in fixed), tuple(int(j) for j in free), int(need)


def _num(v):
    return None if v is None else float(v)


class Recorder:
    """Collects the nodes of a search for its certificate."""

    def __init__(self, instance, add: bool):
        self.instance, self.add = instance, add
        self.nodes: list[dict] = []

    def _node(self, kind, fixed, free, need, **rest) -> None:
        self.nodes.append({"kind": kind, "fixed": [int(j) for j in fixed], "free": [int(j) for j in free],
                           "need": int(need), **rest})

    def expansion(self, fixed, free, need, order, values, scores) -> None:
        probes = [[int(j), _num(values[j]), float(scores[j])] for j in order]
        self._node("expanded", fixed, free, need, order=[int(j) for j in order], probes=probes)

    def split(self, fixed, free, need, order) -> None:
        self._node("split", fixed, free, need, order=[int(j) for j in order])

    def leaf(self, subset, value, score) -> None:
        self.nodes.append({"kind": "leaf", "subset": [int(j) for j in subset], "value": _num(value),
                           "score_bound": float(score)})

    def marginal(self, fixed, free, need, alpha, value) -> None:
        self._node("marginal", fixed, free, need, alpha=[float(a) for a in alpha], value=float(value))

    def document(self, incumbent, complete: bool, bound) -> dict:
        inst = self.instance
        return {"format": FORMAT, "version": VERSION,
                "instance": {"name": inst.name, "X": inst.X.tolist(), "y": inst.y.tolist(),
                             "kernel": inst.kernel.params(), "C": inst.C, "B": inst.B, "sense": inst.sense},
                "claim": {"subset": sorted(int(j) for j in incumbent.subset) if incumbent.subset else None,
                          "value": incumbent.value, "complete": complete, "bound": bound},
                "direction": "add" if self.add else "remove", "nodes": self.nodes}

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
    add = doc["direction"] == "add"
    if add != (inst.sense == "paper"):
        return Verdict(False, f"direction {doc['direction']!r} does not match sense {inst.sense!r}")
    oracle = AlphaSubproblem(inst, backend="libsvm", tol=VERIFY_TOL)
    claim = doc["claim"]
    if claim["subset"] is None or claim["value"] is None:
        return Verdict(False, "the certificate claims no incumbent")
    subset = inst.check_subset(claim["subset"])
    value = oracle.solve(subset).value
    tol = rtol * max(1.0, abs(value))
    err = abs(value - float(claim["value"]))
    if err > tol:
        return Verdict(False, f"the claimed optimum {claim['value']} of subset {list(subset)} recomputes to {value}",
                       value=value, n_qps=oracle.n_solves)
    target = inst.score(value) - tol
    index = {}
    for rec in doc["nodes"]:
        key = tuple(rec["subset"]) if rec["kind"] == "leaf" else _key(rec["fixed"], rec["free"], rec["need"])
        index[(rec["kind"], key)] = rec
    probes_valid = monotone(inst.kernel)
    max_err, closed = err, 0
    fixed, free, need = tree.root(inst.n, inst.B, add)
    stack = [(fixed, free, need, inst.trivial_bound if add else -np.inf)]
    while stack:
        fixed, free, need, bound = stack.pop()
        key = _key(fixed, free, need)
        if bound >= target:
            closed += 1
            continue
        if tree.is_leaf(free, need):
            leaf = tree.leaf_subset(fixed, free, need, add)
            if ("leaf", leaf) not in index:
                return Verdict(False, f"subset {list(leaf)} is neither solved nor bounded by the certificate",
                               value=value, n_qps=oracle.n_solves)
            score = inst.score(oracle.solve(leaf).value)
            if score < target:
                return Verdict(False, f"subset {list(leaf)} is better than the claimed optimum",
                               value=value, n_qps=oracle.n_solves)
            closed += 1
            continue
        rec = index.get(("marginal", key))
        if rec is not None:
            alpha = np.asarray(rec["alpha"], dtype=float)
            if not (probes_valid and not add) or alpha.shape != (inst.m,) \
                    or feasibility_violation(alpha, inst.y, inst.C) > 1e-9 * inst.C * inst.m:
                return Verdict(False, f"node {key}: invalid marginal bound (kernel, sense or alpha)",
                               value=value, n_qps=oracle.n_solves)
            if inst.score(marginal_bound(inst, alpha, fixed, free, inst.B)) < target:
                return Verdict(False, f"node {key}: its marginal bound does not reach the claimed optimum",
                               value=value, n_qps=oracle.n_solves)
            closed += 1
            continue
        rec = index.get(("expanded", key))
        if rec is not None and probes_valid:
            order = [int(j) for j in rec["order"]]
            claimed = {int(p[0]): p[1] for p in rec["probes"]}
            scores = {}
            for j in order:
                g = oracle.solve(tree.probe_set(fixed, free, j, add)).value
                scores[j] = inst.score(g)
                if claimed.get(j) is not None:
                    max_err = max(max_err, abs(g - claimed[j]) / max(1.0, abs(g)))
            for t, f_t, F_t in tree.split(fixed, free, need, order, add):
                child = probe_bound(scores, order, t, need, bound)
                if child < target and need == 1:
                    return Verdict(False, f"probe {list(tree.probe_set(fixed, free, order[t], add))} is better "
                                   "than the claimed optimum", value=value, n_qps=oracle.n_solves)
                stack.append((f_t, F_t, need - 1, child))
            continue
        rec = index.get(("split", key))
        if rec is not None:
            for _, f_t, F_t in tree.split(fixed, free, need, [int(j) for j in rec["order"]], add):
                stack.append((f_t, F_t, need - 1, bound))
            continue
        return Verdict(False, f"node (I={list(fixed)}, F={list(free)}, need={need}) is open: "
                       "the certificate neither bounds nor expands it", value=value, n_qps=oracle.n_solves)
    return Verdict(True, f"proven: no subset beats {value:.10g} by more than {tol:.3g}", value=value,
                   n_qps=oracle.n_solves, n_closed=closed, max_value_error=max_err)


def verify_file(path, rtol: float = VERIFY_RTOL) -> Verdict:
    return verify(load(path), rtol)
