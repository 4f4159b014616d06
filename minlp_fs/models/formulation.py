"""The one formulation of DFS-SVM per sense (paper problem (4) and its fit-sense primal), as plain data.

Every model we write or solve reads it: the Pyomo writer (:mod:`minlp_fs.models.dfs_svm`, hence the
``.nl`` and ``.gms`` files), the SCIP model (:mod:`minlp_fs.models.scip_model`) and the GAMS size
check (:func:`minlp_fs.solvers.gams.gams_size`). It holds the variable blocks with their bounds, the
linear rows, the objective's linear part and, for the kernel entries, the nonzero terms of each pair;
a writer only translates it into its own expression system.

Kernel entries are in the *linear-in-beta* form of the two bullet points after problem (4):
k_ih = phi(sum_j beta_j t_j(x^i, x^h)), written ``outer(scale * sum_j beta_j t_j + const)`` with
(scale, const) = ``kernel.affine`` and ``kernel.outer`` (polynomial: (gamma s + c)^d; Gaussian:
exp(-gamma s)). For binary beta this equals k(beta * x^i, beta * x^h) (beta_j^2 = beta_j); with beta
in [0, 1] (``relax``) it is still a PSD kernel (a weighted inner product / distance). Features whose
term is zero are left out of each entry; an entry with no term is the constant phi(0).

With v the quadratic block and w its weights, q = 1/2 sum_ih w_i w_h v_i v_h k_ih. The quadratic form
sits in the nonlinear row ``epigraph`` q - t <= 0 on a variable t (at an optimum t = q, since t has
coefficient +1 in the objective), so the objective is linear:

* ``paper`` (problem (4)): v = alpha (support rows, in [0, C]), w = y, beta binary;
  min t - e'alpha s.t. ``budget`` sum beta = B, ``balance`` y'alpha = 0. Its optimum is min_beta g(beta).
* ``fit``: max_beta g(beta) written as a minimisation. By strong duality g(beta) = -P(beta), P the
  optimum of the kernelised SVM primal, so the model is the joint minimisation over (beta, c, b, xi) of
  t + C e'xi (v = c, w = 1) s.t. ``budget``, ``margin`` y_i (sum_h k_ih c_h + b) + xi_i >= 1 (every
  row i), and the cut ``balance`` sum c = 0. **Its optimal value is -(the fit-sense optimum of g)**;
  at the optimum c_i = y_i alpha_i.

The objective is bounded by the row ``objective_bound`` L <= objective <= U (``objective_range``;
the ``.gms`` writer also sets ``objvar.lo``/``objvar.up``), with M = 2C min(|I+|, |I-|):

* paper, L = -M over the support rows (the trivial bound, Remark 1, the argument of the paragraph on
  the soft l1 penalty after problem (4)): K_beta is PSD for every beta in [0, 1]^n, so q >= 0 and
  f >= -e'alpha; y'alpha = 0 gives sum_{I+} alpha_i = sum_{I-} alpha_i, each side at most
  C min(|I+|, |I-|), hence e'alpha <= M and f >= -M for every feasible point. U = 0: alpha = 0 is
  feasible with f = 0, so every optimum has f <= 0 (a cut that keeps every optimum);
* fit, L = 0: t >= q >= 0 (PSD) and xi >= 0. U = M over all rows: (c, b) = (0, the majority label)
  with xi = 2 on the minority rows and 0 elsewhere is feasible with value M, so every optimum has
  P <= M (relative margin 1e-9 so a start computed in floating point stays inside).

Bounds and cuts that keep an optimum for every beta (they give global solvers finite boxes):

* y_i c_i in [0, C] and sum c = 0: c = y * alpha* for a dual optimum alpha* (alpha* in [0, C]^m,
  y'alpha* = 0) is optimal in (c, b, xi) for that beta (representer theorem and strong duality);
* |b| <= b_max = 1 + max_i s_i with s_i = C sum_h kmax_ih >= |(K c)_i| (kmax = ``kernel.magnitude``
  bounds |k_beta| over beta in [0, 1]^n): at fixed (beta, c) the objective in b is C times the
  convex piecewise-linear hinge loss sum_i max(0, 1 - y_i((K c)_i + b)) (xi at its optimum), which
  is bounded below, so it attains its minimum at one of its breakpoints b = y_i - (K c)_i, and
  |y_i - (K c)_i| <= 1 + s_i;
* xi_i <= min(1 + s_i + b_max, U / C): the optimal xi_i = max(0, 1 - y_i((K c)_i + b)) is at most
  1 + s_i + b_max, and C xi_i <= t + C e'xi <= U at every optimum (t >= 0, xi >= 0);
* t in [0, M] (paper: t = f + e'alpha <= 0 + M at an optimum; fit: t <= U).

These bounds were in the Pyomo model; the SCIP model had the cut sum c = 0 and left b and xi free.
Both now read this one description, so both have the bounds and the cut.

``support``: only the given rows get an alpha (paper) or c (fit) variable; every other alpha is 0
(for large m, e.g. the support vectors of a heuristic's answer). In the fit sense every row keeps its
margin constraint and slack.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..objective import trivial_bound

#: names of the variable blocks
ALPHA, BETA, C_VAR, B_VAR, XI, T_VAR = "alpha", "beta", "c", "b", "xi", "t"
#: relative margin added to the objective's upper bound, so a start computed in floating point stays inside
_SLACK = 1e-9


@dataclass(frozen=True)
class Block:
    """Variables ``name[index]`` with bounds ``lb``/``ub``; ``index`` None for a scalar variable."""

    name: str
    index: np.ndarray | None
    lb: np.ndarray
    ub: np.ndarray
    binary: bool = False

    @property
    def size(self) -> int:
        return 1 if self.index is None else self.index.size


@dataclass(frozen=True)
class LinearRow:
    """The row lo <= sum over blocks of sum_k coef_k block[index_k] <= hi; ``terms``: block -> coef."""

    name: str
    terms: dict
    lo: float
    hi: float


def check_support(instance, support) -> np.ndarray:
    """Sorted unique row indices (all rows for None), or an InputError."""
    if support is None:
        return np.arange(instance.m)
    try:
        rows = np.unique(np.asarray(list(support), dtype=np.int64))
    except (TypeError, ValueError):
        raise InputError(f"support must be a list of row indices; got {support!r}") from None
    if rows.size == 0 or rows[0] < 0 or rows[-1] >= instance.m:
        raise InputError(f"support must be a non-empty list of row indices in 0..{instance.m - 1}")
    return rows


class Formulation:
    """The model of ``instance`` in its sense (see the module docstring).

    Attributes: ``blocks`` (name -> :class:`Block`, in the writers' declaration order, t last), ``rows``
    (the support), ``quad`` (the block of v) and ``weight`` (w over ``rows``), ``objective``
    (block -> linear coefficients, t included), ``objective_range`` (L, U), ``linear_rows`` (budget,
    balance, objective_bound) and ``margins`` (fit sense: one row per sample); the epigraph row
    q - t <= 0 is implied (every writer adds it).
    """

    def __init__(self, instance, relax: bool = False, support=None):
        self.instance, self.relax, self.sense = instance, relax, instance.sense
        self.rows = rows = check_support(instance, support)
        m, n, C, y = instance.m, instance.n, instance.C, instance.y
        k = rows.size
        beta = Block(BETA, np.arange(n), np.zeros(n), np.ones(n), binary=not relax)
        budget = LinearRow("budget", {BETA: np.ones(n)}, float(instance.B), float(instance.B))
        if self.sense == "paper":
            big_m = -trivial_bound(y[rows], C)
            self.objective_range = (-big_m, 0.0)
            self.quad, self.weight = ALPHA, y[rows].astype(float)
            self.blocks = {BETA: beta, ALPHA: Block(ALPHA, rows, np.zeros(k), np.full(k, C))}
            self.objective = {ALPHA: np.full(k, -1.0)}
            balance = LinearRow("balance", {ALPHA: y[rows].astype(float)}, 0.0, 0.0)
            self.margins = False
        else:
            big_m = -trivial_bound(y, C) * (1.0 + _SLACK)
            self.objective_range = (0.0, big_m)
            s_max = C * instance.kernel.magnitude(instance.X)[:, rows].sum(axis=1)
            b_max = 1.0 + float(s_max.max())
            yr = y[rows]
            self.quad, self.weight = C_VAR, np.ones(k)
            self.blocks = {BETA: beta,
                           C_VAR: Block(C_VAR, rows, np.where(yr > 0, 0.0, -C), np.where(yr > 0, C, 0.0)),
                           B_VAR: Block(B_VAR, None, np.array([-b_max]), np.array([b_max])),
                           XI: Block(XI, np.arange(m), np.zeros(m), np.minimum(1.0 + s_max + b_max, big_m / C))}
            self.objective = {XI: np.full(m, C)}
            # sum c = 0 holds at the optimum only when c lives on every row (c = alpha o y, y'alpha = 0);
            # on a restricted support it would cut the restricted problem's optimum off: left out there
            balance = LinearRow("balance", {C_VAR: np.ones(k)}, 0.0, 0.0) if k == m else None
            self.margins = True
        self.blocks[T_VAR] = Block(T_VAR, None, np.zeros(1), np.array([big_m]))
        self.objective = {T_VAR: np.ones(1), **self.objective}
        self.linear_rows = [row for row in (budget, balance, LinearRow("objective_bound", self.objective,
                                                                            *self.objective_range)) if row is not None]
        kern = instance.kernel
        self.scale, self.const = kern.affine
        self.phi0 = float(kern.apply(np.zeros((1, 1)))[0, 0])

    def entry_terms(self, i: int, cols) -> list:
        """For each h in ``cols``: (features j, coefficients scale * t_j(x^i, x^h)) of the nonzero terms."""
        X, kern = self.instance.X, self.instance.kernel
        cols = list(cols)
        T = np.stack([kern.feature_term(X[i:i + 1], j, Z=X[cols])[0] for j in range(X.shape[1])], axis=1)
        out = []
        for t in T:
            nz = np.flatnonzero(t)
            out.append((nz, self.scale * t[nz]))
        return out

    def size(self) -> tuple:
        """(rows, columns) of the model as GAMS counts it: the objective's row and ``objvar`` included."""
        rows = 2 + len(self.linear_rows) + (self.instance.m if self.margins else 0)   # + objective, epigraph
        return rows, sum(b.size for b in self.blocks.values()) + 1
