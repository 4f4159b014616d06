"""Certified enumeration: revolving-door order, swap-updated Gram, and optima against an independent loop.

The reference is a plain loop over itertools.combinations with scikit-learn's SVC on kernels from
sklearn.metrics.pairwise, and the objective recomputed here with numpy (not minlp_fs.objective).
"""
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from minlp_fs.datasets import load_dataset, make_synthetic
from minlp_fs.errors import InputError
from minlp_fs.instance import make_instance
from minlp_fs.solvers import enumeration
from minlp_fs.solvers.enumeration import Enumeration, gram_walk
from minlp_fs.solvers.revolving_door import revolving_door, unrank

DATA = Path("/work/shared/datasets")
RTOL = 1e-6


def recursive_order(n, k):
    """R(n, k) straight from its definition (Knuth 7.2.1.3)."""
    if k == 0:
        return [()]
    if k == n:
        return [tuple(range(n))]
    return recursive_order(n - 1, k) + [s + (n - 1,) for s in reversed(recursive_order(n - 1, k - 1))]


def reference_kernel(inst, subset):
    Xs = inst.X[:, list(subset)]
    p = inst.kernel.params()
    if p["name"] == "rbf":
        return rbf_kernel(Xs, gamma=p["gamma"])
    return polynomial_kernel(Xs, degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])


def numpy_objective(alpha, K, y):
    v = alpha * y
    return 0.5 * v @ K @ v - alpha.sum()


def reference_fit(inst, S, tol=1e-8):
    """alpha of SVC(kernel="precomputed") on the subset's kernel, and that kernel."""
    K = reference_kernel(inst, S)
    svc = SVC(kernel="precomputed", C=inst.C, tol=tol).fit(K, inst.y)
    alpha = np.zeros(inst.m)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, K


def reference_values(inst, tol=1e-8):
    """g(S) for every B-subset, the objective recomputed by numpy."""
    return {S: numpy_objective(*reference_fit(inst, S, tol), inst.y)
            for S in itertools.combinations(range(inst.n), inst.B)}


def check_against_reference(result, inst, values):
    """Optimum value, argmin (up to ties) and the returned alpha's value agree with the reference."""
    pick = min if inst.sense == "paper" else max
    best = pick(values.values())
    assert result.objective == pytest.approx(best, rel=RTOL)
    S = tuple(result.features)
    assert values[S] == pytest.approx(best, rel=RTOL)
    runner_up = pick(v for s, v in values.items() if s != S) if len(values) > 1 else None
    if runner_up is not None and abs(runner_up - best) > 10 * RTOL * abs(best):
        assert S == pick(values, key=values.get)
    assert numpy_objective(result.alpha, reference_kernel(inst, S), inst.y) == pytest.approx(best, rel=RTOL)


# ---- revolving-door order -------------------------------------------------------------------

@pytest.mark.parametrize("n,k", [(1, 1), (5, 1), (6, 6), (5, 2), (7, 3), (8, 4), (9, 5), (10, 7), (11, 2)])
def test_revolving_door_is_the_recursive_order_with_single_swaps(n, k):
    order = list(revolving_door(n, k))
    assert order == recursive_order(n, k)
    assert len(order) == math.comb(n, k) == len(set(order))
    assert all(len(s) == k and list(s) == sorted(s) for s in order)
    for a, b in zip(order, order[1:]):
        assert len(set(a) - set(b)) == 1 and len(set(b) - set(a)) == 1


@pytest.mark.parametrize("n,k", [(1, 1), (6, 1), (6, 6), (7, 3), (9, 4), (12, 6)])
def test_unrank_gives_the_subset_at_each_rank_and_restarts_the_walk(n, k):
    order = list(revolving_door(n, k))
    assert [unrank(r, n, k) for r in range(len(order))] == order
    for start in range(0, len(order), 7):
        assert list(revolving_door(n, k, start, start + 5)) == order[start:start + 5]


def test_unrank_rejects_bad_arguments():
    with pytest.raises(InputError, match="out of range"):
        unrank(math.comb(6, 3), 6, 3)
    with pytest.raises(InputError, match="0 <= k <= n"):
        unrank(0, 3, 4)


# ---- swap-updated Gram --------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["poly2", "poly3", "rbf"])
@pytest.mark.parametrize("rebuild_every", [4, 10_000])
def test_swap_updated_gram_equals_recomputation(kernel, rebuild_every):
    d = make_synthetic(m=30, n_informative=3, n_noise=7, seed=1)
    inst = make_instance(d.X, d.y, 4, kernel)
    total = math.comb(inst.n, inst.B)
    rebuilds = 0
    for rank, (S, K, rebuilt) in enumerate(gram_walk(inst, 3, total, rebuild_every=rebuild_every), 3):
        assert S == unrank(rank, inst.n, inst.B)
        np.testing.assert_allclose(K, reference_kernel(inst, S), rtol=1e-10, atol=1e-12)
        rebuilds += rebuilt
    assert rebuilds == 1 + (total - 3 - 1) // (rebuild_every + 1)


# ---- certified optimum against the independent loop ---------------------------------------

@pytest.fixture(scope="module")
def synthetic():
    d = make_synthetic(m=50, n_informative=3, n_noise=4, seed=3)
    return d.X, d.y


@pytest.mark.parametrize("kernel,B", [("poly2", 2), ("poly2", 4), ("poly3", 3), ("rbf", 1), ("rbf", 3), ("rbf", 7)])
def test_optimum_matches_independent_loop_in_both_senses(synthetic, kernel, B):
    X, y = synthetic
    values = None
    for sense in ("paper", "fit"):
        inst = make_instance(X, y, B, kernel, sense=sense)
        values = values or reference_values(inst)
        res = Enumeration(chunk_size=4, incumbent="none").solve(inst)
        check_against_reference(res, inst, values)
        assert res.method == "enumerate" and res.sense == sense
        assert res.status == "optimal" and res.certified
        if not res.info["stopped_at_trivial_bound"]:
            assert res.n_svm_solves == res.info["n_done"] == math.comb(inst.n, B)
            assert res.bound == res.objective


def test_libsvm_backend_gives_the_same_optimum(synthetic):
    X, y = synthetic
    inst = make_instance(X, y, 3, "poly2", sense="fit")
    smo, ref = Enumeration().solve(inst), Enumeration(backend="libsvm").solve(inst)
    assert ref.features == smo.features
    assert ref.objective == pytest.approx(smo.objective, rel=RTOL)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_two_processes_give_the_same_result_as_one(synthetic, sense):
    X, y = synthetic
    inst = make_instance(X, y, 3, "rbf", sense=sense)
    one, two = (Enumeration(n_jobs=j, chunk_size=6).solve(inst) for j in (1, 2))
    assert two.objective == one.objective and two.features == one.features
    np.testing.assert_array_equal(two.alpha, one.alpha)
    assert two.n_svm_solves == one.n_svm_solves == math.comb(inst.n, 3) + one.info["incumbent_svm_solves"]
    assert two.info["argmin_rank"] == one.info["argmin_rank"]


def test_a_limit_shorter_than_the_workers_start_up_enumerates_in_process(synthetic, monkeypatch):
    """With less time left than worker processes take to start (workers.POOL_START_S, made larger than any limit
    here), the chunks run in this process: the same result as one worker; without a limit, the workers."""
    from minlp_fs import workers

    from minlp_fs.solvers import enumeration

    X, y = synthetic
    inst = make_instance(X, y, 3, "poly2", sense="fit")
    one = Enumeration(n_jobs=1, chunk_size=6).solve(inst)
    assert not Enumeration(n_jobs=2, chunk_size=6).solve(inst).info["in_process"]

    def no_workers(*args, **kwargs):
        raise AssertionError("worker processes were started")

    monkeypatch.setattr(workers, "POOL_START_S", 1e9)
    monkeypatch.setattr(enumeration, "Parallel", no_workers)
    here = Enumeration(n_jobs=2, chunk_size=6, time_limit=3600.0).solve(inst)
    assert here.info["in_process"] and here.status == "optimal" and here.certified
    assert here.objective == one.objective and here.features == one.features
    assert here.n_svm_solves == one.n_svm_solves


@pytest.fixture(scope="module")
def cleveland():
    if not (DATA / "cleveland.csv").is_file():
        pytest.skip(f"cleveland.csv not found in {DATA}")
    return load_dataset("cleveland", DATA)


def test_cleveland_poly2_matches_independent_loop(cleveland):
    d = cleveland
    values = None
    for sense in ("paper", "fit"):
        inst = make_instance(d.X, d.y, 2, "poly2", sense=sense)
        values = values or reference_values(inst, tol=1e-6)  # libsvm is slow on m = 297; 1e-6 suffices
        res = Enumeration(incumbent="none").solve(inst)
        check_against_reference(res, inst, values)
        assert res.certified and res.n_svm_solves == math.comb(13, 2)


def test_paper_sense_stops_at_the_trivial_bound(cleveland):
    d = cleveland
    inst = make_instance(d.X, d.y, 1, "poly2", sense="paper")
    values = reference_values(inst, tol=1e-6)
    assert min(values.values()) == pytest.approx(inst.trivial_bound, rel=RTOL)
    results = [Enumeration(n_jobs=j, chunk_size=2, incumbent="none").solve(inst) for j in (1, 2)]
    for res in results:
        check_against_reference(res, inst, values)
        assert res.info["stopped_at_trivial_bound"] and res.degenerate and res.certified
        assert res.status == "optimal" and res.bound == inst.trivial_bound
        assert res.n_svm_solves == res.info["n_done"] < inst.n
        first_hit = min(r for r, S in enumerate(revolving_door(inst.n, 1)) if inst.is_degenerate(values[S]))
        assert res.info["n_done"] == first_hit + 1
    assert results[0].features == results[1].features and results[0].objective == results[1].objective
    fit = Enumeration(incumbent="none").solve(inst.with_params(sense="fit"))
    assert not fit.info["stopped_at_trivial_bound"] and fit.n_svm_solves == inst.n


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_a_seeded_incumbent_changes_the_cost_not_the_optimum(synthetic, kernel):
    """The start and the incumbent heuristic are solved first; every solve then stops early against their
    value: the same certified optimum as without them, more early stops, their solves counted."""
    X, y = synthetic
    for sense in ("paper", "fit"):
        inst = make_instance(X, y, 3, kernel, sense=sense)
        plain = Enumeration(chunk_size=5, incumbent="none").solve(inst)
        for incumbent, start in (("alpha-start", None), ("ls*", None), ("none", [0, 1, 2])):
            res = Enumeration(chunk_size=5, incumbent=incumbent).solve(inst, start=start)
            assert res.certified and res.objective == pytest.approx(plain.objective, rel=1e-9)
            assert res.n_svm_solves == res.info["n_done"] + res.info["incumbent_svm_solves"]
            assert res.info["incumbent_svm_solves"] >= 1
            if not res.info["stopped_at_trivial_bound"]:
                assert res.info["n_done"] == math.comb(inst.n, 3)
                assert res.info["n_stopped_early"] >= plain.info["n_stopped_early"]


def test_auto_incumbent_is_ls_star_on_large_enumerations_only():
    assert Enumeration().heuristic(enumeration.AUTO_LS_FROM + 1) == "ls*"
    assert Enumeration().heuristic(enumeration.AUTO_LS_FROM) == "alpha-start"
    assert Enumeration(incumbent="none").heuristic(10 ** 9) == "none"
    d = make_synthetic(m=20, seed=0)
    inst = make_instance(d.X, d.y, 2)
    for bad in ("enumerate", "bnb"):
        with pytest.raises(InputError, match="incumbent must be a heuristic"):
            Enumeration(incumbent=bad).solve(inst)
    from minlp_fs.exact.bnb import BranchAndBound
    for method in (Enumeration, BranchAndBound):   # the option's name and the method in the message
        with pytest.raises(InputError, match=r"(enumerate|bnb): incumbent: unknown method 'foo'"):
            method(incumbent="foo").solve(inst)


# ---- interruption, time limit, options ------------------------------------------------------

def test_keyboard_interrupt_keeps_finished_chunks(synthetic, monkeypatch):
    X, y = synthetic
    inst = make_instance(X, y, 3, "rbf", sense="fit")
    monkeypatch.setattr(enumeration.Opening, "applies", staticmethod(lambda oracle: False))   # every subset solved
    calls = {"n": 0}

    class Interrupting(enumeration.AlphaSubproblem):
        def solve(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 13:
                raise KeyboardInterrupt
            return super().solve(*args, **kwargs)

    monkeypatch.setattr(enumeration, "AlphaSubproblem", Interrupting)
    res = Enumeration(chunk_size=5, incumbent="none").solve(inst)
    assert res.status == "interrupted" and not res.certified and res.bound is None
    assert res.info["n_done"] == res.n_svm_solves == 10 and res.info["n_subsets"] == math.comb(7, 3)
    assert "10 of 35" in res.message
    done = list(revolving_door(inst.n, 3, 0, 10))
    values = {S: numpy_objective(*reference_fit(inst, S), inst.y) for S in done}
    assert tuple(res.features) == max(values, key=values.get)
    assert res.objective == pytest.approx(max(values.values()), rel=RTOL)


def test_time_limit_returns_a_feasible_partial_result(synthetic):
    X, y = synthetic
    inst = make_instance(X, y, 3, "rbf", sense="fit")
    res = Enumeration(time_limit=1e-9, chunk_size=5).solve(inst)
    assert res.status == "time_limit" and not res.certified
    assert res.ok and 1 <= res.info["n_done"] < res.info["n_subsets"]


def test_callback_sees_each_improvement(synthetic):
    X, y = synthetic
    inst = make_instance(X, y, 2, "poly2", sense="fit")
    seen = []
    res = Enumeration(chunk_size=3).solve(inst, callback=seen.append)
    assert seen and seen[-1].value == res.objective
    assert all(b.value > a.value for a, b in zip(seen, seen[1:]))


@pytest.mark.parametrize("options,match", [({"n_jobs": 0}, "n_jobs"), ({"backend": "cplex"}, "backend"),
                                           ({"chunk_size": 0}, "chunk_size"), ({"time_limit": -1.0}, "time_limit")])
def test_bad_options_are_input_errors(synthetic, options, match):
    X, y = synthetic
    with pytest.raises(InputError, match=match):
        Enumeration(**options).solve(make_instance(X, y, 2))


@pytest.mark.parametrize("dataset, kernel, B", [("cleveland", "poly2", 3), ("wholesale", "poly3", 3),
                                                ("parkinsons", "rbf", 2)])
def test_certify_cases_of_the_closing_note_match_independent_loop(dataset, kernel, B):
    """The (dataset, kernel, B) certified with `minlp-fs certify` in the core issue's note, both senses."""
    if not (DATA / f"{dataset}.csv").is_file():
        pytest.skip(f"{dataset}.csv not found in {DATA}")
    d = load_dataset(dataset, DATA)
    values = None
    for sense in ("paper", "fit"):
        inst = make_instance(d.X, d.y, B, kernel, sense=sense)
        values = values or reference_values(inst, tol=1e-6)
        res = Enumeration().solve(inst)
        check_against_reference(res, inst, values)
        assert res.certified


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_an_unfinished_enumeration_reports_the_trivial_bound_in_the_paper_sense_only(synthetic, sense):
    X, y = synthetic
    inst = make_instance(X, y, 3, "rbf", sense=sense)
    res = Enumeration(time_limit=1e-9, incumbent="none").solve(inst)
    assert res.status == "time_limit" and not res.certified
    assert res.bound == (inst.trivial_bound if sense == "paper" else None)
    if sense == "paper" and res.objective is not None:
        assert res.bound <= res.objective
