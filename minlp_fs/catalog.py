"""The catalogue of registered methods for ``minlp-fs methods``: options, defaults and meaning.

Read from the methods themselves, so it cannot drift from the code: each method's summary is the
first line of its class docstring, its options are its dataclass fields (type hint and default), and what an
option accepts and means come from its one declaration (:func:`minlp_fs.options.declared`: the
``describe()`` and ``doc`` of its :class:`~minlp_fs.options.Opt`, what the option checker and
``Method.option_docs`` use); a field without a declaration is listed with its type and default only.
"""
from __future__ import annotations

import dataclasses
import typing

from .methods import ALIASES, method_class, nameable_methods
from .options import declared


def _type_name(hint) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("NoneType", "None")


def _option_row(field, hints, spec) -> dict:
    """One option: its type hint and default from the field, what it accepts and means from its
    declaration ``spec`` (:class:`~minlp_fs.options.Opt`, None for an undeclared field)."""
    if field.default is not dataclasses.MISSING:
        default = field.default
    elif field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    else:
        default = None
    return {"name": field.name, "type": _type_name(hints.get(field.name, "")), "default": default,
            "accepts": spec.describe() if spec else "", "doc": spec.doc if spec else ""}


def method_catalog() -> list:
    """One dict per registered method (and ``hybrid:SOLVER``): name, aliases, summary, whether it takes a
    start and can certify, and its options; a method whose module cannot be imported says why."""
    rows = []
    for label, key in nameable_methods():
        row = {"name": label, "aliases": sorted(a for a, t in ALIASES.items() if t == label)}
        try:
            cls = method_class(key)
        except (ImportError, AttributeError) as exc:
            rows.append({**row, "summary": f"cannot be imported: {type(exc).__name__}: {exc}", "options": []})
            continue
        hints, specs = typing.get_type_hints(cls), declared(cls)
        summary = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())  # the first paragraph
        rows.append({**row, "summary": summary, "uses_start": bool(cls.uses_start),
                     "certifies": bool(cls.certifies),
                     "options": [_option_row(f, hints, specs.get(f.name)) for f in dataclasses.fields(cls)]})
    return rows


def format_catalog(rows) -> str:
    """The ``minlp-fs methods`` text: a header line per method, then one line per option (its Python name;
    ``minlp-fs solve`` takes it as ``--name-with-dashes``, ``n_jobs`` as ``--jobs``)."""
    out = []
    for row in rows:
        tags = [t for t, on in (("takes a start", row.get("uses_start")), ("certifies", row.get("certifies"))) if on]
        alias = f" (alias {', '.join(row['aliases'])})" if row["aliases"] else ""
        out.append(f"{row['name']}{alias}: {row['summary']}" + (f"  [{', '.join(tags)}]" if tags else ""))
        width = max((len(o["name"]) for o in row["options"]), default=0)
        for o in row["options"]:
            meaning = "; ".join(t for t in (o["doc"], o["accepts"] and f"accepts {o['accepts']}") if t)
            out.append(f"    {o['name']:<{width}}  {o['type']} = {o['default']!r}" + (f"  {meaning}" if meaning else ""))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
