"""A node's probe QPs in compiled loops (paper sense, binary instances, polynomial kernels).

:meth:`~.paper_probes.PaperProbes._expand_probes` solves the probe I + j of every free j of a node (of an inner node to
PROBE_TOL), warm-started from the alpha of I and stopped early once proven worse than the incumbent, and keeps the
bracket -P(alpha_j) <= g(I + j) <= f(alpha_j) of each inner probe solved to the tolerance. One probe is one pass over
the node's base (:func:`.probe_gram._poly_plus_outer`), the warm start's gradient, SMO's steps
(:func:`~minlp_fs.alpha.smo._smo`, with its Newton steps and early stop; over the subset's duplicate-row groups
where the oracle would solve over them, by smo_solve's own :func:`~minlp_fs.alpha.smo._grouped_smo`) and the bound
(:func:`~minlp_fs.alpha.smo._hinge_lower_bound`, primal_point's compiled mirror, at the gradient of the alpha
reached): the steps :func:`~minlp_fs.alpha.smo.smo_solve` and :func:`.bounds.primal_lower_bound` take. Called one
probe at a time from Python, the calls' own work (the matrix's allocation, the warm start's projection, the oracle's
checks, the bound's arrays) was a tenth of a search at m = 195: :func:`solve_probes` takes the same steps for several
probes per compiled call (CHUNK_ENTRIES), the time limit checked between calls (Parkinsons paper poly2/poly3/poly5
B = 6: 0.34/0.20/0.19 -> 0.31/0.18/0.17 CPU s, with :mod:`.probe_gram`'s base at every node), and hands back to the
caller (``None``) every probe it cannot finish as the per-probe path would: a kernel matrix that is not finite (whose
check raises there) or a solve that reached SMO's iteration limit (solved by libsvm there). The grouped probes were
solved one at a time until the twenty-second session (a third of Cleveland's probes, whose categorical features repeat
rows; about 0.15 ms of Python a probe at m = 297).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..alpha.smo import (NEWTON_GAP, _dual_value, _full_gradient, _grouped_smo, _hinge_lower_bound, _smo, _work_matrix,
                         feasible_start, solved_over)
from .probe_gram import _poly_plus_outer

#: kernel entries (probes x m^2) per compiled call, the time limit checked between calls: 8 probes at m = 200 (a loose
#: probe there takes about 0.1 ms), one from m = 566
CHUNK_ENTRIES = 320_000
#: SMO's step limit, smo_solve's default (a solve that reaches it is handed back)
MAX_STEPS = 10_000_000


@njit(cache=True, nogil=True)
def _solve_chunk(base, columns, js, sizes, firsts, labels, gamma, coef0, degree, y, C, warm, tol, above, below, n_pos,
                 K, Kc, alphas, out):  # pragma: no cover - compiled
    """For each r, probe js[r]: K = phi(base + x x'), SMO from ``warm`` to ``tol`` with the early stops ``above`` /
    ``below``, over the duplicate-row groups (firsts[r, :sizes[r]], labels[r]) where sizes[r] > 0
    (:func:`~minlp_fs.alpha.smo._grouped_smo`, as smo_solve); alphas[r] = the alpha reached, out[r] = (state,
    f(alpha), -P(alpha)): state 0 solved to the tolerance, 1 stopped early, 2 handed back (a non-finite diagonal or
    the step limit). f: recomputed at the tolerance, SMO's tracked value after a stop; -P only where f < ``below`` or
    solved to the tolerance (else NaN)."""
    m = y.shape[0]
    U = np.full(m, C)
    grad, work = np.empty(m), np.empty(m)
    for r in range(js.shape[0]):
        _poly_plus_outer(base, columns[js[r]], gamma, coef0, degree, K)
        finite = True
        for t in range(m):
            finite = finite and np.isfinite(K[t, t])
        if not finite:
            out[r, 0] = 2.0
            continue
        alpha = alphas[r]
        alpha[:] = warm
        if sizes[r] > 0:
            steps, pruned, value = _grouped_smo(K, y, C, alpha, firsts[r, :sizes[r]], labels[r], grad, False, tol,
                                                MAX_STEPS, True, above, below, Kc, NEWTON_GAP)
        else:
            _full_gradient(K, y, alpha, grad)
            steps, pruned, value = _smo(K, y, U, alpha, grad, tol, MAX_STEPS, True, above, below, Kc, NEWTON_GAP)
        if not pruned and steps >= MAX_STEPS:
            out[r, 0] = 2.0
            continue
        out[r, 0], out[r, 1], out[r, 2] = 1.0 if pruned else 0.0, value, np.nan
        if pruned and value >= below:   # proven worse than the incumbent: no value, no bound wanted
            continue
        _full_gradient(K, y, alpha, grad)   # the alpha reached: its bound (and value) from its exact gradient
        if not pruned:
            out[r, 1] = _dual_value(alpha, grad)
        out[r, 2] = _hinge_lower_bound(y, C, alpha, grad, n_pos, work)


def solve_probes(grams, js: list, warm, oracle, incumbent, check_time, better_than=None, groups=None) -> dict:
    """{j: (exact, alpha, f, lower) or None} for the probes ``js`` of ``grams``' node (a
    :class:`.probe_gram.ProbeGrams` with a base), each solved as ``oracle.solve_gram(K, warm, incumbent,
    better_than=better_than, groups=groups[j])`` would (``oracle``: the search's AlphaSubproblem of the probes'
    tolerance, whose early stop it takes and whose solves it counts; the paper sense's; ``groups``: {j: the probe's
    duplicate-row groups or None}, None for none); ``exact`` False: stopped early, f then SMO's tracked value (below
    ``better_than``: proven better), lower -P at alpha after a stop below ``better_than`` or at the tolerance, else
    None; None: handed back (module docstring). ``check_time()`` runs before each compiled call."""
    inst = oracle.instance
    y = np.ascontiguousarray(inst.y, dtype=float)
    m, C = y.size, float(inst.C)
    start = feasible_start(warm, y, C)
    above, below = oracle.stop_bounds(incumbent)
    below = below if better_than is None else better_than
    K, Kc = np.empty((m, m)), _work_matrix(m)
    n_pos = int(np.count_nonzero(y > 0))
    found = {}
    size = max(1, CHUNK_ENTRIES // (m * m))
    for first in range(0, len(js), size):
        check_time()
        chunk = np.asarray(js[first:first + size], dtype=np.int64)
        sizes, firsts, labels = _pack_groups([(groups or {}).get(j) for j in chunk.tolist()], m)
        alphas, out = np.empty((chunk.size, m)), np.empty((chunk.size, 3))
        _solve_chunk(grams.base, grams.columns, chunk, sizes, firsts, labels, float(grams.gamma), float(grams.coef0),
                     int(grams.degree), y, C, start, float(oracle.tol), float(above), float(below), n_pos, K, Kc,
                     alphas, out)
        for r, j in enumerate(chunk.tolist()):
            state = int(out[r, 0])
            if state == 2:
                found[j] = None
                continue
            oracle.count(state == 0)
            lower = None if np.isnan(out[r, 2]) else float(out[r, 2])
            found[j] = (state == 0, alphas[r], float(out[r, 1]), lower)
    return found


def _pack_groups(groups: list, m: int) -> tuple:
    """(sizes, firsts, labels) of :func:`_solve_chunk` for a chunk's groups (each (first, label) or None: size 0, as
    for groups smo_solve would not solve over, :func:`~minlp_fs.alpha.smo.solved_over`)."""
    sizes = np.zeros(len(groups), dtype=np.int64)
    firsts, labels = np.zeros((len(groups), m), dtype=np.int64), np.zeros((len(groups), m), dtype=np.int64)
    for r, g in enumerate(groups):
        if solved_over(g, m):
            sizes[r] = len(g[0])
            firsts[r, :sizes[r]], labels[r] = g
    return sizes, firsts, labels
