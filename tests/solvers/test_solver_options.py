"""solver_options (``--solver-option KEY=VALUE``): declared and checked like every option, passed to
each solver (SCIP, the GAMS solvers' option file, Ipopt, Knitro), refused with the solver's name for
it when unknown; and every adapter's time limit on the wall clock, with a kill of GAMS after the grace."""
from functools import partial
import importlib.util
import json
import subprocess
import sys

import pytest

from minlp_fs import options
from minlp_fs.cli import main
from minlp_fs.errors import InputError
from minlp_fs.methods import get_method
from minlp_fs.options import Opt, parse_assignments, parse_scalar
from builders import synthetic_instance

HAS = {name: importlib.util.find_spec(name) is not None for name in ("pyscipopt", "cyipopt")}


tiny = partial(synthetic_instance, C=1.0, name="tiny")


def requires(method):
    avail = method.availability()
    if not avail:
        pytest.skip(f"{method.name}: {avail.reason}")
    return method


# ---- the option kind ---------------------------------------------------------------------------
def test_dict_kind_accepts_names_to_scalars_and_describes_them():
    spec = Opt(dict, none=True)
    assert spec.accepts(None) and spec.accepts({}) and spec.accepts({"limits/nodes": 10, "tol": 1e-7,
                                                                     "mu_strategy": "adaptive", "x": True})
    for bad in ({"a b": 1}, {"": 1}, {"a=b": 1}, {1: 1}, {"x": float("nan")}, {"x": float("inf")},
                {"x": None}, {"x": [1]}, {"x": "two\nlines"}, [("x", 1)], "x=1"):
        assert not spec.accepts(bad), bad
    assert spec.describe() == f"None or a mapping of {options.MAPPING_WORDS}"


def test_solver_options_is_declared_and_checked_in_the_one_format():
    spec = Opt(dict, none=True)
    with pytest.raises(InputError) as err:
        get_method("scip", solver_options={"x": float("nan")})
    assert str(err.value) == f"scip: solver_options must be {spec.describe()}; got {{'x': nan}}"
    for name in ("scip", "ipopt", "ipopt-pyomo", "knitro", "baron", "gams-knitro", "gams-ipopt", "hybrid:scip"):
        assert get_method(name, solver_options={"a": 1}).solver_options == {"a": 1}
        assert get_method(name).solver_options is None


@pytest.mark.parametrize("text, value", [("10", 10), ("-3", -3), ("1e-6", 1e-6), ("0.5", 0.5), ("true", True),
                                         ("FALSE", False), ("adaptive", "adaptive"), ("nan", "nan"),
                                         ("inf", "inf"), ("", "")])
def test_command_line_values_are_converted_where_they_parse(text, value):
    got = parse_scalar(text)
    assert got == value and type(got) is type(value)


def test_parse_assignments_names_the_bad_text():
    assert parse_assignments(["limits/nodes=10", "presolving/emphasis = fast", "x=a=b"], "solve", "--solver-option") \
        == {"limits/nodes": 10, "presolving/emphasis": "fast", "x": "a=b"}
    with pytest.raises(InputError, match=r"^solve: --solver-option must be KEY=VALUE; got 'limits'$"):
        parse_assignments(["limits"], "solve", "--solver-option")
    with pytest.raises(InputError, match=r"^solve: --solver-option 'a' is given twice$"):
        parse_assignments(["a=1", "a=2"], "solve", "--solver-option")
    with pytest.raises(InputError, match=r"^solve: --solver-option must be a mapping of names"):
        parse_assignments(["a b=1"], "solve", "--solver-option")


@pytest.mark.parametrize("name, key, owner", [("scip", "limits/time", "time_limit"), ("scip", "limits/gap", "gap"),
                                              ("ipopt", "max_wall_time", "time_limit"),
                                              ("ipopt", "max_iter", "max_iter"), ("baron", "MaxTime", "time_limit"),
                                              ("baron", "EpsR", "optcr"), ("gams-knitro", "maxtime", "time_limit"),
                                              ("gams-ipopt", "max_cpu_time", "time_limit"),
                                              ("ipopt-pyomo", "max_wall_time", "time_limit")])
def test_a_parameter_an_adapter_option_sets_is_refused(name, key, owner):
    with pytest.raises(InputError, match=rf"^{name}: solver_options '{key}' is set by the option {owner}; "):
        get_method(name, solver_options={key: 1})


# ---- SCIP --------------------------------------------------------------------------------------
scip_only = pytest.mark.skipif(not HAS["pyscipopt"], reason="pyscipopt not installed (pip install minlp-fs[scip])")


@scip_only
def test_scip_receives_its_parameters():
    res = get_method("scip", time_limit=60, heuristic=None, solver_options={"limits/nodes": 1}).solve(
        tiny("rbf", m=30))
    assert res.info["n_nodes"] <= 1
    assert res.certified or res.info["solver_status"] == "nodelimit", res.info["solver_status"]


@scip_only
@pytest.mark.parametrize("opts, words", [({"limits/nodess": 1}, "SCIP has no parameter 'limits/nodess'"),
                                         ({"limits/nodes": 1.5}, "SCIP parameter 'limits/nodes' must be an integer"),
                                         ({"limits/nodes": "x"}, "SCIP parameter 'limits/nodes' must be an integer"),
                                         ({"lp/initalgorithm": "z"}, "SCIP refuses lp/initalgorithm = 'z'")])
def test_scip_refuses_unknown_or_mistyped_parameters_before_running(opts, words, monkeypatch):
    from minlp_fs.solvers.scip import Scip

    monkeypatch.setattr(Scip, "warm", lambda *a: pytest.fail("the parameters are checked before the warm start"))
    with pytest.raises(InputError, match="^scip: " + words.replace("(", r"\(")):
        get_method("scip", solver_options=opts).solve(tiny())


@scip_only
def test_scip_takes_a_parameter_in_its_own_type():
    res = get_method("scip", time_limit=60, solver_options={"limits/nodes": 1e6, "misc/allowstrongdualreds": 0,
                                                            "lp/initalgorithm": "d"}).solve(tiny())
    assert res.certified


# ---- GAMS solvers ------------------------------------------------------------------------------
gams_only = pytest.mark.requires_gams


def test_option_file_text():
    from minlp_fs.solvers.gams import option_file_text

    assert option_file_text({"MaxIter": 0, "EpsR": 1e-7, "flag": True, "mode": "x y"}) == \
        "MaxIter 0\nEpsR 1e-07\nflag 1\nmode x y\n"


@gams_only
def test_baron_reads_its_option_file_and_keep_files_keeps_it(tmp_path):
    baron = requires(get_method("baron", time_limit=60, keep_files=str(tmp_path), solver_options={"MaxIter": 0}))
    res = baron.solve(tiny("rbf", m=4), start=[0, 1])
    assert res.info["gams_solve_status"] == 2 and not res.certified   # 2: iteration interrupt, at MaxIter 0
    assert (tmp_path / "baron.opt").read_text() == "MaxIter 0\n"


@gams_only
@pytest.mark.parametrize("name, opts, words", [
    ("baron", {"foo_bar": 3}, 'Unknown option "foo_bar"'),
    ("baron", {"MaxIter": "abc"}, 'Integer expected, for option "MaxIter"'),
    ("gams-knitro", {"foo_bar": 3}, "Ignoring 'foo_bar 3'"),
    ("gams-ipopt", {"foo_bar": 3}, 'Read Option: "foo_bar". It is not a valid option'),
    ("ipopt-pyomo", {"foo_bar": 3}, 'Read Option: "foo_bar". It is not a valid option'),
])
def test_gams_solvers_refusing_an_option_is_an_input_error_with_their_words(name, opts, words):
    method = requires(get_method(name, time_limit=30, solver_options=opts))
    with pytest.raises(InputError, match=rf"^{name}: GAMS/\w+ refuses solver_options: .*") as err:
        method.solve(tiny("rbf", m=4), start=[0, 1])
    assert words in str(err.value)


@gams_only
@pytest.mark.parametrize("name", ["baron", "gams-ipopt", "ipopt-pyomo"])
def test_gams_runs_are_killed_after_their_limit_and_the_grace(name, monkeypatch, tmp_path):
    """A GAMS run that never returns (a stand-in executable that sleeps) is killed at the limit plus the grace
    (0 here), through solve_gms's timeout or Pyomo's run under kill_after: status time_limit."""
    from minlp_fs.solvers import gams

    if sys.platform != "linux":
        pytest.skip("the stand-in executable is a POSIX script, and kill_after reads /proc")
    method = requires(get_method(name, time_limit=0.5, warm_start=False))
    real, fake = gams.gams_directory() / "gams", tmp_path / "gams"
    fake.write_text(f"#!{sys.executable}\nimport os, sys, time\n"  # Pyomo's own checks go to the real GAMS
                    f"if not any('minlp_fs_' in a for a in sys.argv):\n"
                    f"    os.execv({str(real)!r}, [{str(real)!r}] + sys.argv[1:])\ntime.sleep(60)\n")
    fake.chmod(0o755)
    monkeypatch.setattr(gams, "GRACE_S", 0.0)
    monkeypatch.setattr(gams, "gams_directory", lambda: tmp_path)
    monkeypatch.setattr(gams, "register_solver", lambda solver: None)
    monkeypatch.setattr(gams, "licence_problem", lambda: None)  # the stand-in would sleep through the check
    res = method.solve(tiny("rbf", m=4))
    assert res.status == "time_limit" and res.info["solver_status"] == "killed" and "killed" in res.message


def test_kill_after_kills_only_the_marked_process_and_says_so(tmp_path):
    from minlp_fs.solvers.gams import kill_after

    if sys.platform != "linux":
        pytest.skip("kill_after reads /proc")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    other = subprocess.Popen(sleeper + ["unrelated"])
    try:
        with kill_after(str(tmp_path), 0.2) as watchdog:
            done = subprocess.run(sleeper + [str(tmp_path)])
        assert watchdog.killed and done.returncode == -9
        assert other.poll() is None
        with kill_after(str(tmp_path), 30) as quiet:
            subprocess.run([sys.executable, "-c", "pass", str(tmp_path)], check=True)
        assert not quiet.killed
    finally:
        other.kill()
        other.wait()


# ---- Ipopt -------------------------------------------------------------------------------------
ipopt_only = pytest.mark.skipif(not HAS["cyipopt"], reason="cyipopt not installed (pip install minlp-fs[ipopt])")


def test_ipopt_options_are_the_adapters_then_the_users():
    method = get_method("ipopt", time_limit=7, solver_options={"mu_strategy": "adaptive", "tol": 1})
    opts = method.ipopt_options()
    assert opts["max_wall_time"] == 7.0 and opts["mu_strategy"] == "adaptive" and opts["tol"] == 1
    assert method.ipopt_options(2.5)["max_wall_time"] == 2.5


@ipopt_only
def test_ipopt_receives_its_options():
    inst = tiny("poly3", m=30, sense="fit")
    res = get_method("ipopt", time_limit=60, solver_options={"max_cpu_time": 1e-9}).solve(inst)
    assert res.status == "time_limit" and "CPU time" in res.message
    # an int for a Number option, a float for an Integer one, a bool for a yes/no one: all as meant
    ok = get_method("ipopt", time_limit=60, solver_options={"tol": 1, "acceptable_iter": 5.0,
                                                            "honor_original_bounds": True}).solve(inst)
    assert ok.status == "converged", ok.message


@ipopt_only
@pytest.mark.parametrize("opts", [{"foo_bar": 1}, {"tol": "abc"}, {"max_cpu_time": -1}])
def test_ipopt_refuses_an_unknown_or_mistyped_option(opts):
    key = next(iter(opts))
    with pytest.raises(InputError, match=rf"^ipopt: Ipopt refuses solver_options {key} = "):
        get_method("ipopt", solver_options=opts).solve(tiny())


# ---- Knitro (runs only with a licence) ---------------------------------------------------------
def test_knitro_options_reach_its_parameter_dict_before_the_licence_check():
    kn = pytest.importorskip("knitro", reason="knitro not installed (pip install minlp-fs[knitro])")
    from minlp_fs.solvers.knitro import license_check

    method = get_method("knitro", time_limit=3, seed=4, solver_options={"mip_maxnodes": 5, "algorithm": "ipm"})
    params = method.knitro_params(3.0)
    assert params[kn.KN_PARAM_MAXTIMEREAL] == 3.0 and params[kn.KN_PARAM_MS_SEED] == 4
    assert params["mip_maxnodes"] == 5 and params["algorithm"] == "ipm"
    if not license_check():
        res = method.solve(tiny())
        assert res.status == "unavailable" and res.message == license_check().reason


# ---- the hybrid and the command line -----------------------------------------------------------
@scip_only
def test_hybrid_passes_solver_options_to_its_solver():
    with pytest.raises(InputError, match=r"^scip: SCIP has no parameter 'foo'"):
        get_method("hybrid:scip", time_limit=30, solver_options={"foo": 1}).solve(tiny())


TINY = ["--dataset", "synthetic", "--B", "2", "--m", "30"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@scip_only
def test_cli_solve_passes_solver_options(capsys):
    code, out, _ = run(capsys, "solve", *TINY, "--method", "scip", "--heuristic-time", "0.1", "--time-limit", "60",
                       "--solver-option", "limits/nodes=1", "--solver-option", "presolving/maxrounds=0", "--json")
    res = json.loads(out)
    assert code in (0, 4) and res["info"]["n_nodes"] <= 1 and res["status"] in ("optimal", "converged", "limit")
    code, _, err = run(capsys, "solve", *TINY, "--method", "scip", "--solver-option", "limits/time=5")
    assert code == 2 and err.strip() == ("minlp-fs: error: scip: --solver-option 'limits/time' is set by the "
                                         "option --time-limit; use --time-limit instead")
    code, _, err = run(capsys, "solve", *TINY, "--method", "scip", "--solver-option", "nodes")
    assert code == 2 and err.strip() == "minlp-fs: error: solve: --solver-option must be KEY=VALUE; got 'nodes'"


def test_cli_solve_refuses_solver_options_for_a_heuristic(capsys):
    code, _, err = run(capsys, "solve", *TINY, "--method", "ls*", "--solver-option", "a=1")
    assert code == 2 and "has no option(s) --solver-option" in err


@scip_only
def test_cli_compare_gives_solver_options_to_the_adapters_only(capsys):
    code, out, _ = run(capsys, "compare", *TINY, "--methods", "ls*,scip", "--time-limit", "30",
                       "--solver-option", "foo=1", "--json")
    rows = {r["method"]: r["result"] for r in json.loads(out)}
    assert code == 1
    assert rows["ls*"]["status"] == "converged"
    assert rows["scip"]["status"] == "error" and "SCIP has no parameter 'foo'" in rows["scip"]["message"]


@scip_only
def test_scip_stops_at_a_tiny_wall_clock_limit():
    """SCIP runs in process: its own limit, on the wall clock (timing/clocktype 2, set by the adapter). On a
    loaded machine the model's build can use up 0.5 s before SCIP starts (solver_status 'not run', the
    adapter's own stage limit): then a longer limit, until SCIP itself is what stops."""
    for limit in (0.5, 1.0, 2.0, 4.0):
        res = get_method("scip", time_limit=limit, heuristic=None, warm_start=False).solve(tiny("rbf", m=30))
        assert res.status == "time_limit"
        if res.info["solver_status"] != "not run":
            break
    assert res.info["solver_status"] == "timelimit"
