"""BARON, Knitro and IPOPT through GAMS (gamspy-base demo): real runs on tiny instances.

BARON's certified optimum is compared with enumeration; Knitro and the IPOPT relaxation return
polished feasible answers; size limits, missing packages and "no solution" answers are reported
with reasons; the warm start is what GAMS receives.
"""
import importlib.util
import re
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gamspy_base") is None,
                                reason="gamspy-base not installed: pip install 'minlp-fs[gams]'")

from minlp_fs.alpha import AlphaSubproblem  # noqa: E402
from minlp_fs.datasets import make_synthetic  # noqa: E402
from minlp_fs.instance import make_instance  # noqa: E402
from minlp_fs.models import solution_from_values  # noqa: E402
from minlp_fs.models.export import gms_symbol_table, write_gms  # noqa: E402
from minlp_fs.solvers import gams  # noqa: E402
from minlp_fs.solvers.enumeration import Enumeration  # noqa: E402
from minlp_fs.solvers.gams import Baron, GamsIpopt, GamsKnitro, GamsSolver, gams_size  # noqa: E402


def _instance(m, n=3, kernel="rbf", sense="paper", seed=1):
    d = make_synthetic(40, 2, n - 2, seed=0)
    return make_instance(d.X, d.y, B=2, kernel=kernel, sense=sense, m=m, seed=seed)


def _requires(method):
    avail = method.availability()
    if not avail:
        pytest.skip(f"{method.name}: {avail.reason}")


@pytest.mark.parametrize("kernel", ["rbf", "poly2"])
def test_baron_certifies_the_enumeration_optimum(kernel):
    baron = Baron(time_limit=60)
    _requires(baron)
    inst = _instance(4, n=4, kernel=kernel)            # BARON proves these in about 1-2 s
    res = baron.solve(inst, start=[0, 1])
    ref = Enumeration().solve(inst)
    assert res.status == "optimal" and res.certified, res.message
    assert res.features == ref.features
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.bound == pytest.approx(ref.objective, rel=1e-5)
    assert res.info["scope"] == "global"


def test_baron_time_limit_is_not_reported_optimal():
    """At the time limit with a wide gap GAMS says 'integer solution': we say time_limit, uncertified."""
    baron = Baron(time_limit=1)
    _requires(baron)
    inst = _instance(12, n=4, kernel="poly2")
    res = baron.solve(inst, start=[0, 1])
    assert res.status == "time_limit" and not res.certified
    assert res.bound is not None and res.bound < res.objective - 1.0       # the gap BARON left open
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve(res.features).value)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_gams_knitro_returns_a_polished_feasible_answer(sense):
    knitro = GamsKnitro(time_limit=30)
    _requires(knitro)
    inst = _instance(10, n=4, sense=sense)
    res = knitro.solve(inst, start=[0, 1])
    assert res.status in ("converged", "time_limit") and not res.certified, res.message
    assert len(res.features) == inst.B and res.info["scope"] == "local"
    fit = AlphaSubproblem(inst).solve(res.features)
    assert res.objective == pytest.approx(fit.value, rel=1e-9)
    # polishing never loses: g(beta) <= f(alpha, beta) (paper); -g(beta) <= the primal value (fit, weak duality)
    assert res.info["rounded_subset"] == res.features and res.info["beta_max_fractionality"] < 1e-6
    assert inst.sign * res.objective <= res.info["solver_objective"] + 1e-6 * abs(res.objective)


def test_gams_ipopt_relaxation_then_rounding():
    ipopt = GamsIpopt(time_limit=30)
    _requires(ipopt)
    inst = _instance(12, n=5, kernel="poly2")
    res = ipopt.solve(inst, start=[0, 1])
    assert res.status == "converged", res.message
    assert res.info["relaxation"] is True and "beta_max_fractionality" in res.info
    assert len(res.features) == inst.B
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve(res.features).value, rel=1e-9)


def test_gams_ipopt_at_the_time_limit_rounds_its_last_iterate(monkeypatch):
    """Stopped by reslim (solve status 3), IPOPT's iterate is 'feasible' (model status 7) or 'intermediate
    infeasible' (6): either way the run is a time limit with that iterate rounded and polished."""
    from minlp_fs.api import build_instance

    ipopt = GamsIpopt(time_limit=60)
    _requires(ipopt)
    inst = build_instance("bcd", B=3, m=100)           # IPOPT needs about 1 s on it: reslim 0.05 stops it
    solve_gms = gams.solve_gms
    monkeypatch.setattr(gams, "solve_gms", lambda path, solver, time_limit, **kw: solve_gms(path, solver, 0.05, **kw))
    res = ipopt.solve(inst, start=[0, 1, 2])
    assert res.info["gams_solve_status"] == 3 and res.status == "time_limit", res.message
    assert res.info["gams_model_status"] in (6, 7) and len(res.features) == inst.B
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve(res.features).value, rel=1e-9)


def test_writing_the_model_counts_against_the_time_limit(monkeypatch):
    """A model build that uses the whole time limit runs no GAMS: the answer is the start, polished."""
    import time

    import minlp_fs.models as models

    ipopt = GamsIpopt(time_limit=0.2)
    _requires(ipopt)
    build = models.build_model
    monkeypatch.setattr(models, "build_model", lambda *a, **k: (time.sleep(0.3), build(*a, **k))[1])
    inst = _instance(12, n=5, kernel="poly2")
    res = ipopt.solve(inst, start=[0, 1])
    assert res.status == "time_limit" and res.info["solver_status"] == "not run", res.message
    assert list(res.features) == [0, 1]
    assert res.objective == pytest.approx(AlphaSubproblem(inst).solve((0, 1)).value, rel=1e-9)


def test_warm_start_is_what_gams_receives(tmp_path):
    knitro = GamsKnitro(time_limit=10, keep_files=str(tmp_path))
    _requires(knitro)
    inst = _instance(8)
    start = [1, 2]
    knitro.solve(inst, start=start)
    path, = tmp_path.glob("*.gms")
    levels = dict(re.findall(r"^(\w+)\.l = (\S+);$", path.read_text(), flags=re.M))
    values = {name: float(levels[s]) for s, name in gms_symbol_table(path)}
    alpha, beta = solution_from_values(inst, values)
    assert np.flatnonzero(beta).tolist() == start
    assert np.allclose(alpha, AlphaSubproblem(inst).solve(start).alpha, atol=1e-12)
    cold = GamsKnitro(time_limit=10, keep_files=str(tmp_path / "cold"), warm_start=False)
    cold.solve(inst)
    path, = (tmp_path / "cold").glob("*.gms")
    assert ".l = " not in path.read_text()


def test_size_limits_are_unavailable_with_the_reason():
    for method in (Baron(), GamsKnitro(), GamsIpopt()):
        _requires(method)
    inst = _instance(40, n=10)                         # 40 + 10 + t + objvar = 52 columns > BARON's 50
    res = Baron().solve(inst, start=[0, 1])
    assert res.status == "unavailable" and res.objective is None
    assert res.message.startswith("demo size limit exceeded") and "52 columns" in res.message
    big = make_synthetic(300, 2, 3, seed=0)
    wide = make_instance(big.X, big.y, B=2)
    assert not GamsKnitro().availability(wide)
    assert GamsKnitro().availability(wide).reason.startswith("demo size limit exceeded")
    assert GamsIpopt().availability(wide)              # 306 columns: within the NLP demo's 1000


def test_gams_size_matches_the_written_file(tmp_path):
    for sense in ("paper", "fit"):
        inst = _instance(6, sense=sense)
        text = write_gms(inst, tmp_path / f"{sense}.gms", start=[0, 1]).read_text()
        rows, cols = (int(x) for x in re.findall(r"^\*\s+(\d+)\s+\d+", text, flags=re.M)[:2])
        assert gams_size(inst) == (rows, cols)


def test_demo_limit_found_by_gams_is_unavailable():
    """Within BARON's rows/columns but over its nonlinear-nonzero demo cap: GAMS refuses, we report why."""
    baron = Baron(time_limit=10)
    _requires(baron)
    inst = _instance(8, sense="fit")                  # 13 rows, 24 columns, > 100 nonlinear nonzeros
    assert baron.availability(inst)
    res = baron.solve(inst, start=[0, 1])
    assert res.status == "unavailable" and res.message.startswith("demo size limit exceeded")


def test_missing_solver_package_is_named():
    class Nosuch(GamsSolver):
        name = "gams-nosuch"
        solver = "nosuchsolver"

    avail = Nosuch().availability()
    assert not avail and avail.reason == "gamspy-nosuchsolver not installed: pip install gamspy-nosuchsolver"


def test_no_solution_is_an_error_never_stale_values(monkeypatch):
    """A 'no solution returned' status must not be read as an answer, whatever levels GAMS printed."""
    inst = _instance(6)
    stale = {f"alpha[{i}]": 1.0 for i in range(inst.m)} | {"beta[0]": 1.0, "beta[1]": 1.0}
    monkeypatch.setattr(gams, "register_solver", lambda solver: None)
    monkeypatch.setattr(gams, "licence_problem", lambda: None)
    monkeypatch.setattr(gams, "solve_gms", lambda *a, **k: {"modelstat": 14.0, "solvestat": 1.0, "objval": None,
                                                            "objest": None, "values": stale, "listing": ""})
    res = Baron().solve(inst, start=[0, 1])
    assert res.status == "error" and res.objective is None
    assert "no solution" in res.message and "model status 14" in res.message


REFUSING_GAMS = """#!/bin/sh
echo '--- Job licence.gms Start 11/27/26 00:34:23 54.6.1 20a39885 LEX-LEG x86 64bit/Linux'
echo '*** Time-limited license expired 1 days ago'
echo '*** Status: Terminated due to a licensing error'
echo '***         License file: /x/gamslice.txt'
echo '***         Inspect listing file for more information.'
exit 7
"""


def test_a_licence_gams_refuses_makes_its_solvers_unavailable_with_its_words(monkeypatch, tmp_path):
    """gamspy-base's demo licence is time-limited: past its date GAMS ends every run with exit code 7 and these
    lines (GAMS 54.6.1 on 2026-11-27, copied into a stand-in executable). BARON, GAMS/Knitro, GAMS/Ipopt and
    the Pyomo route are then unavailable (no licence) with GAMS's words and the fix, before any model is
    written, and a .gms run directly raises the same."""
    from minlp_fs.api import get_method
    from minlp_fs.errors import SolverUnavailableError, UnavailableKind

    if sys.platform == "win32":
        pytest.skip("the stand-in executable is a POSIX shell script")
    fake = tmp_path / "gams"
    fake.write_text(REFUSING_GAMS)
    fake.chmod(0o755)
    monkeypatch.setattr(gams, "gams_directory", lambda: tmp_path)
    monkeypatch.setattr(gams, "register_solver", lambda solver: None)
    monkeypatch.setattr(gams, "_licence_problems", {})
    words = ("no licence: GAMS says: Time-limited license expired 1 days ago; Status: Terminated due to a "
             "licensing error; License file: /x/gamslice.txt. gamspy-base's demo licence is time-limited: a "
             "newer gamspy-base brings a new one (pip install -U gamspy-base)")
    inst = _instance(6)
    for name in ("baron", "gams-knitro", "gams-ipopt", "ipopt-pyomo"):
        avail = get_method(name).availability(inst)
        assert not avail and avail.kind is UnavailableKind.NO_LICENSE and avail.reason.startswith(words), name
        res = get_method(name).solve(inst)
        assert res.status == "unavailable" and res.message.startswith(words) and res.objective is None, name
    with pytest.raises(SolverUnavailableError, match="Time-limited license expired 1 days ago") as caught:
        gams.solve_gms(write_gms(inst, tmp_path / "tiny.gms", start=[0, 1]), "conopt", 10)
    assert caught.value.kind is UnavailableKind.NO_LICENSE


@pytest.mark.parametrize("script, said", [("#!/bin/sh\nexec sleep 5\n", "GAMS did not answer a one-line job within 0.3 s"),
                                          (None, "cannot run")])
def test_a_gams_that_hangs_or_cannot_start_is_unavailable_not_a_traceback(monkeypatch, tmp_path, script, said):
    if sys.platform == "win32":
        pytest.skip("the stand-in executable is a POSIX shell script")
    if script is not None:
        (tmp_path / "gams").write_text(script)
        (tmp_path / "gams").chmod(0o755)
    monkeypatch.setattr(gams, "gams_directory", lambda: tmp_path)
    monkeypatch.setattr(gams, "register_solver", lambda solver: None)
    monkeypatch.setattr(gams, "_licence_problems", {})
    monkeypatch.setattr(gams, "LICENCE_CHECK_S", 0.3)
    avail = Baron().availability()
    assert not avail and avail.reason.startswith(said) and avail.kind is gams.UnavailableKind.CHECK_FAILED
