"""Multiclass selection (one subset shared by the one-vs-rest machines, minlp_fs.multiclass): cost and accuracy.

(a) Cost: CPU seconds of enumeration and LS* on a multiclass instance against the same method run on each
    of its K one-vs-rest binary instances separately (the same K duals per subset, solved in K runs), side
    by side; and how many of the enumeration's solves stopped early (the last class's proof).
(b) Accuracy: 5-fold stratified CV accuracy of CardinalitySVC (fit sense, LS*, k = ceil(n/4) features) on
    scikit-learn's multiclass sets, against an SVC on all columns and scikit-learn selectors on the same
    folds (SelectKBest with mutual information, RFE with a linear SVC), each followed by the same SVC.

Usage (from the repository root): ``python benchmarks/bench_multiclass.py [--output benchmarks/RESULTS.md]``
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.feature_selection import RFE, SelectKBest, mutual_info_classif
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC, LinearSVC

from minlp_fs import CardinalitySVC, get_method, make_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPORT, command, machine, write_section  # noqa: E402


def _digits_0_to_3():
    """Digits 0-3, the 16 pixel columns of highest variance (no constant columns): 4 classes."""
    X, y = load_digits(return_X_y=True)
    keep = y < 4
    cols = np.argsort(-X[keep].var(axis=0))[:16]
    return X[keep][:, cols], y[keep]


DATASETS = {"iris": lambda: load_iris(return_X_y=True), "wine": lambda: load_wine(return_X_y=True),
            "digits 0-3 (16 px)": _digits_0_to_3}


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def cost(rows_enum=(("wine", 4), ("digits 0-3 (16 px)", 2)), rows_ls=(("wine", 4), ("digits 0-3 (16 px)", 4))) -> list:
    X, y = DATASETS["iris"]()
    get_method("ls*").solve(make_instance(X, y, 2, kernel="poly3"))  # compile the solvers before timing
    lines = []
    runs = [("enumerate", sense, case) for sense in ("fit", "paper") for case in rows_enum]
    for method, sense, (name, B) in runs + [("ls*", "fit", case) for case in rows_ls]:
        X, y = DATASETS[name]()
        inst = make_instance(X, y, B, kernel="poly3", sense=sense, name=name)
        res, t_multi = _cpu(lambda: get_method(method).solve(inst))
        t_parts = sum(_cpu(lambda p=p: get_method(method).solve(p))[1] for p in inst.parts)
        early = f"{res.info['n_stopped_early']}/{res.info['n_done']}" if method == "enumerate" else "-"
        lines.append(f"| {name} ({X.shape[0]} x {X.shape[1]}, K={inst.n_classes}) | {sense} | {method} | {B} | "
                     f"{t_multi:.2f} | {t_parts:.2f} | {t_multi / t_parts:.2f}x | {early} |")
    return lines


def accuracy(seed: int = 0) -> list:
    lines = []
    svc = dict(kernel="poly", degree=3, gamma=0.1, coef0=1.0, C=10.0)
    for name, load in DATASETS.items():
        X, y = load()
        k = math.ceil(X.shape[1] / 4)
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        models = {
            f"CardinalitySVC (ls*, fit, k={k})": CardinalitySVC(k),
            "all columns": make_pipeline(MinMaxScaler(), SVC(**svc)),
            f"SelectKBest(mutual info, k={k})": make_pipeline(
                MinMaxScaler(), SelectKBest(lambda X, y: mutual_info_classif(X, y, random_state=seed), k=k),
                SVC(**svc)),
            f"RFE(LinearSVC, k={k})": make_pipeline(MinMaxScaler(), RFE(LinearSVC(C=1.0), n_features_to_select=k),
                                                    SVC(**svc)),
        }
        for label, model in models.items():
            scores, t = _cpu(lambda m=model: cross_val_score(m, X, y, cv=folds))
            lines.append(f"| {name} ({X.shape[0]} x {X.shape[1]}, K={np.unique(y).size}) | {label} | "
                         f"{scores.mean():.3f} +- {scores.std():.3f} | {t:.1f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(REPORT), help="markdown file to update")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    a, b = cost(), accuracy()
    body = "\n".join([
        "## Multiclass: one subset for every class (bench_multiclass.py)", "",
        f"Command: `{command('bench_multiclass.py', argv)}` (from the repository root). Date: {started}, "
        f"total {time.perf_counter() - t0:.0f} s.",
        f"Machine: {machine()}. Load average (1 min) at start {load0:.1f}, at end {os.getloadavg()[0]:.1f}; "
        "times are CPU seconds of this process, compared side by side in this run.", "",
        "### (a) A multiclass run against the same method on each one-vs-rest binary instance (poly3)", "",
        "| instance | sense | method | B | multiclass CPU s | K binary runs CPU s | ratio "
        "| enumeration solves stopped early |",
        "|---|---|---|---|---|---|---|---|", *a, "",
        "The binary runs answer a different question (K subsets, one per class); the ratio is the cost of one "
        "shared subset against that. The multiclass oracle builds each Gram once for the K classes.", "",
        "### (b) 5-fold stratified CV accuracy (shuffled, seed 0), each selector followed by the same SVC "
        "(poly3, gamma 0.1, C 10, min-max scaling)", "",
        "| data | model | accuracy (mean +- std over folds) | CPU s |", "|---|---|---|---|", *b,
    ])
    write_section(args.output, "bench_multiclass", body)
    print(body)


if __name__ == "__main__":
    main()
