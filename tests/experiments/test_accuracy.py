"""Held-out accuracy: same kernel as ours, selection on the training folds only."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from minlp_fs.experiments import accuracy
from minlp_fs.kernels import make_kernel


@pytest.mark.parametrize("name", ["poly3", "rbf"])
def test_kernel_svc_computes_our_kernel(name):
    X = np.random.default_rng(0).uniform(size=(12, 4))
    ours = make_kernel(name)
    svc = accuracy.kernel_svc(ours.params(), C=10.0)
    if name == "rbf":
        theirs = rbf_kernel(X, gamma=svc.gamma)
    else:
        theirs = polynomial_kernel(X, degree=svc.degree, gamma=svc.gamma, coef0=svc.coef0)
    np.testing.assert_allclose(ours.gram(X), theirs, rtol=1e-12)
    assert svc.C == 10.0


def test_selection_sees_only_the_training_rows(monkeypatch):
    seen = {}
    real = accuracy.solve_or_stop

    def spy(instance, method, **kw):
        seen["m"] = instance.m
        return real(instance, method, **kw)

    monkeypatch.setattr(accuracy, "solve_or_stop", spy)
    unit = {"dataset": "synthetic", "kernel": "poly2", "B": 3, "sense": "fit", "method": "rfe1", "fold": 1,
            "n_folds": 5, "seed": 0}
    rec = accuracy.accuracy_unit(unit)
    assert seen["m"] == rec["n_train"] and rec["n_train"] + rec["n_test"] == 200
    assert len(rec["features"]) == 3 and 0.0 <= rec["accuracy"] <= 1.0
    again = accuracy.accuracy_unit(unit)  # deterministic, apart from the time (the first run compiles)
    assert {k: v for k, v in again.items() if k != "selection_time_s"} == \
        {k: v for k, v in rec.items() if k != "selection_time_s"}


@pytest.mark.parametrize("method, n_selected", [("all-features", 10), ("sk-rfe-linear", 3), ("sk-sfs", 3)])
def test_baselines(method, n_selected):
    unit = {"dataset": "synthetic", "kernel": "poly2", "B": 3, "sense": None, "method": method, "fold": 0,
            "n_folds": 5, "seed": 0}
    rec = accuracy.accuracy_unit(unit)
    assert len(rec["features"]) == n_selected and 0.0 <= rec["accuracy"] <= 1.0


def test_the_informative_features_beat_noise():
    # synthetic labels depend on features 0..2 only: the fit-sense selection of 3 must find some of them
    unit = {"dataset": "synthetic", "kernel": "poly2", "B": 3, "sense": "fit", "method": "rfe2", "fold": 0,
            "n_folds": 5, "seed": 0}
    rec = accuracy.accuracy_unit(unit)
    assert set(rec["features"]) & {0, 1, 2}
