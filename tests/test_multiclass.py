"""Multiclass instances (one subset shared by K one-vs-rest machines): every heuristic, enumeration and
bnb against an independent enumeration of sum_k g_k(S) on small random 3- and 4-class instances in both
senses; K = 2 is the binary instance itself; the fixed-alpha evaluations are the classes' sums; clear
errors where only binary instances are handled."""
import json
from itertools import combinations

import numpy as np
import pytest

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.cli import main
from minlp_fs.errors import InputError
from minlp_fs.heuristics.greedy import greedy_step
from minlp_fs.heuristics.multistart import multistart
from minlp_fs.heuristics.screening import FixedAlpha
from minlp_fs.instance import Instance, make_instance, stratified_class_rows
from minlp_fs.methods import get_method
from minlp_fs.multiclass import MulticlassInstance
from minlp_fs.multiclass.oracle import MulticlassSubproblem
from minlp_fs.multiclass.screening import StackedFixedAlpha

HEURISTICS = ["alpha-start", "ls", "ls*", "acso", "acso*", "rfe1", "rfe2"]
RTOL = 1e-6


def random_multiclass(K: int, m: int = 24, n: int = 6, B: int = 2, kernel: str = "poly2", sense: str = "paper",
                      seed: int = 0, rows: int | None = None, **kw):
    """Seeded data whose class depends on two columns (so subsets differ), with string labels."""
    rng = np.random.default_rng(seed + 10 * K)
    X = rng.uniform(size=(m, n))
    codes = np.floor(K * ((X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=m)) % 1.0)).astype(int) % K
    codes[:K] = np.arange(K)  # every class present
    labels = np.array([f"class-{c}" for c in range(K)])[codes]
    return make_instance(X, labels, B, kernel=kernel, sense=sense, m=rows, seed=seed, **kw)


def brute_force(inst):
    """{subset: sum_k g_k(subset)} by one plain binary oracle per one-vs-rest part (not the multiclass code)."""
    oracles = [AlphaSubproblem(part, backend="libsvm", tol=1e-9) for part in inst.parts]
    return {S: sum(o.solve(S).value for o in oracles) for S in combinations(range(inst.n), inst.B)}


def close(a, b) -> bool:
    return abs(a - b) <= RTOL * max(1.0, abs(b))


@pytest.fixture(scope="module", params=[(3, "poly2", "paper"), (3, "poly2", "fit"), (4, "poly2", "paper"),
                                        (4, "poly2", "fit"), (3, "rbf", "paper"), (3, "rbf", "fit")],
                ids=lambda p: f"K{p[0]}-{p[1]}-{p[2]}")
def case(request):
    K, kernel, sense = request.param
    inst = random_multiclass(K, kernel=kernel, sense=sense)
    values = brute_force(inst)
    best = min(values, key=lambda S: (inst.score(values[S]), S))
    return inst, values, best


def test_make_instance_builds_k_one_vs_rest_parts():
    inst = random_multiclass(3)
    assert isinstance(inst, MulticlassInstance) and inst.n_classes == 3
    assert inst.classes == ("class-0", "class-1", "class-2")
    np.testing.assert_array_equal(inst.Y.sum(axis=0), -1.0)  # each row +1 for its class only, -1 twice
    assert inst.trivial_bound == sum(p.trivial_bound for p in inst.parts) < 0
    assert all(p.X is inst.X and p.B == inst.B and p.sense == inst.sense for p in inst.parts)
    d = inst.describe()
    assert d["classes"] == list(inst.classes) and sum(d["class_counts"]) == inst.m
    other = inst.with_params(B=3, sense="fit")
    assert isinstance(other, MulticlassInstance) and other.B == 3 and all(p.sense == "fit" for p in other.parts)


def test_enumeration_and_bnb_find_the_brute_force_optimum(case):
    inst, values, best = case
    for name in ("enumerate", "bnb"):
        res = get_method(name).solve(inst)
        assert res.certified and res.status == "optimal", name
        assert close(res.objective, values[best]), (name, res.objective, values[best])
        assert tuple(res.features) == best or close(values[tuple(res.features)], values[best])
        assert np.shape(res.alpha) == (inst.n_classes, inst.m)
        assert close(inst.objective(res.alpha, res.features), res.objective)


@pytest.mark.parametrize("name", HEURISTICS)
def test_heuristics_report_the_exact_value_of_their_subset(case, name):
    """Each heuristic's answer is a B-subset whose value is sum_k g_k of it, and never beats the optimum."""
    inst, values, best = case
    options = {"allow_nonsubmodular": True} if name.startswith("acso") and inst.kernel.name == "rbf" else {}
    res = get_method(name, **options).solve(inst)
    S = tuple(res.features)
    assert res.ok and len(S) == inst.B
    assert close(res.objective, values[S]), (res.objective, values[S])
    assert inst.score(res.objective) >= inst.score(values[best]) - RTOL * abs(values[best])


def test_ls_star_and_multistart_reach_the_optimum(case):
    inst, values, best = case
    assert close(get_method("ls*").solve(inst).objective, values[best])
    runs = multistart("ls", inst, k=3, seed=1)
    assert len(runs.results) == 3 and all(close(r.objective, values[tuple(r.features)]) for r in runs.results)


def test_two_classes_are_the_one_binary_machine():
    """K = 2 gives the binary Instance: the same values and subsets as labels -1/+1, whatever the label
    type; the one-vs-rest sum over two classes would count the one machine twice (its mirror)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(30, 6))
    signs = np.where(X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=30) > 0.25, 1.0, -1.0)
    named = np.where(signs > 0, "yes", "no")
    for sense in ("paper", "fit"):
        binary = make_instance(X, signs, 2, sense=sense)
        two = make_instance(X, named, 2, sense=sense)
        assert type(two) is Instance and two.n_classes == 2 and two.classes == ("no", "yes")
        for name in ("enumerate", "ls*", "rfe2"):
            a, b = get_method(name).solve(binary), get_method(name).solve(two)
            assert a.objective == b.objective and a.features == b.features
        S = tuple(get_method("enumerate").solve(two).features)
        mirror = Instance(X=two.X, y=-two.y, kernel=two.kernel, C=two.C, B=2, sense=sense)
        assert close(AlphaSubproblem(mirror).solve(S).value, AlphaSubproblem(two).solve(S).value)
    with pytest.raises(InputError, match="3 or more classes"):
        MulticlassInstance(X=two.X, codes=(signs > 0).astype(int), kernel=two.kernel, C=two.C, B=2,
                           classes=("no", "yes"))


def test_oracle_is_the_sum_of_the_binary_oracles():
    inst = random_multiclass(4, B=3, kernel="poly3")
    oracle = AlphaSubproblem(inst)
    assert isinstance(oracle, MulticlassSubproblem)
    fit = oracle.solve((0, 2, 5))
    parts = [AlphaSubproblem(p).solve((0, 2, 5)) for p in inst.parts]
    assert close(fit.value, sum(p.value for p in parts)) and fit.exact
    assert fit.alpha.shape == (4, inst.m) and oracle.n_solves == 1
    assert np.abs((fit.alpha * inst.Y).sum(axis=1)).max() < 1e-8 * inst.C * inst.m  # y^k' alpha_k = 0
    assert oracle.solve((5, 0, 2)) is fit and oracle.n_cache_hits == 1
    # a warm-started swap through the centre's neighbour Grams: the same value
    nb = oracle.neighbour_grams((0, 2, 5))
    swap = oracle.solve((0, 2, 4), warm_start=fit.alpha, neighbours=nb)
    assert close(swap.value, AlphaSubproblem(inst, cache=False).solve((0, 2, 4)).value)
    with pytest.raises(InputError, match="multiclass warm start must be a stack of 4 alphas"):
        oracle.solve((1, 2, 3), warm_start=fit.alpha[0])


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_early_stop_only_for_subsets_proven_worse(sense):
    """With an incumbent, a subset proven worse stops early (not exact, not cached); one that is better
    is solved exactly; the proof is right against the exact value."""
    inst = random_multiclass(3, m=40, n=6, B=2, sense=sense, seed=4)
    exact = {S: AlphaSubproblem(inst, cache=False).solve(S) for S in combinations(range(inst.n), 2)}
    ranked = sorted(exact, key=lambda S: inst.score(exact[S].value))
    best, worst = exact[ranked[0]], exact[ranked[-1]]
    oracle = AlphaSubproblem(inst)
    full = oracle.solve(best.subset, worse_than=worst.value)  # better than the incumbent: exact
    assert full.exact and close(full.value, best.value)
    stops = [S for S in ranked if not oracle.solve(S, worse_than=best.value).exact]
    assert stops and oracle.n_stopped_early == len(stops) and all(oracle.cached(S) is None for S in stops)
    assert all(inst.score(exact[S].value) > inst.score(best.value) + 1e-6 * abs(best.value) for S in stops)
    alpha, solved = oracle.solve_gram(inst.gram(worst.subset), None, best.value)
    assert not solved and alpha.shape == (3, inst.m)  # proven worse: not solved to optimality
    # every subset, warm-started from another's stack, against two incumbents: a stop is always right
    median = exact[ranked[len(ranked) // 2]].value
    for S, ref in exact.items():
        for t in (best.value, median):
            fit = AlphaSubproblem(inst, cache=False).solve(S, warm_start=worst.alpha, worse_than=t)
            if fit.exact:
                assert close(fit.value, ref.value)
            else:
                assert inst.score(ref.value) > inst.score(t) + 1e-6 * max(abs(t), 1.0)
                assert fit.alpha.shape == (3, inst.m) and np.all((fit.alpha >= 0) & (fit.alpha <= inst.C))


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_fixed_alpha_values_are_the_sums_over_classes(kernel):
    inst = random_multiclass(3, n=7, B=3, kernel=kernel)
    A = AlphaSubproblem(inst).solve((0, 1, 2)).alpha
    fa = FixedAlpha(inst, A)
    assert isinstance(fa, StackedFixedAlpha)
    parts = [FixedAlpha(p, a) for p, a in zip(inst.parts, A)]

    def total(method, *args):
        per = [getattr(p, method)(*args) for p in parts]
        return {key: sum(d[key] for d in per) for key in per[0]}

    assert close(fa.value((0, 3, 4)), sum(p.value((0, 3, 4)) for p in parts))
    assert close(fa.value((0, 1, 2)), inst.objective(A, (0, 1, 2)))
    got, want = fa.swap_values((0, 1, 2)), total("swap_values", (0, 1, 2))
    assert got.keys() == want.keys() and all(close(got[k], want[k]) for k in got)
    S = [0, 1, 2, 5]
    removals = fa.removal_values_of_base(fa.base(S), S)
    for j, value in zip(S, removals):
        assert close(value, sum(p.removal_values_of_base(p.base(S), [j])[0] for p in parts))
    step = greedy_step(fa, inst.B)
    assert len(step.subset) == inst.B
    with pytest.raises(InputError, match="stack of shape"):
        FixedAlpha(inst, A[0])


@pytest.mark.parametrize("kernel", ["poly2", "rbf"])
def test_fixed_alpha_counts_each_value_once_whatever_the_classes(kernel):
    """n_evals (the evaluation count and the deadline's cadence) ticks once per value of f(A, S), as the
    binary evaluator does: the swap table of N1 is B (n - B) evaluations, not K times that."""
    inst = random_multiclass(4, n=7, B=3, kernel=kernel)
    A = AlphaSubproblem(inst).solve((0, 1, 2)).alpha
    S = [0, 1, 2, 5]
    for method, call, count in [("swap_values", lambda f: f.swap_values((0, 1, 2)), 3 * 4),
                                ("removal_values_of_base", lambda f: f.removal_values_of_base(f.base(S), S), 4),
                                ("value", lambda f: f.value((0, 3, 4)), 1)]:
        fa, binary = FixedAlpha(inst, A), FixedAlpha(inst.parts[0], A[0])
        call(fa)
        call(binary)
        assert fa.n_evals == binary.n_evals == count, method


def test_bnb_bounds_of_a_multiclass_instance_are_the_sums_over_classes():
    """exact.bounds on a stacked alpha: the weak-duality lower bound (paper-sense probes) is the sum of the
    classes' bounds and below g; the degree-2 fixed-alpha quadratic (fit-sense pair bound) equals f(A, S)."""
    from minlp_fs.exact.bounds import FixedAlphaQuadratic, instance_lower_bound, primal_lower_bound

    inst = random_multiclass(3, n=6, B=3)
    S = (0, 2, 4)
    K = inst.gram(S)
    loose = AlphaSubproblem(inst, tol=1e-2).solve(S).alpha
    g = AlphaSubproblem(inst, tol=1e-9).solve(S).value
    lower = instance_lower_bound(inst, K, loose)
    assert lower == pytest.approx(sum(primal_lower_bound(K, p.y, p.C, a) for p, a in zip(inst.parts, loose)))
    assert lower <= g + RTOL * abs(g)
    quad = FixedAlphaQuadratic(inst, loose, range(inst.n))
    for T in [(0, 2, 4), (1, 3, 5), (0, 1)]:
        assert close(quad.value(T), inst.objective(loose, T))


def test_degenerate_at_the_summed_trivial_bound():
    """Paper sense with a tiny C: every one-vs-rest machine is one-class, the value is the summed bound."""
    inst = random_multiclass(3, C=1e-4, sense="paper")
    res = get_method("enumerate").solve(inst)
    assert inst.is_degenerate(res.objective) and res.degenerate and res.certified
    assert not inst.is_degenerate(0.5 * inst.trivial_bound)


def test_enumeration_in_worker_processes():
    inst = random_multiclass(3, n=7, B=3, sense="fit")
    one, two = get_method("enumerate").solve(inst), get_method("enumerate", n_jobs=2, chunk_size=10).solve(inst)
    assert one.features == two.features and close(one.objective, two.objective)


def test_stratified_rows_keep_every_class():
    codes = np.array([0] * 50 + [1] * 30 + [2] * 3)
    rows = stratified_class_rows(codes, 10, seed=0)
    assert rows.size == 10 and np.unique(rows).size == 10 and set(codes[rows]) == {0, 1, 2}
    np.testing.assert_array_equal(rows, stratified_class_rows(codes, 10, seed=0))
    with pytest.raises(InputError, match="between 3 \\(one row per class\\) and 83"):
        stratified_class_rows(codes, 2, seed=0)
    reduced = random_multiclass(4, m=40, rows=9, seed=3)
    assert reduced.m == 9 and reduced.rows.size == 9 and all(p.y.max() > 0 for p in reduced.parts)


def test_binary_only_parts_refuse_clearly(tmp_path):
    inst = random_multiclass(3)
    with pytest.raises(InputError, match="binary only; data has 3 classes"):
        inst.y
    for name in ("scip", "ipopt", "hybrid:scip"):
        with pytest.raises(InputError, match=f"{name.split(':')[0]}.*binary only"):
            get_method(name).solve(inst)
    with pytest.raises(InputError, match="bnb's certificate .*binary only"):
        get_method("bnb", certificate=str(tmp_path / "proof.json")).solve(inst)
    pytest.importorskip("pyomo")
    from minlp_fs.models.dfs_svm import build_model
    with pytest.raises(InputError, match="Pyomo model of problem \\(4\\).*binary only"):
        build_model(inst)


def test_cli_solves_a_three_class_csv_by_label_name(tmp_path, capsys):
    inst_rng = np.random.default_rng(2)
    X = inst_rng.uniform(size=(40, 4))
    names = np.array(["setosa", "versicolor", "virginica"])[np.argmax(X[:, :3], axis=1)]
    lines = ["a,b,c,d,species"] + [",".join(f"{v:.6f}" for v in x) + f",{s}" for x, s in zip(X, names)]
    (tmp_path / "flowers.csv").write_text("\n".join(lines) + "\n")
    common = ["--dataset", "flowers", "--data-dir", str(tmp_path), "--label", "species", "--B", "2", "--sense", "fit"]
    assert main(["solve", *common, "--method", "ls*", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["instance"]["classes"] == ["setosa", "versicolor", "virginica"] and len(d["features"]) == 2
    assert main(["certify", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["objective"] == pytest.approx(d["objective"], rel=1e-6)
    assert main(["solve", *common, "--method", "ls*"]) == 0
    out = capsys.readouterr().out
    assert "3 classes one-vs-rest" in out and "setosa (" in out and "+1 =" not in out
    assert main(["solve", "--method", "alpha-start"]) == 0       # binary: the two classes by sign, no sum
    out = capsys.readouterr().out
    assert "-1 = benign (357), +1 = malignant (212)" in out and "summed over the classes" not in out
    assert main(["export", *common, "--format", "nl", "--out", str(tmp_path / "m.nl")]) != 0
    assert "binary only" in capsys.readouterr().err
