"""Enumeration's walk with opened solves: runs of subsets decided without leaving compiled code.

With a polynomial or Gaussian kernel, enumeration solves each subset through
:class:`~minlp_fs.alpha.opening.Opening`: the swap's pass over the base matrix gives the warm start's gradient,
and SMO's opening steps, on kernel rows computed from the base, decide most early stops without the kernel
matrix (where the Gaussian kernel's seldom do, :class:`Routes` sends its subsets to their matrices). Once that
costs tens of microseconds per subset, Python's own work per subset would cost as much again; so :func:`_run` walks
whole runs of subsets in compiled code: per subset, Algorithm R's next swap
(:func:`~.revolving_door.successor`), the pass at the previous subset's alpha and the opening, the decided
subset's alpha warm-starting the next. It hands a subset back to Python (:meth:`Opening.solve
<minlp_fs.alpha.opening.Opening.solve>`, which redoes its pass on the swapped base with the same bits) when
the opening does not decide it, when its rows may repeat (no feature has more than GROUP_SHARE * m values and
hashing the rows does not prove more distinct ones: :meth:`~minlp_fs.alpha.AlphaSubproblem.groups` decides
whether it is solved over groups), when its start would need :func:`~minlp_fs.alpha.smo.feasible_start`'s
projection or its kernel is not finite. Runs end where the base is rebuilt (``REBUILD_EVERY``) and at the
chunk's end. Every subset gets the Fit the matrix's solve gives it; only where the work is done changes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..alpha.opening import OPENING_STEPS, _opening
from ..alpha.row_groups import _more_distinct_rows_than
from ..alpha.smo import GROUP_SHARE, START_SLACK, feasible_start
from ..kernels import _swap_gradient
from .revolving_door import start_state, successor


@njit(cache=True, nogil=True)
def _run(c, k, count, base, columns, kind, gamma, coef0, degree, y, U, alpha, grad, diag, trial, trial_grad, tol,
         above, below, steps, n_pos, n_values, row_bits, row_labels, row_table, group_cap, feasible_cap, buffers,
         row, work):  # pragma: no cover - compiled
    """Walk up to ``count`` subsets past c's, each decided by its opening (module docstring).

    Returns (decided, pending, j_out, j_in): ``decided`` subsets walked and stopped early (``alpha`` then holds
    the last one's alpha); ``pending`` 0 when ``count`` subsets were decided, -1 at the end of R, else the next
    subset was walked to (c advanced; the swap j_out -> j_in) and is handed back: 1 not decided (base swapped,
    ``grad`` = Q alpha - e at its start ``alpha``), 2 its rows may repeat (base not swapped), 3 its start needs
    projecting or its kernel is not finite (base swapped)."""
    m = y.shape[0]
    for done in range(count):
        j_out, j_in = successor(c, k)
        if j_out < 0:
            return done, -1, j_out, j_in
        most = 0
        for p in range(1, k + 1):
            most = max(most, n_values[c[p]])
        # rows that may repeat (no feature has more than group_cap values, and the hashed rows do not prove more
        # than group_cap distinct ones): AlphaSubproblem.groups decides how it is solved
        if most <= group_cap and not _more_distinct_rows_than(row_bits, row_labels, c, 1, k + 1, group_cap,
                                                              row_table):
            return done, 2, j_out, j_in
        _swap_gradient(base, columns[j_out], columns[j_in], kind, gamma, coef0, degree, y, alpha, grad, diag, row,
                       work)
        # feasible_start leaves alpha as it is (in the box by construction: SMO's steps clip) unless y'a drifted
        s = 0.0
        finite = True
        for t in range(m):
            s += alpha[t] * y[t]
            finite = finite and np.isfinite(diag[t])
        if abs(s) > feasible_cap or not finite:
            return done, 3, j_out, j_in
        for t in range(m):
            trial[t] = alpha[t]
            trial_grad[t] = grad[t]
        if not _opening(base, kind, gamma, coef0, degree, diag, y, U, trial, trial_grad, tol, above, below, steps,
                        n_pos, buffers, work)[0]:
            return done, 1, j_out, j_in
        for t in range(m):
            alpha[t] = trial[t]
    return count, 0, -1, -1


class Routes:
    """Which way a walk's next subsets go where the opening's pass is dear (``Kernel.dear_phi``: the Gaussian
    kernel's pass takes |alpha > 0| m exponentials, in vain for a subset the opening does not decide, which then
    needs the m^2 of its matrix too). Windows of PROBE subsets go through the opening; after one where it decided
    fewer than half, the next MATRIX_RUN subsets are solved on their matrices (as ``enumeration._matrix_fits``
    solves them), then a window goes through the opening again. An opening allowed no steps, which decided 15 % of
    Ionosphere rbf paper B = 7's subsets, measured 0.70 ms a subset against the matrix's 0.57, and 0.55 with these
    routes (a /tmp script; with its steps it decides them all). Where the pass is cheap (polynomial kernels) every
    subset goes through the opening. The choice depends on the chunk's own walk only, so results do not depend on
    ``n_jobs``."""

    PROBE, MATRIX_RUN = 32, 256

    def __init__(self, adaptive: bool):
        self.adaptive = adaptive
        self.window = self.PROBE if adaptive else np.iinfo(np.int64).max
        self.hits = self.matrix_left = 0

    def by_matrix(self) -> bool:
        """Whether the next subset is solved on its matrix (and counts it)."""
        if self.matrix_left > 0:
            self.matrix_left -= 1
            return True
        return False

    def record(self, decided: int, undecided: int) -> None:
        """A run through the opening: ``decided`` subsets decided, ``undecided`` handed back undecided."""
        if not self.adaptive:
            return
        self.window -= decided + undecided
        self.hits += decided
        if self.window <= 0:
            if 2 * self.hits < self.PROBE:
                self.matrix_left = self.MATRIX_RUN
            self.window, self.hits = self.PROBE, 0


def opened_fits(opening, start: int, stop: int, worse_than, rebuild_every: int):
    """Yield (rank, subset, fit, rebuilt, decided) for ranks start..stop-1 of R(n, B), in rank order.

    ``decided`` subsets before ``rank`` were stopped early inside a compiled run; ``subset`` and ``fit`` are
    None for an item that only reports a run. ``worse_than()``: the incumbent value to stop against now."""
    oracle = opening.oracle
    inst = oracle.instance
    X, kern, k = inst.X, inst.kernel, inst.B
    y, U, C, m = opening.y, opening.upper, opening.C, inst.m
    c = start_state(start, inst.n, k)
    n_values = oracle.distinct_values().astype(np.int64)
    keys = oracle.row_keys()
    row_table = keys.table()
    group_cap, feasible_cap = GROUP_SHARE * m, START_SLACK * C * m   # AlphaSubproblem.groups', feasible_start's
    trial, trial_grad, grad, diag = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    rank, since, alpha, base = start - 1, rebuild_every, None, None
    routes = Routes(kern.dear_phi)
    while rank + 1 < stop:
        threshold = worse_than()
        decided, pending, move, rebuilt, by_matrix = 0, 0, None, False, False
        if since >= rebuild_every:   # the first subset, and one every rebuild_every swaps: a base from scratch
            if rank >= start:
                successor(c, k)
            base, since, rebuilt = kern.base(X, tuple(c[1:k + 1].tolist())), -1, True
        elif threshold is None:      # nothing to stop against yet: no opening decides
            move = successor(c, k)
        elif routes.by_matrix():
            move, by_matrix = successor(c, k), True
        else:
            decided, pending, j_out, j_in = _run(
                c, k, min(stop - rank - 1, rebuild_every - since, routes.window), base, opening.columns,
                *opening.params, y, U,
                alpha, grad, diag, trial, trial_grad, float(oracle.tol), *oracle.stop_bounds(threshold),
                OPENING_STEPS, opening.n_pos, n_values, keys.bits, keys.labels, row_table, group_cap, feasible_cap,
                opening.buffers, opening.row, opening.work)
            rank, since = rank + decided, since + decided
            routes.record(decided, int(pending == 1))
            if pending <= 0:
                yield rank, None, None, False, decided
                if pending < 0:
                    return
                continue
            move = (j_out, j_in) if pending == 2 else None   # 1 and 3: swapped in already
        rank, since = rank + 1, since + 1
        subset = tuple(c[1:k + 1].tolist())
        if pending == 1:   # the opening did not decide: the full solve, from the same start and gradient
            fit = oracle.solve(subset, warm_start=alpha, K=opening.matrix(base), worse_than=threshold, grad0=grad)
        elif by_matrix:
            fit = opening.on_matrix(subset, base, (int(move[0]), int(move[1])), alpha, threshold)
        else:
            fit = opening.solve(subset, base, None if move is None else (int(move[0]), int(move[1])), alpha,
                                threshold)
            if opening.outcome is not None:
                routes.record(int(opening.outcome), int(not opening.outcome))
        alpha = feasible_start(fit.alpha, y, C)
        yield rank, subset, fit, rebuilt, decided
