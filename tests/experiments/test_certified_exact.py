"""The certified grid certifies each instance with certify's ``auto`` exact method: bnb for the polynomial
kernels (up to the paper's B_max), enumeration otherwise; bnb records are the reference like enumeration's."""
from types import SimpleNamespace

from minlp_fs.experiments import metrics, tables
from minlp_fs.experiments.budget import Plan
from minlp_fs.experiments.grids import certified_grid, exact_method
from minlp_fs.experiments.registry.certified import poly_bmax

from exp_records import certified_records


def test_grid_uses_bnb_where_certify_auto_does_and_per_kernel_bmax():
    g = certified_grid(["parkinsons"], {"parkinsons": {"poly2": 11, "rbf": 3}}, kernels=("poly2", "rbf"),
                       senses=("fit",), methods=(), exact=exact_method({"parkinsons": 22}))
    exact = {(u["kernel"], u["B"]): u["method"] for u in g.units}
    assert max(B for k, B in exact if k == "poly2") == 11 and max(B for k, B in exact if k == "rbf") == 3
    assert exact[("poly2", 2)] == "enumerate"      # C(22, 2) = 231 subsets: enumeration is faster
    assert exact[("poly2", 11)] == "bnb"           # 705,432 subsets
    assert {m for (k, _), m in exact.items() if k == "rbf"} == {"enumerate"}  # no bound for rbf


def test_bnb_records_are_the_reference_optimum():
    records = [{**r, "unit": {**r["unit"], "method": "bnb"}} if r["unit"]["method"] == "enumerate" else r
               for r in certified_records()]
    assert metrics.certified_summary(records) == metrics.certified_summary(certified_records())


def test_poly_bmax_reaches_the_paper_within_n_over_2_and_the_cap():
    plan = [Plan("parkinsons", 22, 195, 6, "time", 74613, 1, 0.1, 0.002),
            Plan("wholesale", 7, 440, 3, "n/2", 35, 1, 0.1, 0.002)]
    assert poly_bmax(SimpleNamespace(slice=SimpleNamespace(b_cap=None)), plan) == {"parkinsons": 11, "wholesale": 3}
    assert poly_bmax(SimpleNamespace(slice=SimpleNamespace(b_cap=4)), plan) == {"parkinsons": 6, "wholesale": 3}
    text = tables.coverage_table(plan, [], n_cores=2, poly_bmax={"parkinsons": 11})
    assert "| B_max (enumeration) | poly B_max (bnb) |" in text and "| Parkinsons | 22 | 195 | <u>6</u> | 11 |" in text
