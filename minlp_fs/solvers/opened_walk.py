"""Enumeration's walk with opened solves: runs of subsets decided without leaving compiled code.

With a polynomial kernel, enumeration solves each subset through :class:`~minlp_fs.alpha.opening.Opening`:
the swap's pass over the base matrix gives the warm start's gradient, and SMO's opening steps, on kernel
rows computed from the base, decide most early stops without the kernel matrix. Once that costs tens of
microseconds per subset, Python's own work per subset would cost as much again; so :func:`_poly_run` walks
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

from ..alpha.opening import OPENING_STEPS, _poly_opening
from ..alpha.row_groups import _more_distinct_rows_than
from ..alpha.smo import GROUP_SHARE, START_SLACK, feasible_start
from ..kernels import _poly_swap_gradient
from .revolving_door import start_state, successor


@njit(cache=True, nogil=True)
def _poly_run(c, k, count, base, columns, gamma, coef0, degree, y, U, alpha, grad, diag, trial, trial_grad, tol,
              above, below, steps, n_pos, n_values, row_bits, row_labels, row_table, group_cap, feasible_cap,
              buffers):  # pragma: no cover - compiled
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
        _poly_swap_gradient(base, columns[j_out], columns[j_in], gamma, coef0, degree, y, alpha, grad, diag)
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
        if not _poly_opening(base, gamma, coef0, degree, diag, y, U, trial, trial_grad, tol, above, below, steps,
                             n_pos, buffers)[0]:
            return done, 1, j_out, j_in
        for t in range(m):
            alpha[t] = trial[t]
    return count, 0, -1, -1


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
    while rank + 1 < stop:
        threshold = worse_than()
        decided, pending, move, rebuilt = 0, 0, None, False
        if since >= rebuild_every:   # the first subset, and one every rebuild_every swaps: a base from scratch
            if rank >= start:
                successor(c, k)
            base, since, rebuilt = kern.base(X, tuple(c[1:k + 1].tolist())), -1, True
        elif threshold is None:      # nothing to stop against yet: no opening decides
            move = successor(c, k)
        else:
            decided, pending, j_out, j_in = _poly_run(
                c, k, min(stop - rank - 1, rebuild_every - since), base, opening.columns, *opening.params, y, U,
                alpha, grad, diag, trial, trial_grad, float(oracle.tol), *oracle.stop_bounds(threshold),
                OPENING_STEPS, opening.n_pos, n_values, keys.bits, keys.labels, row_table, group_cap, feasible_cap,
                opening.buffers)
            rank, since = rank + decided, since + decided
            if pending <= 0:
                yield rank, None, None, False, decided
                if pending < 0:
                    return
                continue
            move = (j_out, j_in) if pending == 2 else None   # 1 and 3: swapped in already
        rank, since = rank + 1, since + 1
        subset = tuple(c[1:k + 1].tolist())
        if pending == 1:   # the opening did not decide: the full solve, from the same start and gradient
            fit = oracle.solve(subset, warm_start=alpha, K=kern.apply(base), worse_than=threshold, grad0=grad)
        else:
            fit = opening.solve(subset, base, None if move is None else (int(move[0]), int(move[1])), alpha,
                                threshold)
        alpha = feasible_start(fit.alpha, y, C)
        yield rank, subset, fit, rebuilt, decided
