"""Held-out accuracy of the selected features (stratified k-fold CV; the paper reports none)."""
from __future__ import annotations

from .. import figures, metrics, tables
from ..accuracy import accuracy_grid
from ..accuracy import accuracy_unit as unit
from ..config import BenchConfig

TITLE = "Held-out accuracy (stratified 5-fold CV, selection on the training folds)"


def build(cfg: BenchConfig, measure: bool = True):
    return accuracy_grid(cfg.pick("datasets"), B=cfg.slice.B, kernels=cfg.pick("kernels"), senses=cfg.pick("senses"),
                         methods=cfg.pick("methods")), None


def render(cfg: BenchConfig, grid, plan, records) -> tuple:
    rows = metrics.accuracy_summary(records)
    lines = [tables.accuracy_table(rows), "",
             "The paper reports no held-out accuracy; `sk-rfe-linear` = scikit-learn RFE ranked by a linear "
             "SVM, `sk-sfs` = SequentialFeatureSelector (forward, 3-fold inner CV) with the same kernel SVC; "
             "the evaluated classifier is always the kernel SVC (C = 10, gamma = 0.1, c = 1).", ""]
    return lines, [figures.accuracy_figure(rows, cfg.figure("accuracy"))]
