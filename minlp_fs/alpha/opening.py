"""SMO's opening steps without the kernel matrix: enumeration's early stops decided from the base matrix.

Enumeration (:mod:`minlp_fs.solvers.enumeration`) solves each subset's dual warm-started from the previous
subset's alpha and stops it as soon as duality proves it worse than the incumbent (``worse_than``); on
large C(n, B) almost every subset stops that way within a few steps (Ionosphere poly5 fit B = 8: a median
of 2-4 SMO steps, at most 68), and building its kernel matrix K = phi(base) cost more than the steps.

For a polynomial kernel phi(s) = (gamma s + c)^d, :class:`Opening` makes the swap's pass over the base
matrix return Q alpha - e and diag(K) at the warm start without storing K
(:func:`minlp_fs.kernels._poly_swap_gradient`), then takes :func:`~.smo._smo`'s first steps with the rows
K_i, K_j computed from the base when a step needs them, O(m) each (:func:`_opening`, each row by
:func:`minlp_fs.kernels._phi_row`). These are the steps the full solve takes, bit for bit: the base
update, phi and the gradient's sums are :meth:`~minlp_fs.kernels.Kernel.swap`'s,
the kernel's ``apply``'s and :func:`~.smo.smo_solve`'s operations in their order,
and until SMO's first shrinking pass (after ``_SHRINK_EVERY`` steps) every index is active and positions
are indices. So an opening that decides the early stop returns the alpha and tracked value the full solve
would return; one that does not (within ``OPENING_STEPS``) is dropped and the subset is solved in full
from the same start and gradient, on the same path as without it. Subsets solved over duplicate rows
(:meth:`~.oracle.AlphaSubproblem.groups`: other steps) are solved on their matrix as before. In the fit
sense what an enumeration computes is unchanged (tests/test_opening.py); the stopped subsets' matrices are
never built.

The paper sense stops a subset once minus the SVM primal exceeds the incumbent. With SMO's own test (libsvm's
bias, every ``_BOUND_EVERY`` steps) the stops come after a median of 40 steps (Ionosphere poly5 B = 10, 900
subsets of a walk; 64 at B = 6), and an opening with that test measured 0.7-1.0x of the matrix's solves. The
opening tests instead the bound with the bias that minimises the slack for alpha's w
(:func:`~.smo._hinge_lower_bound`: O(m), the strongest for that w), which proves the same subsets worse sooner
(tested at every step, a median of 20 steps against libsvm's bias's 27; means 22 and 31). Its stops are then not
the full solve's: a paper-sense opening returns a feasible alpha at which the bound is proven, so the chunk stops
other subsets than without it and its warm starts differ, but every stop is a proof (weak duality holds for any
b) and the best subset is the same (tests/test_opening.py, against solves of every subset). With the compiled
walk (:mod:`minlp_fs.solvers.opened_walk`): Ionosphere poly5 paper B = 10, 8,000 subsets, 0.17 -> 0.09 ms per
subset.

The Gaussian kernel phi(s) = exp(-gamma s) gets the same pass (:func:`minlp_fs.kernels._rbf_swap_gradient`, the
bits of swap, apply and the full gradient), which computes K's rows only where alpha > 0: |alpha > 0| m
exponentials instead of the matrix's m^2, and its opening's rows cost 2m exponentials a step. Enumeration then
takes 1.1-4.8x less CPU a subset (benchmarks/RESULTS.md, bench_enumeration_opened_rbf; BCD rbf paper B = 7, 6 % of
its rows support vectors and every subset decided at its warm start: 0.95 -> 0.20 ms seeded by LS*; on Ionosphere
rbf paper B = 7 15 % are decided at the warm start, 63 % within 10 steps, all within 100). Where the opening seldom
decides, its pass is paid in vain, so a walk then sends its subsets to their matrices
(:class:`minlp_fs.solvers.opened_walk.Routes`, by ``Kernel.dear_phi``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels import _phi_row, _swap_gradient
from .oracle import Fit, check_diagonal
from .smo import (_BOUND_EVERY, _SHRINK_EVERY, _dual_value, _hinge_lower_bound, _pair_step, _select_i, _select_j,
                  _set_masks, _update_select_i, feasible_start)

#: opening steps tried before the full solve takes over (at most _SHRINK_EVERY, past which SMO shrinks).
#: Ionosphere poly5 fit B = 8 (9,000 subsets from 3 random ranks): every subset stopped within 68 steps
OPENING_STEPS = 100
assert OPENING_STEPS <= _SHRINK_EVERY


@njit(cache=True, nogil=True)
def _opening(base, kind, gamma, coef0, degree, Kd, y, U, alpha, grad, tol, above, below, steps, n_pos, buffers,
             scratch):  # pragma: no cover
    """smo._smo's loop on K = phi(base) (phi's code ``kind``: :func:`~minlp_fs.kernels._phi_row`, ``scratch`` its
    2m values) for at most ``steps`` steps, with the early stops f(alpha) <
    ``below`` (the fit sense's, SMO's own test) and, every _BOUND_EVERY steps as SMO, the hinge-bias primal bound
    > ``above`` (the paper sense's; :func:`~.smo._hinge_lower_bound`, ``n_pos`` = |I+|): (decided, steps
    taken, f(alpha) tracked); alpha and grad updated in place. Not decided: converged, or ``steps`` taken.
    ``U``: C for every index; ``buffers``: a 7 x m work array."""
    m = y.shape[0]
    up, low, work, svals, Ki, Kj = buffers[0], buffers[1], buffers[2], buffers[3], buffers[4], buffers[5]
    for t in range(m):
        _set_masks(y, U, alpha, t, up, low)
    value = _dual_value(alpha, grad)
    i, gmax = _select_i(y, grad, up, low, m, work, svals)
    it = 0
    while True:
        if value < below:
            return True, it, value
        if (above < np.inf and it % _BOUND_EVERY == 0
                and _hinge_lower_bound(y, U[0], alpha, grad, n_pos, buffers[6]) > above):
            return True, it, value
        if it == steps or i < 0:
            return False, it, value
        _phi_row(base[i], kind, gamma, coef0, degree, Ki, scratch)   # row i of K: apply's operations
        j, gmax2 = _select_j(Ki, Kd[i], Kd, svals, m, gmax, work)
        if gmax + gmax2 < tol or j < 0:
            return False, it, value
        _phi_row(base[j], kind, gamma, coef0, degree, Kj, scratch)
        it += 1
        ai, aj = alpha[i], alpha[j]
        qij = y[i] * y[j] * Ki[j]
        ni, nj = _pair_step(y[i] != y[j], ai, aj, U[i], U[j], grad[i], grad[j], Kd[i], Kd[j], qij)
        alpha[i], alpha[j] = ni, nj
        dai, daj = ni - ai, nj - aj
        value += grad[i] * dai + grad[j] * daj + 0.5 * (Kd[i] * dai * dai + Kd[j] * daj * daj) + qij * dai * daj
        _set_masks(y, U, alpha, i, up, low)
        _set_masks(y, U, alpha, j, up, low)
        i, gmax = _update_select_i(Ki, Kj, y, grad, up, low, m, y[i] * dai, y[j] * daj, work, svals)


class Opening:
    """Solves of an enumeration walk's subsets from their base matrices (module docstring)."""

    @staticmethod
    def applies(oracle) -> bool:
        """A binary instance whose kernel has compiled passes (``Kernel.compiled_phi``: the polynomial and Gaussian
        kernels), solved by SMO (either sense: module docstring)."""
        inst = oracle.instance
        return (oracle.backend == "smo" and inst.kernel.compiled_phi is not None
                and getattr(inst, "parts", None) is None)

    def __init__(self, oracle):
        inst, kernel = oracle.instance, oracle.instance.kernel
        self.oracle, self.kernel = oracle, kernel
        self.params = kernel.compiled_phi   # (phi's code, gamma, c, d)
        self.y = np.ascontiguousarray(inst.y, dtype=float)
        self.C = float(inst.C)
        self.columns = np.ascontiguousarray(inst.X.T, dtype=float)   # feature j's values: columns[j]
        self.zero, self.upper = np.zeros(inst.m), np.full(inst.m, self.C)
        self.grad, self.diag = np.empty(inst.m), np.empty(inst.m)
        self.n_pos = int(np.count_nonzero(inst.y > 0))
        self.buffers = np.empty((7, inst.m))
        self.row, self.work = np.empty(inst.m), np.empty(2 * inst.m)   # the Gaussian passes' scratch
        #: the last :meth:`solve`'s opening: True decided, False not, None not tried (rows may repeat, or no incumbent)
        self.outcome = None
        self._K = None

    def matrix(self, base: np.ndarray) -> np.ndarray:
        """phi(base) into one buffer, overwritten at every call (as enumeration's matrix walk does: a fresh m x m
        array per subset cost German rbf 2 ms of page faults a subset)."""
        self._K = self.kernel.apply(base, out=self._K)
        return self._K

    def on_matrix(self, subset: tuple, base: np.ndarray, move, warm_start, worse_than: float | None) -> Fit:
        """``oracle.solve`` on K = phi(base) after the swap ``move`` (or none), with no opening."""
        if move is not None:
            self.kernel.swap(base, self.oracle.instance.X, *move)
        return self.oracle.solve(subset, warm_start=warm_start, K=self.matrix(base), worse_than=worse_than)

    def solve(self, subset: tuple, base: np.ndarray, move, warm_start, worse_than: float | None) -> Fit:
        """The Fit ``oracle.solve(subset, warm_start, K, worse_than)`` returns for K = phi(base) after ``move``.

        ``base``: the base matrix of the previous subset, updated here in place by the swap ``move`` = (j_out,
        j_in), or ``subset``'s own with ``move`` None; ``subset``: sorted."""
        oracle = self.oracle
        self.outcome = None
        if oracle.groups(subset) is not None:   # solved over duplicate rows, whose steps are other ones
            return self.on_matrix(subset, base, move, warm_start, worse_than)
        alpha = feasible_start(warm_start, self.y, self.C)
        x_out, x_in = (self.zero, self.zero) if move is None else (self.columns[move[0]], self.columns[move[1]])
        _swap_gradient(base, x_out, x_in, *self.params, self.y, alpha, self.grad, self.diag, self.row, self.work)
        check_diagonal(self.diag)
        if worse_than is not None:
            above, below = oracle.stop_bounds(worse_than)
            trial, grad = alpha.copy(), self.grad.copy()
            decided, _, value = _opening(base, *self.params, self.diag, self.y, self.upper, trial, grad,
                                         float(oracle.tol), above, below, OPENING_STEPS, self.n_pos, self.buffers,
                                         self.work)
            self.outcome = bool(decided)
            if decided:
                oracle.count(exact=False)
                return Fit(subset, float(value), trial, False)
        return oracle.solve(subset, warm_start=alpha, K=self.matrix(base), worse_than=worse_than, grad0=self.grad)
