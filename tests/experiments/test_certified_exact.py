"""The certified grid certifies each instance with certify's ``auto`` exact method: bnb for the polynomial
kernels and the Gaussian kernel's fit sense (up to the paper's B_max), enumeration otherwise; bnb records are the
reference like enumeration's."""
from types import SimpleNamespace

from minlp_fs.experiments import metrics, tables
from minlp_fs.experiments.budget import Plan
from minlp_fs.experiments.grids import certified_grid, exact_method
from minlp_fs.experiments.registry.certified import grid_bmax

from exp_records import certified_records


def test_grid_uses_bnb_where_certify_auto_does_and_per_kernel_bmax():
    g = certified_grid(["parkinsons"], {"parkinsons": {"poly2": 11, "rbf": {"paper": 3, "fit": 11}}},
                       kernels=("poly2", "rbf"), senses=("paper", "fit"), methods=(),
                       exact=exact_method({"parkinsons": 22}))
    exact = {(u["kernel"], u["sense"], u["B"]): u["method"] for u in g.units}
    top = {(k, s): max(B for k2, s2, B in exact if (k2, s2) == (k, s)) for k, s, _ in exact}
    assert top == {("poly2", "paper"): 11, ("poly2", "fit"): 11, ("rbf", "paper"): 3, ("rbf", "fit"): 11}
    assert exact[("poly2", "fit", 2)] == "enumerate"      # C(22, 2) = 231 subsets: enumeration is faster
    assert exact[("poly2", "fit", 11)] == exact[("poly2", "paper", 11)] == "bnb"    # 705,432 subsets
    assert {m for (k, s, _), m in exact.items() if k == "rbf" and s == "paper"} == {"enumerate"}  # trivial bound only
    assert exact[("rbf", "fit", 3)] == "enumerate" and exact[("rbf", "fit", 4)] == "enumerate"  # 7,315 subsets
    assert exact[("rbf", "fit", 5)] == exact[("rbf", "fit", 11)] == "bnb"                       # 26,334: the chords


def test_bnb_records_are_the_reference_optimum():
    records = [{**r, "unit": {**r["unit"], "method": "bnb"}} if r["unit"]["method"] == "enumerate" else r
               for r in certified_records()]
    assert metrics.certified_summary(records) == metrics.certified_summary(certified_records())


def test_grid_bmax_reaches_the_paper_within_n_over_2_and_the_cap():
    plan = [Plan("parkinsons", 22, 195, 6, "time", 74613, 1, 0.1, 0.002),
            Plan("wholesale", 7, 440, 3, "n/2", 35, 1, 0.1, 0.002)]
    assert grid_bmax(SimpleNamespace(slice=SimpleNamespace(b_cap=None)), plan) == {"parkinsons": 11, "wholesale": 3}
    assert grid_bmax(SimpleNamespace(slice=SimpleNamespace(b_cap=4)), plan) == {"parkinsons": 6, "wholesale": 3}
    text = tables.coverage_table(plan, [], n_cores=2, grid_bmax={"parkinsons": 11})
    assert "| B_max (enumeration) | B_max (grid) |" in text and "| Parkinsons | 22 | 195 | <u>6</u> | 11 |" in text


def test_the_enumeration_plan_counts_the_families_enumeration_certifies():
    """With certify's auto, bnb certifies the polynomial kernels and the Gaussian fit sense, so the
    enumeration budget is planned for the Gaussian paper sense alone (a larger B_max for the same hours)."""
    from minlp_fs.experiments.config import BenchConfig
    from minlp_fs.experiments.registry.certified import enumerated_families

    auto = BenchConfig("certified", kernels=("poly2", "rbf"), senses=("paper", "fit"))
    assert enumerated_families(auto) == [("rbf", "paper")]
    forced = BenchConfig("certified", kernels=("poly2", "rbf"), senses=("paper", "fit"), exact_method="enumerate")
    assert len(enumerated_families(forced)) == 4
    poly = BenchConfig("certified", kernels=("poly2",), senses=("fit",))
    assert enumerated_families(poly) == [("poly2", "fit")]     # nothing enumerated beyond small B: planned as is
