"""Provenance of a written model: what instance it is, what its optimum means, how to rebuild it.

Every model :func:`~minlp_fs.models.build_model` builds carries it (``model.dfs["provenance"]`` and
the model's ``doc``); the ``.gms`` writer puts it in the header comment and the ``.nl`` writer in a
JSON sidecar ``FILE.json``. It names the kernel with all its parameters, C, B, m, n, the sense and
what the optimum means (paper: min_beta g(beta), problem (4); fit: the SVM primal, -(max_beta g)),
the rows of the dataset the instance holds, the support, the relaxation, the formulation's bounds,
the package version and the date. The scaling, the sampling seed and the dataset's name as given on
the command line are not part of an :class:`~minlp_fs.binary.Instance`; ``source`` (a dict, e.g.
``{"dataset": "cleveland", "scaling": "minmax", "seed": 0, "m": 30}`` from ``minlp-fs export``) supplies
them, and then a ``regenerate`` command too; without it they read "not recorded".
"""
from __future__ import annotations

import datetime
import json

from .. import __version__

#: what a minimiser of the model finds, per sense
OPTIMUM = {
    "paper": "min over (alpha, beta) of f(alpha, beta) = min over beta of g(beta): paper problem (4) as written",
    "fit": "min over (beta, c, b, xi) of the kernel SVM primal P = 1/2 c'K_beta c + C sum xi; by strong "
           "duality P(beta) = -g(beta), so the optimum is -(max over beta of g(beta)), the fit sense",
}
NOT_RECORDED = "not recorded (pass source= to the writer, as minlp-fs export does)"
_SOURCE_KEYS = ("dataset", "scaling", "seed", "m")


def provenance(form, source: dict | None = None) -> dict:
    """The JSON-ready provenance of a :class:`~minlp_fs.models.formulation.Formulation`."""
    inst = form.instance
    source = dict(source or {})
    kernel = inst.kernel.params()
    rows = instance_rows(inst)
    info = {
        "problem": "DFS-SVM: feature selection in a nonlinear SVM with exactly B features (paper problem (4))",
        "sense": inst.sense,
        "optimum": OPTIMUM[inst.sense],
        "instance": inst.name,
        "dataset": source.get("dataset", NOT_RECORDED),
        "m": inst.m, "n": inst.n, "B": inst.B, "C": inst.C,
        "kernel": kernel,
        "class_counts": {"-1": int((inst.y < 0).sum()), "+1": int((inst.y > 0).sum())},
        "scaling": source.get("scaling", NOT_RECORDED),
        "seed": source.get("seed", NOT_RECORDED),
        "rows": rows,
        "support": "all rows" if form.rows.size == inst.m else [int(i) for i in form.rows],
        "relaxation": bool(form.relax),
        "bounds": {"objective": list(form.objective_range),
                   **{name: [float(b.lb.min()), float(b.ub.max())] for name, b in form.blocks.items()
                      if name != "beta"}},
        "package": f"minlp-fs {__version__}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    if "dataset" in source:
        info["regenerate"] = _command(inst, kernel, source)
    return info


def instance_rows(inst):
    """The provenance's "rows": the dataset rows an instance holds (a list), or that it holds all of them."""
    return "all rows of the data, in file order" if inst.rows is None else [int(i) for i in inst.rows]


def _command(inst, kernel: dict, source: dict) -> str:
    """The ``minlp-fs export`` command that rebuilds this instance from its dataset (FMT and FILE: the user's)."""
    flags = [f"--dataset {source['dataset']}", f"--kernel {kernel['name']}", f"--gamma {kernel['gamma']!r}"]
    if source.get("label") is not None:
        flags.append(f"--label {source['label']}")
    flags += [f"--{k} {kernel[k]!r}" for k in ("coef0", "degree") if k in kernel]
    flags += [f"--B {inst.B}", f"--C {inst.C!r}", f"--sense {inst.sense}"]
    flags += [f"--{k} {source[k]}" for k in ("scaling", "m", "seed") if source.get(k) is not None]
    return "minlp-fs export " + " ".join(flags) + " --data-dir DIR --format FMT --out FILE"


def comment_lines(info: dict, width: int = 100) -> list:
    """``key: value`` lines (values as JSON, long ones wrapped at spaces) for a file's header comment."""
    out = []
    for key, value in info.items():
        text = value if isinstance(value, str) else json.dumps(value)
        lead = f"{key}: "
        while len(lead) + len(text) > width:
            cut = text.rfind(" ", 0, width - len(lead))
            if cut <= 0:
                break
            out.append(lead + text[:cut])
            lead, text = "    ", text[cut + 1:]
        out.append(lead + text)
    return out


def read_gms_provenance(path) -> dict:
    """The provenance a ``.gms`` written by :func:`~minlp_fs.models.export.gms_text` holds in its header comment
    (the ``key: value`` lines of :func:`comment_lines`, wrapped values joined; values that are not JSON kept
    as text); {} for a file without one."""
    info, key, text = {}, None, ""

    def flush():
        if key is not None:
            try:
                info[key] = json.loads(text)
            except ValueError:
                info[key] = text

    with open(path) as fh:
        for line in fh:
            if not line.startswith("*"):
                break
            body = line[1:].rstrip("\n")
            if body.strip() == "Symbols:":
                break
            if body.startswith("        ") and key is not None:      # a wrapped value's next part
                text += " " + body.strip()
            elif body.startswith("    ") and ": " in body:
                flush()
                key, text = body.strip().split(": ", 1)
    flush()
    return info
