"""The warm-started path of KernelFeatureSelectorCV against cold runs per B, and CV with a gamma grid.

(a) Quality: for each B of a grid, :func:`minlp_fs.selection_cv.selection_path` keeps the best of the cold run (the
    method from its alpha-start) and the warm runs (from the neighbouring B's best subset grown or
    shrunk by the best exact feature). Counted: the (instance, B) where a warm run was strictly better
    than the cold run, on seeded synthetic sets (both senses, LS*) and on BCD (fit sense, LS and LS*).
(b) Cost: CPU seconds of the path against the cold runs alone, side by side on BCD.
(c) An interaction the default gamma misses: y = 1[x0 x1 + x2^2 > median] among 20 uniform noise
    columns; ``KernelFeatureSelectorCV`` with ``gammas=[0.1, 1]`` against an SVC on all columns at
    either gamma, held-out accuracy.

Usage (from the repository root): ``python benchmarks/bench_selection_path.py [--output benchmarks/RESULTS.md]``
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from minlp_fs import KernelFeatureSelector, KernelFeatureSelectorCV, get_method, make_synthetic
from minlp_fs.selector import _instance
from minlp_fs.selection_cv import selection_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPORT, command, machine, write_section  # noqa: E402


def _warm_wins(path) -> list:
    return [B for B, res in path.items() if res.info["path_start"] != "default"]


def quality_synthetic(seeds=range(6)) -> list:
    rows = []
    for sense in ("fit", "paper"):
        wins, total = 0, 0
        for seed in seeds:
            data = make_synthetic(m=60, n_informative=3, n_noise=7, seed=seed)
            est = KernelFeatureSelector(9, method="ls*", sense=sense, gamma=1.0, random_state=0)
            path = selection_path(est, data.X, data.y, list(range(1, 10)))
            wins += len(_warm_wins(path))
            total += len(path)
        rows.append(f"| synthetic m=60, n=10 (3 informative), seeds {seeds.start}-{seeds.stop - 1}, poly3, "
                    f"gamma=1 | {sense} | ls* | 1..9 | {wins}/{total} |")
    return rows


def bcd(methods=("ls", "ls*")) -> tuple[list, list]:
    X, y = load_breast_cancer(return_X_y=True)
    ks = list(range(1, 9))
    quality, cost = [], []
    for method in methods:
        est = KernelFeatureSelector(8, method=method, random_state=0)
        t = time.process_time()
        path = selection_path(est, X, y, ks)
        t_path = time.process_time() - t
        t = time.process_time()
        cold = {B: get_method(method, seed=0).solve(_instance(est, X, y, B)[0]) for B in ks}
        t_cold = time.process_time() - t
        gaps = [abs(path[B].objective - cold[B].objective) / abs(cold[B].objective) for B in ks]
        quality.append(f"| BCD 569 x 30, poly3, gamma=0.1 | fit | {method} | 1..8 | {len(_warm_wins(path))}/8 "
                       f"(max rel. difference to cold {max(gaps):.1e}) |")
        cost.append(f"| BCD, {method}, B = 1..8 | {t_path:.1f} | {t_cold:.1f} | {t_path / t_cold:.2f}x |")
    return quality, cost


def interaction() -> list:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 23))
    s = X[:, 0] * X[:, 1] + X[:, 2] ** 2
    y = (s > np.median(s)).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    t = time.process_time()
    sel = KernelFeatureSelectorCV(range(1, 6), cv=3, gammas=[0.1, 1.0], method="ls", random_state=0).fit(X_tr, y_tr)
    t_cv = time.process_time() - t
    rows = [f"| KernelFeatureSelectorCV(1..5, cv=3, gammas=[0.1, 1], ls) | {sel.n_features_} "
            f"{list(map(int, sel.selected_features_))}, gamma {sel.gamma_:g} | "
            f"{sel.estimator_.score(X_te[:, sel.support_], y_te):.3f} | {t_cv:.1f} |"]
    for gamma in (0.1, 1.0):
        full = make_pipeline(MinMaxScaler(), SVC(kernel="poly", degree=3, gamma=gamma, coef0=1.0, C=10.0))
        rows.append(f"| all 23 columns, SVC poly3, gamma {gamma:g} | 23 | {full.fit(X_tr, y_tr).score(X_te, y_te):.3f} | |")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(REPORT), help="markdown file to update")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    load0 = os.getloadavg()[0]
    q_syn = quality_synthetic()
    q_bcd, cost = bcd()
    inter = interaction()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join([
        "## Warm-started path over B and CV with a gamma grid (bench_selection_path.py)",
        "",
        f"Command: `{command('bench_selection_path.py', argv)}` (from the repository root). Date: {stamp}, "
        f"total {time.perf_counter() - start:.0f} s.",
        f"Machine: {machine()}. Load average (1 min) at start {load0:.1f}, at end {os.getloadavg()[0]:.1f}; "
        "times are CPU seconds of this process, compared side by side in this run.",
        "",
        "### (a) B where a warm run found a strictly better subset than the cold run (the path keeps the best)",
        "",
        "| instances | sense | method | B | warm strictly better |",
        "|---|---|---|---|---|",
        *q_syn, *q_bcd,
        "",
        "### (b) Cost of the path (cold + warm runs) against the cold runs alone",
        "",
        "| instance | path CPU s | cold runs CPU s | path / cold |",
        "|---|---|---|---|",
        *cost,
        "",
        "### (c) y = 1[x0 x1 + x2^2 > median] among 20 noise columns, m = 300 (70/30 split, seed 0)",
        "",
        "| model | features (chosen) | held-out accuracy | CV CPU s |",
        "|---|---|---|---|",
        *inter,
    ])
    write_section(args.output, "bench_selection_path", text)
    print(text)


if __name__ == "__main__":
    main()
