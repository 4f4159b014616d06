"""Parallel branch-and-bound (minlp_fs.exact.parallel): the same answer for any number of workers,
valid bounds when stopped, certificates that verify; the CLI's --jobs/--backend/--scheduler."""
import json

import pytest

from minlp_fs.api import solve
from minlp_fs.cli import main
from minlp_fs import workers
from minlp_fs.exact import parallel
from minlp_fs.exact.certificate import load, verify
from minlp_fs.exact.parallel import parallel_search
from minlp_fs.exact.bnb import BranchAndBound
from minlp_fs.methods import Run

from bnb_helpers import SENSES, interrupt_second_wave, random_instance, value_table

CASES = [("poly2", "paper"), ("poly2", "fit"), ("poly3", "fit"), ("rbf", "paper"), ("rbf", "fit")]


def best(inst, table):
    return min((inst.score(v), S) for S, v in table.items() if len(S) == inst.B)


def run_parallel(inst, **options):
    """parallel_search itself (n_jobs = 1 runs it in-process: BranchAndBound routes n_jobs = 1 to the sequential search)."""
    method = BranchAndBound(**options)
    run = Run(method, inst, None, None, None)
    return run.result(parallel_search(method, run))


@pytest.fixture(scope="module")
def instances():
    out = {}
    for kernel, sense in CASES:
        inst = random_instance(21, 40, 11, 5, kernel, sense)
        out[kernel, sense] = inst, value_table(inst, sizes=[inst.B])
    return out


@pytest.mark.parametrize("kernel, sense", CASES)
def test_same_optimum_for_any_jobs(instances, kernel, sense, tmp_path):
    inst, table = instances[kernel, sense]
    score, subset = best(inst, table)
    seq = solve(inst, "bnb")
    one = run_parallel(inst, n_jobs=1, certificate=str(tmp_path / "one.json"))
    two = solve(inst, "bnb", n_jobs=2, certificate=str(tmp_path / "two.json"))
    for res in (seq, one, two):
        assert res.status == "optimal" and res.certified
        assert tuple(res.features) == subset
        assert inst.score(res.objective) == pytest.approx(score, rel=1e-6, abs=1e-9)
    # the parallel search does not depend on the number of workers: same tree, counts and proof
    assert two.objective == one.objective
    for key in ("nodes", "qps", "expanded", "leaves"):
        assert one.info[key] == two.info[key], key
    assert two.info["parallel"]["tasks"] > 0, "the frontier left no subtree to the workers"
    assert load(tmp_path / "one.json")["nodes"] == load(tmp_path / "two.json")["nodes"]
    assert verify(load(tmp_path / "two.json")).proven


def test_frontier_partitions_the_open_subsets(instances, monkeypatch):
    """The frontier's nodes are disjoint and, with the pruned ones, cover every subset."""
    inst, _ = instances["rbf", "paper"]  # no bound prunes there: the frontier covers all C(n, B) subsets
    from math import comb

    from minlp_fs.exact.search import _Search

    method = BranchAndBound(incumbent="none")
    search = _Search(method, Run(method, inst, None, None, None))
    frontier = parallel.grow_frontier(search, search.start(), target=20)
    assert len(frontier) >= 20
    assert sum(parallel._size(n) for n in frontier) == comb(inst.n, inst.B)


@pytest.mark.parametrize("sense", SENSES)
@pytest.mark.parametrize("in_process", [False, True])
def test_time_limited_parallel_run_returns_a_valid_bound(sense, in_process, monkeypatch):
    """Through the workers, and in this process (less than workers.POOL_START_S left when the first wave would
    start)."""
    inst = random_instance(5, 60, 14, 6, "poly2", sense)
    table = value_table(inst, sizes=[inst.B])
    score, _ = best(inst, table)
    monkeypatch.setattr(workers, "POOL_START_S", 1e9 if in_process else -1e9)   # -1e9: workers, even past the limit
    res = solve(inst, "bnb", n_jobs=2, time_limit=2.0)
    assert res.info["parallel"]["in_process"] is in_process
    assert res.status in ("time_limit", "optimal")
    assert res.bound is not None and inst.score(res.bound) <= score + 1e-6 * max(1.0, abs(score))
    assert inst.score(res.objective) >= score - 1e-6 * max(1.0, abs(score))
    if res.status == "time_limit":
        assert not res.certified and res.info["open_nodes"] > 0


@pytest.mark.parametrize("sense", SENSES)
def test_a_limit_shorter_than_the_workers_start_up_searches_in_process(sense, tmp_path, monkeypatch):
    """With less than workers.POOL_START_S left when the first wave would start, no worker is started: the waves run
    here, to the optimum enumeration finds, with the workers' tree (the same counts) and a proof that verifies; a
    Ctrl-C in the second wave leaves a valid bound."""
    inst = random_instance(5, 40, 12, 5, "poly2", sense)
    score, subset = best(inst, value_table(inst, sizes=[inst.B]))
    path = tmp_path / "c.json"
    monkeypatch.setattr(workers, "POOL_START_S", 1e9)   # any limit is shorter
    res = solve(inst, "bnb", n_jobs=2, time_limit=3600.0, certificate=str(path))
    assert res.info["parallel"]["in_process"]
    assert res.status == "optimal" and res.certified and tuple(res.features) == subset
    assert verify(load(path)).proven
    monkeypatch.setattr(workers, "POOL_START_S", -1e9)
    pool = solve(inst, "bnb", n_jobs=2, time_limit=3600.0)
    assert not pool.info["parallel"]["in_process"] and pool.objective == res.objective
    for key in ("nodes", "qps", "expanded", "leaves"):
        assert pool.info[key] == res.info[key], key
    assert pool.info["parallel"]["tasks"] == res.info["parallel"]["tasks"] > 0
    monkeypatch.setattr(workers, "POOL_START_S", 1e9)
    calls = interrupt_second_wave(monkeypatch)   # Ctrl-C at the second wave, in this process as in workers
    stopped = solve(inst, "bnb", n_jobs=2, time_limit=3600.0)
    assert len(calls) == 2 and stopped.info["parallel"]["in_process"] and stopped.info["parallel"]["waves"] == 1
    assert stopped.status == "interrupted" and not stopped.certified and stopped.info["open_nodes"] > 0
    assert stopped.bound is not None and inst.score(stopped.bound) <= score + 1e-6 * max(1.0, abs(score))
    monkeypatch.undo()
    assert solve(inst, "bnb", n_jobs=2).info["parallel"]["in_process"] is False   # no limit: the workers


@pytest.mark.parametrize("sense", SENSES)
def test_interrupted_wave_keeps_the_frontier_bounds(sense, monkeypatch):
    """Ctrl-C during the second wave: that wave and the later ones count with their frontier nodes' bounds."""
    inst = random_instance(5, 40, 12, 5, "poly2", sense)
    score, _ = best(inst, value_table(inst, sizes=[inst.B]))
    calls = interrupt_second_wave(monkeypatch)
    res = run_parallel(inst, n_jobs=1)
    assert len(calls) == 2 and res.status == "interrupted" and not res.certified
    assert inst.score(res.bound) <= score + 1e-6 * max(1.0, abs(score))
    assert res.info["parallel"]["waves"] == 1 and res.info["open_nodes"] > 0


def test_parallel_certificate_rejects_tampering(tmp_path):
    inst = random_instance(21, 40, 11, 5, "poly2", "paper")
    path = tmp_path / "p.json"
    solve(inst, "bnb", n_jobs=2, certificate=str(path))
    doc = load(path)
    assert verify(doc).proven
    changed = json.loads(json.dumps(doc))
    changed["claim"]["value"] -= 1.0
    assert not verify(changed).proven
    removed = json.loads(json.dumps(doc))
    assert removed["nodes"][0]["fixed"] == [] and len(removed["nodes"][0]["free"]) == inst.n  # the root, recorded first
    del removed["nodes"][0]
    assert not verify(removed).proven
    worse_data = json.loads(json.dumps(doc))
    worse_data["instance"]["C"] *= 2.0  # every recorded number now belongs to another problem
    assert not verify(worse_data).proven


def test_cli_certify_jobs_backend_and_graphml(tmp_path, capsys):
    nx = pytest.importorskip("networkx")
    path, graph = tmp_path / "c.json", tmp_path / "t.graphml"
    base = ["certify", "--dataset", "synthetic", "--B", "4", "--kernel", "poly2", "--method", "bnb", "--no-progress", "--json"]
    assert main(base + ["--sense", "fit", "--jobs", "2", "--certificate", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] and out["info"]["parallel"]["n_workers"] == 2
    assert main(["verify", str(path), "--jobs", "2", "--graphml", str(graph)]) == 0
    assert capsys.readouterr().out.startswith("PROVEN")
    assert nx.is_arborescence(nx.read_graphml(graph))
    assert main(base + ["--scheduler", "tcp://nowhere:8786"]) == 2
    assert "scheduler needs backend" in capsys.readouterr().err
    assert main(base + ["--method", "enumerate", "--backend", "dask"]) == 2
    assert "need --method bnb" in capsys.readouterr().err


@pytest.mark.parametrize("sense", SENSES)
def test_a_stopped_subtree_reports_a_valid_open_bound(sense):
    """A worker past the deadline expands its node once and stops: the least bound of what it left open
    is at most the best score in its subtree (enumeration)."""
    import time

    from minlp_fs.exact.search import _Search

    inst = random_instance(5, 40, 12, 5, "poly2", sense)
    table = value_table(inst, sizes=[inst.B])
    method = BranchAndBound(incumbent="none")
    search = _Search(method, Run(method, inst, None, None, None))
    frontier = parallel.grow_frontier(search, search.start(), target=8)
    checked = 0
    for node in frontier:
        inside = [inst.score(v) for S, v in table.items() if set(node.fixed) <= set(S) <= set(node.fixed) | set(node.free)]
        r = parallel._run_subtree(BranchAndBound(incumbent="none"), inst, node, (None, None, None), time.time() - 1.0, 1e-7, False)
        if r["open_nodes"]:
            assert r["status"] == "time_limit"
            assert r["open_bound"] <= min(inside) + 1e-6 * max(1.0, abs(min(inside)))
            checked += 1
    assert checked > 0


def test_a_worker_hands_back_what_its_node_budget_left_open():
    """Budget of 1 node: the worker expands its node and hands back the open children, in search order."""
    from minlp_fs.exact.search import _Search

    inst = random_instance(5, 40, 12, 5, "poly2", "fit")
    method = BranchAndBound(incumbent="none")
    search = _Search(method, Run(method, inst, None, None, None))
    root = search.start()[0]
    r = parallel._run_subtree(BranchAndBound(incumbent="none"), inst, root, (None, None, None), None, 1e-7, False, budget=1)
    assert r["status"] == "optimal" and r["counts"]["nodes"] == 1 and r["open_bound"] is None
    expected = search.expand(root)
    assert [(n.fixed, n.free, n.need) for n in r["handed_back"]] == [(n.fixed, n.free, n.need) for n in expected]
