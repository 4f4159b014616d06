"""Held-out accuracy of the selected features: stratified k-fold CV, selection fitted on the training folds.

For each fold, the features are selected on the training rows only — min-max scaling fitted there,
the DFS-SVM instance built there and solved by a method through :func:`minlp_fs.api.solve` (in the
instance's sense) — then an SVC with the instance's kernel and C (k_beta restricted to the
selected features: poly (gamma <x, z> + c)^d or exp(-gamma ||x - z||^2)) is trained on the training
rows and scored on the test fold. Baselines, on the same folds and the same SVC:

* ``all-features``: no selection;
* ``sk-rfe-linear``: scikit-learn's RFE ranked by a linear SVM (same C);
* ``sk-sfs``: scikit-learn's SequentialFeatureSelector (forward) with the same kernel SVC.

One unit = (dataset, kernel, B, sense, method, fold); the baselines have ``sense`` None.
"""
from __future__ import annotations

import time

import numpy as np

from ..datasets import load_dataset, make_synthetic
from ..instance import make_instance
from ..kernels import make_kernel
from .grids import Grid, usable
from .units import solve_or_stop

BASELINES = ("all-features", "sk-rfe-linear", "sk-sfs")
ACCURACY_METHODS = ("ls*", "acso*", "rfe1", "rfe2")


def kernel_svc(kernel_params: dict, C: float):
    """scikit-learn's SVC computing the same kernel as ours (polynomial or Gaussian)."""
    from sklearn.svm import SVC

    if kernel_params["name"] == "rbf":
        return SVC(C=C, kernel="rbf", gamma=kernel_params["gamma"])
    return SVC(C=C, kernel="poly", degree=kernel_params["degree"], gamma=kernel_params["gamma"],
               coef0=kernel_params["coef0"])


def _folds(y: np.ndarray, n_folds: int, seed: int) -> list:
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def _minmax(train: np.ndarray, other: np.ndarray) -> tuple:
    """Both matrices scaled by the training rows' column minimum and range."""
    lo, hi = train.min(axis=0), train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (train - lo) / span, (other - lo) / span


def _select(unit: dict, X: np.ndarray, y: np.ndarray, svc) -> list:
    """The selected feature indices for the unit's method, fitted on (X, y) only."""
    method, B = unit["method"], unit["B"]
    if method == "all-features":
        return list(range(X.shape[1]))
    if method == "sk-rfe-linear":
        from sklearn.feature_selection import RFE
        from sklearn.svm import SVC

        rfe = RFE(SVC(kernel="linear", C=unit.get("C", 10.0)), n_features_to_select=B).fit(X, y)
        return [int(j) for j in np.flatnonzero(rfe.support_)]
    if method == "sk-sfs":
        from sklearn.feature_selection import SequentialFeatureSelector

        sfs = SequentialFeatureSelector(svc, n_features_to_select=B, direction="forward", cv=3).fit(X, y)
        return [int(j) for j in np.flatnonzero(sfs.get_support())]
    inst = make_instance(X, y, B=B, kernel=unit["kernel"], C=unit.get("C", 10.0), gamma=unit.get("gamma"),
                         sense=unit["sense"], scaling="none", name=unit["dataset"])
    return list(solve_or_stop(inst, method, seed=unit.get("seed", 0)).features)


def accuracy_unit(unit: dict, data_dir=None) -> dict:
    """Test accuracy on fold ``unit['fold']`` of the SVC on the features selected on the other folds."""
    data = make_synthetic(seed=0) if unit["dataset"] == "synthetic" else load_dataset(unit["dataset"], data_dir)
    y = np.where(data.y == np.unique(data.y)[1], 1.0, -1.0)
    train, test = _folds(y, unit.get("n_folds", 5), unit.get("seed", 0))[unit["fold"]]
    X_train, X_test = _minmax(data.X[train], data.X[test])
    svc = kernel_svc(make_kernel(unit["kernel"], gamma=unit.get("gamma")).params(), unit.get("C", 10.0))
    t0 = time.perf_counter()
    features = _select(unit, X_train, y[train], svc)
    select_s = time.perf_counter() - t0
    svc.fit(X_train[:, features], y[train])
    accuracy = float(np.mean(svc.predict(X_test[:, features]) == y[test]))
    return {"accuracy": accuracy, "features": features, "selection_time_s": select_s,
            "n_train": int(len(train)), "n_test": int(len(test))}


def accuracy_grid(datasets, B: int = 5, kernels=("poly2",), senses=("paper", "fit"), methods=ACCURACY_METHODS,
                  n_folds: int = 5, seed: int = 0):
    """Units of the accuracy table (a :class:`~minlp_fs.experiments.grids.Grid`)."""
    grid = Grid()
    for ds in datasets:
        for kernel in kernels:
            for fold in range(n_folds):
                base = {"dataset": ds, "kernel": kernel, "B": B, "fold": fold, "n_folds": n_folds, "seed": seed}
                for meth in BASELINES:
                    grid.add({**base, "method": meth, "sense": None})
                for meth in methods:
                    if usable(grid, meth, kernel):
                        for sense in senses:
                            grid.add({**base, "method": meth, "sense": sense})
    return grid
