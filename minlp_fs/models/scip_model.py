"""The pyscipopt model of DFS-SVM: :class:`~minlp_fs.models.formulation.Formulation` in SCIP's expressions.

Variables ``beta_j`` (binary), ``alpha_i`` (paper) or ``c_i``, ``b``, ``xi_i`` (fit) and ``t`` with
the formulation's bounds, its linear rows (``budget``, ``balance``, ``objective_bound``), the
nonlinear row ``epigraph`` q <= t and, in the fit sense, ``margin_i``; the objective is linear. Each
pair i < h is written once plus the diagonal.
"""
from __future__ import annotations

from ..objective import svm_primal
from .formulation import B_VAR, BETA, T_VAR, XI, Formulation


class ScipModel:
    """The pyscipopt model of an instance, with the variables needed to load and read solutions."""

    def __init__(self, instance):
        import pyscipopt as ps

        self.instance = instance
        self.form = form = Formulation(instance)
        self.model = model = ps.Model(f"dfs-svm-{instance.name}")
        var = {}
        for name, block in form.blocks.items():
            vtype = "B" if block.binary else "C"
            if block.index is None:
                var[name] = model.addVar(name, vtype=vtype, lb=float(block.lb[0]), ub=float(block.ub[0]))
            else:
                var[name] = [model.addVar(f"{name}_{i}", vtype=vtype, lb=float(lo), ub=float(hi))
                             for i, lo, hi in zip(block.index.tolist(), block.lb, block.ub)]
        self.beta, self.w = var[BETA], var[form.quad]
        self.b, self.xi, self.t = var.get(B_VAR), var.get(XI), var[T_VAR]
        flat = {name: [x] if form.blocks[name].index is None else x for name, x in var.items()}

        def linear(terms: dict):
            return ps.quicksum(float(a) * x for name, coef in terms.items() for a, x in zip(coef, flat[name]))

        for row in form.linear_rows:
            body = linear(row.terms)
            model.addCons(body == row.lo if row.lo == row.hi else (body >= row.lo) <= row.hi, name=row.name)
        m, w = instance.m, form.weight
        k = self._entries()
        quad = ps.quicksum(0.5 * k[i, i] * self.w[i] * self.w[i] for i in range(m)) + ps.quicksum(
            float(w[i] * w[h]) * k[i, h] * self.w[i] * self.w[h]
            for i in range(m) for h in range(i + 1, m) if not _is_zero(k[i, h]))
        model.addCons(quad - self.t <= 0, name="epigraph")
        if form.margins:
            y = instance.y
            for i in range(m):
                f_i = ps.quicksum(k[min(i, h), max(i, h)] * self.w[h] for h in range(m))
                model.addCons(float(y[i]) * (f_i + self.b) + self.xi[i] >= 1, name=f"margin_{i}")
        model.setObjective(linear(form.objective), "minimize")

    def _entries(self) -> dict:
        """Kernel entries k[i, h], i <= h, as pyscipopt expressions (shared objects), or floats."""
        import pyscipopt as ps

        form = self.form
        kern, m = self.instance.kernel, self.instance.m

        def power(u, d):
            return ps.scip.buildGenExprObj(u) ** d

        k = {}
        for i in range(m):
            for h, (nz, coef) in zip(range(i, m), form.entry_terms(i, range(i, m))):
                if nz.size == 0:
                    k[i, h] = form.phi0
                    continue
                u = ps.quicksum(float(c) * self.beta[j] for c, j in zip(coef, nz.tolist())) + form.const
                k[i, h] = kern.outer(u, ps.exp, power)
        return k

    def solution_values(self, subset, alpha) -> list:
        """(variable, value) pairs of the feasible point (alpha, subset); its SVM primal in the fit sense."""
        from ..solvers.base import indicator

        inst = self.instance
        K = inst.gram(subset)
        pairs = list(zip(self.beta, indicator(subset, inst.n)))
        if inst.sense == "fit":
            c, b, xi, _ = svm_primal(inst, K, alpha)
            return pairs + list(zip(self.w, c)) + list(zip(self.xi, xi)) + [(self.b, b),
                                                                             (self.t, 0.5 * c @ K @ c)]
        v = alpha * inst.y
        return pairs + list(zip(self.w, alpha)) + [(self.t, 0.5 * v @ K @ v)]

    def make_solution(self, subset, alpha, heur=None):
        """A SCIP solution in the original space (presolve may have transformed the variables)."""
        model = self.model
        sol = model.createOrigSol(heur)
        for var, val in self.solution_values(subset, alpha):
            model.setSolVal(sol, var, float(val))
        return sol


def _is_zero(entry) -> bool:
    return isinstance(entry, float) and entry == 0.0


def expanded_terms(instance) -> int:
    """Monomials of the objective once SCIP expands the kernel entries over the m(m+1)/2 pairs.

    Per entry ``kernel.monomials(n)``: C(n + d, d) for (gamma sum_j beta_j t_j + c)^d, one for exp(.).
    Measured here: SCIP ran out of memory (past its own limit) from about 2.4e6 (sonar, m=50, d=2);
    1e6 is the default ceiling.
    """
    pairs = instance.m * (instance.m + 1) // 2
    return pairs * instance.kernel.monomials(instance.n)
