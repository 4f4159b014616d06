"""Certificates: written by bnb, replayed by verify (libsvm), tampered ones rejected; the CLI round trip."""
import copy
import itertools
import json

import pytest

from minlp_fs.api import solve
from minlp_fs.cli import main
from minlp_fs.exact.certificate import load, verify, verify_file

from bnb_helpers import KERNELS, SENSES, random_instance


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    out = {}
    for kernel in KERNELS:
        for sense in SENSES:
            path = tmp_path_factory.mktemp("cert") / f"{kernel}-{sense}.json"
            inst = random_instance(4, 30, 7, 3, kernel, sense)
            res = solve(inst, "bnb", incumbent="none", certificate=str(path))
            out[kernel, sense] = (path, res)
    return out


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("sense", SENSES)
def test_round_trip_proves_the_optimum(certificates, kernel, sense):
    path, res = certificates[kernel, sense]
    verdict = verify_file(path)
    assert verdict.proven, verdict.reason
    assert verdict.value == pytest.approx(res.objective, rel=1e-6)
    assert verdict.max_value_error < 1e-6
    assert res.info["certificate"] == str(path)


def tampered(doc, how):
    doc = copy.deepcopy(doc)
    sign = 1 if doc["instance"]["sense"] == "paper" else -1
    if how == "better value":
        doc["claim"]["value"] -= sign * 1.0
    elif how == "other subset":
        B, n = doc["instance"]["B"], len(doc["instance"]["X"][0])
        doc["claim"]["subset"] = [j for j in range(n) if j not in doc["claim"]["subset"]][:B]
    elif how == "node removed":
        inner = [i for i, r in enumerate(doc["nodes"]) if r["kind"] != "leaf"]
        del doc["nodes"][inner[-1]]
    elif how == "order changed":
        inner = [r for r in doc["nodes"] if r.get("order") and len(r["order"]) > 1]
        inner[0]["order"] = inner[0]["order"][:-1] + inner[0]["order"][:1]
    elif how == "kernel changed":
        doc["instance"]["kernel"]["gamma"] *= 3.0
    return doc


@pytest.mark.parametrize("how", ["better value", "other subset", "node removed", "order changed", "kernel changed"])
@pytest.mark.parametrize("sense", SENSES)
def test_tampered_certificate_is_rejected(certificates, how, sense):
    path, _ = certificates["poly2", sense]
    doc = load(path)
    assert verify(doc).proven
    verdict = verify(tampered(doc, how))
    assert not verdict.proven, how


def test_fit_alpha_made_infeasible_is_rejected(certificates):
    """A fit node its universe's bound does not close needs its fixed-alpha bound: its alpha is checked. The root
    (the first record; its universe holds every feature, g of which is far above any B-subset's) is one."""
    doc = load(certificates["poly3", "fit"][0])
    rec = doc["nodes"][0]
    assert rec["kind"] == "fit" and not rec["fixed"] and rec["order"] is not None and rec["alpha"]["index"]
    C = doc["instance"]["C"]
    # inside the box, so clipping keeps it: y'alpha is off by 1 (an entry pushed past C would be clipped back)
    t = next(t for t, v in enumerate(rec["alpha"]["value"]) if v + 1.0 <= C)
    rec["alpha"]["value"][t] += 1.0
    verdict = verify(doc)
    assert not verdict.proven and "not a feasible point" in verdict.reason


def test_time_limited_certificate_does_not_prove(tmp_path):
    inst = random_instance(11, 40, 12, 5, "poly2", "paper")
    path = tmp_path / "partial.json"
    res = solve(inst, "bnb", time_limit=1e-6, certificate=str(path))
    assert res.status == "time_limit"
    assert not verify_file(path).proven


def test_cli_certify_and_verify(tmp_path, capsys):
    path = tmp_path / "c.json"
    args = ["certify", "--dataset", "synthetic", "--B", "3", "--kernel", "poly2", "--sense", "fit",
            "--method", "bnb", "--certificate", str(path), "--no-progress", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "bnb" and out["certified"]
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("PROVEN")
    doc = json.loads(path.read_text())
    doc["claim"]["value"] += 1.0
    path.write_text(json.dumps(doc))
    assert main(["verify", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["proven"] is False


def test_cli_auto_method_and_errors(tmp_path, capsys):
    base = ["certify", "--dataset", "synthetic", "--B", "2", "--no-progress", "--json"]
    assert main(base + ["--kernel", "rbf"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "enumerate"
    assert main(base + ["--kernel", "poly3"]) == 0                      # C(10, 2) = 45: enumeration is faster
    assert json.loads(capsys.readouterr().out)["method"] == "enumerate"
    assert main(base + ["--kernel", "poly3", "--B", "5"]) == 0          # C(10, 5) = 252 ... still enumeration
    assert json.loads(capsys.readouterr().out)["method"] == "enumerate"
    assert main(base + ["--kernel", "poly3", "--certificate", str(tmp_path / "p.json")]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "bnb"
    assert main(base + ["--method", "enumerate", "--certificate", str(tmp_path / "x.json")]) == 2
    assert "needs --method bnb" in capsys.readouterr().err
    (tmp_path / "junk.json").write_text("{}")
    assert main(["verify", str(tmp_path / "junk.json")]) == 2
    assert "not a minlp-fs branch-and-bound certificate" in capsys.readouterr().err


@pytest.mark.parametrize("kernel, sense", [("poly2", "paper"), ("poly3", "fit"), ("rbf", "fit")])
def test_tree_as_graph_and_graphml(certificates, kernel, sense, tmp_path, capsys):
    nx = pytest.importorskip("networkx")
    from minlp_fs.exact.graph import certificate_graph

    path, res = certificates[kernel, sense]
    doc = load(path)
    g = certificate_graph(doc)
    assert nx.is_arborescence(g)  # one tree, rooted at the root node
    root = next(n for n in g if g.in_degree(n) == 0)
    assert root == "I=|F=0 1 2 3 4 5 6|need=3"
    expanded = [r for r in doc["nodes"] if r["kind"] != "leaf" and r.get("order")]
    assert sum(1 for n in g if g.out_degree(n) > 0) == len(expanded)
    out = tmp_path / "tree.graphml"
    assert main(["verify", str(path), "--graphml", str(out)]) == 0
    capsys.readouterr()
    assert nx.read_graphml(out).number_of_nodes() == g.number_of_nodes()


def test_a_certificate_into_a_missing_folder_is_refused_before_the_search(tmp_path, capsys):
    code = main(["certify", "--dataset", "synthetic", "--B", "2", "--no-progress", "--method", "bnb",
                 "--certificate", str(tmp_path / "missing" / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "--certificate: cannot write" in err and "Traceback" not in err


def test_a_non_finite_alpha_is_a_malformed_certificate(certificates):
    """JSON allows NaN: a NaN bound would pass every comparison (and sorts nowhere), so it is refused."""
    doc = load(certificates["poly3", "fit"][0])
    rec = next(r for r in doc["nodes"] if r.get("alpha") and r["alpha"]["index"])
    rec["alpha"]["value"][0] = float("nan")
    verdict = verify(doc)
    assert not verdict.proven and "non-finite" in verdict.reason


@pytest.mark.parametrize("sense", SENSES)
def test_a_huge_alpha_along_the_kernels_null_space_proves_nothing(sense, tmp_path):
    """-P at any vector bounds g in exact arithmetic, but K_S of at most two features and a degree-2 kernel has rank
    at most 6 at m = 60: a vector of entries up to 1e11 along its null space makes w'w rounding noise of either sign,
    and a few random draws find one whose -P, computed as the verifier did before it clipped alphas into [0, C],
    reaches a false claim. Fit sense: a claim 20 % better than the optimum, at its forged alpha; paper sense: the
    worst subset claimed optimal, with every probe of the root forged above its value. Clipped, neither proves."""
    import numpy as np

    from minlp_fs.alpha import AlphaSubproblem
    from minlp_fs.exact.certificate import _sparse
    from minlp_fs.objective import primal_point

    inst = random_instance(0, 60, 6, 2, "poly2", sense)
    res = solve(inst, "bnb", certificate=str(tmp_path / "c.json"))
    doc = load(tmp_path / "c.json")
    rng = np.random.default_rng(0)

    def forged(S, at_least):   # a vector whose unclipped -P for subset S is at least ``at_least``
        w, V = np.linalg.eigh(inst.gram(S))
        null = V[:, np.abs(w) < 1e-10 * w[-1]]
        for _ in range(500):
            a = 10 ** rng.uniform(8, 11) * (null @ rng.standard_normal(null.shape[1])) * inst.y
            sv = np.flatnonzero(a)
            o = inst.kernel.gram(inst.X, list(S), Z=inst.X[sv]) @ (a[sv] * inst.y[sv])
            if -primal_point(a, inst.y, inst.C, o, bias="hinge").value >= at_least:
                return _sparse(a)
        raise AssertionError("no forged vector found")
    if sense == "fit":
        claimed = res.objective + 0.2 * abs(res.objective)
        doc["claim"].update(value=claimed, bound=claimed, alpha=forged(tuple(res.features), claimed))
    else:
        oracle = AlphaSubproblem(inst)
        value, S = max((oracle.solve(S).value, S) for S in itertools.combinations(range(inst.n), 2))
        assert value > res.objective + 1.0
        doc["claim"].update(subset=list(S), value=value, bound=value, alpha=None)
        doc["nodes"] = [{"kind": "probes", "fixed": [], "free": list(range(inst.n)), "need": 2,
                         "order": list(range(inst.n)), "probes": [[j, None, None, forged((j,), value)]
                                                                  for j in range(inst.n)]}]
    verdict = verify(doc)
    assert not verdict.proven, verdict.reason
