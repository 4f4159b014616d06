"""BARON, Knitro and IPOPT through GAMS (``gamspy-base`` and its demo solver packages).

Each adapter writes the instance as a MINLPLib-style ``.gms`` (:mod:`minlp_fs.models.export`, with
the warm start as levels), runs the ``gams`` executable that ships in ``gamspy_base``'s folder, and
reads the model/solve status, objective, bound (``objest``) and levels back from a small ``put``
file. Running GAMS directly (rather than through Pyomo's GAMS interface) keeps the true status: a
global solver counts as *proven optimal* only when its own bound meets its objective within
``optcr`` (Pyomo reports ``optimal`` for model status 8 even at the time limit with a wide gap),
and levels are read only when the model status says a solution exists, never stale start values (or,
for the relaxation, when IPOPT was stopped at the time limit at an infeasible iterate: rounding makes a
subset of it all the same).

* :class:`Baron`: global MINLP (``certifies``); its bound is a valid bound on problem (4).
* :class:`GamsKnitro`: Knitro's MINLP branch and bound, local on this nonconvex problem.
* :class:`GamsIpopt`: the continuous relaxation (beta in [0, 1]) by Ipopt; the base class rounds
  beta to its top B entries and solves the alpha-subproblem (paper section 5.1).

The add-on solvers are registered with GAMS once, programmatically (the equivalent of
``gamspy install solver baron knitro ipopt --skip-pip-install``), else GAMS answers "Unknown
solver name". Demo licences limit the model's rows and columns (counting the ``objvar`` column and
the objective's row): BARON 50, Knitro 300, other NLP/MINLP solvers 1000; a larger model is reported
unavailable with its sizes before anything runs. The demo also caps nonlinear nonzeros (BARON: about
50, measured here; the fit-sense model's margins have about m^2), which only GAMS counts exactly: a
model GAMS refuses is reported unavailable with GAMS's own message.

BARON's time limit is its own (GAMS ``reslim``); on a loaded machine it was seen to overrun it by 2-3x.
A run that overruns by :data:`GRACE_S` seconds more is killed with its process group (wall clock).
``solver_options`` go to the solver as an option file ``<solver>.opt`` in the run's folder, read with
``optfile=1``.
"""
from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import typing
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, SolverUnavailableError, UnavailableKind
from ..options import option
from .base import Availability, RawSolution, SolverMethod

MISSING = UnavailableKind.MISSING_PACKAGE

#: GAMS model status codes that come with a solution (optimal, locally optimal, feasible, integer, solved)
WITH_SOLUTION = {1, 2, 7, 8, 15, 16, 17}
#: GAMS model status of a solver interrupted at an infeasible point: for the relaxation (IPOPT), its iterate
#: at the time limit, rounded and polished like any other (as the cyipopt and Pyomo routes do)
INTERMEDIATE_INFEASIBLE = 6
MODEL_STATUS = {1: "optimal", 2: "locally optimal", 3: "unbounded", 4: "infeasible", 5: "locally infeasible",
                6: "intermediate infeasible", 7: "feasible solution", 8: "integer solution",
                9: "intermediate non-integer", 10: "integer infeasible", 11: "licensing problem",
                12: "error unknown", 13: "error no solution", 14: "no solution returned",
                15: "solved unique", 16: "solved", 17: "solved singular", 18: "unbounded no solution",
                19: "infeasible no solution"}
SOLVE_STATUS = {1: "normal completion", 2: "iteration interrupt", 3: "resource interrupt",
                4: "terminated by solver", 5: "evaluation interrupt", 6: "capability problems",
                7: "licensing problems", 8: "user interrupt", 9: "setup failure", 10: "solver failure",
                11: "internal solver failure", 12: "solve processing skipped", 13: "system failure"}
#: seconds GAMS may take beyond reslim (start-up, writing results) before it is killed
GRACE_S = 60.0
#: GAMS solve statuses of a limit other than time (3, the resource interrupt, is the time limit): status limit
OTHER_LIMITS = {2: "iterations", 5: "evaluation errors"}

_registered: set = set()


def gams_directory() -> Path:
    """The folder of ``gamspy_base`` that holds the ``gams`` executable."""
    if importlib.util.find_spec("gamspy_base") is None:
        raise SolverUnavailableError("gamspy not installed: pip install 'minlp-fs[gams]'", MISSING)
    import gamspy_base
    return Path(gamspy_base.directory)


def gams_executable() -> Path:
    """The ``gams`` executable of ``gamspy_base``."""
    return gams_directory() / ("gams.exe" if os.name == "nt" else "gams")


#: GAMS's exit code when it refuses to run for its licence
GAMS_LICENSE_EXIT = 7
#: seconds the licence check's one-line GAMS job may take
LICENCE_CHECK_S = 60.0
_licence_problems: dict = {}


def licence_problem() -> str | None:
    """GAMS's own words when it refuses to run for its licence (gamspy-base's demo licence is time-limited: past
    its date every GAMS run ends with exit code 7), else None. Found once per process by running GAMS on a
    one-line job (about 0.03 s); a GAMS that does not start or answer raises SolverUnavailableError (check failed)."""
    directory = gams_directory()
    if directory not in _licence_problems:
        executable = gams_executable()
        with tempfile.TemporaryDirectory(prefix="minlp_fs_gams_licence_") as tmp:
            job = Path(tmp) / "licence.gms"
            job.write_text("scalar x / 1 /;\n")
            try:
                done = subprocess.run([str(executable), str(job), "lo=3", f"curdir={tmp}",
                                       f"o={Path(tmp) / 'licence.lst'}"], cwd=tmp, capture_output=True, text=True,
                                      timeout=LICENCE_CHECK_S)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise SolverUnavailableError(
                    f"GAMS did not answer a one-line job within {LICENCE_CHECK_S:g} s"
                    if isinstance(exc, subprocess.TimeoutExpired) else f"cannot run {executable}: {exc}",
                    UnavailableKind.CHECK_FAILED) from None
        _licence_problems[directory] = (_licence_words(f"{done.stdout}\n{done.stderr}")
                                        if done.returncode == GAMS_LICENSE_EXIT else None)
    return _licence_problems[directory]


def _licence_words(log: str) -> str:
    """One line from the ``***`` lines of a GAMS log that refused its licence, and the fix."""
    said = [line.strip("* \t") for line in log.splitlines() if line.startswith("***")]
    said = [line for line in said if line and not line.startswith("Inspect listing")]
    return (f"no licence: GAMS says: {'; '.join(said) or 'licensing problems (exit code 7)'}. gamspy-base's demo "
            "licence is time-limited: a newer gamspy-base brings a new one (pip install -U gamspy-base), or install "
            "a licence with `gamspy install license`")


def _capabilities_solvers(directory: Path) -> set:
    """Solver names registered in GAMS's capabilities file (the first word of each entry line)."""
    text = (directory / "gmscmpun.txt").read_text(encoding="utf-8")
    return {line.split()[0] for line in text.splitlines() if line[:1].isalpha() and line.split()[0].isupper()}


def register_solver(solver: str) -> None:
    """Make GAMS know ``solver`` (its ``gamspy-<solver>`` package must be installed); once per process."""
    if solver in _registered:
        return
    directory = gams_directory()
    if importlib.util.find_spec(f"gamspy_{solver}") is None:
        raise SolverUnavailableError(f"gamspy-{solver} not installed: pip install gamspy-{solver}", MISSING)
    with _exclusive(Path(tempfile.gettempdir()) / "minlp_fs_gams_register.lock"):
        if solver.upper() not in _capabilities_solvers(directory):
            cmd = [sys.executable, "-m", "gamspy", "install", "solver", solver, "--skip-pip-install"]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if solver.upper() not in _capabilities_solvers(directory):
                detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
                raise SolverUnavailableError(f"solver not registered with GAMS: `{' '.join(cmd[1:])}` "
                                             f"failed: {detail[0]}", MISSING)
    _registered.add(solver)


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """An inter-process lock (POSIX), so parallel first uses do not both rewrite GAMS's solver list."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock
        yield
        return
    with open(lock_path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def gams_size(instance) -> tuple:
    """(rows, columns) of the .gms that :func:`minlp_fs.models.export.gms_text` writes, objvar included:
    :meth:`minlp_fs.models.formulation.Formulation.size`, the formulation the file is written from."""
    from ..models.formulation import Formulation

    return Formulation(instance).size()


def _number(text: str):
    try:
        value = float(text)
    except ValueError:
        return 0.0 if text.upper() == "EPS" else None
    return value if math.isfinite(value) else None


def _driver(model_file: Path, result_file: Path, symbols: list) -> str:
    lines = [f'$include "{model_file}"', f'file dfs_res / "{result_file}" /;',
             "dfs_res.nr = 2; dfs_res.nd = 15; dfs_res.nw = 24; dfs_res.pw = 1000;", "put dfs_res;",
             "put 'modelstat ' m.modelstat:0:0 /;", "put 'solvestat ' m.solvestat:0:0 /;",
             "put 'objval ' m.objval /;", "put 'objest ' m.objest /;", "put 'resusd ' m.resusd /;"]
    lines += [f"put '{s} ' {s}.l /;" for s in symbols]
    return "\n".join(lines + ["putclose dfs_res;", ""])


def option_file_text(options: dict) -> str:
    """A GAMS solver option file: one ``name value`` line per entry (True/False as 1/0)."""
    def text(v):
        return str(int(v)) if isinstance(v, bool) else (repr(float(v)) if isinstance(v, float) else str(v))
    return "".join(f"{key} {text(value)}\n" for key, value in options.items())


def solve_gms(path, solver: str, time_limit: float, optcr: float = 1e-6, tee: bool = False,
              options: dict | None = None) -> dict:
    """Run GAMS/``solver`` on a .gms written by :mod:`minlp_fs.models.export`.

    ``options``: the solver's own options, written as ``<solver>.opt`` in the run's folder and read
    with ``optfile=1``. Returns statuses, objective, bound (``objest``), solver time and the levels
    keyed by the model's variable names (``values``), with the listing's messages (an option the
    solver does not know is among them); ``timeout`` if GAMS overran its limit by GRACE_S.
    """
    from ..models.export import gms_symbol_table

    path = Path(path).resolve()
    table = gms_symbol_table(path)
    discrete = any(symbol.startswith("b") for symbol, _ in table)
    executable = gams_executable()
    with tempfile.TemporaryDirectory(prefix="minlp_fs_gams_") as tmp:
        tmp = Path(tmp)
        driver, result, listing = tmp / "driver.gms", tmp / "result.txt", tmp / "driver.lst"
        driver.write_text(_driver(path, result, [s for s, _ in table]))
        cmd = [str(executable), str(driver), "lo=3", f"reslim={time_limit}", f"optcr={optcr}", "optca=0",
               f"{'minlp' if discrete else 'nlp'}={solver}", f"curdir={tmp}", f"o={listing}"]
        if options:
            (tmp / f"{solver}.opt").write_text(option_file_text(options))
            cmd += ["optfile=1", f"optdir={tmp}"]
        proc = subprocess.Popen(cmd, cwd=tmp, stdout=None if tee else subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=time_limit + GRACE_S)
        except subprocess.TimeoutExpired:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)     # gams and the solver it started
            else:
                proc.kill()
            proc.communicate()
            return {"timeout": True, "log": f"GAMS did not return within {time_limit + GRACE_S:.0f} s; killed"}
        if proc.returncode == GAMS_LICENSE_EXIT:
            raise SolverUnavailableError(_licence_words(log or ""), UnavailableKind.NO_LICENSE)
        messages = _listing_messages(listing.read_text(errors="replace")) if listing.exists() else ""
        answer = {"returncode": proc.returncode, "log": (log or "")[-4000:], "listing": messages,
                  "option_errors": option_errors(f"{log or ''}\n{messages}") if options else []}
        if result.exists():
            rows = dict(line.split(None, 1) for line in result.read_text().splitlines() if line.strip())
            answer.update({key: _number(rows.get(key, "NA").strip())
                           for key in ("modelstat", "solvestat", "objval", "objest", "resusd")})
            answer["values"] = {name: _number(rows.get(s, "NA").strip()) for s, name in table}
        return answer


#: how the solvers say they refuse an option-file line: BARON (listing and log), Knitro, Ipopt (log)
_OPTION_ERROR = re.compile(r"(?:Value )?Error line \d+:.*|Ignoring '.*'.*|Exception message: .*[Oo]ption.*")


def option_errors(text: str) -> list:
    """The solver's complaints about its option file, once each, in order (empty: every line accepted;
    with ``tee`` the log goes to the terminal and only the listing's are seen)."""
    found = dict.fromkeys(m.group().strip() for m in _OPTION_ERROR.finditer(text))
    return [line for line in found if not line.endswith("Option ignored")]


class kill_after(contextlib.AbstractContextManager):
    """From ``seconds`` after entering until leaving, kill every process whose command line contains
    ``marker`` (a run's unique folder): the wall-clock stop of a GAMS run that another library starts
    (Pyomo's ``subprocess.run`` has no timeout); a process started after the deadline is killed too.
    ``killed`` says whether it had to. Linux (``/proc``) only; elsewhere a no-op."""

    def __init__(self, marker: str, seconds: float):
        self.marker, self.seconds, self.killed = str(marker).encode(), seconds, False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        return False

    def _watch(self):
        if self._done.wait(self.seconds):
            return
        while not self._done.is_set():
            self._kill()
            self._done.wait(0.05)

    def _kill(self):
        proc = Path("/proc")
        for entry in proc.iterdir() if proc.is_dir() else ():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if self.marker in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
                    self.killed = True
            except OSError:  # ended meanwhile, or not ours
                continue


def _listing_messages(listing: str) -> str:
    """The listing's messages (``*** ...`` lines and ``**** ...error...`` lines), without the demo banner."""
    keep = [line.strip(" *") for line in listing.splitlines()
            if (line.startswith("*** ") and "runs with a demo license" not in line)
            or (line.startswith("****") and "error" in line.lower())]
    return "\n".join(keep[-20:])


def describe(mstat, sstat) -> str:
    """GAMS's two codes, named: 'model status 7 (feasible solution), solve status 3 (resource interrupt)'."""
    def code(x):
        return "NA" if x is None or not math.isfinite(x) else str(int(x))
    return (f"model status {code(mstat)} ({MODEL_STATUS.get(mstat, '?')}), "
            f"solve status {code(sstat)} ({SOLVE_STATUS.get(sstat, '?')})")


@dataclass
class GamsSolver(SolverMethod):
    """A solver run through GAMS; subclasses set the GAMS solver name, relaxation and demo limit.

    ``optcr``: relative gap at which GAMS stops a global solver (and within which its bound counts as
    a proof); ``keep_files``: a folder to keep the .gms given to GAMS (default: a temporary one), and its
    ``<solver>.opt`` when there are ``solver_options`` (the solver's own option names, e.g. BARON's
    ``MaxIter``; a line the solver refuses is an InputError with its message).
    """

    optcr: float = option(1e-6, float, low=0, doc="relative gap at which GAMS stops a global solver")
    keep_files: str | None = option(None, str, none=True, doc="a folder to keep the .gms given to GAMS")

    solver: typing.ClassVar[str] = ""
    relax: typing.ClassVar[bool] = False
    #: rows and columns a demo licence allows for this solver
    demo_limit: typing.ClassVar[int] = 1000

    def _available(self, instance=None) -> Availability:
        try:
            register_solver(self.solver)
            problem = licence_problem()
        except SolverUnavailableError as exc:
            return Availability(False, str(exc), exc.kind)
        if problem:
            return Availability.no_license(problem)
        if instance is not None:
            rows, cols = gams_size(instance)
            if max(rows, cols) > self.demo_limit:
                return Availability.too_large(
                    f"demo size limit exceeded: GAMS/{self.solver.upper()} demo allows {self.demo_limit} rows and "
                    f"columns; this model has {rows} rows and {cols} columns (m={instance.m}, n={instance.n}, "
                    f"sense {instance.sense}, objective column included)")
        return Availability(True)

    def _run(self, instance, warm, oracle, time_limit: float) -> RawSolution:
        from ..models import build_model, load_start, solution_from_values
        from ..models.export import gms_text

        t0 = time.perf_counter()
        model = build_model(instance, relax=self.relax)
        if warm is not None:
            load_start(model, warm.alpha, warm.beta)
        with tempfile.TemporaryDirectory(prefix="minlp_fs_gms_") as tmp:
            folder = Path(self.keep_files) if self.keep_files else Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            gms = folder / f"{instance.name}_{self.name}.gms"
            gms.write_text(gms_text(model, title=f"instance {instance.name} for GAMS/{self.solver.upper()}"))
            if self.keep_files and self.solver_options:  # beside the kept model, to rerun it as it ran
                (folder / f"{self.solver}.opt").write_text(option_file_text(self.solver_options))
            left = time_limit - (time.perf_counter() - t0)  # writing the model counts against the limit
            if left <= 0:
                return RawSolution.not_run(warm, "the GAMS model was written")
            ans = solve_gms(gms, self.solver, left, optcr=self.optcr, tee=self.tee, options=self.solver_options)
        mstat, sstat = ans.get("modelstat"), ans.get("solvestat")
        status = describe(mstat, sstat)
        info = {"gams_model_status": mstat, "gams_solve_status": sstat, "gams_resusd": ans.get("resusd"),
                "relaxation": self.relax}
        if ans.get("timeout"):
            return RawSolution(beta=None, time_limit_reached=True, solver_status="killed", message=ans["log"],
                               info=info)
        messages = ans.get("listing", "")
        if ans.get("option_errors"):
            raise InputError(f"{self.name}: GAMS/{self.solver.upper()} refuses solver_options: "
                             + "; ".join(ans["option_errors"]))
        if sstat == 7 or mstat == 11:
            size = "exceeds the demo license" in messages
            what = "demo size limit exceeded" if size else "no licence"
            raise SolverUnavailableError(f"{what}: GAMS/{self.solver.upper()} says: " + " ".join(messages.splitlines()),
                                         UnavailableKind.SIZE_LIMIT if size else UnavailableKind.NO_LICENSE)
        interrupted_iterate = self.relax and mstat == INTERMEDIATE_INFEASIBLE and sstat == 3
        if mstat not in WITH_SOLUTION and not interrupted_iterate:
            detail = messages or ans.get("log", "")[-500:]
            return RawSolution(beta=None, failed=sstat not in (2, 3, 5), time_limit_reached=sstat == 3,
                               limit=OTHER_LIMITS.get(sstat, ""), solver_status=status,
                               message=f"GAMS/{self.solver.upper()} returned no solution: {status}"
                                       + (f"; {detail}" if detail else ""), info=info)
        alpha, beta = solution_from_values(instance, ans["values"])
        obj, est = ans.get("objval"), ans.get("objest")
        gap_ok = obj is not None and est is not None and obj - est <= self.optcr * max(1.0, abs(obj)) + 1e-9
        return RawSolution(beta=beta, alpha=alpha, solver_status=status, objective=obj,
                           bound=est if self.certifies else None,
                           proven_optimal=sstat == 1 and gap_ok, time_limit_reached=sstat == 3,
                           limit=OTHER_LIMITS.get(sstat, ""),
                           wall_time_s=ans.get("resusd") or 0.0, info=info,
                           message="" if sstat == 1 else status)


@dataclass
class Baron(GamsSolver):
    """BARON through GAMS: global MINLP branch and reduce; certifies when its bound meets its objective."""

    name = "baron"
    certifies = True
    solver = "baron"
    demo_limit = 50
    reserved = {"maxtime": "time_limit", "epsr": "optcr"}


@dataclass
class GamsKnitro(GamsSolver):
    """Knitro's MINLP search through GAMS: local on this nonconvex problem (no certificate)."""

    name = "gams-knitro"
    solver = "knitro"
    demo_limit = 300
    reserved = {"maxtime": "time_limit", "maxtime_real": "time_limit", "mip_maxtime_real": "time_limit"}


@dataclass
class GamsIpopt(GamsSolver):
    """Ipopt on the continuous relaxation through GAMS, then top-B rounding and polish (section 5.1)."""

    name = "gams-ipopt"
    solver = "ipopt"
    relax = True
    demo_limit = 1000
    reserved = {"max_wall_time": "time_limit", "max_cpu_time": "time_limit"}
