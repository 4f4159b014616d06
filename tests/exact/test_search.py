"""bnb against enumeration: the same optimum on random small instances, both senses, every kernel;
anytime stops return valid bounds; options are checked."""
import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.api import solve
from minlp_fs.errors import InputError
from minlp_fs.objective import NonFiniteError

from bnb_helpers import KERNELS, SENSES, random_instance, value_table


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("sense", SENSES)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 8), data=st.data())
@settings(max_examples=6, deadline=None)
def test_bnb_optimum_equals_enumeration(kernel, sense, seed, n, data):
    B = data.draw(st.integers(1, n))
    inst = random_instance(seed, 30, n, B, kernel, sense)
    enum = solve(inst, "enumerate")
    incumbent = data.draw(st.sampled_from(["ls*", "none"]))
    res = solve(inst, "bnb", incumbent=incumbent)
    assert res.status == "optimal" and res.certified
    assert close(res.objective, enum.objective)
    assert close(res.bound, res.objective)
    assert close(inst.objective(res.alpha, res.features), res.objective)  # re-evaluated by our code


def test_lazy_probes_skip_qps_and_keep_the_optimum():
    """Paper sense: probes whose parent probe already reaches the incumbent are not solved (monotone g)."""
    inst = random_instance(3, 40, 10, 4, "poly2", "paper")
    res = solve(inst, "bnb", incumbent="none")
    assert res.info["probes_skipped"] > 0
    assert close(res.objective, solve(inst, "enumerate").objective)


@pytest.mark.parametrize("kernel", ["poly2", "poly3"])
def test_fit_sense_first_children_reuse_their_parents_universe_value(kernel, monkeypatch):
    """The first child of a fit-sense split has its parent's universe I u F, so g(I u F) is not solved again:
    the same tree (nodes, leaves, prunes), optimum and subset as when it is, with exactly those QPs fewer."""
    from minlp_fs.exact import search

    inst = random_instance(5, 60, 11, 4, kernel, "fit")
    reused = solve(inst, "bnb")
    assert reused.info["universe_reused"] > 0
    expand = search._Search._expand_fit

    def solving_again(self, node):
        node.universe = None
        return expand(self, node)
    monkeypatch.setattr(search._Search, "_expand_fit", solving_again)
    again = solve(inst, "bnb")
    assert again.info["universe_reused"] == 0
    for key in ("nodes", "expanded", "leaves", "pruned_bound", "pruned_children", "pruned_universe"):
        assert reused.info[key] == again.info[key], key
    assert reused.features == again.features and reused.objective == again.objective
    assert again.info["qps"] - reused.info["qps"] == reused.info["universe_reused"]
    assert close(reused.objective, solve(inst, "enumerate").objective)


@pytest.mark.parametrize("kernel", ["poly3", "poly5"])
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_a_later_sibling_is_pruned_by_an_earlier_siblings_universe(kernel, seed, monkeypatch, tmp_path):
    """Fit sense: a node whose split's earlier child has a universe bound at the threshold is pruned with no QP
    (tree.Siblings). Every subset of such a node scores at least that bound (enumeration's g of every B-subset), the
    search certifies enumeration's optimum with QPs fewer than without the rule, and its certificate verifies."""
    from minlp_fs.exact import search
    from minlp_fs.exact.certificate import verify_file

    inst = random_instance(seed, 40, 9, 4, kernel, "fit")
    pruned, rule = [], search._Search._pruned_by_sibling

    def spied(self, node):
        known = node.siblings.bound(node.index) if node.siblings is not None else None
        done = rule(self, node)
        if done:
            pruned.append((node, known[0]))
        return done
    monkeypatch.setattr(search._Search, "_pruned_by_sibling", spied)
    res = solve(inst, "bnb", certificate=str(tmp_path / "c.json"))
    assert res.info["pruned_sibling"] == len(pruned) > 0
    g = value_table(inst, [inst.B])
    for node, bound in pruned:
        for R in itertools.combinations(node.free, node.need):
            S = tuple(sorted((*node.fixed, *R)))
            assert inst.score(g[S]) >= bound - 1e-7 * max(1.0, abs(bound))
    assert res.certified and close(res.objective, solve(inst, "enumerate").objective)
    assert verify_file(tmp_path / "c.json").proven
    monkeypatch.setattr(search._Search, "_pruned_by_sibling", lambda self, node: False)
    without = solve(inst, "bnb")
    assert without.info["pruned_sibling"] == 0 and without.info["qps"] > res.info["qps"]
    assert close(without.objective, res.objective)


def _recorded_step_budgets(monkeypatch) -> list:
    """The ``max_steps`` of every QP solved from now on (AlphaSubproblem.solve_gram), appended to the list returned."""
    from minlp_fs.alpha import oracle

    steps = []
    solve_gram = oracle.AlphaSubproblem.solve_gram

    def recording(self, K, *args, max_steps=None, **kwargs):
        steps.append(max_steps)
        return solve_gram(self, K, *args, max_steps=max_steps, **kwargs)
    monkeypatch.setattr(oracle.AlphaSubproblem, "solve_gram", recording)
    return steps


def _certified_at_one_step_and_uncapped(inst, enum, default, monkeypatch, budget: str) -> tuple:
    """bnb with the search's step budget ``budget`` (a constant of minlp_fs.exact.search) at one SMO step, then
    uncapped: (one, uncapped), each checked, as ``default`` is, to certify enumeration's optimum ``enum``."""
    from minlp_fs.exact import search

    runs = []
    for steps in (1, None):
        monkeypatch.setattr(search, budget, steps)
        runs.append(solve(inst, "bnb"))
    for res in (default, *runs):
        assert res.status == "optimal" and res.certified and close(res.objective, enum.objective)
    return tuple(runs)


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "poly5"])
@pytest.mark.parametrize("seed", range(3))
def test_fit_sense_universe_bounds_hold_at_any_step_budget(kernel, seed, monkeypatch):
    """The fit sense bounds a node by f(alpha, U) >= g(U) at the alpha its universe's QP reaches within
    min(UNIVERSE_STEPS, m): with a budget of one step (bounds far from g(U)) the search still certifies
    enumeration's optimum, and the default budget (here m = 40 steps) leaves the tree of an uncapped search."""
    from minlp_fs.exact import search

    inst = random_instance(seed, 40, 9, 4, kernel, "fit")
    enum = solve(inst, "enumerate")
    steps = _recorded_step_budgets(monkeypatch)
    default = solve(inst, "bnb")
    assert 40 in steps and max(s for s in steps if s is not None) <= max(40, search.RELAXED_STEPS)   # m = 40
    _, uncapped = _certified_at_one_step_and_uncapped(inst, enum, default, monkeypatch, "UNIVERSE_STEPS")
    assert default.info["nodes"] == uncapped.info["nodes"]


@pytest.mark.parametrize("kernel", ["poly2", "poly5", "rbf"])
@pytest.mark.parametrize("seed", range(3))
def test_fit_sense_child_bounds_hold_at_any_relaxed_step_budget(kernel, seed, monkeypatch):
    """The fit sense takes its children's fixed-alpha bounds (pair, degree shares, chords) at the relaxed beta's
    alpha reached within RELAXED_STEPS: the search asks for that budget, and with a budget of one step (an alpha one
    step from the parent's) and uncapped it certifies enumeration's optimum too."""
    from minlp_fs.exact import search

    inst = random_instance(seed, 40, 9, 4, kernel, "fit")
    enum = solve(inst, "enumerate")
    steps = _recorded_step_budgets(monkeypatch)
    default = solve(inst, "bnb")
    assert search.RELAXED_STEPS in steps
    one, uncapped = _certified_at_one_step_and_uncapped(inst, enum, default, monkeypatch, "RELAXED_STEPS")
    assert (one.info["nodes"], one.info["qps"]) != (uncapped.info["nodes"], uncapped.info["qps"])   # the cap binds


@pytest.mark.parametrize("kernel", ["poly2", "poly3", "rbf"])
def test_a_child_bound_that_is_not_a_number_is_an_error(kernel, monkeypatch):
    """A NaN child bound would be neither pushed nor pruned (every comparison with it is False): its subsets would
    leave the search unnoticed. The split refuses it, whatever bound the node already had (max(bound, NaN) would
    have been the node's bound)."""
    from minlp_fs.exact import search

    split = search.fit_split

    def one_nan(*args, **kwargs):
        order, bounds = split(*args, **kwargs)
        return order, [float("nan"), *bounds[1:]]
    monkeypatch.setattr(search, "fit_split", one_nan)
    with pytest.raises(NonFiniteError, match="not a number"):
        solve(random_instance(2, 30, 7, 3, kernel, "fit"), "bnb", incumbent="none")


@pytest.mark.parametrize("sense", SENSES)
def test_fit_without_marginal_bound_and_user_start(sense):
    inst = random_instance(7, 30, 7, 3, "poly3", sense)
    enum = solve(inst, "enumerate")
    for res in (solve(inst, "bnb", marginal=False), solve(inst, "bnb", start=[4, 5, 6], incumbent="none")):
        assert res.certified and close(res.objective, enum.objective)
    res = solve(inst, "bnb", start=[4, 5, 6], incumbent="ls*")
    assert res.trace[0].source == "start" and close(res.objective, enum.objective)


@pytest.mark.parametrize("start", ["alpha-start", "random"])
def test_named_starts_are_accepted_as_by_every_method(start):
    """start='alpha-start' / 'random' is resolved as for the heuristics, not refused as a bad subset."""
    inst = random_instance(5, 30, 7, 3, "poly2", "paper")
    res = solve(inst, "bnb", start=start, incumbent="none")
    assert res.trace[0].source == "start" and res.certified
    assert close(res.objective, solve(inst, "enumerate").objective)
    with pytest.raises(InputError, match="unknown start"):
        solve(inst, "bnb", start="best")


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
@pytest.mark.parametrize("sense", SENSES)
@pytest.mark.parametrize("incumbent", ["none", "ls*"])
def test_time_limited_run_returns_a_valid_bound(kernel, sense, incumbent):
    """A limit that has passed at the first check: stopped after one QP (or the heuristic)."""
    inst = random_instance(11, 40, 12, 5, kernel, sense)
    optimum = solve(inst, "enumerate").objective
    res = solve(inst, "bnb", time_limit=1e-6, incumbent=incumbent)
    assert res.status == "time_limit" and not res.certified and res.info["open_nodes"] > 0
    if res.bound is not None:  # min-sense terms: sign * bound <= sign * optimum <= sign * incumbent
        assert inst.score(res.bound) <= inst.score(optimum) + 1e-6 * abs(optimum)
    if res.objective is not None:
        assert inst.score(optimum) <= inst.score(res.objective) + 1e-6 * abs(optimum)
    if sense == "paper" or kernel == "poly2":  # the trivial bound; g(all features) in the fit sense
        assert res.bound is not None


@pytest.mark.parametrize("sense", SENSES)
def test_interrupted_run_returns_incumbent_and_valid_bound(sense):
    inst = random_instance(5, 40, 10, 4, "poly2", sense)
    optimum = solve(inst, "enumerate").objective
    calls = []

    def stop_at_first(point):  # Ctrl-C while the first incumbent is recorded, deep in the search
        calls.append(point)
        raise KeyboardInterrupt

    res = solve(inst, "bnb", incumbent="none", callback=stop_at_first)
    assert len(calls) == 1
    assert res.status == "interrupted" and not res.certified and res.objective is not None
    assert res.bound is None or inst.score(res.bound) <= inst.score(optimum) + 1e-6 * abs(optimum)
    bounds = [p.bound for p in res.trace if p.source == "bound"]
    assert all(inst.score(b) <= inst.score(optimum) + 1e-6 * abs(optimum) for b in bounds)


def test_trace_has_incumbent_and_bound_and_is_json():
    inst = random_instance(2, 40, 9, 4, "poly3", "paper")
    res = solve(inst, "bnb")
    d = res.to_dict()
    assert d["trace"][-1]["source"] == "bound" and close(d["trace"][-1]["bound"], res.objective)
    assert all(("bound" in p) == (p["source"] == "bound") for p in d["trace"])


def test_bnb_needs_far_fewer_solves_than_subsets():
    """The point of the bounds (not a timing): a 10-choose-5 instance needs fewer QPs than subsets."""
    inst = random_instance(1, 40, 10, 5, "poly2", "fit")
    res = solve(inst, "bnb")
    assert res.certified and res.info["qps"] < 252


@pytest.mark.parametrize("sense", SENSES)
def test_same_tree_and_answer_for_any_n_jobs(sense, tmp_path):
    inst = random_instance(8, 40, 10, 4, "poly3", sense)
    runs = []
    for jobs in (1, 2, -1):
        path = tmp_path / f"{jobs}.json"
        res = solve(inst, "bnb", n_jobs=jobs, certificate=str(path))
        runs.append((res.features, res.objective, res.info["qps"], res.info["nodes"],
                     json.loads(path.read_text())["nodes"]))
    # n_jobs = 1: the sequential search; n_jobs != 1: subtrees in workers (exact/parallel.py), one tree for any n_jobs
    assert runs[0][:2] == runs[1][:2] and runs[1] == runs[2]


@pytest.mark.parametrize("options, match", [({"n_jobs": 0}, "n_jobs must be an integer >= 1 or -1"),
                                            ({"incumbent": "enumerate"}, "must be a heuristic"),
                                            ({"incumbent": "nope"}, "unknown method"),
                                            ({"marginal": 1}, "marginal must be"),
                                            ({"time_limit": -1}, "time_limit")])
def test_bad_options_are_input_errors(options, match):
    inst = random_instance(0, 20, 4, 2, "poly2", "paper")
    with pytest.raises(InputError, match=match):
        solve(inst, "bnb", **options)


def test_value_table_agrees_with_bnb_on_the_leaves():
    inst = random_instance(9, 25, 6, 3, "poly5", "fit")
    table = value_table(inst, sizes=[3])
    res = solve(inst, "bnb", incumbent="none")
    assert close(res.objective, max(table.values()))
    assert tuple(res.features) == max(table, key=table.get)


def test_paper_sense_stops_at_the_trivial_bound(tmp_path):
    """With a tiny C every subset is a one-class SVM: the first leaf attains -2C min(|I+|,|I-|)."""
    from minlp_fs.exact.certificate import verify_file

    inst = random_instance(3, 30, 8, 3, "poly2", "paper", C=0.001)
    res = solve(inst, "bnb", incumbent="none", certificate=str(tmp_path / "c.json"))
    assert res.certified and res.degenerate and res.bound == inst.trivial_bound
    assert res.info["qps"] < 56 and res.info["open_nodes"] == 0
    assert verify_file(tmp_path / "c.json").proven


def test_the_auto_incumbent_is_ls_star_in_the_paper_sense_above_its_threshold():
    from minlp_fs.exact.bnb import AUTO_LS_FROM, BranchAndBound

    auto = BranchAndBound()
    assert auto.incumbent == "auto" and BranchAndBound(incumbent="ls*").heuristic(None) == "ls*"
    assert math.comb(20, 10) > AUTO_LS_FROM >= math.comb(12, 4)
    assert auto.heuristic(random_instance(0, 20, 20, 10, "poly2", "paper")) == "ls*"
    assert auto.heuristic(random_instance(0, 20, 20, 10, "poly2", "fit")) == "alpha-start"
    assert auto.heuristic(random_instance(0, 20, 12, 4, "poly2", "paper")) == "alpha-start"
    res = solve(random_instance(1, 30, 8, 3, "poly3", "paper"), "bnb")
    assert res.info["heuristic"] == "alpha-start" and res.info["heuristic_svm_solves"] == 2


@pytest.mark.requires_data
def test_ls_star_s_incumbent_at_the_trivial_bound_ends_the_search_at_the_root(data_dir):
    """German poly3 B = 6, paper sense (134,596 subsets): LS* attains -2C min(|I+|,|I-|); no node is searched."""
    from minlp_fs.api import build_instance

    inst = build_instance("german", data_dir=data_dir, kernel="poly3", sense="paper", B=6)
    res = solve(inst, "bnb")
    assert res.info["heuristic"] == "ls*" and res.certified and inst.proves_optimal(res.objective)
    assert res.info["nodes"] == 0 and res.info["qps"] == 0 and res.bound == inst.trivial_bound
