"""Problem (4) and its fit-sense primal as smooth NLPs with numpy derivatives (for cyipopt and Knitro).

With beta relaxed to [0,1]^n, the kernel is k_beta = phi(sum_j beta_j T_j) (:mod:`minlp_fs.kernels`:
``kernel.base(X, weights=beta)``), which equals k(beta*x, beta*z) at binary beta, so the relaxation
is exact on the vertices. Both models rest on the quadratic form q(w, beta) = 1/2 w'K_beta w, with
D = phi'(base), E = phi''(base) elementwise (``kernel.derivative``, ``kernel.second_derivative``):

    dq/dw = K w,  dq/dbeta_j = 1/2 w'(D o T_j)w,  d2q/dw2 = K,  d2q/dw dbeta_j = (D o T_j) w,
    d2q/dbeta_j dbeta_k = 1/2 w'(E o T_j o T_k)w.

The variables, their bounds and the linear rows are those of the one formulation of each sense
(:class:`~minlp_fs.models.formulation.Formulation` with ``relax=True``, the model every writer reads);
an NLP solver needs no epigraph, so the variable t, its row and the ``objective_bound`` row (which
bounds t) are left out and q sits in the objective itself:

* :class:`DualNLP` (paper sense), x = (alpha, beta): min f = q(alpha*y, beta) - e'alpha (problem (4))
  s.t. the rows ``balance`` y'alpha = 0 and ``budget`` sum beta = B, 0 <= alpha <= C, 0 <= beta <= 1.
* :class:`PrimalNLP` (fit sense), x = (beta, c, b, xi): min 1/2 c'K_beta c + C sum xi
  s.t. ``budget``, the margins y_i((K_beta c)_i + b) + xi_i >= 1, ``balance`` sum c = 0, and the
  formulation's bounds that keep an optimum for every beta (y_i c_i in [0, C], |b| <= b_max,
  0 <= xi_i <= its bound: proofs in :mod:`minlp_fs.models.formulation`). Its optimum over (c, b, xi) is
  -g(beta) by strong duality, so minimising it over beta maximises g: the fit sense, written as a
  minimisation.

Constraints are returned with a sparse Jacobian (row, column) structure and the Hessian of the
Lagrangian as a dense lower triangle. The per-feature terms T_j are stacked once (n*m^2 floats).
"""
from __future__ import annotations

import numpy as np

from ..models.formulation import ALPHA, B_VAR, BETA, C_VAR, XI, Formulation
from ..objective import svm_primal

#: Hessian options of the NLP adapters (cyipopt, Knitro)
HESSIANS = ("exact", "limited-memory")


#: Ipopt's and Knitro's infinity (a bound beyond it is none)
_INF = 2e19


def _box(form, blocks) -> tuple:
    """(lb, ub) of the formulation's variable ``blocks``, concatenated in that order."""
    return (np.concatenate([form.blocks[b].lb for b in blocks]).astype(float),
            np.concatenate([form.blocks[b].ub for b in blocks]).astype(float))


class _LinearRows:
    """The formulation's linear rows ``names`` that it has (in that order), as NLP rows from ``first_row``:
    the Jacobian's (``rows``, ``cols``, ``vals``), bounds ``cl``/``cu`` and their values at x, all from the
    one description (``offsets``: block -> its first position in x)."""

    def __init__(self, form, names, offsets: dict, first_row: int):
        found = [r for name in names for r in form.linear_rows if r.name == name]
        jr, jc, jv = [], [], []
        for k, row in enumerate(found):
            for block, coef in row.terms.items():
                pos = offsets[block] + np.arange(np.size(coef))
                jr.append(np.full(pos.size, k)), jc.append(pos), jv.append(np.asarray(coef, dtype=float))
        cat = (lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype))
        self.local, self.cols, self.vals = cat(jr, int), cat(jc, int), cat(jv, float)
        self.rows = self.local + first_row
        self.cl = np.array([r.lo for r in found], dtype=float)
        self.cu = np.array([r.hi for r in found], dtype=float)

    def values(self, x) -> np.ndarray:
        """sum_k coef_k x[col_k] of each row."""
        return np.bincount(self.local, weights=self.vals * np.asarray(x)[self.cols], minlength=self.cl.size)


class _KernelNLP:
    """Shared state: the formulation (variables, bounds, linear rows), the stacked terms T (n x m^2)
    and the kernel pieces at the current beta."""

    def __init__(self, instance):
        self.instance = instance
        self.form = Formulation(instance, relax=True)
        self.m, self.n = instance.m, instance.n
        X, kernel = instance.X, instance.kernel
        self.T = np.stack([kernel.feature_term(X, j).ravel() for j in range(self.n)])
        self._key = None

    def _at(self, beta: np.ndarray):
        """(base, K, D) at beta, cached for the last beta seen."""
        key = beta.tobytes()
        if key != self._key:
            kernel = self.instance.kernel
            base = kernel.base(self.instance.X, weights=beta)
            self._state = (base, kernel.apply(base.copy()), kernel.derivative(base))
            self._key = key
        return self._state

    def _dq_dbeta(self, D: np.ndarray, w: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """sum_ih D_ih u_i w_h T_j,ih for every j (u = w: twice dq/dbeta)."""
        u = w if u is None else u
        return self.T @ (D * np.multiply.outer(u, w)).ravel()

    def _mixed(self, D: np.ndarray, w: np.ndarray) -> np.ndarray:
        """m x n matrix with column j = (D o T_j) w."""
        G = self.T.reshape(self.n, self.m, self.m) * D
        return (G @ w).T

    def _bb(self, E: np.ndarray, P: np.ndarray) -> np.ndarray:
        """n x n matrix sum_ih (E o P)_ih T_j,ih T_k,ih."""
        W = (E * 0.5 * (P + P.T)).ravel()
        return (self.T * W) @ self.T.T

    @staticmethod
    def hessianstructure_of(nx: int):
        return np.tril_indices(nx)


class DualNLP(_KernelNLP):
    """Relaxation of problem (4), paper sense: x = (alpha [m], beta [n])."""

    def __init__(self, instance):
        super().__init__(instance)
        m, n = self.m, self.n
        self.nx = m + n
        self.lb, self.ub = _box(self.form, (ALPHA, BETA))
        self.linear = _LinearRows(self.form, ("balance", "budget"), {ALPHA: 0, BETA: m}, first_row=0)
        self.cl, self.cu = self.linear.cl, self.linear.cu
        self.ncon = self.cl.size

    def split(self, x):
        return x[:self.m], x[self.m:]

    def beta(self, x) -> np.ndarray:
        return np.asarray(x[self.m:], dtype=float)

    def start(self, warm) -> np.ndarray:
        """x0 from a :class:`~minlp_fs.solvers.base.WarmStart`, or the centre (alpha = 0, beta = B/n)."""
        if warm is None:
            return np.concatenate([np.zeros(self.m), np.full(self.n, self.instance.B / self.n)])
        return np.concatenate([warm.alpha, warm.beta])

    def objective(self, x) -> float:
        """f(alpha, beta); equal to :func:`~minlp_fs.objective.dual_objective` for alpha >= 0, and smooth
        (all rows kept) where an interior-point iterate leaves the bound by Ipopt's relaxation of it."""
        alpha, beta = self.split(x)
        v = alpha * self.instance.y
        return float(0.5 * v @ self._at(beta)[1] @ v - alpha.sum())

    def gradient(self, x) -> np.ndarray:
        alpha, beta = self.split(x)
        y = self.instance.y
        _, K, D = self._at(beta)
        v = alpha * y
        return np.concatenate([y * (K @ v) - 1.0, 0.5 * self._dq_dbeta(D, v)])

    def constraints(self, x) -> np.ndarray:
        return self.linear.values(x)

    def jacobianstructure(self):
        return self.linear.rows, self.linear.cols

    def jacobian(self, x) -> np.ndarray:
        return self.linear.vals

    def hessianstructure(self):
        return self.hessianstructure_of(self.nx)

    def hessian(self, x, lagrange, obj_factor) -> np.ndarray:
        """Lower triangle of obj_factor * Hess f (the constraints are linear)."""
        m = self.m
        alpha, beta = self.split(x)
        y = self.instance.y
        base, K, D = self._at(beta)
        v = alpha * y
        H = np.empty((self.nx, self.nx))
        H[:m, :m] = np.multiply.outer(y, y) * K
        H[m:, :m] = (self._mixed(D, v) * y[:, None]).T
        H[m:, m:] = 0.5 * self._bb(self.instance.kernel.second_derivative(base), np.multiply.outer(v, v))
        return obj_factor * H[np.tril_indices(self.nx)]


class PrimalNLP(_KernelNLP):
    """Relaxation of the fit-sense model: x = (beta [n], c [m], b, xi [m])."""

    def __init__(self, instance):
        super().__init__(instance)
        m, n = self.m, self.n
        self.nx = n + 2 * m + 1
        offsets = {BETA: 0, C_VAR: n, B_VAR: n + m, XI: n + m + 1}
        self.lb, self.ub = _box(self.form, (BETA, C_VAR, B_VAR, XI))
        # rows: budget, the m margins (nonlinear in beta and c; row i: beta, c, b, xi_i), balance
        self.budget = _LinearRows(self.form, ("budget",), offsets, first_row=0)
        self.balance = _LinearRows(self.form, ("balance",), offsets, first_row=m + 1)
        per_row = np.concatenate([np.arange(n + m + 1), [0]])  # beta, c, b, then xi_i (set below)
        cols = np.tile(per_row, m)
        cols[n + m + 1::n + m + 2] = n + m + 1 + np.arange(m)
        self._jrows = np.concatenate([self.budget.rows, np.repeat(np.arange(1, m + 1), n + m + 2), self.balance.rows])
        self._jcols = np.concatenate([self.budget.cols, cols, self.balance.cols])
        self.cl = np.concatenate([self.budget.cl, np.ones(m), self.balance.cl])
        self.cu = np.concatenate([self.budget.cu, np.full(m, _INF), self.balance.cu])
        self.ncon = self.cl.size

    def split(self, x):
        n, m = self.n, self.m
        return x[:n], x[n:n + m], x[n + m], x[n + m + 1:]

    def beta(self, x) -> np.ndarray:
        return np.asarray(x[:self.n], dtype=float)

    def start(self, warm) -> np.ndarray:
        """x0 from a warm start (its SVM primal point), or the centre (beta = B/n, c = 0, xi = 1)."""
        if warm is None:
            return np.concatenate([np.full(self.n, self.instance.B / self.n), np.zeros(self.m), [0.0],
                                   np.ones(self.m)])
        c, b, xi, _ = svm_primal(self.instance, self.instance.gram(warm.subset), warm.alpha)
        return np.concatenate([warm.beta, c, [b], xi])

    def objective(self, x) -> float:
        beta, c, _, xi = self.split(x)
        K = self._at(beta)[1]
        return float(0.5 * c @ K @ c + self.instance.C * xi.sum())

    def gradient(self, x) -> np.ndarray:
        beta, c, _, xi = self.split(x)
        _, K, D = self._at(beta)
        return np.concatenate([0.5 * self._dq_dbeta(D, c), K @ c, [0.0], np.full(self.m, self.instance.C)])

    def constraints(self, x) -> np.ndarray:
        beta, c, b, xi = self.split(x)
        K = self._at(beta)[1]
        return np.concatenate([self.budget.values(x), self.instance.y * (K @ c + b) + xi, self.balance.values(x)])

    def jacobianstructure(self):
        return self._jrows, self._jcols

    def jacobian(self, x) -> np.ndarray:
        beta, c, _, _ = self.split(x)
        y = self.instance.y
        _, K, D = self._at(beta)
        rows = np.concatenate([self._mixed(D, c), K, np.ones((self.m, 1)), np.ones((self.m, 1))], axis=1)
        rows[:, :-1] *= y[:, None]
        return np.concatenate([self.budget.vals, rows.ravel(), self.balance.vals])

    def hessianstructure(self):
        return self.hessianstructure_of(self.nx)

    def hessian(self, x, lagrange, obj_factor) -> np.ndarray:
        """Lower triangle of obj_factor * Hess f + sum_i lambda_i Hess g_i."""
        n, m = self.n, self.m
        beta, c, _, _ = self.split(x)
        base, K, D = self._at(beta)
        u = np.asarray(lagrange[1:self.m + 1]) * self.instance.y   # the margins' multipliers (the rest are linear)
        E = self.instance.kernel.second_derivative(base)
        H = np.zeros((self.nx, self.nx))
        H[:n, :n] = self._bb(E, 0.5 * obj_factor * np.multiply.outer(c, c) + np.multiply.outer(u, c))
        H[n:n + m, :n] = self._mixed(D, obj_factor * c + u)
        H[n:n + m, n:n + m] = obj_factor * K
        return H[np.tril_indices(self.nx)]


def make_nlp(instance):
    """The NLP of the instance's sense: :class:`DualNLP` (paper) or :class:`PrimalNLP` (fit)."""
    return DualNLP(instance) if instance.sense == "paper" else PrimalNLP(instance)
