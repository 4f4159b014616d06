"""Parallel branch-and-bound on Ray (``backend="ray"``, ``certify --backend ray [--scheduler ADDR]``): the same
optimum as enumeration and the same tree, counts and certificate as the loky route; a time-limited run
returns a valid bound; bad Ray input is one clear error. Skipped, with the reason, when Ray is not installed."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minlp_fs.api import solve
from minlp_fs.cli import main
from minlp_fs.errors import InputError
from minlp_fs.exact.certificate import load, verify

from bnb_helpers import interrupt_second_wave, random_instance, value_table

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'minlp-fs[ray]')")

ROOT = Path(__file__).resolve().parents[2]
CERTIFY = ["certify", "--dataset", "synthetic", "--B", "4", "--kernel", "poly2", "--sense", "fit", "--method", "bnb",
           "--jobs", "2", "--no-progress", "--json"]


def best(inst, table):
    return min((inst.score(v), S) for S, v in table.items() if len(S) == inst.B)


def test_cli_certify_on_its_own_local_ray_matches_loky(tmp_path, capsys):
    """The CLI starts a local Ray of --jobs CPUs and shuts it down; same answer and proof as loky."""
    assert not ray.is_initialized()
    proofs = {}
    for backend in ("loky", "ray"):
        proofs[backend] = tmp_path / f"{backend}.json"
        assert main(CERTIFY + ["--backend", backend, "--certificate", str(proofs[backend])]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["certified"] and out["info"]["parallel"]["backend"] == backend
        proofs[backend, "answer"] = (out["objective"], out["features"], out["info"]["nodes"], out["info"]["qps"])
    assert not ray.is_initialized(), "the local Ray was left running"
    assert proofs["ray", "answer"] == proofs["loky", "answer"]
    assert load(proofs["ray"])["nodes"] == load(proofs["loky"])["nodes"]
    assert verify(load(proofs["ray"])).proven


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module's other tests (the runs use it as it is and leave it running)."""
    ray.init(num_cpus=2, include_dashboard=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("kernel, sense", [("poly2", "paper"), ("poly3", "fit")])
def test_ray_loky_and_sequential_give_the_enumerated_optimum(local_ray, kernel, sense, tmp_path):
    inst = random_instance(21, 40, 11, 5, kernel, sense)
    score, subset = best(inst, value_table(inst, sizes=[inst.B]))
    seq = solve(inst, "bnb")
    runs = {b: solve(inst, "bnb", n_jobs=2, backend=b, certificate=str(tmp_path / f"{b}.json")) for b in ("loky", "ray")}
    for res in (seq, *runs.values()):
        assert res.status == "optimal" and res.certified
        assert tuple(res.features) == subset
        assert inst.score(res.objective) == pytest.approx(score, rel=1e-6, abs=1e-9)
    ray_run, loky_run = runs["ray"], runs["loky"]
    assert ray_run.info["parallel"]["backend"] == "ray" and ray_run.info["parallel"]["tasks"] > 0
    assert ray_run.objective == loky_run.objective
    for key in ("nodes", "qps", "expanded", "leaves"):
        assert ray_run.info[key] == loky_run.info[key], key
    assert load(tmp_path / "ray.json")["nodes"] == load(tmp_path / "loky.json")["nodes"]
    assert verify(load(tmp_path / "ray.json")).proven
    assert ray.is_initialized(), "a Ray started by the caller was shut down by the run"


# a 1 s limit ends about 1 s late (Ray's task start-up); the overrun report is tested in tests/test_stopping.py
@pytest.mark.filterwarnings("ignore::minlp_fs.stopping.TimeLimitOverrunWarning")
def test_time_limited_ray_run_returns_a_valid_bound(local_ray, monkeypatch):
    """Through Ray's workers: workers.POOL_START_S set to -1e9 (a 1 s limit would otherwise search in this process,
    and a limit already passed when the frontier is grown, on a slow machine, too)."""
    from minlp_fs import workers

    inst = random_instance(5, 60, 14, 6, "poly2", "fit")
    score, _ = best(inst, value_table(inst, sizes=[inst.B]))
    monkeypatch.setattr(workers, "POOL_START_S", -1e9)
    res = solve(inst, "bnb", n_jobs=2, backend="ray", time_limit=1.0)
    assert not res.info["parallel"]["in_process"]
    assert res.status in ("time_limit", "optimal")
    assert res.bound is not None and inst.score(res.bound) <= score + 1e-6 * max(1.0, abs(score))
    assert inst.score(res.objective) >= score - 1e-6 * max(1.0, abs(score))
    if res.status == "time_limit":
        assert not res.certified and res.info["open_nodes"] > 0


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_interrupted_ray_wave_keeps_the_frontier_bounds(local_ray, sense, monkeypatch):
    """Ctrl-C during the second wave of Ray tasks: the bound of what was not finished stays valid."""
    inst = random_instance(5, 40, 12, 5, "poly2", sense)
    score, _ = best(inst, value_table(inst, sizes=[inst.B]))
    calls = interrupt_second_wave(monkeypatch)
    res = solve(inst, "bnb", n_jobs=2, backend="ray")
    assert len(calls) == 2 and res.status == "interrupted" and not res.certified
    assert res.info["parallel"]["waves"] == 1 and res.info["open_nodes"] > 0
    assert inst.score(res.bound) <= score + 1e-6 * max(1.0, abs(score))


def test_cli_certify_on_a_running_ray_cluster_by_its_address(local_ray, capsys):
    """--scheduler: another process (the CLI) connects to this module's Ray by its address; same answer as loky."""
    address = ray.get_runtime_context().gcs_address
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "minlp_fs.cli", *CERTIFY, "--backend", "ray", "--scheduler", address],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    remote = json.loads(done.stdout)
    assert main(CERTIFY + ["--backend", "loky"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert remote["certified"] and remote["info"]["parallel"]["backend"] == "ray"
    for key in ("objective", "features"):
        assert remote[key] == local[key], key
    for key in ("nodes", "qps", "expanded", "leaves"):
        assert remote["info"][key] == local["info"][key], key


def test_unreachable_ray_scheduler_is_one_clear_error(capsys):
    inst = random_instance(21, 40, 11, 5, "poly2", "paper")
    with pytest.raises(InputError, match=r"cannot reach the ray scheduler at '127\.0\.0\.1:1'"):
        solve(inst, "bnb", n_jobs=2, backend="ray", scheduler="127.0.0.1:1")
    assert main(CERTIFY + ["--backend", "ray", "--scheduler", "ray://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the ray scheduler at 'ray://127.0.0.1:1'" in err and "Traceback" not in err


def test_a_scheduler_other_than_the_running_ray_is_refused(local_ray, monkeypatch):
    """A reachable address that is not the Ray this process runs on: refused, the running Ray untouched."""
    from minlp_fs.experiments import runner

    monkeypatch.setattr(runner, "_check_reachable", lambda backend, address: None)
    inst = random_instance(21, 40, 11, 5, "poly2", "paper")
    with pytest.raises(InputError, match="Ray is already started in this process"):
        solve(inst, "bnb", n_jobs=2, backend="ray", scheduler="127.0.0.1:1")
    assert ray.is_initialized()
