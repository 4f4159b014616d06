"""Pyomo model of DFS-SVM (paper problem (4)) in the instance's sense, for general MINLP solvers.

The model is :class:`~minlp_fs.models.formulation.Formulation` (variables, bounds, rows and kernel
entries, both senses; see there for the maths and the validity of the bounds) written as a Pyomo
``ConcreteModel``: blocks ``beta``, ``alpha`` (paper) or ``c``, ``b``, ``xi`` (fit) and ``t``, rows
``budget`` (sum beta = B; not ``card``, a GAMS function), ``balance``, ``objective_bound``,
``epigraph`` (q <= t, q written once per unordered pair i < h plus the diagonal, each kernel entry a
shared expression) and, in the fit sense, ``margin``; the objective is linear. **In the fit sense the model's optimal value is -(the fit-sense
optimum of g)**, the SVM primal.
"""
from __future__ import annotations

import operator
import re
import time

import numpy as np

from ..errors import InputError
from ..multiclass import binary_only
from ..objective import svm_primal
from .formulation import ALPHA, B_VAR, BETA, C_VAR, T_VAR, XI, Block, Formulation
from .provenance import comment_lines, provenance

_INDEXED = re.compile(r"^(\w+)\[(\d+)\]$")


class _KernelEntries:
    """Pyomo expressions of k_beta(x^i, x^h), built once per unordered pair and shared."""

    def __init__(self, form: Formulation, beta_vars):
        import pyomo.environ as pyo
        from pyomo.core.expr import LinearExpression, MonomialTermExpression
        self._lin, self._mono, self._exp = LinearExpression, MonomialTermExpression, pyo.exp
        self.form = form
        self.beta = [beta_vars[j] for j in range(form.instance.n)]   # list lookups: no Pyomo indexing per term
        self.entries: dict = {}
        self.terms = 0

    def row(self, i: int, cols: np.ndarray) -> list:
        """Entries (i, h) for h in cols: expressions, or floats where no feature term is nonzero."""
        missing = [h for h in cols if (min(i, h), max(i, h)) not in self.entries]
        if missing:
            for h, (nz, coef) in zip(missing, self.form.entry_terms(i, missing)):
                self.entries[(min(i, h), max(i, h))] = self._entry(nz, coef)
        return [self.entries[(min(i, h), max(i, h))] for h in cols]

    def _entry(self, nz: np.ndarray, coef: np.ndarray):
        form = self.form
        if nz.size == 0:
            return form.phi0
        self.terms += nz.size
        args = [self._mono((c, self.beta[j])) for c, j in zip(coef.tolist(), nz.tolist())]
        if form.const:
            args.append(form.const)
        return form.instance.kernel.outer(self._lin(args), self._exp, operator.pow)


def build_model(instance, relax: bool = False, support=None, source: dict | None = None):
    """Pyomo ``ConcreteModel`` of problem (4) in ``instance.sense`` (see the module docstring).

    Its ``doc`` and ``model.dfs["provenance"]`` state the instance's parameters, the sense and what the
    optimum means (:mod:`minlp_fs.models.provenance`; ``source`` adds the dataset, scaling and seed).

    Python's cyclic garbage collector is paused while the O(m^2 n) expression objects are created
    (Pyomo's ``PauseGC``): otherwise it rescans the growing set of objects again and again.
    """
    binary_only(instance, "the Pyomo model of problem (4) (export, SCIP, Ipopt, GAMS)")
    from pyomo.common.gc_manager import PauseGC

    with PauseGC():
        return _build(instance, relax, support, source)


def _add_block(model, block: Block):
    """The Pyomo variable of a block (indexed by model.rows, model.features or the sample rows)."""
    import pyomo.environ as pyo
    if block.binary:
        domain = pyo.Binary
    elif block.name == BETA:
        domain = pyo.UnitInterval
    else:
        domain = pyo.Reals
    if block.index is None:
        var = pyo.Var(domain=domain, bounds=(float(block.lb[0]), float(block.ub[0])))
    else:
        pos = {int(i): p for p, i in enumerate(block.index)}
        index = model.rows if block.name in (ALPHA, C_VAR) else model.features if block.name == BETA \
            else range(block.size)
        var = pyo.Var(index, domain=domain,
                      bounds=lambda _, i: (float(block.lb[pos[i]]), float(block.ub[pos[i]])))
    model.add_component(block.name, var)
    return var


def _build(instance, relax, support, source):
    import pyomo.environ as pyo
    from pyomo.core.expr import SumExpression

    t0 = time.perf_counter()
    form = Formulation(instance, relax=relax, support=support)
    rows, y = form.rows, instance.y
    info = provenance(form, source)
    model = pyo.ConcreteModel(name=f"dfs_svm_{instance.name}", doc="\n".join(comment_lines(info)))
    model.rows = pyo.Set(initialize=rows.tolist(), ordered=True)
    model.features = pyo.Set(initialize=range(instance.n), ordered=True)
    var = {name: _add_block(model, block) for name, block in form.blocks.items()}
    flat = {name: [var[name]] if block.index is None else [var[name][int(i)] for i in block.index]
            for name, block in form.blocks.items()}

    def linear(terms: dict) -> list:
        return [float(a) * x for name, coef in terms.items() for a, x in zip(coef, flat[name])]

    for row in form.linear_rows:
        body = SumExpression(linear(row.terms))
        model.add_component(row.name, pyo.Constraint(expr=body == row.lo if row.lo == row.hi
                                                     else pyo.inequality(row.lo, body, row.hi)))
    K = _KernelEntries(form, var[BETA])
    v, w = var[form.quad], form.weight
    quad = []
    for p, i in enumerate(rows.tolist()):
        later = rows[p:]
        for q, (h, k) in enumerate(zip(later.tolist(), K.row(i, later))):
            if isinstance(k, float) and k == 0.0:      # phi(0) = 0 (polynomial with c = 0): no term
                continue
            weight = (0.5 if h == i else 1.0) * float(w[p] * w[p + q])
            quad.append(weight * k * v[i] * v[h])
    model.epigraph = pyo.Constraint(expr=SumExpression(quad + [-1.0 * var[T_VAR]]) <= 0.0)
    if form.margins:
        margins = {}
        for i in range(instance.m):
            s = SumExpression([k * v[h] for h, k in zip(rows.tolist(), K.row(i, rows))] + [var[B_VAR]])
            margins[i] = float(y[i]) * s + var[XI][i] >= 1.0
        model.margin = pyo.Constraint(range(instance.m), rule=lambda _, i: margins[i])
    model.objective = pyo.Objective(expr=SumExpression(linear(form.objective)), sense=pyo.minimize)
    model.dfs = {"instance": instance, "support": rows, "relax": relax, "sense": instance.sense,
                 "formulation": form, "provenance": info, "pairs": len(K.entries), "terms": K.terms,
                 "build_time": time.perf_counter() - t0}
    return model


def _instance_of(model):
    info = getattr(model, "dfs", None)
    if not isinstance(info, dict) or "instance" not in info:
        raise InputError("this model was not built by minlp_fs.models.build_model")
    return info["instance"], info["support"]


def _check_vector(name, value, size):
    arr = np.asarray(value, dtype=float).ravel()
    if arr.size != size or not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be {size} finite numbers; got shape {np.shape(value)}")
    return arr


def load_start(model, alpha, beta) -> None:
    """Set the model's initial values from a paper-sense start (alpha in Delta, beta in [0, 1]^n).

    Fit sense: the primal point of alpha by :func:`minlp_fs.objective.svm_primal`: c_i = y_i alpha_i
    on the support rows, b from the KKT conditions, xi_i = max(0, 1 - y_i ((K_beta c)_i + b)).
    alpha outside the support is dropped (the model has no variable for it). t = q, the quadratic form.
    """
    inst, rows = _instance_of(model)
    a = _check_vector("alpha", alpha, inst.m)
    bt = _check_vector("beta", beta, inst.n)
    for j in range(inst.n):
        model.beta[j].set_value(float(bt[j]), skip_validation=True)
    kept = np.zeros(inst.m)
    kept[rows] = a[rows]
    K = inst.kernel.apply(inst.kernel.base(inst.X, weights=bt))
    if inst.sense == "paper":
        for i in rows.tolist():
            model.alpha[i].set_value(float(a[i]), skip_validation=True)
        v = kept * inst.y
    else:
        v, b, xi, _ = svm_primal(inst, K, kept)
        for i in rows.tolist():
            model.c[i].set_value(float(v[i]))
        model.b.set_value(b)
        for i in range(inst.m):
            model.xi[i].set_value(float(xi[i]))
    model.t.set_value(float(0.5 * v @ K @ v), skip_validation=True)


def solution_from_values(instance, values: dict) -> tuple:
    """(alpha, beta) from variable values keyed by the model's names (``alpha[3]``, ``beta[0]``, ``c[2]``).

    Names not listed read as 0; other variables (``b``, ``xi``) are ignored. Fit sense:
    alpha_i = y_i c_i clipped to [0, C] (exact at a primal optimum with a nonsingular K_beta;
    callers polish alpha by the alpha-subproblem anyway).
    """
    alpha, beta, c = np.zeros(instance.m), np.zeros(instance.n), np.zeros(instance.m)
    target = {ALPHA: alpha, BETA: beta, C_VAR: c}
    for name, val in values.items():
        match = _INDEXED.match(str(name))
        if match and match.group(1) in target and val is not None:
            vec, k = target[match.group(1)], int(match.group(2))
            if not 0 <= k < vec.size:
                raise InputError(f"variable {name} is out of range for this instance (m={instance.m}, n={instance.n})")
            vec[k] = float(val)
    if instance.sense == "fit":
        alpha = np.clip(instance.y * c, 0.0, instance.C)
    return alpha, beta


def read_solution(model) -> tuple:
    """(alpha, beta) as numpy arrays from the model's current values (see :func:`solution_from_values`)."""
    import pyomo.environ as pyo
    inst, _ = _instance_of(model)
    return solution_from_values(inst, {v.name: v.value for v in model.component_data_objects(pyo.Var)})


def model_size(model) -> dict:
    """Free variables, constraints, kernel entries (pairs), feature terms and build time of a model."""
    import pyomo.environ as pyo
    _instance_of(model)
    info = model.dfs
    n_vars = sum(1 for v in model.component_data_objects(pyo.Var) if not v.fixed)
    n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return {"variables": n_vars, "constraints": n_cons, "pairs": info["pairs"], "terms": info["terms"],
            "build_time": info["build_time"]}
