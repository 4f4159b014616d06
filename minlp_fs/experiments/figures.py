"""The paper's figures from our summaries (matplotlib, Agg backend; PNG files).

* ``cert_gap_by_B`` (Figure cert-gapB): mean gap over the polynomial kernels to the certified
  optimum as B grows, one panel per dataset;
* ``cert_times`` (Figure cert-time): mean running time per dataset, logarithmic axis;
* ``multistart_box`` (Figure b2-box): gaps to the best known across the random starts, per dataset;
* ``multistart_times`` (Figure b2-time): mean time per run, logarithmic axis;
* ``multistart_profiles`` (Figure b2-pp): fraction of instances with gap <= tau (best start),
  polynomial and Gaussian kernels;
* ``params_figure`` (Figures param-ls, param-ao): mean gap and mean SVM solves per parameter value;
* ``accuracy_figure``: held-out accuracy per dataset and method.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from .metrics import profile
from .tables import dataset_rank, method_rank, title

DPI = 90
FAMILY = {"poly": "polynomial kernels", "rbf": "Gaussian kernel"}
LINESTYLES = ("-", "--", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)))


def style(method: str, deterministic=("rfe1", "rfe2")) -> dict:
    """The same colour (and line style) for a method in every figure; RFE dotted as in the paper."""
    rank = method_rank(method.split(" ")[0])[0]
    ls = ":" if method in deterministic else LINESTYLES[rank % len(LINESTYLES)]
    return {"color": f"C{rank % 10}", "ls": ls}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path, suptitle: str | None = None) -> Path:
    if suptitle is not None:
        fig.tight_layout()
        fig.suptitle(suptitle, fontsize=10, y=1.02)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    _plt().close(fig)
    return path


def _panels(n: int, width: float = 3.0, height: float = 2.4):
    plt = _plt()
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def cert_gap_by_B(summary: dict, sense: str, path, fam: str = "poly") -> Path:
    cells = defaultdict(dict)
    for r in summary["by_B"]:
        s, f, ds, method, B = r["key"]
        if (s, f) == (sense, fam) and r["gap"] is not None:
            cells[ds].setdefault(method, {})[B] = r["gap"]
    datasets = sorted(cells, key=dataset_rank)
    fig, axes = _panels(max(1, len(datasets)))
    from matplotlib.ticker import MaxNLocator

    for ax, ds in zip(axes, datasets):
        for method in sorted(cells[ds], key=method_rank):
            pts = sorted(cells[ds][method].items())
            ax.plot([b for b, _ in pts], [g for _, g in pts], marker="o", ms=3, label=method, **style(method))
        ax.set_title(title(ds), fontsize=9)
        ax.set_ylim(0, max([0.1] + [1.15 * g for v in cells[ds].values() for g in v.values()]))
        ax.set_xlabel("B", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("mean gap %", fontsize=8)
    if datasets:
        axes[0].legend(fontsize=7)
    return _save(fig, path, f"Gap to the certified optimum vs B ({FAMILY[fam]}, sense {sense})")


def _time_plot(ax, times: dict):
    """times: method -> {dataset: mean seconds}; log axis; deterministic methods dotted."""
    datasets = sorted({d for v in times.values() for d in v}, key=dataset_rank)
    x = np.arange(len(datasets))
    for method in sorted(times, key=method_rank):
        y = [times[method].get(d, np.nan) for d in datasets]
        ax.plot(x, y, marker="o", ms=3, label=method, **style(method))
    ax.set_xticks(x, [title(d) for d in datasets], rotation=30, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("mean time (s, log scale)", fontsize=8)
    ax.legend(fontsize=7)


def cert_times(summary: dict, sense: str, path, fam: str = "poly") -> Path:
    times = defaultdict(dict)
    for r in summary["rows"]:
        s, f, ds, method = r["key"]
        if (s, f) == (sense, fam) and r["time"] is not None:
            times[method][ds] = r["time"]
    fig = _plt().figure(figsize=(6, 3.2))
    _time_plot(fig.gca(), times)
    fig.gca().set_title(f"Mean time on the certified instances ({FAMILY[fam]}, sense {sense})", fontsize=10)
    return _save(fig, path)


def multistart_box(ms: dict, sense: str, path, kernel: str = "poly3") -> Path:
    cells = defaultdict(dict)
    for item in ms["per_instance"]:
        ds, k, _, s = item["key"][:4]
        if (k, s) == (kernel, sense):
            cells[ds][item["method"]] = item["gaps"]
    datasets = sorted(cells, key=dataset_rank)
    fig, axes = _panels(max(1, len(datasets)))
    for ax, ds in zip(axes, datasets):
        methods = sorted(cells[ds], key=method_rank)
        ax.boxplot([cells[ds][m] or [np.nan] for m in methods], tick_labels=methods)
        ax.tick_params(axis="x", labelsize=7, rotation=30)
        ax.set_title(title(ds), fontsize=9)
        ax.set_ylabel("gap to best known %", fontsize=8)
    return _save(fig, path, f"Gap across the random starts at B = floor(n/2) ({kernel}, sense {sense})")


def multistart_times(ms: dict, sense: str, path) -> Path:
    acc = defaultdict(lambda: defaultdict(list))
    for item in ms["per_instance"]:
        ds, k, _, s = item["key"][:4]
        if s == sense and k != "rbf" and item["time"] is not None:
            acc[item["method"]][ds].append(item["time"])
    times = {m: {d: float(np.mean(v)) for d, v in by.items()} for m, by in acc.items()}
    fig = _plt().figure(figsize=(6, 3.2))
    _time_plot(fig.gca(), times)
    fig.gca().set_title(f"Mean time per run at B = floor(n/2) (polynomial, sense {sense})", fontsize=10)
    return _save(fig, path)


def multistart_profiles(ms: dict, sense: str, path) -> Path:
    fig, axes = _panels(2, width=3.6, height=2.8)
    for ax, fam in zip(axes, ("poly", "rbf")):
        gaps = defaultdict(list)
        for item in ms["per_instance"]:
            if item["key"][3] == sense and (item["key"][1] == "rbf") == (fam == "rbf"):
                gaps[item["method"]].append(item["gap_best"])
        top = max([g for v in gaps.values() for g in v if g is not None] + [1.0])
        taus = np.linspace(0.0, top * 1.05, 200)
        for method in sorted(gaps, key=method_rank):
            ax.step(taus, profile(gaps[method], taus), where="post", label=method, **style(method))
        ax.set_title("polynomial kernels" if fam == "poly" else "Gaussian kernel", fontsize=9)
        ax.set_xlabel("tau (gap to best known, %)", fontsize=8)
        ax.set_ylabel("fraction of instances", fontsize=8)
        ax.set_ylim(0, 1.02)
        if gaps:
            ax.legend(fontsize=7)
    return _save(fig, path, f"Performance profiles at B = floor(n/2) (sense {sense})")


def params_figure(ps: dict, path, choices: dict) -> Path:
    panels = defaultdict(list)
    for r in ps["rows"]:
        method, opt, value = r["key"]
        panels[(method, opt)].append((value, r["gap"], r["svm_solves"]))
    keys = sorted(panels)
    fig, axes = _panels(max(1, len(keys)))
    for ax, key in zip(axes, keys):
        pts = sorted(panels[key])
        labels = ["single" if key[1] == "refit_fraction" and v < 1e-6 else f"{v:g}" for v, _, _ in pts]
        x = np.arange(len(pts))
        ax.plot(x, [g for _, g, _ in pts], "o-", color="tab:blue")
        ax.set_ylim(0, max([0.1] + [1.15 * g for _, g, _ in pts]))
        ax.set_ylabel("mean gap %", color="tab:blue", fontsize=8)
        twin = ax.twinx()
        twin.plot(x, [s for _, _, s in pts], "s--", color="grey")
        twin.set_ylabel("mean SVM solves", color="grey", fontsize=8)
        ax.set_xticks(x, labels, fontsize=8)
        values = [v for v, _, _ in pts]
        if choices.get(key) in values:
            ax.axvline(values.index(choices[key]), ls="--", color="k", lw=0.8)
        ax.set_title(f"{key[0]}: {key[1]}", fontsize=9)
    return _save(fig, path, "Parameter study: mean gap (blue) and mean SVM solves (grey); dashed = paper's choice")


def accuracy_figure(rows: list, path) -> Path:
    cells = defaultdict(dict)
    for r in rows:
        ds, kernel, B, method, sense = r["key"]
        cells[ds][method if sense is None else f"{method} ({sense})"] = r["mean"]
    datasets = sorted(cells, key=dataset_rank)
    labels = sorted({m for v in cells.values() for m in v}, key=lambda s: method_rank(s.split(" ")[0]) + (s,))
    fig = _plt().figure(figsize=(8, 3.2))
    ax = fig.gca()
    width = 0.8 / max(1, len(labels))
    colours = _plt().get_cmap("tab20")
    for i, lab in enumerate(labels):
        ax.bar(np.arange(len(datasets)) + i * width, [100 * cells[d].get(lab, np.nan) for d in datasets],
               width, label=lab, color=colours(i % 20))
    ax.set_xticks(np.arange(len(datasets)) + 0.4 - width / 2, [title(d) for d in datasets])
    ax.set_ylabel("5-fold CV accuracy %")
    ax.set_ylim(40, 100)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)
