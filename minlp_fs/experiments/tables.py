"""Markdown tables in the paper's layout, our numbers first and the paper's beside them (same rows).

Certified grid (Tables cert-poly, cert-rbf, cert-rfe): per (dataset, method) the instances, mean
gap (%) to the certified optimum, # reaching it, mean time; coverage (Table cert-coverage);
multistart (Table b2-summary); parameter study (appendix app:param); held-out accuracy. The
paper's numbers exist for its sense only, so the fit-sense tables have none beside them.
:func:`write_table_csvs` writes every table of a rendered file also as CSV (``minlp-fs bench`` does).
"""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from . import published
from .metrics import EXACT_METHODS
from .store import write_text

METHOD_ORDER = ("ls*", "acso*", "ls", "acso", "ipopt", "knitro", "gams-knitro", "gams-ipopt", "scip", "baron",
                "rfe1", "rfe2", "all-features", "sk-rfe-linear", "sk-sfs")
NONE = "–"


def fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return NONE
    return f"{x:.{digits}f}"


def sci(x) -> str:
    """2.5e+02 -> 2.5x10^2 style, as in the paper's Table cert-coverage."""
    if x is None:
        return NONE
    if x < 1e4:
        return f"{x:,.0f}"
    mant, exp = f"{x:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def markdown(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list:
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line.strip())[1:-1]]


def markdown_tables(text: str) -> list:
    """[(caption, header, rows)] of the pipe tables in markdown ``text`` (as :func:`markdown` writes them);
    the caption is the nearest heading above the table (without its #s) or short line ending in ":", or ""."""
    lines, out, caption, k = text.splitlines(), [], "", 0
    while k < len(lines):
        line = lines[k].strip()
        if line.startswith("|") and k + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[k + 1].strip()):
            header, rows, k = _cells(line), [], k + 2
            while k < len(lines) and lines[k].strip().startswith("|"):
                rows.append(_cells(lines[k]))
                k += 1
            out.append((caption, header, rows))
            continue
        if line.startswith("#") or (line.endswith(":") and len(line) <= 60):
            caption = line.lstrip("#").strip()
        k += 1
    return out


def write_table_csvs(md_path) -> list:
    """Write each table of the markdown file ``md_path`` also as CSV beside it:
    ``<stem>-t<k>-<caption slug>.csv`` (k = 1, 2, ... in file order); the CSVs of an earlier run of the
    same file are removed first. Returns the paths written."""
    md_path = Path(md_path)
    for old in md_path.parent.glob(f"{md_path.stem}-t[0-9]*.csv"):
        old.unlink()
    paths = []
    for k, (caption, header, rows) in enumerate(markdown_tables(md_path.read_text()), start=1):
        slug = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")[:48].strip("-")
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([header] + rows)
        path = md_path.with_name(f"{md_path.stem}-t{k}" + (f"-{slug}" if slug else "") + ".csv")
        write_text(path, buf.getvalue())
        paths.append(path)
    return paths


def dataset_rank(name: str):
    order = list(published.DATASET_TITLES)
    return (order.index(name) if name in order else len(order), name)


def method_rank(name: str):
    return (METHOD_ORDER.index(name) if name in METHOD_ORDER else len(METHOD_ORDER), name)


def title(dataset: str) -> str:
    return published.DATASET_TITLES.get(dataset, dataset)


def certified_table(summary: dict, sense: str, fam: str) -> str:
    """One kernel family ('poly' or 'rbf') and one sense; rows (dataset, method) and Overall."""
    rows = sorted((r for r in summary["rows"] if r["key"][:2] == (sense, fam)),
                  key=lambda r: (dataset_rank(r["key"][2]), method_rank(r["key"][3])))
    overall = sorted((r for r in summary["overall"] if r["key"][:2] == (sense, fam)),
                     key=lambda r: method_rank(r["key"][2]))
    with_paper = sense == "paper"
    headers = ["dataset", "method", "# pbs", "gap %", "# solved", "failed", "mean time (s)"]
    if with_paper:
        headers += ["paper # pbs", "paper gap %", "paper # solved", "paper time (s)"]
    out = []
    for r in rows + overall:
        ds, method = (r["key"][2], r["key"][3]) if len(r["key"]) == 4 else ("overall", r["key"][2])
        line = [title(ds) if ds != "overall" else "**Overall**", method, r["n"], fmt(r["gap"]),
                f"{r['n_reached']}/{r['n']}", r["n_failed"] or "", fmt(r["time"])]
        if with_paper:
            p = published.CERTIFIED.get(fam, {}).get(ds, {}).get(method)
            t = published.CERTIFIED_TIME.get(fam, {}).get(method) if ds == "overall" else None
            line += [p[2], fmt(p[0]), f"{p[1]}/{p[2]}", fmt(t, 1)] if p else [NONE] * 3 + [fmt(t, 1)]
        out.append(line)
    text = markdown(headers, out)
    deg = {k[2]: v for k, v in summary["n_degenerate"].items() if k[:2] == (sense, fam) and v}
    if deg:
        text += ("\n\nCertified optima at the trivial bound -2C min(|I+|,|I-|) (degenerate): "
                 + ", ".join(f"{title(d)} {v}" for d, v in sorted(deg.items(), key=lambda kv: dataset_rank(kv[0]))))
    below = sum(r["n_below_reference"] for r in rows)
    if below:
        text += f"\n\n**Warning**: {below} answers better than the certified optimum by more than {1e-3} %."
    return text


def coverage_table(plans: list, records: list, n_cores: int, grid_bmax: dict | None = None) -> str:
    """Table cert-coverage: B_max per dataset, its C(n, B_max), QPs and hours, planned and measured.

    The plan is enumeration's; ``grid_bmax[dataset]``, when given, is the grid's B_max (every family: the
    paper's, by bnb or by time-limited enumeration beyond the plan; a column "B_max (grid)"). QPs and hours
    solved count every exact method's records."""
    solved, cpu = {}, {}
    for r in records:
        u = r["unit"]
        if u["method"] in EXACT_METHODS and "error" not in r:
            solved[u["dataset"]] = solved.get(u["dataset"], 0) + r["result"]["n_svm_solves"]
            cpu[u["dataset"]] = cpu.get(u["dataset"], 0.0) + r["result"]["wall_time_s"]
    headers = ["dataset", "n", "m", "B_max", "bound by", "C(n,B_max)", "QPs planned", "est. hours",
               "QPs solved", "hours (measured)", "ms/QP", "paper B_max", "paper C(n,B_max)", "paper # QP"]
    if grid_bmax is not None:
        headers[3:4] = ["B_max (enumeration)", "B_max (grid)"]
    out = []
    for p in sorted(plans, key=lambda p: dataset_rank(p.dataset)):
        pp = published.COVERAGE.get(p.dataset)
        bmax = f"<u>{p.bmax}</u>" if p.bmax < max(1, p.n // 2) else str(p.bmax)
        hours = None if p.dataset not in cpu else cpu[p.dataset] / 3600.0 / max(1, n_cores)
        by_grid = [] if grid_bmax is None else [grid_bmax.get(p.dataset, NONE)]
        out.append([title(p.dataset), p.n, p.m, bmax, *by_grid, p.binding, sci(p.subsets_at_bmax), sci(p.qps),
                    fmt(p.hours, 3), sci(solved.get(p.dataset)), fmt(hours, 3), fmt(1e3 * p.qp_time_s),
                    *([pp[2], sci(pp[3]), sci(pp[4])] if pp else [NONE] * 3)])
    return markdown(headers, out)


def _spans(values) -> str:
    """[3, 4, 5, 7] -> '3-5, 7'."""
    out, run = [], []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out.append(run)
            run = []
        run.append(v)
    out += [run] if run else []
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in out)


def _open_cell(entry: dict) -> str:
    """The Bs of one (dataset, kernel, sense) not certified: each stopped run with its gap, the ones not run."""
    parts = [f"{b}: " + ("failed" if g is None else f"gap {g:.3g} %") for b, g in sorted(entry["stopped"].items())]
    if entry["missing"]:
        parts.append(f"not run: {_spans(entry['missing'])}")
    return "; ".join(parts) or NONE


def _reach_cell(entry: dict) -> str:
    top = max(entry["certified"], default=0)
    return str(entry["reach"]) + (f" (also {_spans(b for b in entry['certified'] if b > entry['reach'])})"
                                  if top > entry["reach"] else "")


def reach_table(reach: dict, senses) -> str:
    """Table cert-coverage per kernel and sense: the largest B certified for every B' <= B by our runs
    (:func:`~minlp_fs.experiments.metrics.certification_reach`) beside the paper's B_max, the uncertified
    Bs with the gap their run stopped at, and the hours spent (sums of unit times). Kernels of a dataset
    with the same cells share a row."""
    groups = {}
    for ds in sorted({k[0] for k in reach}, key=dataset_rank):
        for kernel in sorted({k[1] for k in reach if k[0] == ds}):
            entries = [reach.get((ds, kernel, s)) for s in senses]
            cells = tuple((_reach_cell(e), _open_cell(e)) if e else (NONE, NONE) for e in entries)
            methods = tuple(sorted({m for e in entries if e for m in e["methods"]}))
            target = max(e["target"] for e in entries if e)
            g = groups.setdefault((ds, cells, methods, target), {"kernels": [], "entries": [], "first": entries})
            g["kernels"].append(kernel)
            g["entries"] += [e for e in entries if e]
    headers = ["dataset", "kernel", "exact", "grid B_max", "paper B_max"]
    for s in senses:
        headers += [f"{s}: certified to B", f"{s}: not certified (B: gap)"]
    headers += ["paper B_max reached", "hours exact / all units"]
    out = []
    for (ds, cells, methods, target), g in groups.items():
        paper = published.COVERAGE.get(ds, (None,) * 3)[2]
        reached = [s for s, e in zip(senses, g["first"]) if e and paper is not None and e["reach"] >= paper]
        exact_h = sum(e["exact_s"] for e in g["entries"]) / 3600
        all_h = sum(e["all_s"] for e in g["entries"]) / 3600
        out.append([title(ds), ", ".join(g["kernels"]), ", ".join(methods), target, NONE if paper is None else paper,
                    *[c for cell in cells for c in cell],
                    NONE if paper is None else ("all" if len(reached) == len(senses) else ", ".join(reached) or "no"),
                    f"{exact_h:.2f} / {all_h:.2f}"])
    return markdown(headers, out)


def multistart_table(summary: dict, sense: str) -> str:
    """Table b2-summary for one sense."""
    rows = sorted((r for r in summary["rows"] if r["key"][0] == sense), key=lambda r: method_rank(r["key"][1]))
    with_paper = sense == "paper"
    headers = ["method", "# instances", "mean gap to best-known %", "# best-known reached", "mean spread %",
               "mean time per run (s)"]
    if with_paper:
        headers += ["paper # inst.", "paper gap %", "paper reached", "paper spread %", "paper time (s)"]
    out = []
    for r in rows:
        method = r["key"][1]
        line = [method, r["n"], fmt(r["gap"]), f"{r['n_reached']}/{r['n']}", fmt(r["spread"], 1), fmt(r["time"])]
        if with_paper:
            p = published.MULTISTART.get(method)
            line += ([p[0], fmt(p[1]), f"{p[2]}/{p[0]}", fmt(p[3], 1)] if p else [NONE] * 4) \
                + [published.MULTISTART_TIME.get(method, NONE)]
        out.append(line)
    return markdown(headers, out)


def multistart_by_dataset(summary: dict, sense: str) -> str:
    """Table b2-summary split by dataset: per method, instances whose best start reaches the best known
    / instances (mean spread %) and mean time per run."""
    rows = [r for r in summary["by_dataset"] if r["key"][0] == sense]
    methods = sorted({r["key"][2] for r in rows}, key=method_rank)
    cells = {r["key"][1:]: r for r in rows}
    out = []
    for ds in sorted({r["key"][1] for r in rows}, key=dataset_rank):
        line = [title(ds)]
        for method in methods:
            r = cells.get((ds, method))
            line += [NONE, NONE] if r is None else \
                [f"{r['n_reached']}/{r['n']} ({fmt(r['spread'], 1)})", fmt(r["time"])]
        out.append(line)
    headers = ["dataset"] + [h for m in methods for h in (f"{m} reached (spread %)", f"{m} time (s)")]
    return markdown(headers, out)


def params_table(summary: dict) -> str:
    """Appendix app:param: per (method, option, value) mean gap to the best configuration and cost."""
    headers = ["method", "option", "value", "cases", "mean gap %", "mean SVM solves", "mean time (s)",
               "paper gap %", "paper cost"]
    out = []
    for r in summary["rows"]:
        method, opt, value = r["key"]
        label = "single" if opt == "refit_fraction" and value < 1e-6 else value
        chosen = published.PARAM_CHOICE.get((method, opt)) == value
        p = published.PARAMS.get((method, opt), {}).get(label)
        cost = NONE if p is None or p[1] is None else f"{p[1]:g} {p[2]}"
        note = "" if p is None or p[1] is not None or not p[2] else f" ({p[2]})"
        out.append([method, opt, f"**{label}**" if chosen else label, r["n"], fmt(r["gap"]), fmt(r["svm_solves"], 0),
                    fmt(r["time"]), (fmt(p[0]) + note) if p else NONE, cost])
    return markdown(headers, out)


def accuracy_table(rows: list) -> str:
    """Mean (std) test accuracy over the folds, per dataset, kernel, method and sense."""
    rows = sorted(rows, key=lambda r: (dataset_rank(r["key"][0]), r["key"][1], r["key"][2],
                                       method_rank(r["key"][3]), str(r["key"][4])))
    headers = ["dataset", "kernel", "B", "method", "sense", "accuracy % (std)", "folds", "selection time (s)"]
    out = [[title(k[0]), k[1], k[2], k[3], k[4] or NONE, f"{100 * r['mean']:.1f} ({100 * r['std']:.1f})",
            r["n_folds"], fmt(r["time"])] for r in rows for k in [r["key"]]]
    return markdown(headers, out)
