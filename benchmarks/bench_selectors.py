"""Held-out accuracy of our selectors against scikit-learn's, on the nine datasets (issue 15, item 5).

Protocol. Stratified 5-fold outer CV, shuffled with a fixed seed: the same folds for every selector.
On each fold the columns are min-max scaled on the training rows, the selector is fitted on the
training rows only, and the same final classifier is trained on the selected columns of the training
rows and scored on the test fold: ``SVC(kernel="poly", degree=3, gamma=0.1, coef0=1, C=10)``, the
final SVC of ``CardinalitySVC`` with its default parameters (the paper's kernel and C).

Selectors (``SELECTORS``), at k = ceil(n/4) unless the selector chooses k itself:

* ``all``: every column (no selection);
* ``ours``: ``KernelFeatureSelector(k, sense="fit")`` with its default method (LS*);
* ``ours-ls``: the same with ``method="ls"`` (the cheaper method, measured for the CV defaults);
* ``ours-cv``: ``KernelFeatureSelectorCV(method="ls")`` with its defaults otherwise (k grid 1..10,
  5-fold inner CV, one (C, gamma) point, the best mean score); the record also holds the k and the
  held-out accuracy the one-standard-error rule would have given on the same fit (``select="1se"``
  chooses among the same path's subsets, so it needs no second fit);
* ``ours-cv-wide``: the same with the k grid 1..min(n, 20) (``n_features=20``);
* ``ours-cv-grid``: the same with ``gammas=[0.1, 1]`` searched jointly with k (C stays 10); the
  record also holds the held-out accuracy of the selector's own SVC at its chosen (C, gamma);
* ``rfe``: ``RFE(SVC(kernel="linear", C=1), n_features_to_select=k)``;
* ``rfecv``: ``RFECV`` with the same linear SVC and 5-fold stratified CV (k chosen by CV);
* ``sfs``: ``SequentialFeatureSelector`` (forward) with the final classifier, 5-fold CV;
* ``kbest-mi``: ``SelectKBest(mutual_info_classif)`` (its nearest-neighbour estimate seeded).

Each (dataset, selector, fold) is appended to ``results/selectors.jsonl`` as soon as it finishes
(the experiments' results store), so an interrupted run resumes where it stopped. Times are CPU
seconds of the selector's fit alone (this process, ``time.process_time``). The report writes the
``bench_selectors`` section of RESULTS.md from the file.

Usage (from the repository root)::

    nice -n 5 python benchmarks/bench_selectors.py [--datasets wholesale ...] [--selectors all ours ...]
    python benchmarks/bench_selectors.py --report-only
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.feature_selection import RFE, RFECV, SelectKBest, SequentialFeatureSelector, mutual_info_classif
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from minlp_fs import KernelFeatureSelector, KernelFeatureSelectorCV
from minlp_fs.datasets import PAPER_DATASETS, load_dataset
from minlp_fs.experiments.store import read_records, writer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_io_args, command, machine, write_section  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "selectors.jsonl"
N_FOLDS = 5
#: the top of the wider k grid measured against KernelFeatureSelectorCV's default top (10)
WIDE_K = 20
SEED = 0
#: selectors at k = ceil(n/4), and those that choose k by cross-validation
FIXED_K = ("ours", "ours-ls", "rfe", "sfs", "kbest-mi")
CV_K = ("ours-cv", "ours-cv-wide", "ours-cv-grid", "rfecv")
SELECTORS = ("all", *FIXED_K, *CV_K)
#: the scikit-learn selectors each of ours is compared with (target 2)
SKLEARN_FIXED = ("rfe", "sfs", "kbest-mi")
SKLEARN_CV = ("rfecv",)


def final_classifier() -> SVC:
    """The one classifier trained on every selector's columns (CardinalitySVC's default final SVC)."""
    return SVC(kernel="poly", degree=3, gamma=0.1, coef0=1.0, C=10.0)


def target_k(n: int) -> int:
    """k = ceil(n/4), the issue's fixed size."""
    return math.ceil(n / 4)


def outer_folds(y, n_folds: int = N_FOLDS, seed: int = SEED) -> list:
    """(train, test) index pairs of the stratified, shuffled outer CV: the same for every selector."""
    return list(StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def make_selector(name: str, k: int, seed: int = SEED):
    """The unfitted selector ``name`` (None for ``all``); ``k`` is used by the fixed-size ones."""
    inner = StratifiedKFold(n_splits=5)
    linear = SVC(kernel="linear", C=1.0)
    factories = {
        "all": lambda: None,
        "ours": lambda: KernelFeatureSelector(k, sense="fit", random_state=seed),
        "ours-ls": lambda: KernelFeatureSelector(k, sense="fit", method="ls", random_state=seed),
        "ours-cv": lambda: KernelFeatureSelectorCV(method="ls", random_state=seed),
        "ours-cv-wide": lambda: KernelFeatureSelectorCV(WIDE_K, method="ls", random_state=seed),
        "ours-cv-grid": lambda: KernelFeatureSelectorCV(method="ls", gammas=[0.1, 1.0], random_state=seed),
        "rfe": lambda: RFE(linear, n_features_to_select=k),
        "rfecv": lambda: RFECV(linear, cv=inner, scoring="accuracy"),
        "sfs": lambda: SequentialFeatureSelector(final_classifier(), n_features_to_select=k,
                                                 direction="forward", cv=inner),
        "kbest-mi": lambda: SelectKBest(partial(mutual_info_classif, random_state=seed), k=k),
    }
    if name not in factories:
        raise ValueError(f"unknown selector {name!r}; choose from {', '.join(SELECTORS)}")
    return factories[name]()


def _score(X_tr, y_tr, X_te, y_te, cols) -> float:
    return float(final_classifier().fit(X_tr[:, cols], y_tr).score(X_te[:, cols], y_te))


def _one_se(sel, X_tr, y_tr, X_te, y_te) -> dict:
    """The k and held-out accuracy of ``select="1se"`` on a fitted single-point KernelFeatureSelectorCV."""
    res = sel.cv_results_
    ks = [int(B) for B in res["n_features"]]
    mean = res["mean_test_score"].reshape(1, -1)
    std = res["std_test_score"].reshape(1, -1)
    n_splits = sum(key.startswith("split") for key in res)
    _, b = sel.set_params(select="1se")._choose(mean, std, n_splits, ks)
    sel.set_params(select="best")
    varying = np.flatnonzero(np.ptp(X_tr, axis=0) > 0)
    cols = np.sort(varying[list(sel.path_[ks[b]].features)])
    return {"k_1se": ks[b], "accuracy_1se": _score(X_tr, y_tr, X_te, y_te, cols)}


def run_fold(X, y, train, test, name: str, k: int, seed: int = SEED) -> dict:
    """Scale on the training rows, fit selector ``name`` there, score the final classifier on the test rows."""
    scaler = MinMaxScaler().fit(X[train])
    X_tr, X_te = scaler.transform(X[train]), scaler.transform(X[test])
    y_tr, y_te = y[train], y[test]
    sel = make_selector(name, k, seed)
    t0 = time.process_time()
    if sel is None:
        cols = np.arange(X.shape[1])
    else:
        sel.fit(X_tr, y_tr)
        cols = np.flatnonzero(sel.get_support())
    seconds = time.process_time() - t0
    record = {"k": int(cols.size), "features": [int(j) for j in cols], "select_s": round(seconds, 3),
              "accuracy": _score(X_tr, y_tr, X_te, y_te, cols)}
    if name.startswith("ours-cv"):
        record.update(C=float(sel.C_), gamma=float(sel.gamma_), k_top=int(max(sel.cv_results_["n_features"])))
        if name == "ours-cv":
            record.update(_one_se(sel, X_tr, y_tr, X_te, y_te))
        elif name == "ours-cv-grid":   # the selector's own SVC, at its chosen (C, gamma), as a user of the grid would predict
            record["accuracy_own"] = float(sel.estimator_.score(X_te[:, sel.support_], y_te))
    return record


def row_key(record: dict) -> tuple:
    return record["dataset"], record["selector"], record["fold"]


def run(datasets, selectors, data_dir, path=RESULTS, n_folds: int = N_FOLDS, seed: int = SEED, log=print,
        folds=None) -> int:
    """Run every missing (dataset, selector, fold), appending each record as it finishes; the number run.
    ``folds`` (fold numbers) restricts the run to those folds, e.g. to share one slow dataset between runs."""
    done = {row_key(r) for r in read_records(path, row_key)}
    count = 0
    with writer(path) as append:
        for ds in datasets:
            data = load_dataset(ds, data_dir)
            X, y = data.X, data.y
            k = target_k(X.shape[1])
            for name in selectors:
                for fold, (train, test) in enumerate(outer_folds(y, n_folds, seed)):
                    if (ds, name, fold) in done or folds is not None and fold not in folds:
                        continue
                    record = {"dataset": ds, "selector": name, "fold": fold, "m": int(X.shape[0]),
                              "n": int(X.shape[1]), "k_target": k, "seed": seed,
                              **run_fold(X, y, train, test, name, k, seed)}
                    append(record)
                    count += 1
                    log(f"{ds} {name} fold {fold}: accuracy {record['accuracy']:.3f}, k {record['k']}, "
                        f"{record['select_s']:.1f} s")
    return count


def summarise(records) -> dict:
    """{(dataset, selector): stats} over the folds present: mean/std accuracy, folds, mean k, CPU s."""
    groups = {}
    for r in records:
        groups.setdefault((r["dataset"], r["selector"]), []).append(r)
    out = {}
    for key, rows in groups.items():
        acc = np.array([r["accuracy"] for r in rows])
        stats = {"folds": len(rows), "mean": float(acc.mean()), "std": float(acc.std()),
                 "k": [r["k"] for r in rows], "select_s": float(np.mean([r["select_s"] for r in rows]))}
        if "k_1se" in rows[0]:
            stats["k_1se"] = [r["k_1se"] for r in rows]
            stats["mean_1se"] = float(np.mean([r["accuracy_1se"] for r in rows]))
        if "gamma" in rows[0]:
            stats["points"] = [(r["C"], r["gamma"]) for r in rows]
            stats["k_top"] = rows[0]["k_top"]
        if "accuracy_own" in rows[0]:
            stats["mean_own"] = float(np.mean([r["accuracy_own"] for r in rows]))
        out[key] = stats
    return out


def _complete(stats, ds, names, n_folds) -> bool:
    return all((ds, s) in stats and stats[ds, s]["folds"] == n_folds for s in names)


def targets(stats, datasets, n_folds: int = N_FOLDS) -> dict:
    """The issue's two targets, counted over the datasets whose folds are all present.

    ``near_all``: ours (LS*) at k = ceil(n/4) within 1 point of all features (mean accuracy).
    ``vs_sklearn``: ours at or above the best scikit-learn selector at the same k (RFE, SFS, SelectKBest);
    ``ours-cv_vs_rfecv`` (``ours-cv-wide_vs_rfecv``): KernelFeatureSelectorCV (with the wider k grid) at or
    above RFECV (both choose k by CV).
    Values are (hits, datasets counted, datasets missed).
    """
    def count(pairs):
        hits, miss, seen = 0, [], 0
        for ds, ok in pairs:
            seen += 1
            hits += ok
            if not ok:
                miss.append(ds)
        return hits, seen, miss

    eps = 1e-9
    near = [(ds, stats[ds, "ours"]["mean"] >= stats[ds, "all"]["mean"] - 0.01 - eps)
            for ds in datasets if _complete(stats, ds, ("ours", "all"), n_folds)]
    vs = [(ds, stats[ds, "ours"]["mean"] >= max(stats[ds, s]["mean"] for s in SKLEARN_FIXED) - eps)
          for ds in datasets if _complete(stats, ds, ("ours", *SKLEARN_FIXED), n_folds)]
    out = {"near_all": count(near), "vs_sklearn": count(vs)}
    for name in ("ours-cv", "ours-cv-wide"):
        out[f"{name}_vs_rfecv"] = count([(ds, stats[ds, name]["mean"] >= stats[ds, "rfecv"]["mean"] - eps)
                                         for ds in datasets if _complete(stats, ds, (name, "rfecv"), n_folds)])
    return out


def within_all(stats, datasets, name, n_folds: int = N_FOLDS) -> tuple:
    """(datasets where ``name``'s mean accuracy is within 1 point of all features', datasets counted)."""
    seen = [ds for ds in datasets if _complete(stats, ds, (name, "all"), n_folds)]
    return sum(stats[ds, name]["mean"] >= stats[ds, "all"]["mean"] - 0.01 - 1e-9 for ds in seen), len(seen)


def _cell(stats, ds, name) -> str:
    s = stats.get((ds, name))
    if s is None:
        return "not run"
    partial_note = "" if s["folds"] == N_FOLDS else f" ({s['folds']} folds)"
    return f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f}{partial_note}"


def _ks(values) -> str:
    return ",".join(map(str, values))


def report(records, datasets) -> list:
    """The markdown lines of the tables (accuracy, chosen k, CPU time, targets)."""
    stats = summarise(records)
    names = [s for s in SELECTORS if any(key[1] == s for key in stats)]
    lines = ["### Held-out accuracy (%), mean ± std over the 5 outer folds",
             "",
             "| dataset (m x n, k = ceil(n/4)) | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for ds in datasets:
        if not any(key[0] == ds for key in stats):
            continue
        m, n = PAPER_DATASETS.get(ds, ("?", "?"))
        k = target_k(n) if isinstance(n, int) else "?"
        lines.append(f"| {ds} ({m} x {n}, k = {k}) | " + " | ".join(_cell(stats, ds, s) for s in names) + " |")
    near = [within_all(stats, datasets, s) for s in names]
    lines.append("| **within 1 point of all features** (datasets with every fold) | "
                 + " | ".join(f"{hit}/{seen}" for hit, seen in near) + " |")
    lines += ["", "### k chosen by cross-validation per outer fold, and the one-standard-error rule",
              "",
              "| dataset | ours-cv k (best) | ours-cv k (1se) | ours-cv accuracy best / 1se | ours-cv-wide k | ours-cv-grid k | "
              "ours-cv-grid (C, gamma) | ours-cv-grid accuracy, fixed SVC / own SVC | rfecv k |",
              "|---|---|---|---|---|---|---|---|---|"]
    for ds in datasets:
        cv, wide, grid, rfecv = (stats.get((ds, s)) for s in ("ours-cv", "ours-cv-wide", "ours-cv-grid", "rfecv"))
        if not (cv or wide or grid or rfecv):
            continue
        lines.append(" | ".join([
            f"| {ds}",
            _ks(cv["k"]) if cv else "", _ks(cv["k_1se"]) if cv else "",
            f"{100 * cv['mean']:.1f} / {100 * cv['mean_1se']:.1f}" if cv else "",
            _ks(wide["k"]) if wide else "", _ks(grid["k"]) if grid else "",
            " ".join(f"({C:g}, {g:g})" for C, g in grid["points"]) if grid else "",
            f"{100 * grid['mean']:.1f} / {100 * grid['mean_own']:.1f}" if grid else "",
            _ks(rfecv["k"]) if rfecv else ""]) + " |")
    lines += ["", "### Selection CPU seconds per fold (mean over the folds; the selector's fit alone)", "",
              "| dataset | " + " | ".join(n for n in names if n != "all") + " |",
              "|---|" + "---|" * (len(names) - 1)]
    for ds in datasets:
        if not any(key[0] == ds for key in stats):
            continue
        cells = [f"{stats[ds, s]['select_s']:.2f}" if (ds, s) in stats else "" for s in names if s != "all"]
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    t = targets(stats, datasets)
    hit, seen, miss = t["near_all"]
    lines += ["", "### The issue's targets", "",
              f"* ours (LS*) at k = ceil(n/4) within 1 point of all features: **{hit}/{seen}** "
              f"(target >= 7/9){_missed(miss)}",
              ]
    hit, seen, miss = t["vs_sklearn"]
    lines.append(f"* ours at or above the best scikit-learn selector at the same k (RFE, SFS, SelectKBest): "
                 f"**{hit}/{seen}** (target >= 7/9){_missed(miss)}")
    for name, what in (("ours-cv", "k grid 1..10"), ("ours-cv-wide", "k grid 1..20")):
        hit, seen, miss = t[f"{name}_vs_rfecv"]
        lines.append(f"* KernelFeatureSelectorCV ({what}) at or above RFECV (both choose k): "
                     f"**{hit}/{seen}**{_missed(miss)}")
    return lines


def _missed(miss) -> str:
    return f"; missed on {', '.join(miss)}" if miss else ""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(PAPER_DATASETS), choices=list(PAPER_DATASETS))
    parser.add_argument("--selectors", nargs="+", default=list(SELECTORS), choices=list(SELECTORS))
    parser.add_argument("--results", default=str(RESULTS), help="JSON-lines file of the per-fold records")
    parser.add_argument("--folds", nargs="+", type=int, choices=range(N_FOLDS), help="run only these outer folds")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the RESULTS.md section")
    add_io_args(parser)
    args = parser.parse_args(argv)
    if not args.report_only:
        run(args.datasets, args.selectors, args.data_dir, Path(args.results), folds=args.folds)
    records = read_records(Path(args.results), row_key)
    text = "\n".join([
        "## Held-out accuracy against scikit-learn's selectors (bench_selectors.py)",
        "",
        f"Command: `nice -n 5 {command('bench_selectors.py', argv)}` (from the repository root; the records are "
        "in `benchmarks/results/selectors.jsonl`, and a rerun resumes them). "
        f"Machine: {machine()}.",
        "",
        "Stratified 5-fold outer CV (shuffled, seed 0), the same folds for every selector; min-max scaling "
        "and selection fitted on the training folds only; every selector followed by the same final "
        "classifier, SVC(poly, degree 3, gamma 0.1, coef0 1, C 10) (CardinalitySVC's default final SVC), "
        "trained on the selected columns. ours = KernelFeatureSelector(sense='fit') with its default method "
        "LS*; ours-ls = the same with LS; ours-cv = KernelFeatureSelectorCV(method='ls'), k grid 1..10, "
        "5-fold inner CV, C 10, gamma 0.1; ours-cv-wide = the same with the k grid 1..min(n, 20); ours-cv-grid = the same with gammas [0.1, 1] searched jointly with k "
        "(the final classifier stays the fixed SVC); rfe / rfecv = RFE / RFECV with SVC(kernel='linear', C=1) "
        "(RFECV: 5-fold stratified); sfs = SequentialFeatureSelector(forward, the final classifier, 5-fold); "
        "kbest-mi = SelectKBest(mutual_info_classif, seeded).",
        "",
        *report(records, list(PAPER_DATASETS)),
    ])
    write_section(args.output, "bench_selectors", text)
    print(text)


if __name__ == "__main__":
    main()
