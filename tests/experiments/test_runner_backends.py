"""The runner's backends: Ray gives the same records as loky, writes them as units finish and stops when a
worker dies; a missing package or an unreachable scheduler is one clear InputError (dask and ray)."""
import sys
from pathlib import Path

import pytest

import faulty
from minlp_fs.errors import InputError
from minlp_fs.experiments.runner import backend_context, check_backend, run_units
from minlp_fs.experiments.store import read_records, unit_key
from minlp_fs.experiments.units import solve_unit

HERE = Path(__file__).resolve().parent
GRID = [{"dataset": "synthetic", "kernel": "poly2", "B": B, "sense": sense, "method": method}
        for B in (1, 2) for sense in ("paper", "fit") for method in ("enumerate", "ls*")] + \
       [{"dataset": "synthetic", "kernel": "poly2", "B": 3, "sense": "fit", "method": "bnb"}]


def square(unit):
    return {"y": unit["x"] ** 2}


def _by_key(path):
    return {unit_key(r["unit"]): (r["result"]["objective"], r["result"]["features"], r["result"]["status"])
            for r in read_records(path)}


@pytest.mark.parametrize("backend, module", [("ray", "ray"), ("dask", "distributed")])
def test_a_missing_cluster_package_is_one_input_error(backend, module, monkeypatch, tmp_path):
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")] + [module]:
        monkeypatch.setitem(sys.modules, name, None)  # import of the package fails as if not installed
    with pytest.raises(InputError, match=rf"backend '{backend}' needs .*pip install"):
        check_backend(backend)
    with pytest.raises(InputError, match=rf"backend '{backend}' needs"):
        run_units([{"x": 1}], faulty.exit_on_two, tmp_path / "raw.jsonl", n_jobs=2, backend=backend, progress=False)
    assert list(tmp_path.iterdir()) == [], "the raw file was opened before the backend was checked"


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "127.0.0.1:1", "tcp://[::1]:1"])
def test_an_unreachable_dask_scheduler_is_one_input_error(address, tmp_path):
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    with pytest.raises(InputError, match=r"cannot reach the dask scheduler at '.*:1'"):
        with backend_context("dask", 2, address):
            pass
    with pytest.raises(InputError, match=r"cannot reach the dask scheduler"):
        run_units([{"x": 1}], faulty.exit_on_two, tmp_path / "raw.jsonl", backend="dask", scheduler=address,
                  progress=False)
    assert not (tmp_path / "raw.jsonl").exists()


def test_addresses_without_host_and_port_are_left_to_the_cluster():
    """Ray's 'auto' and dask's in-process addresses are not TCP ports: no check (the cluster's connect decides)."""
    from minlp_fs.experiments.runner import _check_reachable

    for address in ("auto", "local", "inproc://10.0.0.1/123/1"):
        _check_reachable("ray", address)
    with pytest.raises(InputError, match="cannot reach the ray scheduler"):
        _check_reachable("ray", "ray://127.0.0.1:1")


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'minlp-fs[ray]')")
    # the workers import faulty.py from this folder (on pytest's sys.path; loky's workers inherit it)
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": str(HERE)}})
    yield ray
    ray.shutdown()


def test_ray_gives_the_records_of_loky(local_ray, tmp_path):
    loky = run_units(GRID, solve_unit, tmp_path / "loky.jsonl", n_jobs=2, progress=False)
    remote = run_units(GRID, solve_unit, tmp_path / "ray.jsonl", backend="ray", progress=False)
    for s in (loky, remote):
        assert s.n_run == len(GRID) and s.n_errors == 0 and not s.worker_died
    a, b = _by_key(tmp_path / "loky.jsonl"), _by_key(tmp_path / "ray.jsonl")
    assert a.keys() == b.keys() == {unit_key(u) for u in GRID}
    for key in a:
        assert a[key][1:] == b[key][1:], key
        assert a[key][0] == pytest.approx(b[key][0], rel=1e-12), key
    again = run_units(GRID, solve_unit, tmp_path / "ray.jsonl", backend="ray", progress=False)
    assert (again.n_run, again.n_skipped) == (0, len(GRID))


def test_a_ray_worker_killed_mid_unit_stops_the_run_and_the_next_run_completes(local_ray, tmp_path):
    raw, units = tmp_path / "raw.jsonl", [{"x": x} for x in range(4)]
    s = run_units(units, faulty.exit_on_two, raw, backend="ray", progress=False)
    assert s.worker_died and "Ray worker died" in s.worker_died and s.n_run < 4
    assert not (tmp_path / "raw.jsonl.lock").exists()
    assert 2 not in [r["unit"]["x"] for r in read_records(raw)]
    # the next run completes; on a loaded machine Ray may still lease it a worker the first run's force-cancel
    # is destroying, which stops that run too (worker_died), so a run after it must then complete
    for _ in range(3):
        s = run_units(units, square, raw, backend="ray", progress=False)
        if not s.worker_died:
            break
    assert not s.worker_died and s.n_run + s.n_skipped == 4
    assert sorted(r["y"] for r in read_records(raw)) == [0, 1, 4, 9]


def test_a_unit_function_the_ray_workers_cannot_import_is_an_error_record(local_ray, tmp_path, monkeypatch):
    """Unpickling the function fails on the worker: every unit is an error record (retried by the next run)."""
    import types

    ghost = types.ModuleType("ghost_units_module")
    exec("def f(unit):\n    return {'y': unit['x']}", ghost.__dict__)
    ghost.f.__module__ = "ghost_units_module"
    monkeypatch.setitem(sys.modules, "ghost_units_module", ghost)  # importable here only: pickled by reference
    s = run_units([{"x": 1}, {"x": 2}], ghost.f, tmp_path / "raw.jsonl", backend="ray", progress=False)
    assert s.n_run == 2 and s.n_errors == 2 and not s.worker_died
    assert all("ghost_units_module" in e for e in s.errors)
