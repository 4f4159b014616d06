"""The tree of a certificate as a ``networkx.DiGraph``, for inspection (GraphML via :func:`write_graphml`).

One graph node per tree node (I, F, need) the certificate mentions: the nodes it expands (``probes``,
``fit``, ``split``), their children (``kind`` = "closed" when the certificate has no record of
their own: pruned by the bound their parent gave them) and the solved leaves (``leaf``); an edge
from each expanded node to each child, with its position ``t`` in the split order. Attributes are
GraphML scalars: sets as space-separated indices, values as floats (NaN when unknown).
Needs networkx (``pip install minlp-fs[graph]``).
"""
from __future__ import annotations

import math

from ..errors import InputError
from . import tree


def _name(fixed, free, need) -> str:
    return f"I={' '.join(map(str, fixed))}|F={' '.join(map(str, free))}|need={need}"


def certificate_graph(doc: dict):
    """A ``networkx.DiGraph`` of the certificate's tree (module docstring)."""
    try:
        import networkx as nx
    except ImportError:
        raise InputError("the tree as a graph needs networkx: pip install minlp-fs[graph]") from None
    g = nx.DiGraph(sense=doc["instance"]["sense"], B=int(doc["instance"]["B"]),
                   claimed_value=float(doc["claim"]["value"]) if doc["claim"]["value"] is not None else math.nan)
    for rec in doc["nodes"]:
        if rec["kind"] == "leaf":
            subset = tuple(rec["subset"])
            g.add_node(_name(subset, (), 0), kind="leaf", fixed=" ".join(map(str, subset)), free="", need=0,
                       value=math.nan if rec["value"] is None else float(rec["value"]))
            continue
        fixed, free, need = tuple(rec["fixed"]), tuple(rec["free"]), int(rec["need"])
        name = _name(fixed, free, need)
        value = rec.get("value")
        g.add_node(name, kind=rec["kind"], fixed=" ".join(map(str, fixed)), free=" ".join(map(str, free)),
                   need=need, value=math.nan if value is None else float(value))
        if rec.get("order") is None:
            continue
        for t, f_t, F_t in tree.split(fixed, free, need, rec["order"]):
            child = _name(f_t, F_t, need - 1)
            if tree.is_leaf(F_t, need - 1):  # a one-subset child: name it by its subset, as leaf records are
                leaf = tree.leaf_subset(f_t, F_t, need - 1)
                child = _name(leaf, (), 0)
                attrs = {"fixed": " ".join(map(str, leaf)), "free": "", "need": 0}
            else:
                attrs = {"fixed": " ".join(map(str, f_t)), "free": " ".join(map(str, F_t)), "need": need - 1}
            if child not in g:
                g.add_node(child, kind="closed", value=math.nan, **attrs)
            g.add_edge(name, child, t=t)
    return g


def write_graphml(doc: dict, path) -> None:
    """Write :func:`certificate_graph` of ``doc`` as GraphML (an OSError of the write is the caller's)."""
    graph = certificate_graph(doc)   # first: without networkx, its InputError
    import networkx as nx

    nx.write_graphml(graph, path)
