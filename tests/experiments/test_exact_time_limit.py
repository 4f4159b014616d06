"""``bench certified --exact-time-limit``: bnb units carry their time limit, a run stopped there is recorded
uncertified with its bound and gap, no table takes it as a reference, and the coverage per kernel and sense
(metrics.certification_reach, tables.reach_table) reports how far each instance family was certified."""
import argparse
import math
from types import SimpleNamespace

import pytest

from minlp_fs.errors import InputError
from minlp_fs.experiments import metrics, tables
from minlp_fs.experiments.cli import add_bench_parser, config_from_args
from minlp_fs.experiments.config import BenchConfig
from minlp_fs.experiments.grids import certified_grid
from minlp_fs.experiments.registry import certified as certified_registry
from minlp_fs.experiments.registry.certified import reach_lines
from minlp_fs.experiments.units import exact_options, solve_unit
from exp_records import record


def _grid(limit, exact="bnb", top=3):
    return certified_grid(["synthetic"], {"synthetic": top}, kernels=("poly2",), senses=("paper", "fit"),
                          methods=("rfe1",), exact=lambda ds, k, B, s: exact if B > 1 else "enumerate",
                          exact_time_limit=limit)


def test_bnb_units_carry_the_exact_time_limit_and_enumeration_none():
    units = _grid(30)
    bnb = [u for u in units.units if u["method"] == "bnb"]
    assert len(bnb) == 4 and all(u["options"] == {"time_limit": 30.0} for u in bnb)
    assert all("options" not in u for u in units.units if u["method"] in ("enumerate", "rfe1"))
    assert all("options" not in u for u in _grid(None).units)
    assert exact_options("bnb", 5) == {"time_limit": 5.0}
    assert exact_options("enumerate", 5) == {} and exact_options("bnb", None) == {}


def test_exact_time_limit_flag_reaches_the_grid_and_the_slice_default_is_120s():
    p = argparse.ArgumentParser()
    add_bench_parser(p.add_subparsers(dest="verb"))
    args = p.parse_args(["bench", "certified", "--exact-time-limit", "45"])
    assert config_from_args(args).pick("exact_time_limit") == 45.0
    args = p.parse_args(["bench", "certified"])
    assert config_from_args(args).pick("exact_time_limit") == 120.0


@pytest.mark.parametrize("value", [0.0, -1.0, math.inf, math.nan])
@pytest.mark.parametrize("flag", ["exact_time_limit", "solver_time_limit", "hours"])
def test_time_limits_must_be_positive_finite(flag, value):
    with pytest.raises(InputError, match="--" + flag.replace("_", "-")):
        BenchConfig("certified", **{flag: value})


def _run(units):
    return [{"unit": u, **solve_unit(u), "unit_time_s": 0.5} for u in units]


def test_a_bnb_run_stopped_at_its_limit_is_recorded_uncertified_and_is_no_reference():
    units = [u for u in _grid(1e-3, top=5).units if u["B"] == 5]   # 1 ms: stops in its first node
    records = _run(units)
    stopped = [r for r in records if r["unit"]["method"] == "bnb"]
    assert len(stopped) == 2
    for r in stopped:
        res = r["result"]
        assert (res["status"], res["certified"]) == ("time_limit", False)
        assert res["bound"] is not None and res["info"]["gap_percent"] > 0
        assert metrics.stopped_gap(r) == res["info"]["gap_percent"]
        sign = 1 if r["unit"]["sense"] == "paper" else -1   # the bound is on the right side of the incumbent
        assert sign * res["bound"] <= sign * res["objective"]
    summary = metrics.certified_summary(records)
    assert summary["n_certified"] == 0 and summary["rows"] == []
    reach = metrics.certification_reach(records, units)
    for sense in ("paper", "fit"):
        e = reach[("synthetic", "poly2", sense)]
        assert e["reach"] == 0 and e["certified"] == [] and e["missing"] == []
        assert e["stopped"] == {5: pytest.approx(next(r["result"]["info"]["gap_percent"] for r in stopped
                                                      if r["unit"]["sense"] == sense))}
    # the same units without a limit certify: the summary then takes them as the reference
    free = [{k: v for k, v in u.items() if k != "options"} for u in units]
    summary = metrics.certified_summary(_run(free))
    assert summary["n_certified"] == 2 and {r["key"][3] for r in summary["rows"]} == {"rfe1"}


def test_stopped_gap_without_info_comes_from_bound_and_objective():
    r = record("bnb", 4, -200.0)
    r["result"]["bound"] = -250.0
    assert metrics.stopped_gap(r) == pytest.approx(25.0)
    r["result"]["bound"] = None
    assert metrics.stopped_gap(r) is None


def _reach_records():
    """German-like: poly2 certified 1..3 in both senses; poly3 paper stops at B=3 (gap 0.4 %), fit certified
    1 and 3 but B=2 never ran; rbf enumerated to 2 of a grid to 2."""
    recs = []
    for sense in ("paper", "fit"):
        for B in (1, 2, 3):
            recs.append(record("bnb", B, -100.0 * B, sense=sense, dataset="german", certified=True, time=2.0))
            recs.append(record("ls*", B, -100.0 * B, sense=sense, dataset="german", time=1.0))
        for B in (1, 2):
            recs.append(record("enumerate", B, -50.0, sense=sense, kernel="rbf", dataset="german", certified=True))
    recs.append(record("bnb", 1, -100.0, kernel="poly3", dataset="german", certified=True))
    recs.append(record("bnb", 2, -200.0, kernel="poly3", dataset="german", certified=True))
    stop = record("bnb", 3, -300.0, kernel="poly3", dataset="german")
    stop["result"].update(status="time_limit", bound=-301.2, info={"gap_percent": 0.4})
    recs += [stop, record("bnb", 1, -100.0, kernel="poly3", sense="fit", dataset="german", certified=True),
             record("bnb", 3, -300.0, kernel="poly3", sense="fit", dataset="german", certified=True)]
    for r in recs:
        r["unit_time_s"] = r["result"]["wall_time_s"]
    units = [r["unit"] for r in recs] + [{"dataset": "german", "kernel": "poly3", "B": 2, "sense": "fit",
                                          "method": "bnb"}]
    return recs, units


def test_certification_reach_by_hand():
    recs, units = _reach_records()
    reach = metrics.certification_reach(recs, units)
    p2 = reach[("german", "poly2", "paper")]
    assert (p2["target"], p2["reach"], p2["stopped"], p2["missing"]) == (3, 3, {}, [])
    assert p2["exact_s"] == pytest.approx(6.0) and p2["all_s"] == pytest.approx(9.0)
    p3 = reach[("german", "poly3", "paper")]
    assert (p3["reach"], p3["certified"], p3["stopped"]) == (2, [1, 2], {3: 0.4})
    f3 = reach[("german", "poly3", "fit")]
    assert (f3["reach"], f3["certified"], f3["missing"]) == (1, [1, 3], [2])
    assert reach[("german", "rbf", "fit")]["methods"] == ["enumerate"]
    # a failed exact unit is uncertified too, with no gap
    failed = record("bnb", 3, None, kernel="poly3", dataset="german", error="RuntimeError: boom")
    again = metrics.certification_reach([r for r in recs if r["unit"] != failed["unit"]] + [failed], units)
    assert again[("german", "poly3", "paper")]["stopped"] == {3: None}


def test_reach_hours_count_a_parallel_unit_once_per_process():
    """A unit run on k processes (its n_jobs option) counts k times its wall time in the one-core hours."""
    recs, units = _reach_records()
    for r in recs:
        if r["unit"]["kernel"] == "poly2" and r["unit"]["sense"] == "paper" and r["unit"]["method"] == "bnb":
            r["unit"]["options"] = {"n_jobs": 2}
    p2 = metrics.certification_reach(recs, units)[("german", "poly2", "paper")]
    assert p2["exact_s"] == pytest.approx(12.0) and p2["all_s"] == pytest.approx(15.0)
    assert metrics.core_seconds({"unit": {"options": {"time_limit": 60.0}}, "unit_time_s": 4.0}) == 4.0


def test_reach_table_groups_kernels_and_compares_with_the_paper():
    recs, units = _reach_records()
    rows = {(r[0], r[1]): r for r in tables.markdown_tables(
        tables.reach_table(metrics.certification_reach(recs, units), ("paper", "fit")))[0][2]}
    # German's paper B_max is 9: nothing reaches it; poly3's cells list the stopped run and the missing one
    assert rows[("German", "poly2")][5:] == ["3", "–", "3", "–", "no", "0.00 / 0.01"]   # 2 x (3 x 2 s + 3 x 1 s) = 18 s
    assert rows[("German", "poly3")][5:9] == ["2", "3: gap 0.4 %", "1 (also 3)", "not run: 2"]
    assert rows[("German", "rbf")][2:5] == ["enumerate", "2", "9"]


def _wholesale():
    """Wholesale (paper B_max 3): poly2 and poly3 enumerated to 3 in both senses, except poly3 fit B=3."""
    recs = [record("enumerate", B, -10.0, sense=s, dataset="wholesale", kernel=k, certified=True)
            for B in (1, 2, 3) for s in ("paper", "fit") for k in ("poly2", "poly3")]
    recs = [r for r in recs if not (r["unit"]["kernel"] == "poly3" and r["unit"]["sense"] == "fit"
                                    and r["unit"]["B"] == 3)]
    units = [r["unit"] for r in recs] + [{"dataset": "wholesale", "kernel": "poly3", "B": 3, "sense": "fit",
                                          "method": "enumerate"}]
    return recs, units


def test_reach_table_says_which_senses_reach_the_paper_b_max():
    recs, units = _wholesale()
    rows = tables.markdown_tables(tables.reach_table(metrics.certification_reach(recs, units),
                                                     ("paper", "fit")))[0][2]
    assert [(r[1], r[9]) for r in rows] == [("poly2", "all"), ("poly3", "paper")]


def test_the_certified_report_counts_the_polynomial_instances_at_the_paper_b_max():
    recs, units = _wholesale()
    for r in recs:
        r["unit_time_s"] = 900.0
    cfg = BenchConfig("certified", senses=("paper", "fit"), exact_time_limit=60.0)
    text = "\n".join(reach_lines(cfg, SimpleNamespace(units=units), recs))
    assert "Polynomial kernels certified up to the paper's B_max: 3 of 4 (dataset, kernel, sense)" in text
    assert "bnb` (branch-and-bound, 60 s per run)" in text
    assert "Hours spent: 2.75 h by the exact units, 2.75 h by all units" in text   # 11 units x 900 s
    cores = certified_registry.cpu_count()
    assert f"; {2.75 / cores:.2f} h of this machine's time with its {cores} core(s) busy" in text


def test_an_answer_at_the_trivial_bound_certifies_its_B_where_the_exact_run_stopped():
    """Paper sense, Remark 1: LS* attains -2C min(|I+|, |I-|) at B = 3 (certified by the package's own
    re-evaluation) where bnb stopped at its time limit: B = 3 counts as certified, with the column "trivial
    bound", no longer as open, and the quality tables take the best certified answer as the optimum."""
    recs, units = _reach_records()
    before = metrics.certification_reach(recs, units)[("german", "poly3", "paper")]
    assert (before["reach"], before["stopped"]) == (2, {3: 0.4})
    trivial = [record("ls*", 3, -1000.0, kernel="poly3", dataset="german", certified=True, degenerate=True),
               record("acso*", 3, -999.9995, kernel="poly3", dataset="german", certified=True, degenerate=True),
               record("rfe1", 3, -990.0, kernel="poly3", dataset="german")]
    reach = metrics.certification_reach(recs + trivial, units)
    p3 = reach[("german", "poly3", "paper")]
    assert (p3["reach"], p3["certified"], p3["stopped"]) == (3, [1, 2, 3], {})
    assert p3["methods"] == ["bnb", metrics.TRIVIAL_BOUND]
    # where the exact run certified too, the column stays the exact method's
    assert reach[("german", "poly2", "paper")]["methods"] == ["bnb"]
    optima = metrics.certified_optima(recs + trivial)
    assert optima[metrics.instance_key(trivial[0]["unit"])] == (-1000.0, True)    # the better of the two answers
    poly3_b2 = next(r for r in recs if (r["unit"]["kernel"], r["unit"]["B"], r["unit"]["sense"]) == ("poly3", 2, "paper"))
    assert optima[metrics.instance_key(poly3_b2["unit"])] == (-200.0, False)      # the exact record
    rows = {r["key"][3]: r for r in metrics.certified_summary(recs + trivial)["rows"]
            if r["key"][2] == "german" and r["key"][1] == "poly"}
    assert rows["rfe1"]["gap"] == pytest.approx(1.0) and rows["acso*"]["n_reached"] == 1
    # an uncertified answer certifies nothing
    assert metrics.certification_reach(recs + trivial[2:], units)[("german", "poly3", "paper")]["reach"] == 2


def test_a_general_solvers_own_proof_is_no_certificate_of_the_grid():
    """Only an exact method's run, or a paper-sense answer at the trivial bound, certifies a B (review of the
    eighth session: a fit-sense SCIP record marked certified had been counted, as "trivial bound")."""
    recs, units = _reach_records()
    scip_fit = record("scip", 2, -150.0, kernel="poly3", sense="fit", dataset="german", certified=True)
    scip_paper = record("scip", 3, -400.0, kernel="poly3", dataset="german", certified=True)   # not degenerate
    assert not metrics.certifies(scip_fit) and not metrics.certifies(scip_paper)
    reach = metrics.certification_reach(recs + [scip_fit, scip_paper], units)
    assert reach[("german", "poly3", "fit")]["methods"] == ["bnb"]
    assert reach[("german", "poly3", "paper")]["reach"] == 2
    assert metrics.instance_key(scip_fit["unit"]) not in metrics.certified_optima(recs + [scip_fit])


def test_exact_method_flag_sets_every_instance_exact_unit(tmp_path):
    """``--exact-method enumerate`` / ``bnb``: every exact unit of the grid is an enumeration (no time limit) / a bnb
    run (with its limit); the default, ``auto``, is certify's choice (bnb for the polynomial kernels above 1,000
    subsets)."""
    from minlp_fs.experiments.pipeline import build_grid

    p = argparse.ArgumentParser()
    add_bench_parser(p.add_subparsers(dest="verb"))
    flags = ["bench", "certified", "--report-only", "--datasets", "synthetic", "--kernels", "poly2", "--sense", "fit",
             "--out", str(tmp_path)]
    methods = {}
    for choice in ("auto", "enumerate", "bnb"):
        cfg = config_from_args(p.parse_args(flags + ["--exact-method", choice]))
        units = build_grid(cfg)[0].units
        methods[choice] = {u["B"]: (u["method"], str(u.get("options"))) for u in units
                           if u["method"] in metrics.EXACT_METHODS}
    assert set(methods["enumerate"].values()) == {("enumerate", "None")}
    assert set(methods["bnb"].values()) == {("bnb", str({"time_limit": 120.0}))}
    # synthetic data has 10 features: C(10, B) <= 1,000 for every B, so auto enumerates
    assert methods["auto"] == methods["enumerate"] and methods["auto"].keys() == methods["bnb"].keys()
    with pytest.raises(SystemExit):
        p.parse_args(flags + ["--exact-method", "ls*"])


def test_enumeration_beyond_its_plan_carries_the_exact_time_limit():
    """Up to ``planned[dataset]`` enumeration units are sized by the hours budget (no limit); the grid goes on to
    the paper's B_max with time-limited enumeration units where enumeration certifies (Gaussian paper sense)."""
    g = certified_grid(["german"], {"german": 7}, kernels=("rbf",), senses=("paper",), methods=(),
                       exact=lambda ds, k, B, s: "enumerate", exact_time_limit=30, planned={"german": 5})
    options = {u["B"]: u.get("options") for u in g.units}
    assert options == {1: None, 2: None, 3: None, 4: None, 5: None, 6: {"time_limit": 30.0}, 7: {"time_limit": 30.0}}
    assert exact_options("enumerate", 5, planned=False) == {"time_limit": 5.0}
    assert exact_options("enumerate", None, planned=False) == {}
    assert exact_options("ls*", 5, planned=False) == {}


@pytest.mark.requires_data
def test_enumeration_beyond_its_plan_certifies_at_the_trivial_bound_else_stops_with_its_gap(data_dir):
    """German's Gaussian paper sense at B = 7 (C(24, 7) = 346,104 subsets, about 1.9 h of enumeration): LS*'s
    incumbent attains the trivial bound, so the unit certifies at once; BCD's at B = 7 does not, and the unit
    stops at its limit with the trivial bound and its gap, uncertified. German's limit leaves LS* the seconds it needs
    before the proof (at 2 s, a machine running two other jobs stopped it first, uncertified)."""
    units = [{"dataset": ds, "kernel": "rbf", "B": 7, "sense": "paper", "method": "enumerate",
              "options": exact_options("enumerate", limit, planned=False)} for ds, limit in (("german", 120.0),
                                                                                            ("bcd", 2.0))]
    german, bcd = [{"unit": u, **solve_unit(u, data_dir), "unit_time_s": 1.0} for u in units]
    assert german["result"]["certified"] and german["result"]["degenerate"]
    assert german["result"]["objective"] <= german["instance"]["trivial_bound"] * (1 - 1e-6)
    res = bcd["result"]
    assert (res["status"], res["certified"]) == ("time_limit", False)
    assert res["bound"] == bcd["instance"]["trivial_bound"] < res["objective"]
    assert metrics.stopped_gap(bcd) == pytest.approx(100 * (res["objective"] - res["bound"]) / abs(res["objective"]))
    reach = metrics.certification_reach([german, bcd], units)
    assert reach[("german", "rbf", "paper")]["certified"] == [7]
    assert reach[("bcd", "rbf", "paper")]["stopped"] == {7: pytest.approx(metrics.stopped_gap(bcd))}
