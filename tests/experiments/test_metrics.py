"""Gaps, summaries and performance profiles against hand-computed values."""
import numpy as np
import pytest

from minlp_fs.experiments import metrics
from exp_records import (DEFAULTS, accuracy_records, certified_records, multistart_records, params_records)


def test_gap_is_positive_for_worse_values_in_both_senses():
    assert metrics.gap_pct(-90.0, -100.0, "paper") == pytest.approx(10.0)
    assert metrics.gap_pct(-55.0, -50.0, "fit") == pytest.approx(10.0)
    assert metrics.gap_pct(-100.0, -100.0, "paper") == 0.0


def test_certified_summary_by_hand():
    s = metrics.certified_summary(certified_records())
    rows = {r["key"]: r for r in s["rows"]}
    ls = rows[("paper", "poly", "wholesale", "ls*")]
    assert (ls["n"], ls["n_reached"], ls["n_failed"]) == (2, 1, 0)
    assert ls["gap"] == pytest.approx(2.5) and ls["time"] == pytest.approx(2.0)
    rfe = rows[("paper", "poly", "wholesale", "rfe1")]
    assert (rfe["n"], rfe["n_reached"], rfe["n_failed"], rfe["gap"]) == (2, 0, 1, pytest.approx(10.0))
    fit = rows[("fit", "poly", "wholesale", "ls*")]
    assert (fit["n"], fit["gap"]) == (1, pytest.approx(10.0))
    assert s["n_certified"] == 3
    assert s["n_degenerate"] == {("paper", "poly", "wholesale"): 1, ("fit", "poly", "wholesale"): 0}
    by_b = {r["key"]: r["gap"] for r in s["by_B"]}
    assert by_b[("paper", "poly", "wholesale", "ls*", 2)] == pytest.approx(5.0)


def test_multistart_summary_by_hand():
    s = metrics.multistart_summary(multistart_records())
    rows = {r["key"]: r for r in s["rows"]}
    ls = rows[("paper", "ls*")]  # poly3: best start 0 %, spread 10 %; rbf: best -50, starts 20 % and 0 %
    assert (ls["n"], ls["n_reached"]) == (2, 2)
    assert ls["gap"] == pytest.approx(0.0) and ls["spread"] == pytest.approx((10.0 + 20.0) / 2)
    assert rows[("paper", "acso*")]["spread"] == pytest.approx(0.0)
    rfe = rows[("paper", "rfe2")]
    assert rfe["gap"] == pytest.approx(20.0) and rfe["spread"] is None and rfe["n_reached"] == 0


def test_params_summary_counts_the_default_for_every_option():
    s = metrics.params_summary(params_records(), DEFAULTS)
    rows = {r["key"]: r for r in s["rows"]}
    assert rows[("ls*", "refit_fraction", 0.1)]["gap"] == 0.0
    assert rows[("ls*", "n_samples", 200)]["svm_solves"] == 40
    assert rows[("ls*", "refit_fraction", 1e-9)]["gap"] == pytest.approx(10.0)
    assert rows[("ls*", "n_samples", 100)]["gap"] == pytest.approx(5.0)
    assert rows[("ls*", "refit_fraction", 1.0)]["time"] == 6.0


def test_accuracy_summary_means_and_std():
    rows = {r["key"][3]: r for r in metrics.accuracy_summary(accuracy_records())}
    assert rows["ls*"]["mean"] == pytest.approx(0.85) and rows["ls*"]["std"] == pytest.approx(0.05)
    assert rows["all-features"]["n_folds"] == 2


def test_dolan_more_ratios_and_profile_hand_example():
    r = metrics.performance_ratios({"a": [1.0, 2.0, None], "b": [2.0, 2.0, 4.0]})
    np.testing.assert_array_equal(r["a"], [1.0, 1.0, np.inf])
    np.testing.assert_array_equal(r["b"], [2.0, 1.0, 1.0])
    np.testing.assert_allclose(metrics.profile(r["a"], [1.0, 2.0, 10.0]), [2 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(metrics.profile(r["b"], [1.0, 2.0]), [2 / 3, 1.0])
    np.testing.assert_allclose(metrics.profile([0.0, 0.5, None], [0.0, 1.0]), [1 / 3, 2 / 3])


def test_a_problem_nobody_solved_counts_for_nobody():
    r = metrics.performance_ratios({"a": [None], "b": [None]})
    assert np.isinf(r["a"][0]) and np.isinf(r["b"][0])
