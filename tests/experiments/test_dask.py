"""A dask.distributed LocalCluster of two workers gives the same results as the local run."""
import pytest

from minlp_fs.experiments.runner import run_units
from minlp_fs.experiments.store import read_records, unit_key
from minlp_fs.experiments.units import solve_unit

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")

GRID = [{"dataset": "synthetic", "kernel": "poly2", "B": B, "sense": sense, "method": method}
        for B in (1, 2) for sense in ("paper", "fit") for method in ("enumerate", "ls*")]


def _by_key(path):
    return {unit_key(r["unit"]): (r["result"]["objective"], r["result"]["features"], r["result"]["status"])
            for r in read_records(path)}


def test_dask_cluster_matches_local_run(tmp_path):
    local = run_units(GRID, solve_unit, tmp_path / "local.jsonl", progress=False)
    assert local.n_run == len(GRID) and local.n_errors == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_units(GRID, solve_unit, tmp_path / "dask.jsonl", backend="dask",
                           scheduler=cluster.scheduler_address, progress=False)
    assert remote.n_run == len(GRID) and remote.n_errors == 0
    a, b = _by_key(tmp_path / "local.jsonl"), _by_key(tmp_path / "dask.jsonl")
    assert a.keys() == b.keys()
    for key in a:
        assert a[key][1:] == b[key][1:], key
        assert a[key][0] == pytest.approx(b[key][0], rel=1e-12), key
