"""B_max from the enumeration budget: the subset cap, the time budget, floor(n/2) and the cap."""
import math

import pytest

from minlp_fs.experiments.budget import choose_bmax, measure_qp_time

# n = 10: cumulative C(10, B) for B = 1..5 is 10, 55, 175, 385, 637


def test_time_budget_binds():
    p = choose_bmax("d", 10, 100, qp_time_s=1.0, n_kernels=1, n_senses=1, hours=200 / 3600)
    assert (p.bmax, p.binding, p.qps, p.subsets_at_bmax) == (3, "time", 175, 120)
    assert p.hours == pytest.approx(175 / 3600)


def test_kernels_senses_and_cores_scale_the_cost():
    p = choose_bmax("d", 10, 100, qp_time_s=1.0, n_kernels=2, n_senses=2, hours=200 / 3600, n_cores=4)
    assert (p.bmax, p.qps) == (3, 4 * 175)
    assert p.hours == pytest.approx(175 / 3600)


def test_subset_cap_half_n_and_explicit_cap():
    p = choose_bmax("d", 10, 100, 1e-9, 1, 1, hours=1, max_subsets=100)
    assert (p.bmax, p.binding) == (2, "subsets")
    p = choose_bmax("d", 10, 100, 1e-9, 1, 1, hours=1)
    assert (p.bmax, p.binding, p.qps) == (5, "n/2", 637)
    p = choose_bmax("d", 10, 100, 1e-9, 1, 1, hours=1, b_cap=2)
    assert (p.bmax, p.binding) == (2, "cap")
    assert choose_bmax("d", 1, 100, 1.0, 1, 1, hours=0).bmax == 1


def test_measured_qp_time_is_positive_and_small():
    t = measure_qp_time("synthetic", "poly2", seconds=0.2)
    assert 0 < t < 1.0
    assert math.isfinite(t)
