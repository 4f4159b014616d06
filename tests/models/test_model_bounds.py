"""The formulation's bounds and cuts are valid: every subset's exact point and the certified optimum
(enumeration) satisfy them, in both senses; every written model (Pyomo, .gms, .nl, SCIP) carries them."""
from functools import partial
import importlib.util
import itertools
import re

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ", reason="Pyomo is a core dependency; absent here")

from minlp_fs.alpha import AlphaSubproblem  # noqa: E402
from minlp_fs.datasets import make_synthetic  # noqa: E402
from minlp_fs.instance import make_instance  # noqa: E402
from minlp_fs.models import build_model, load_start  # noqa: E402
from minlp_fs.models.export import gms_symbol_table, write_gms, write_nl  # noqa: E402
from minlp_fs.models.formulation import Formulation  # noqa: E402
from minlp_fs.objective import svm_primal  # noqa: E402
from minlp_fs.solvers.enumeration import Enumeration  # noqa: E402
from builders import synthetic_instance  # noqa: E402

HAS_SCIP = importlib.util.find_spec("pyscipopt") is not None
CASES = [(k, s) for k in ("poly2", "poly3", "rbf") for s in ("paper", "fit")]


_instance = partial(synthetic_instance, m=10, n_noise=3, C=5.0)


def _point(inst, subset, alpha):
    """The model's variables at (subset, exact alpha): blocks -> arrays, as the writers load them."""
    K = inst.gram(subset)
    beta = np.zeros(inst.n)
    beta[list(subset)] = 1.0
    if inst.sense == "paper":
        v = alpha * inst.y
        return {"beta": beta, "alpha": alpha, "t": np.array([0.5 * v @ K @ v])}
    c, b, xi, _ = svm_primal(inst, K, alpha)
    return {"beta": beta, "c": c, "b": np.array([b]), "xi": xi, "t": np.array([0.5 * c @ K @ c])}


def _check(form, point, tol=1e-7):
    for name, block in form.blocks.items():
        x = point[name] if block.index is None else point[name][block.index]
        assert np.all(x >= block.lb - tol) and np.all(x <= block.ub + tol), name
    for row in form.linear_rows:
        value = sum(coef @ (point[name] if form.blocks[name].index is None else point[name][form.blocks[name].index])
                    for name, coef in row.terms.items())
        assert row.lo - tol * max(1.0, abs(row.lo)) <= value <= row.hi + tol * max(1.0, abs(row.hi)), row.name


@pytest.mark.parametrize("kernel,sense", CASES)
def test_every_subset_and_the_certified_optimum_satisfy_the_bounds(kernel, sense):
    inst = _instance(kernel, sense)
    form = Formulation(inst)
    low, high = form.objective_range
    oracle = AlphaSubproblem(inst, tol=1e-10)
    for subset in itertools.combinations(range(inst.n), inst.B):   # the bounds keep an optimum for every beta
        fit = oracle.solve(subset)
        _check(form, _point(inst, subset, fit.alpha))
    best = Enumeration().solve(inst)
    assert best.status == "optimal" and best.certified
    model_value = inst.sign * best.objective            # the model's optimum: f, or -g in the fit sense
    assert low - 1e-9 <= model_value <= high + 1e-9
    _check(form, _point(inst, best.features, np.asarray(best.alpha)))
    if sense == "paper":
        assert low == -2 * inst.C * min(np.sum(inst.y > 0), np.sum(inst.y < 0)) and high == 0.0
    else:
        assert low == 0.0 and high == pytest.approx(2 * inst.C * min(np.sum(inst.y > 0), np.sum(inst.y < 0)))


def test_support_rows_give_the_support_bound():
    inst = _instance("rbf", "paper")
    support = [int(i) for i in np.flatnonzero(inst.y > 0)[:1]] + [int(i) for i in np.flatnonzero(inst.y < 0)[:3]]
    assert Formulation(inst, support=support).objective_range == (-2 * inst.C * 1, 0.0)


@pytest.mark.parametrize("kernel,sense", CASES)
def test_the_pyomo_model_at_the_certified_optimum_is_feasible(kernel, sense):
    inst = _instance(kernel, sense, m=8)
    best = Enumeration().solve(inst)
    beta = np.zeros(inst.n)
    beta[best.features] = 1.0
    model = build_model(inst)
    load_start(model, np.asarray(best.alpha), beta)
    for var in model.component_data_objects(pyo.Var):
        assert (var.lb is None or var.value >= var.lb - 1e-7) and (var.ub is None or var.value <= var.ub + 1e-7)
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        assert con.lower is None or body >= pyo.value(con.lower) - 1e-6, con.name
        assert con.upper is None or body <= pyo.value(con.upper) + 1e-6, con.name
    assert pyo.value(model.objective) == pytest.approx(inst.sign * best.objective, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_the_gms_file_carries_the_bounds(tmp_path, sense):
    inst = _instance("poly2", sense, m=6)
    form = Formulation(inst)
    text = write_gms(inst, tmp_path / "m.gms", start=[0, 1]).read_text()
    low, high = form.objective_range
    assert re.search(rf"^objvar\.lo = {re.escape(_gams(low))};$", text, flags=re.M)
    assert re.search(rf"^objvar\.up = {re.escape(_gams(high))};$", text, flags=re.M)
    assert "* objective_bound" in text and "* epigraph" in text
    symbol = {name: s for s, name in gms_symbol_table(tmp_path / "m.gms")}
    assert f"{symbol['t']}.up = " in text
    if sense == "fit":
        b_max = form.blocks["b"].ub[0]
        assert f"{symbol['b']}.lo = {_gams(-b_max)};" in text and f"{symbol['b']}.up = {_gams(b_max)};" in text
        assert f"{symbol['xi[0]']}.up = " in text and "* balance" in text


def _gams(x):
    return repr(float(x)) if float(x) != int(x) else str(int(x))


@pytest.mark.skipif(not HAS_SCIP, reason="pyscipopt not installed: nothing here reads .nl files")
@pytest.mark.parametrize("sense", ["paper", "fit"])
def test_the_nl_file_and_the_scip_model_carry_the_bounds(tmp_path, sense):
    import pyscipopt

    from minlp_fs.models.scip_model import ScipModel

    inst = _instance("rbf", sense, m=6)
    form = Formulation(inst)
    nl = write_nl(inst, tmp_path / "m.nl", start=[0, 1])[0]
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(nl))
    names = {v.name: v for v in scip.getVars()}
    t_max = form.blocks["t"].ub[0]
    assert names["t"].getLbOriginal() == 0.0 and names["t"].getUbOriginal() == pytest.approx(t_max)
    conss = {c.name: c for c in scip.getConss()}
    assert {"objective_bound", "epigraph", "balance", "budget"} <= set(conss)
    low, high = form.objective_range
    assert scip.getLhs(conss["objective_bound"]) == pytest.approx(low)
    assert scip.getRhs(conss["objective_bound"]) == pytest.approx(high)
    own = ScipModel(inst)
    assert own.t.getUbOriginal() == pytest.approx(t_max)
    if sense == "fit":
        b_max = form.blocks["b"].ub[0]
        assert names["b"].getUbOriginal() == pytest.approx(b_max) and own.b.getLbOriginal() == pytest.approx(-b_max)
        assert all(x.getUbOriginal() == pytest.approx(u) for x, u in zip(own.xi, form.blocks["xi"].ub))


def test_the_fit_sense_cut_sum_c_is_only_written_when_c_lives_on_every_row():
    """sum c = 0 follows from y'alpha = 0 only with c = alpha o y on all rows; on a restricted support it
    could cut off the restricted problem's optimum (the sign box on c stays)."""
    d = make_synthetic(m=16, seed=2)
    inst = make_instance(d.X, d.y, B=2, sense="fit")
    names = lambda form: [row.name for row in form.linear_rows]  # noqa: E731
    assert "balance" in names(Formulation(inst))
    assert "balance" not in names(Formulation(inst, support=[0, 1, 2, 3, 4]))
