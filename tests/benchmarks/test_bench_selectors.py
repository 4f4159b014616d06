"""bench_selectors.py's plumbing on a tiny synthetic dataset: folds, selection inside the training folds,
one record per (selector, fold), resumption, and the targets' counting."""
import sys
from pathlib import Path

import numpy as np
import pytest

from minlp_fs import make_synthetic
from minlp_fs.experiments.store import read_records

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_selectors as bs  # noqa: E402


@pytest.fixture
def tiny(tmp_path):
    """A CSV of 36 rows x 6 columns (2 informative) in a data folder, as load_dataset reads it."""
    data = make_synthetic(m=36, n_informative=2, n_noise=4, seed=1)
    lines = [",".join([f"x{j}" for j in range(data.X.shape[1])] + ["y"])]
    lines += [",".join([repr(float(v)) for v in row] + [str(int(label))]) for row, label in zip(data.X, data.y)]
    (tmp_path / "tiny.csv").write_text("\n".join(lines) + "\n")
    return tmp_path, data


def test_outer_folds_are_stratified_disjoint_and_repeatable():
    y = np.array([1] * 12 + [-1] * 8)
    folds = bs.outer_folds(y, n_folds=4, seed=0)
    tests = np.concatenate([test for _, test in folds])
    assert sorted(tests) == list(range(20))
    for train, test in folds:
        assert not set(train) & set(test)
        assert (y[test] == 1).sum() == 3 and (y[test] == -1).sum() == 2
    again = bs.outer_folds(y, n_folds=4, seed=0)
    assert all((a[1] == b[1]).all() for a, b in zip(folds, again))
    assert any((a[1] != b[1]).any() for a, b in zip(folds, bs.outer_folds(y, n_folds=4, seed=1)))


def test_the_selector_sees_only_the_training_rows(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(20, 4))
    y = np.array([1, -1] * 10)
    train, test = np.arange(15), np.arange(15, 20)
    seen = {}

    class Spy:
        def fit(self, X_fit, y_fit):
            seen["X"], seen["y"] = X_fit, y_fit
            return self

        def get_support(self):
            return np.array([True, False, True, False])

    monkeypatch.setattr(bs, "make_selector", lambda name, k, seed=0: Spy())
    record = bs.run_fold(X, y, train, test, "spy", 2)
    lo, span = X[train].min(axis=0), np.ptp(X[train], axis=0)
    np.testing.assert_allclose(seen["X"], (X[train] - lo) / span)
    assert (seen["y"] == y[train]).all()
    assert record["features"] == [0, 2] and record["k"] == 2 and 0 <= record["accuracy"] <= 1


def test_every_selector_runs_once_per_fold_and_a_rerun_resumes(tiny):
    folder, data = tiny
    path = folder / "selectors.jsonl"
    assert bs.run(["tiny"], ["all"], folder, path=path, n_folds=2, log=lambda _: None, folds=[1]) == 1
    assert [r["fold"] for r in read_records(path, bs.row_key)] == [1]
    assert bs.run(["tiny"], bs.SELECTORS, folder, path=path, n_folds=2, log=lambda _: None) == 2 * len(bs.SELECTORS) - 1
    records = read_records(path, bs.row_key)
    assert {(r["selector"], r["fold"]) for r in records} == {(s, f) for s in bs.SELECTORS for f in range(2)}
    n, k = data.X.shape[1], bs.target_k(data.X.shape[1])
    assert k == 2
    for r in records:
        assert r["k"] == len(r["features"]) and all(0 <= j < n for j in r["features"])
        assert 0 <= r["accuracy"] <= 1 and r["select_s"] >= 0
        if r["selector"] == "all":
            assert r["k"] == n
        elif r["selector"] in bs.FIXED_K:
            assert r["k"] == k
        else:
            assert 1 <= r["k"] <= n
        if r["selector"] == "ours-cv":
            assert 1 <= r["k_1se"] <= r["k"] <= r["k_top"] and 0 <= r["accuracy_1se"] <= 1
        if r["selector"] == "ours-cv-grid":
            assert 0 <= r["accuracy_own"] <= 1 and (r["C"], r["gamma"]) in {(10, 0.1), (10, 1)}
    assert bs.run(["tiny"], bs.SELECTORS, folder, path=path, n_folds=2, log=lambda _: None) == 0
    lines = bs.report(records, ["tiny"])
    assert any(line.startswith("| tiny") for line in lines)


def _records(ds, means):
    """Five folds per selector, each with the given accuracy."""
    return [{"dataset": ds, "selector": s, "fold": f, "k": 1, "select_s": 0.0, "accuracy": acc}
            for s, acc in means.items() for f in range(5)]


def test_targets_count_hits_and_name_the_misses():
    records = (_records("a", {"all": 0.90, "ours": 0.89, "rfe": 0.89, "sfs": 0.80, "kbest-mi": 0.70,
                              "ours-cv": 0.9, "rfecv": 0.91})
               + _records("b", {"all": 0.90, "ours": 0.885, "rfe": 0.95, "sfs": 0.80, "kbest-mi": 0.70,
                                "ours-cv": 0.9, "rfecv": 0.9})
               + _records("c", {"all": 0.90, "ours": 0.80}))      # no scikit-learn selector run yet
    t = bs.targets(bs.summarise(records), ["a", "b", "c"])
    assert t["near_all"] == (1, 3, ["b", "c"])
    assert t["vs_sklearn"] == (1, 2, ["b"])
    assert t["ours-cv_vs_rfecv"] == (1, 2, ["a"])
    assert t["ours-cv-wide_vs_rfecv"] == (0, 0, [])
    assert bs.within_all(bs.summarise(records), ["a", "b", "c"], "rfe") == (2, 2)
    assert bs.within_all(bs.summarise(records), ["a", "b", "c"], "sfs") == (0, 2)
    partial = [r for r in _records("d", {"all": 0.9, "ours": 0.9}) if r["fold"] < 4]
    assert bs.targets(bs.summarise(partial), ["d"])["near_all"] == (0, 0, [])
