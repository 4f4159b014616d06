"""Pyomo model of DFS-SVM (paper problem (4)) in the instance's sense, for general MINLP solvers.

Kernel entries are written in the *linear-in-beta* form of the two bullet points after problem (4):

    polynomial  k_beta(x^i, x^h) = (gamma sum_j beta_j x^i_j x^h_j + c)^d
    Gaussian    k_beta(x^i, x^h) = exp(-gamma sum_j beta_j (x^i_j - x^h_j)^2)

For binary beta this equals k(beta * x^i, beta * x^h) (beta_j^2 = beta_j); the relaxation
(``relax=True``, beta in [0, 1]) keeps the same form, which is still a PSD kernel (a weighted inner
product / distance). Features whose term t_j(x^i, x^h) is zero are left out of each entry, so a
sparse data set gives a sparse model; an entry with no term is the constant phi(0).

Senses (``instance.sense``):

* ``paper``: problem (4) as written. Variables ``alpha`` (rows, in [0, C]) and ``beta``;
  constraints ``balance`` (y'alpha = 0) and ``budget`` (sum beta = B; not ``card``, a GAMS
  function); objective f(alpha, beta) = 1/2 sum_ih y_i y_h alpha_i alpha_h k_ih - sum_i alpha_i,
  written once per unordered pair i < h plus the diagonal. Its optimum is min_beta g(beta).
* ``fit``: max_beta g(beta). By strong duality g(beta) = -P(beta), the optimum of the kernelised
  SVM primal, so the model is the joint minimisation over (beta, c, b, xi) of

      P = 1/2 sum_ih c_i c_h k_ih + C sum_i xi_i   s.t.  y_i (sum_h k_ih c_h + b) >= 1 - xi_i,  xi >= 0,

  with ``budget`` again (constraint ``margin``; variables ``c``, ``b``, ``xi``, ``beta``).
  **The model's optimal value is -(the fit-sense optimum of g)**; at the optimum c_i = y_i alpha_i.
  Bounds that keep every optimum (they give global solvers finite boxes): y_i c_i in [0, C] (c = y*alpha
  is optimal for each beta); with s_i = C sum_h kmax_ih >= |(K c)_i| (kmax bounds |k_beta| over
  beta in [0, 1]^n), |b| <= b_max = 1 + max_i s_i (an optimal b is a breakpoint y_i - (K c)_i of the
  hinge loss) and xi_i <= 1 + s_i + b_max.

``support``: only the given rows get an alpha (paper) or c (fit) variable; every other alpha is 0
(for large m, e.g. the support vectors of a heuristic's answer). In the fit sense every row keeps
its margin constraint and slack.
"""
from __future__ import annotations

import re
import time

import numpy as np

from ..errors import InputError
from ..kernels import GaussianKernel, PolynomialKernel
from ..objective import svm_primal

#: names of the model's components
ALPHA, BETA, C_VAR = "alpha", "beta", "c"
_INDEXED = re.compile(r"^(\w+)\[(\d+)\]$")


def _outer(kernel):
    """(scale, const, phi) with k = phi(scale * sum_j beta_j t_j + const) as a Pyomo expression."""
    import pyomo.environ as pyo
    if isinstance(kernel, PolynomialKernel):
        d = kernel.degree
        return kernel.gamma, kernel.coef0, (lambda e: e if d == 1 else e ** d)
    if isinstance(kernel, GaussianKernel):
        return -kernel.gamma, 0.0, pyo.exp
    raise InputError(f"no Pyomo form for kernel {type(kernel).__name__}; use a polynomial or Gaussian kernel")


def _check_support(instance, support) -> np.ndarray:
    if support is None:
        return np.arange(instance.m)
    try:
        rows = np.unique(np.asarray(list(support), dtype=np.int64))
    except (TypeError, ValueError):
        raise InputError(f"support must be a list of row indices; got {support!r}") from None
    if rows.size == 0 or rows[0] < 0 or rows[-1] >= instance.m:
        raise InputError(f"support must be a non-empty list of row indices in 0..{instance.m - 1}")
    return rows


class _KernelEntries:
    """Pyomo expressions of k_beta(x^i, x^h), built once per unordered pair and shared."""

    def __init__(self, instance, beta_vars):
        from pyomo.core.expr import LinearExpression, MonomialTermExpression
        self._lin, self._mono = LinearExpression, MonomialTermExpression
        self.X, self.kernel = instance.X, instance.kernel
        self.beta = [beta_vars[j] for j in range(instance.n)]   # list lookups: no Pyomo indexing per term
        self.scale, self.const, self.phi = _outer(instance.kernel)
        self.phi0 = float(instance.kernel.apply(np.zeros((1, 1)))[0, 0])
        self.entries: dict = {}
        self.terms = 0

    def row(self, i: int, cols: np.ndarray) -> list:
        """Entries (i, h) for h in cols: expressions, or floats where no feature term is nonzero."""
        missing = [h for h in cols if (min(i, h), max(i, h)) not in self.entries]
        if missing:
            Z = self.X[missing]
            T = np.stack([self.kernel.feature_term(self.X[i:i + 1], j, Z=Z)[0]
                          for j in range(self.X.shape[1])], axis=1)
            for h, t in zip(missing, T):
                self.entries[(min(i, h), max(i, h))] = self._entry(t)
        return [self.entries[(min(i, h), max(i, h))] for h in cols]

    def _entry(self, t: np.ndarray):
        nz = np.flatnonzero(t)
        if nz.size == 0:
            return self.phi0
        self.terms += nz.size
        args = [self._mono((c, self.beta[j])) for c, j in zip((self.scale * t[nz]).tolist(), nz.tolist())]
        if self.const:
            args.append(self.const)
        return self.phi(self._lin(args))


def _kernel_magnitude(instance) -> np.ndarray:
    """An upper bound of |k_beta(x^i, x^h)| over beta in [0, 1]^n.

    Gaussian: 1. Polynomial (c >= 0): |gamma sum_j beta_j x_ij x_hj + c| <= gamma sum_j |x_ij x_hj| + c,
    so |k| <= phi(sum_j |x_ij| |x_hj|), the kernel of |X|.
    """
    if isinstance(instance.kernel, GaussianKernel):
        return np.ones((instance.m, instance.m))
    return instance.kernel.gram(np.abs(instance.X))


def build_model(instance, relax: bool = False, support=None):
    """Pyomo ``ConcreteModel`` of problem (4) in ``instance.sense`` (see the module docstring).

    Python's cyclic garbage collector is paused while the O(m^2 n) expression objects are created
    (Pyomo's ``PauseGC``): otherwise it rescans the growing set of objects again and again.
    """
    from pyomo.common.gc_manager import PauseGC

    with PauseGC():
        return _build(instance, relax, support)


def _build(instance, relax, support):
    import pyomo.environ as pyo
    from pyomo.core.expr import SumExpression

    t0 = time.perf_counter()
    rows = _check_support(instance, support)
    y, C = instance.y, instance.C
    model = pyo.ConcreteModel(name=f"dfs_svm_{instance.name}")
    model.rows = pyo.Set(initialize=rows.tolist(), ordered=True)
    model.features = pyo.Set(initialize=range(instance.n), ordered=True)
    model.beta = pyo.Var(model.features, domain=pyo.UnitInterval if relax else pyo.Binary)
    model.budget = pyo.Constraint(expr=sum(model.beta[j] for j in model.features) == instance.B)
    K = _KernelEntries(instance, model.beta)
    pos = {int(i): p for p, i in enumerate(rows)}
    quad = []
    if instance.sense == "paper":
        model.alpha = pyo.Var(model.rows, bounds=(0.0, C))
        v = model.alpha
        model.balance = pyo.Constraint(expr=sum(float(y[i]) * v[i] for i in model.rows) == 0)
    else:
        s_max = C * _kernel_magnitude(instance)[:, rows].sum(axis=1)
        b_max = 1.0 + float(s_max.max())
        model.c = pyo.Var(model.rows, bounds=lambda _, i: (0.0, C) if y[i] > 0 else (-C, 0.0))
        model.b = pyo.Var(bounds=(-b_max, b_max))
        model.xi = pyo.Var(range(instance.m), bounds=lambda _, i: (0.0, 1.0 + s_max[i] + b_max))
        v = model.c
    for i in rows.tolist():
        later = rows[pos[i]:]
        for h, k in zip(later.tolist(), K.row(i, later)):
            if isinstance(k, float) and k == 0.0:      # phi(0) = 0 (polynomial with c = 0): no term
                continue
            weight = 0.5 if h == i else 1.0
            if instance.sense == "paper":
                weight *= float(y[i] * y[h])
            quad.append(weight * k * v[i] * v[h])
    if instance.sense == "paper":
        linear = [-1.0 * model.alpha[i] for i in model.rows]
    else:
        linear = [C * model.xi[i] for i in range(instance.m)]
        margins = {}
        for i in range(instance.m):
            s = SumExpression([k * model.c[h] for h, k in zip(rows.tolist(), K.row(i, rows))] + [model.b])
            margins[i] = float(y[i]) * s + model.xi[i] >= 1.0
        model.margin = pyo.Constraint(range(instance.m), rule=lambda _, i: margins[i])
    model.objective = pyo.Objective(expr=SumExpression(quad + linear), sense=pyo.minimize)
    model.dfs = {"instance": instance, "support": rows, "relax": relax, "sense": instance.sense,
                 "pairs": len(K.entries), "terms": K.terms, "build_time": time.perf_counter() - t0}
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
    alpha outside the support is dropped (the model has no variable for it).
    """
    inst, rows = _instance_of(model)
    a = _check_vector("alpha", alpha, inst.m)
    bt = _check_vector("beta", beta, inst.n)
    for j in range(inst.n):
        model.beta[j].set_value(float(bt[j]), skip_validation=True)
    if inst.sense == "paper":
        for i in rows.tolist():
            model.alpha[i].set_value(float(a[i]), skip_validation=True)
        return
    kept = np.zeros(inst.m)
    kept[rows] = a[rows]
    c, b, xi, _ = svm_primal(inst, inst.kernel.apply(inst.kernel.base(inst.X, weights=bt)), kept)
    for i in rows.tolist():
        model.c[i].set_value(float(c[i]))
    model.b.set_value(b)
    for i in range(inst.m):
        model.xi[i].set_value(float(xi[i]))


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
