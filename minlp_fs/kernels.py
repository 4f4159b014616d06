"""Feature-masked kernels of DFS-SVM (paper problem (4)).

Both kernels of the paper are a scalar function of a sum of per-feature terms:

    k_beta(x, z) = phi( sum_j beta_j t_j(x, z) )

    polynomial  t_j = x_j z_j           phi(s) = (gamma s + c)^d
    Gaussian    t_j = (x_j - z_j)^2     phi(s) = exp(-gamma s)

(for binary beta, k(beta*x, beta*z) reduces to this form; see the two bullet points after
problem (4)). So the Gram matrix of a subset S is ``phi(S_base)`` with the *base* matrix
``S_base = sum_{j in S} T_j``, and a swap (j_out -> j_in) updates the base in O(m^2):
``S_base += T_{j_in} - T_{j_out}``. That is the only structure enumeration and the local
searches need; the kernel also says whether its beta-subproblem is submodular
(Proposition 2: polynomial yes, Gaussian no, appendix counterexample).
"""
from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from numba import njit

from .errors import InputError
from .exponential import exp, exp_span
from .fastmath import FASTMATH
from .monomials import MomentTable, poly_monomial_additions, poly_monomial_quads, swap_costs


@njit(inline="always")
def _power(t, degree):  # pragma: no cover - compiled
    """t ** degree by repeated multiplication, left to right (t * t * ... * t), the same rounding for every degree.

    Written out for the paper's degrees 2, 3 and 5: inlined into a loop, the branch on ``degree`` is hoisted out
    of it and the loop vectorises (a loop around the generic inner loop does not: 5-8x less time for
    ``_poly_apply`` at m = 351, the same bits)."""
    if degree == 2:
        return t * t
    if degree == 3:
        return t * t * t
    if degree == 5:
        return t * t * t * t * t
    r = t
    for _ in range(degree - 1):
        r *= t
    return r


@njit(cache=True, nogil=True)
def _swap_product(base, x_out, x_in):  # pragma: no cover - compiled
    """base += x_in x_in' - x_out x_out' (polynomial terms)."""
    m = base.shape[0]
    for a in range(m):
        ia, oa = x_in[a], x_out[a]
        for b in range(m):
            base[a, b] += ia * x_in[b] - oa * x_out[b]


@njit(cache=True, nogil=True)
def _swap_sqdiff(base, x_out, x_in):  # pragma: no cover - compiled
    """base += (x_in - x_in')^2 - (x_out - x_out')^2 (Gaussian terms)."""
    m = base.shape[0]
    for a in range(m):
        ia, oa = x_in[a], x_out[a]
        for b in range(m):
            di = ia - x_in[b]
            do = oa - x_out[b]
            base[a, b] += di * di - do * do


@njit(cache=True, nogil=True)
def _mirror_upper(out):  # pragma: no cover - compiled
    """out's lower triangle = its upper triangle, by 64 x 64 tiles (the strided reads stay in cache). Measured at
    m = 1,000 against full rows (poly5): 5 % faster with 6 columns, 24 % with 20; the Gaussian Gram's mirrored
    writes inside its row loop stay (the tiles were 4-6 % slower there, its exp per entry dominates)."""
    m = out.shape[0]
    for i0 in range(0, m, 64):
        for j0 in range(0, i0 + 1, 64):
            for i in range(i0, min(i0 + 64, m)):
                for j in range(j0, min(j0 + 64, i)):
                    out[i, j] = out[j, i]


@njit(cache=True, nogil=True)
def _gram_product(A, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out = (gamma A A' + coef0) ** degree: the upper triangle row by row, each entry's inner product summed over
    the columns in order and its power by repeated multiplication, as the entrywise formula does (so the mirrored K
    is that formula bit for bit: a_j b_j = b_j a_j), the loops running along the rows so that they vectorise."""
    m, B = A.shape
    AT = np.ascontiguousarray(A.T)
    t = np.empty(m)
    for a in range(m):
        rest = m - a
        t[:rest] = 0.0
        for j in range(B):
            x, Tj = A[a, j], AT[j, a:]
            for b in range(rest):
                t[b] += x * Tj[b]
        row = out[a, a:]
        for b in range(rest):
            t[b] = gamma * t[b] + coef0
            row[b] = t[b]
        for _ in range(degree - 1):
            for b in range(rest):
                row[b] *= t[b]
    _mirror_upper(out)


@njit(inline="always")
def _rbf_row(AT, a, gamma, s, work):  # pragma: no cover - compiled
    """s[b] = exp(-gamma ||x_a - x_{a+1+b}||^2) for the rest = m - a - 1 rows after row a (AT: columns x rows):
    squared differences summed over the columns in order, vectorised along the row, then one
    :func:`~minlp_fs.exponential.exp_span` over the row's exponents; returns rest."""
    rest = AT.shape[1] - a - 1
    s[:rest] = 0.0
    for j in range(AT.shape[0]):
        x, Tj = AT[j, a], AT[j, a + 1:]
        for b in range(rest):
            d = x - Tj[b]
            s[b] += d * d
    for b in range(rest):
        s[b] *= -gamma
    exp_span(s, s, work, 0, rest)
    return rest


@njit(cache=True, nogil=True)
def _gram_sqdist(A, gamma, out):  # pragma: no cover - compiled
    """out = exp(-gamma ||a_a - a_b||^2): the upper triangle row by row (:func:`_rbf_row`), mirrored."""
    m = A.shape[0]
    AT = np.ascontiguousarray(A.T)
    s = np.empty(m)
    work = np.empty(2 * m)
    for a in range(m):
        out[a, a] = 1.0
        rest = _rbf_row(AT, a, gamma, s, work)
        for b in range(rest):
            out[a, a + 1 + b] = s[b]
            out[a + 1 + b, a] = s[b]


@njit(cache=True, nogil=True)
def _poly_apply(base, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out = (gamma * base + coef0) ** degree elementwise (flat arrays), by repeated multiplication."""
    for a in range(base.shape[0]):
        out[a] = _power(gamma * base[a] + coef0, degree)


# Neighbour fills (K' and the warm gradient of a swap, alpha/neighbours.py): full rows, written in order: measured
# 1.5-2x faster than the upper triangle with mirrored writes (strided column stores, and the scattered gradient
# updates keep the loop from vectorising), except for the Gaussian fill (_fill_rbf), whose upper triangle takes half
# the exps: with the vectorised exp (minlp_fs.exponential) 2.6 against 3.0 ns an entry at m = 351, but 5.3 against
# 4.5 at m = 1,000 (measured in the twenty-ninth session; the mirrored writes' cache misses grow with m).
# FASTMATH (:mod:`minlp_fs.fastmath`): grad is a warm-start gradient, and the value of every fit is recomputed
# by the one objective.


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _fill_poly(base, x_out, x_in, gamma, coef0, degree, y, ay, K, grad):  # pragma: no cover - compiled
    """K = (gamma (base - x_out x_out' + x_in x_in') + c)^d and grad = y * (K ay) - 1, one pass."""
    m = base.shape[0]
    for a in range(m):
        ia, oa = x_in[a], x_out[a]
        row = 0.0
        if degree == 2:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                K[a, b] = t * t
                row += K[a, b] * ay[b]
        elif degree == 3:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                K[a, b] = t * t * t
                row += K[a, b] * ay[b]
        else:
            for b in range(m):
                t = gamma * (base[a, b] - oa * x_out[b] + ia * x_in[b]) + coef0
                r = t
                for _ in range(degree - 1):
                    r *= t
                K[a, b] = r
                row += r * ay[b]
        grad[a] = y[a] * row - 1.0


@njit(inline="always")
def _swap_gradient_body(base, x_out, x_in, gamma, coef0, degree, y, alpha, grad, diag):  # pragma: no cover
    m = base.shape[0]
    for t in range(m):
        grad[t] = -1.0
    for a in range(m):
        ia, oa = x_in[a], x_out[a]
        for b in range(m):
            base[a, b] += ia * x_in[b] - oa * x_out[b]
        diag[a] = _power(gamma * base[a, a] + coef0, degree)
        if alpha[a] > 0:
            c = alpha[a] * y[a]
            for b in range(m):
                grad[b] += y[b] * _power(gamma * base[a, b] + coef0, degree) * c


@njit(cache=True, nogil=True)
def _poly_swap_gradient(base, x_out, x_in, gamma, coef0, degree, y, alpha, grad, diag):  # pragma: no cover
    """base += x_in x_in' - x_out x_out', then grad = Q alpha - e and diag = diag(K) for K = (gamma base + c)^d,
    row by row without storing K (enumeration's opened solves, alpha/opening.py): the operations of _swap_product,
    _poly_apply and alpha.smo._full_gradient (rows in order, each row's terms added in order), hence the same bits.
    The body is inlined with the paper's degrees as constants, so that its loops vectorise (2.3x less time at d = 5)."""
    if degree == 2:
        _swap_gradient_body(base, x_out, x_in, gamma, coef0, 2, y, alpha, grad, diag)
    elif degree == 3:
        _swap_gradient_body(base, x_out, x_in, gamma, coef0, 3, y, alpha, grad, diag)
    elif degree == 5:
        _swap_gradient_body(base, x_out, x_in, gamma, coef0, 5, y, alpha, grad, diag)
    else:
        _swap_gradient_body(base, x_out, x_in, gamma, coef0, degree, y, alpha, grad, diag)


#: phi's code in the compiled passes of enumeration's opened solves (alpha/opening.py; ``Kernel.compiled_phi``)
PHI_POLY, PHI_RBF = 0, 1


@njit(cache=True, nogil=True)
def _phi_row(base_row, kind, gamma, coef0, degree, out, work):  # pragma: no cover - compiled
    """out = phi(base_row) by the operations of the kernel's ``apply``, hence its bits: (gamma s + c)^d
    (:func:`_poly_apply`) or exp(s * -gamma) (the product, then :func:`~minlp_fs.exponential.exp_span`, whose
    scratch ``work`` holds 2m values)."""
    if kind == PHI_RBF:
        m = base_row.shape[0]
        for b in range(m):
            out[b] = base_row[b] * -gamma
        exp_span(out, out, work, 0, m)
    else:
        _poly_apply(base_row, gamma, coef0, degree, out)


@njit(cache=True, nogil=True)
def _rbf_swap_gradient(base, x_out, x_in, gamma, y, alpha, grad, diag, row, work):  # pragma: no cover - compiled
    """base += T_in - T_out (:func:`_swap_sqdiff`), then grad = Q alpha - e and diag = diag(K) for K = exp(-gamma
    base) without storing K: row a of K (:func:`_phi_row`) only where alpha_a > 0, its terms added as
    alpha.smo._full_gradient adds them (rows in order), hence the same bits. |alpha > 0| m exponentials instead of
    m^2: the paper sense's Gaussian starts hold few support vectors (6 % of BCD's rows at B = 7, 38 % of
    Ionosphere's)."""
    _swap_sqdiff(base, x_out, x_in)
    m = base.shape[0]
    for t in range(m):
        grad[t] = -1.0
        row[t] = base[t, t] * -gamma
    exp_span(row, diag, work, 0, m)
    for a in range(m):
        if alpha[a] > 0:
            _phi_row(base[a], PHI_RBF, gamma, 0.0, 1, row, work)
            c = alpha[a] * y[a]
            for t in range(m):
                grad[t] += y[t] * row[t] * c


@njit(cache=True, nogil=True)
def _swap_gradient(base, x_out, x_in, kind, gamma, coef0, degree, y, alpha, grad, diag, row,
                   work):  # pragma: no cover - compiled
    """:func:`_poly_swap_gradient` or :func:`_rbf_swap_gradient` by phi's code ``kind`` (``row``, ``work``: m and
    2m scratch values, used by the Gaussian pass)."""
    if kind == PHI_RBF:
        _rbf_swap_gradient(base, x_out, x_in, gamma, y, alpha, grad, diag, row, work)
    else:
        _poly_swap_gradient(base, x_out, x_in, gamma, coef0, degree, y, alpha, grad, diag)


@njit(cache=True, nogil=True)
def _fill_rbf(base, x_out, x_in, gamma, y, ay, K, grad):  # pragma: no cover - compiled
    """K = exp(-gamma (base - d_out + d_in)) and grad = y * (K ay) - 1, one pass over the upper triangle (half the
    exps of full rows; see the comment above), per row its exponents first, then one
    :func:`~minlp_fs.exponential.exp_span` over them."""
    m = base.shape[0]
    acc = np.zeros(m)
    e = np.empty(m)
    work = np.empty(2 * m)
    for a in range(m):
        ia, oa, ca = x_in[a], x_out[a], ay[a]
        K[a, a] = 1.0
        row = ca
        for b in range(a + 1, m):
            di = ia - x_in[b]
            do = oa - x_out[b]
            e[b] = -gamma * (base[a, b] - do * do + di * di)
        exp_span(e, e, work, a + 1, m)
        for b in range(a + 1, m):
            r = e[b]
            K[a, b] = r
            K[b, a] = r
            row += r * ay[b]
            acc[b] += r * ca
        acc[a] += row
    for t in range(m):
        grad[t] = y[t] * acc[t] - 1.0


# Quadratic forms 1/2 v' K v at a fixed alpha (v = alpha * y on the support; heuristics/screening.py):
# one pass over the upper triangle, no kernel matrix stored, for many subsets per call.


@njit(cache=True, nogil=True)
def _poly_removal_quads(base, Xs, v, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[t] = 1/2 v' (gamma (base - x x') + c)^{.d} v with x = Xs[:, t] (a removal from base's subset).

    One pass over base's upper triangle for all t at once (t innermost: contiguous, vectorised); per
    t the sums run in the same order whatever the other columns, so a value does not depend on the batch."""
    m, k = Xs.shape
    total = np.zeros(k)
    row = np.empty(k)
    for a in range(m):
        va = v[a]
        for t in range(k):
            row[t] = 0.0
        for b in range(a + 1, m):
            bab, vb = base[a, b], v[b]
            for t in range(k):
                row[t] += _power(gamma * (bab - Xs[a, t] * Xs[b, t]) + coef0, degree) * vb
        for t in range(k):
            r = _power(gamma * (base[a, a] - Xs[a, t] * Xs[a, t]) + coef0, degree)
            total[t] += va * (2.0 * row[t] + r * va)
    for t in range(k):
        out[t] = 0.5 * total[t]


@njit(cache=True, nogil=True)
def _poly_shifted_removal(base, x, gamma, coef0, out):  # pragma: no cover - compiled
    """out = (base - x x') * gamma + coef0 in one pass (the operations, in order, of the numpy expression)."""
    m = base.shape[0]
    for a in range(m):
        xa = x[a]
        for b in range(m):
            out[a, b] = (base[a, b] - xa * x[b]) * gamma + coef0


@njit(cache=True, nogil=True)
def _rbf_removal_exponent(base, x, gamma, out):  # pragma: no cover - compiled
    """out = (base - (x_a - x_b)^2) * (-gamma): the exponent of phi(base - T_j), as numpy forms it."""
    m = base.shape[0]
    for a in range(m):
        xa = x[a]
        for b in range(m):
            d = xa - x[b]
            out[a, b] = (base[a, b] - d * d) * -gamma


@njit(cache=True, nogil=True)
def _poly_subset_quads(X, v, subsets, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[t] = 1/2 v' (gamma A A' + c)^{.d} v with A = X[:, subsets[t]]."""
    m, k, size = X.shape[0], subsets.shape[0], subsets.shape[1]
    A = np.empty((m, size))
    for t in range(k):
        for a in range(m):
            for c in range(size):
                A[a, c] = X[a, subsets[t, c]]
        total = 0.0
        for a in range(m):
            row = 0.0
            for b in range(a, m):
                dot = 0.0
                for c in range(size):
                    dot += A[a, c] * A[b, c]
                r = _power(gamma * dot + coef0, degree)
                row += r * v[b] if b > a else 0.5 * r * v[b]
            total += v[a] * row
        out[t] = total


@njit(cache=True, nogil=True)
def _rbf_subset_quads(X, v, subsets, gamma, out):  # pragma: no cover - compiled
    """out[t] = 1/2 v' exp(-gamma ||a_a - a_b||^2) v with A = X[:, subsets[t]]: the upper triangle row by row, each
    row's entries as the compiled Gram makes them (:func:`_rbf_row`: the Gram's bits), then
    v_a (2 sum_{b > a} K_ab v_b + v_a)."""
    m, k, size = X.shape[0], subsets.shape[0], subsets.shape[1]
    AT = np.empty((size, m))
    s = np.empty(m)
    work = np.empty(2 * m)
    for t in range(k):
        for c in range(size):
            col = subsets[t, c]
            for a in range(m):
                AT[c, a] = X[a, col]
        total = 0.0
        for a in range(m):
            rest = _rbf_row(AT, a, gamma, s, work)
            row = 0.0
            vb = v[a + 1:]
            for b in range(rest):
                row += s[b] * vb[b]
            total += v[a] * (2.0 * row + v[a])
        out[t] = 0.5 * total


#: upper bound on the elements of one temporary block of a batched swap screening (32 MB of doubles)
SWAP_BLOCK = 1 << 22
#: elements of the factors of one block of rows of the Gaussian swap table (GaussianKernel.swap_quads: 1 MB of
#: doubles, in cache: blocks of 4-11 rows on the nine datasets, 1.1-3.8x less time per table than whole m x m
#: factors, measured with paper-sense alphas; 16 and 64 rows per block took 1.05-1.3x and 1.5-2x this one's time)
SWAP_CACHE = 1 << 17


def _block_sqdiffs(cols: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """[(x_hf - x_lf)^2] for rows h in [lo, hi) and l >= lo, flattened, one row per feature f of ``cols`` (features
    x rows): a block of rows of the upper triangle, by broadcasting (contiguous, no index gathers)."""
    D = cols[:, lo:hi, None] - cols[:, None, lo:]
    D *= D
    return D.reshape(cols.shape[0], -1)


class Kernel(ABC):
    """A masked kernel ``phi(sum_j beta_j t_j)``; subclasses give ``t_j``, ``phi`` and its derivatives.

    Everything kernel-specific lives on the subclass: the terms and phi (``feature_term``, ``base``,
    ``apply``), phi' and phi'' (``derivative``, ``second_derivative``: the relaxation's gradient and
    exact Hessian, :mod:`minlp_fs.solvers.nlp`), the symbolic form for model writers (``affine``,
    ``outer``, ``magnitude``, ``monomials``: :mod:`minlp_fs.models`), the hooks of the swap-neighbour
    tables (``multiplicative``, ``fill_neighbour``, ``without``: :mod:`minlp_fs.alpha.neighbours`), and the batched
    quadratic forms at a fixed alpha (``removal_quads``, ``subset_quads``, ``swap_quads``, ``moment_table``,
    ``remove``: :mod:`minlp_fs.heuristics.screening`; defaults provided), and the compiled passes of enumeration's
    opened solves (``compiled_phi``, ``dear_phi``: :mod:`minlp_fs.alpha.opening`; default none). A new
    kernel is one subclass here (plus its name in :func:`make_kernel`).
    """

    #: name used on the command line and in results
    name: str
    #: True when, at fixed alpha, the beta-subproblem (5) is a monotone submodular maximisation
    submodular: bool
    #: True when phi(s + t) = phi(s) phi(t): a swap's Gram is then an elementwise product of a
    #: "centre without j_out" matrix and a per-feature table phi(T_j_in) (alpha/neighbours.py)
    multiplicative: bool
    #: (phi's code, gamma, c, d) for the compiled passes of enumeration's opened solves (:func:`_phi_row`,
    #: :func:`_swap_gradient`; alpha/opening.py), or None for a kernel without them (solved on its matrix)
    compiled_phi: tuple | None = None
    #: True when phi costs far more than the base's arithmetic (an exponential an entry): an opened walk then sends
    #: its subsets to their matrices where the opening seldom decides (solvers/opened_walk.py, ``Routes``)
    dear_phi: bool = False

    @abstractmethod
    def feature_term(self, X: np.ndarray, j: int, Z: np.ndarray | None = None) -> np.ndarray:
        """T_j with entries t_j(x_i, z_h) (Z defaults to X)."""

    @abstractmethod
    def base(self, X: np.ndarray, subset=None, Z: np.ndarray | None = None,
             weights: np.ndarray | None = None) -> np.ndarray:
        """sum_j w_j T_j over ``subset`` (all columns if None); ``weights`` w (default 1) for relaxations."""

    @abstractmethod
    def apply(self, base: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """phi applied elementwise to a base matrix."""

    @abstractmethod
    def derivative(self, base: np.ndarray) -> np.ndarray:
        """phi'(base) elementwise, for gradients of the relaxation."""

    @abstractmethod
    def second_derivative(self, base: np.ndarray) -> np.ndarray:
        """phi''(base) elementwise, for the relaxation's exact Hessian."""

    @property
    @abstractmethod
    def affine(self) -> tuple[float, float]:
        """(scale, const) with k = phi_outer(scale * sum_j beta_j t_j + const): see :meth:`outer`."""

    @abstractmethod
    def outer(self, u, exp, power):
        """The outer function of the symbolic kernel entry, applied to the affine expression ``u``.

        Model writers build ``u = scale * sum_j beta_j t_j + const`` (:attr:`affine`) in their own
        expression system and pass its exponential and integer power (e.g. ``pyo.exp`` and ``**``).
        """

    @abstractmethod
    def magnitude(self, X: np.ndarray) -> np.ndarray:
        """An upper bound of |k_beta(x^i, x^h)| over beta in [0, 1]^n (all pairs of rows of X)."""

    @abstractmethod
    def monomials(self, n: int) -> int:
        """Monomials of one kernel entry over n features once expanded by a simplifier (SCIP's)."""

    @abstractmethod
    def fill_neighbour(self, base, x_out, x_in, y, ay, K, grad) -> None:
        """K = phi(base - t(x_out) + t(x_in)) and grad = y * (K ay) - 1, in one compiled pass."""

    def gram(self, X: np.ndarray, subset=None, Z: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix K_S with entries k(x_S^i, z_S^h) (Z = X: one compiled pass, no BLAS)."""
        if Z is not None:
            return self.apply(self.base(X, subset, Z))
        A = np.ascontiguousarray(_columns(X, subset), dtype=float)
        out = np.empty((A.shape[0], A.shape[0]))
        self._fused_gram(A, out)
        return out

    @abstractmethod
    def _fused_gram(self, A: np.ndarray, out: np.ndarray) -> None:
        """out = K of the rows of A (all of A's columns selected)."""

    def swap(self, base: np.ndarray, X: np.ndarray, j_out: int, j_in: int) -> np.ndarray:
        """In-place O(m^2) update of a base matrix for the swap j_out -> j_in; returns ``base``.

        One fused compiled pass ``base += T_in - T_out`` with no temporary matrices.
        """
        self._fused_swap(base, np.ascontiguousarray(X[:, j_out], dtype=float),
                         np.ascontiguousarray(X[:, j_in], dtype=float))
        return base

    def remove(self, base: np.ndarray, X: np.ndarray, j: int) -> np.ndarray:
        """In-place ``base -= T_j`` (a removal: the swap's fused pass with an all-zero column in, whose
        term vanishes for both kernels, so entry by entry base_ab + (0 - t_ab) = base_ab - t_ab exactly);
        returns ``base``."""
        self._fused_swap(base, np.ascontiguousarray(X[:, j], dtype=float), np.zeros(X.shape[0]))
        return base

    @abstractmethod
    def params(self) -> dict:
        """The kernel's parameters as a JSON-ready dict (with its name)."""

    # Quadratic forms at a fixed alpha (heuristics/screening.py): q(S) = 1/2 v' K_S v, v = alpha * y on
    # the support rows X. The defaults build one kernel matrix per value; the paper's kernels override
    # them with batched formulas, so a new kernel is correct with none of the overrides.

    def without(self, base: np.ndarray, X: np.ndarray, j: int, out: np.ndarray | None = None) -> np.ndarray:
        """phi(base - T_j): the kernel matrix of base's subset without feature j (``base`` left as it is), into
        ``out`` if given; the removal values and the neighbour tables' "centre without j" matrices."""
        return self.apply(base - self.feature_term(X, j), out=out)

    def removal_quads(self, base: np.ndarray, X: np.ndarray, v: np.ndarray, js) -> np.ndarray:
        """[q(S - j) for j in js] from ``base`` = the base matrix of S (no matrix per j where overridden)."""
        return np.array([0.5 * v @ self.without(base, X, j) @ v for j in js])

    def subset_quads(self, X: np.ndarray, v: np.ndarray, subsets: np.ndarray) -> np.ndarray:
        """[q(S) for S in the rows of ``subsets``] (a k x s integer array: k subsets of one size s)."""
        return np.array([0.5 * v @ self.gram(X, list(S)) @ v for S in subsets])

    def moment_table(self, X: np.ndarray, v: np.ndarray, ground):
        """A table from which q(S) and q(S - j) of every S in ``ground`` follow without a pass over the rows
        (:class:`~minlp_fs.heuristics.screening.Removals`), where the kernel has one and it is cheaper
        than the removals from a base matrix; None otherwise (the default)."""
        return None

    def swap_quads(self, X: np.ndarray, v: np.ndarray, chosen, outside, out: np.ndarray, tick) -> None:
        """out[r, c] = q(S - i + j) for i = chosen[r], j = outside[c] (S = chosen); ``tick(k)`` after each
        block of k values (the caller's count and deadline check). Default: one kernel matrix per swap."""
        base = self.base(X, chosen)
        for r, i in enumerate(chosen):
            without = base - self.feature_term(X, i)
            for c, j in enumerate(outside):
                out[r, c] = 0.5 * v @ self.apply(without + self.feature_term(X, j)) @ v
            tick(len(outside))


def _columns(X: np.ndarray, subset) -> np.ndarray:
    return X if subset is None else X[:, np.asarray(subset, dtype=np.intp)]


@dataclass(frozen=True)
class PolynomialKernel(Kernel):
    """(gamma <x, z>_beta + c)^d, Proposition 1/2 (submodular beta-step)."""

    degree: int = 2
    gamma: float = 0.1
    coef0: float = 1.0
    submodular = True
    multiplicative = False
    _fused_swap = staticmethod(_swap_product)

    @property
    def name(self) -> str:
        return f"poly{self.degree}"

    @property
    def compiled_phi(self) -> tuple:
        return PHI_POLY, float(self.gamma), float(self.coef0), int(self.degree)

    def feature_term(self, X, j, Z=None):
        z = X[:, j] if Z is None else Z[:, j]
        return np.multiply.outer(X[:, j], z)

    def _fused_gram(self, A, out):
        _gram_product(A, self.gamma, self.coef0, self.degree, out)

    def base(self, X, subset=None, Z=None, weights=None):
        A = _columns(X, subset)
        Bm = A if Z is None else _columns(Z, subset)
        if weights is not None:
            A = A * np.asarray(weights)
        return A @ Bm.T

    def apply(self, base, out=None):
        base = np.asarray(base, dtype=float)
        if out is None:
            out = np.empty(base.shape)
        flat = out.reshape(-1)  # a view for any contiguous ``out``
        _poly_apply(np.ascontiguousarray(base).reshape(-1), self.gamma, self.coef0, self.degree, flat)
        if not np.shares_memory(flat, out):
            out[...] = flat.reshape(out.shape)
        return out

    def derivative(self, base):
        return self.degree * self.gamma * (self.gamma * base + self.coef0) ** (self.degree - 1)

    def second_derivative(self, base):
        d, g, c = self.degree, self.gamma, self.coef0
        return d * (d - 1) * g * g * (g * base + c) ** (d - 2) if d >= 2 else np.zeros_like(base)

    @property
    def affine(self):
        return self.gamma, self.coef0

    def outer(self, u, exp, power):
        """u^d (u itself for d = 1)."""
        return u if self.degree == 1 else power(u, self.degree)

    def magnitude(self, X):
        """phi(sum_j |x_ij| |x_hj|), the kernel of |X|: |gamma sum_j beta_j x_ij x_hj + c| <=
        gamma sum_j |x_ij x_hj| + c for beta in [0, 1]^n and c >= 0."""
        return self.gram(np.abs(X))

    def monomials(self, n):
        """(gamma sum_j beta_j t_j + c)^d has C(n + d, d) monomials."""
        return math.comb(n + self.degree, self.degree)

    def fill_neighbour(self, base, x_out, x_in, y, ay, K, grad):
        _fill_poly(base, x_out, x_in, self.gamma, self.coef0, self.degree, y, ay, K, grad)

    def removal_quads(self, base, X, v, js):
        """One compiled pass over base's upper triangle for all j: entry (gamma (base_ab - x_aj x_bj) + c)^d."""
        js = np.asarray(js, dtype=np.intp)
        out = np.empty(js.size)
        _poly_removal_quads(np.ascontiguousarray(base, dtype=float), np.ascontiguousarray(X[:, js], dtype=float),
                            np.ascontiguousarray(v, dtype=float), self.gamma, self.coef0, self.degree, out)
        return out

    def moment_table(self, X, v, ground):
        """The moments of every monomial of degree <= d in ``ground`` (:class:`~minlp_fs.monomials.MomentTable`)
        where :meth:`MomentTable.cheaper <minlp_fs.monomials.MomentTable.cheaper>` says so, else None."""
        ground = list(ground)
        if not MomentTable.cheaper(X.shape[0], len(ground), self.degree):
            return None
        return MomentTable(X, v, ground, self.gamma, self.coef0, self.degree)

    def subset_quads(self, X, v, subsets):
        """From a moment table of the features the subsets use (:meth:`MomentTable.quads
        <minlp_fs.monomials.MomentTable.quads>`: many subsets of few features, as LS*'s N2 samples) where
        :meth:`MomentTable.cheaper_for_subsets <minlp_fs.monomials.MomentTable.cheaper_for_subsets>` says so; else
        from the subsets' monomials (:func:`~minlp_fs.monomials.poly_monomial_quads`) where a cost count says that is cheaper
        (small subsets of a large support), else one compiled pass over the upper triangle per subset.
        Cost (compiled, measured on one core): ~0.5 ns per monomial and row against ~0.5 ns per pair of
        rows and column (or degree) of the pairwise pass: monomials when 2 C(s + d, d) < m (s + d)."""
        subsets = np.asarray(subsets, dtype=np.intp).reshape(len(subsets), -1)
        ground = np.unique(subsets)
        if MomentTable.cheaper_for_subsets(X.shape[0], ground.size, subsets.shape[0], subsets.shape[1], self.degree):
            return MomentTable(X, v, ground.tolist(), self.gamma, self.coef0, self.degree).quads(subsets)
        out = np.empty(subsets.shape[0])
        run = poly_monomial_quads if self.by_monomials(X.shape[0], subsets.shape[1]) else _poly_subset_quads
        run(np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(v, dtype=float), subsets,
                           self.gamma, self.coef0, self.degree, out)
        return out

    def by_monomials(self, m: int, size: int) -> bool:
        """:meth:`subset_quads` of ``size``-subsets on m rows goes by monomials (the cost count above)."""
        d = self.degree
        return size > 0 and 2 * math.comb(size + d, d) < m * (size + d)

    def swap_quads(self, X, v, chosen, outside, out, tick):
        """Binomial expansion in the added column. With P_i = gamma (A_S - T_i) + c 1 1' (the masked,
        shifted inner products of S - i), entrywise by the binomial theorem

            K_{S-i+j} = (P_i + gamma x_j x_j')^{.d} = sum_{k=0}^{d} binom(d, k) gamma^k P_i^{.(d-k)} o (x_j^k x_j^k')

        (powers .k and products o entrywise), and since v'(M o u u')v = (u o v)' M (u o v),

            v' K_{S-i+j} v = sum_{k=0}^{d} binom(d, k) gamma^k w_jk' P_i^{.(d-k)} w_jk,   w_jk = x_j^{.k} o v.

        The k = 0 term v' P_i^{.d} v does not depend on j; the k = d term is (1' w_jd)^2. For the other
        k, with W_k = [w_jk]_{j in outside} (m x (n-B)), the values for every j are the column sums of
        W_k o (P_i^{.(d-k)} W_k): one matrix product. Cost: B (d-1) products of m x m by m x (n-B), i.e.
        O(B (n-B) d m^2) flops in BLAS, plus O(B d m^2) for the powers of each P_i, instead of
        B (n-B) kernel matrices, each O(d m^2) scalar work plus a quadratic form. Every term is the same
        quadratic form as the direct computation, regrouped; the terms are nonnegative when the data and
        c are (min-max scaling), so there is no cancellation beyond the direct formula's own.

        Where :func:`~minlp_fs.monomials.swap_costs` counts fewer operations (small B and d: most of the
        paper's grid), the table comes from the monomials instead, q(S - i + j) = q(S - i) +
        (q(S - i + j) - q(S - i)) (:class:`~minlp_fs.monomials.MomentTable` of S,
        :func:`~minlp_fs.monomials.poly_monomial_additions`), in blocks of outside columns of about
        ``SWAP_BLOCK`` operations, ``tick`` after each (once per row of the block)."""
        g, c, d = self.gamma, self.coef0, self.degree
        removals, per_column, binomial = swap_costs(X.shape[0], len(chosen), len(outside), d)
        if removals + per_column * len(outside) <= binomial:
            self._monomial_swaps(X, v, chosen, outside, out, tick, max(1, int(SWAP_BLOCK // per_column)))
            return
        base = self.base(X, chosen)
        Xo = X[:, outside]
        W = [None] + [np.ascontiguousarray(Xo ** k * v[:, None]) for k in range(1, d + 1)]
        coef = [math.comb(d, k) * g ** k for k in range(d + 1)]
        last = coef[d] * W[d].sum(axis=0) ** 2  # k = d: P_i^0 = 1 1'
        powers = [None] + [np.empty_like(base) for _ in range(d)]  # powers[e] = P_i^{.e}, e = 1..d, reused
        P = powers[1]
        for r, i in enumerate(chosen):
            _poly_shifted_removal(base, np.ascontiguousarray(X[:, i], dtype=float), g, c, P)
            for e in range(2, d + 1):
                np.multiply(powers[e - 1], P, out=powers[e])
            row = np.full(len(outside), 0.5 * coef[0] * (v @ powers[d] @ v))
            for k in range(1, d):
                W_k = W[k]
                row += 0.5 * coef[k] * np.einsum("hj,hj->j", W_k, powers[d - k] @ W_k)
            row += 0.5 * last
            out[r] = row
            tick(len(outside))

    def _monomial_swaps(self, X, v, chosen, outside, out, tick, step):
        """:meth:`swap_quads` from the monomials, ``step`` outside columns per block."""
        g, c, d = self.gamma, self.coef0, self.degree
        X, v = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(v, dtype=float)
        S = np.asarray(chosen, dtype=np.intp)
        removals = MomentTable(X, v, chosen, g, c, d).removals(chosen)[1]
        for lo in range(0, len(outside), step):
            cols = np.asarray(outside[lo:lo + step], dtype=np.intp)
            block = np.empty((S.size, cols.size))
            poly_monomial_additions(X, v, S, cols, g, c, d, block)
            out[:, lo:lo + cols.size] = block + removals[:, None]
            for _ in range(S.size):  # counted row by row, as the binomial route does
                tick(cols.size)

    def params(self):
        return {"name": self.name, "degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


@dataclass(frozen=True)
class GaussianKernel(Kernel):
    """exp(-gamma ||x - z||^2_beta); F is neither sub- nor supermodular (appendix counterexample)."""

    gamma: float = 0.1
    submodular = False
    multiplicative = True
    dear_phi = True
    name = "rbf"
    _fused_swap = staticmethod(_swap_sqdiff)

    def feature_term(self, X, j, Z=None):
        z = X[:, j] if Z is None else Z[:, j]
        return np.subtract.outer(X[:, j], z) ** 2

    @property
    def compiled_phi(self) -> tuple:
        return PHI_RBF, float(self.gamma), 0.0, 0

    def _fused_gram(self, A, out):
        _gram_sqdist(A, self.gamma, out)

    def base(self, X, subset=None, Z=None, weights=None):
        A = _columns(X, subset)
        Bm = A if Z is None else _columns(Z, subset)
        w = np.ones(A.shape[1]) if weights is None else np.asarray(weights, dtype=float)
        D = -2.0 * (A * w) @ Bm.T
        D += ((A * A) @ w)[:, None]
        D += ((Bm * Bm) @ w)[None, :]
        np.maximum(D, 0.0, out=D)
        if Z is None:
            np.fill_diagonal(D, 0.0)
        return D

    def apply(self, base, out=None):
        """exp(-gamma base) by :func:`minlp_fs.exponential.exp`, as every Gaussian matrix of the package."""
        out = np.multiply(base, -self.gamma, out=out)
        return exp(out, out=out)

    def derivative(self, base):
        return -self.gamma * self.apply(base)

    def second_derivative(self, base):
        return self.gamma ** 2 * self.apply(base)

    @property
    def affine(self):
        return -self.gamma, 0.0

    def outer(self, u, exp, power):
        """exp(u)."""
        return exp(u)

    def magnitude(self, X):
        """0 < exp(-gamma s) <= 1 for s >= 0."""
        return np.ones((X.shape[0], X.shape[0]))

    def monomials(self, n):
        """exp(.) is not expanded: one term."""
        return 1

    def fill_neighbour(self, base, x_out, x_in, y, ay, K, grad):
        _fill_rbf(base, x_out, x_in, self.gamma, y, ay, K, grad)

    def without(self, base, X, j, out=None):
        """The exponent in one compiled pass (:func:`_rbf_removal_exponent`: the bits of (base - T_j) * -gamma, as
        :meth:`apply` of numpy's base - T_j forms them), then the vectorised exp in place: no temporary matrix."""
        out = np.empty_like(base) if out is None else out
        _rbf_removal_exponent(base, np.ascontiguousarray(X[:, j], dtype=float), self.gamma, out)
        return exp(out, out=out)

    def removal_quads(self, base, X, v, js):
        """Per j, :meth:`without` into a reused buffer and a matrix-vector product: no allocation per j, and the
        same arithmetic as 1/2 v' apply(base - T_j) v."""
        out, K = np.empty(len(js)), np.empty_like(base)
        for t, j in enumerate(js):
            self.without(base, X, j, out=K)
            out[t] = 0.5 * (v @ (K @ v))
        return out

    def subset_quads(self, X, v, subsets):
        """One compiled pass over the upper triangle per subset (:func:`_rbf_subset_quads`): no matrix stored, half
        the exponentials, each row's by the vectorised exp (against blocks of rows by numpy, 1.7x at m = 1,000,
        2.7x at m = 351, 4.5x at m = 200, measured in the twenty-ninth session)."""
        subsets = np.asarray(subsets, dtype=np.intp).reshape(len(subsets), -1)
        out = np.empty(subsets.shape[0])
        _rbf_subset_quads(np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(v, dtype=float), subsets,
                          self.gamma, out)
        return out

    def swap_quads(self, X, v, chosen, outside, out, tick):
        """Per-feature factors. With E_j = exp(-gamma T_j) entrywise, K_{S-i+j} = exp(-gamma (A_S - T_i)) o E_j
        = K_{S-i} o E_j, so

            v' K_{S-i+j} v = sum_{h,l} N_i[h, l] E_j[h, l],   N_i = K_{S-i} o v v',

        an inner product of two m x m matrices: one matrix product N (B x m^2) by E' (m^2 x (n-B)) gives
        them all. N_i and E_j are symmetric (bitwise: (x_h - x_l)^2 = (x_l - x_h)^2 and v_h v_l = v_l v_h), so
        the sum runs over the upper triangle by blocks of rows, rows lo..hi-1 against the columns from lo on:
        the block's square [lo, hi)^2 in full (weight 1) and the columns from hi on twice (weight 2, exact),
        which covers every pair (h, l) once. Per block, the factors of the B chosen and n - B outside columns
        are built by broadcasting (contiguous, no index gathers) and their product is added to the table:
        each exponential once, about m^2 / 2 per column instead of m^2, and each block within ``SWAP_CACHE``
        elements (in cache). ``tick`` after each block with its share of the B (n-B) values."""
        g = self.gamma
        m = X.shape[0]
        Xc, Xo = np.ascontiguousarray(X[:, chosen].T), np.ascontiguousarray(X[:, outside].T)
        rows = max(1, SWAP_CACHE // ((len(chosen) + len(outside)) * m))
        total, ticked, pairs = len(chosen) * len(outside), 0, 0
        out[...] = 0.0
        for lo in range(0, m, rows):
            hi = min(m, lo + rows)
            N = _block_sqdiffs(Xc, lo, hi)
            N -= N.sum(axis=0)
            N *= g
            exp(N, out=N)  # K_{S-i} on the block, one row per i
            w = np.multiply.outer(v[lo:hi], v[lo:])
            w[:, hi - lo:] *= 2.0
            N *= w.reshape(-1)
            E = _block_sqdiffs(Xo, lo, hi)
            E *= -g
            exp(E, out=E)
            out += N @ E.T
            pairs += (hi - lo) * (2 * m - lo - hi + 1) // 2  # the block's pairs h <= l
            done = total * pairs // (m * (m + 1) // 2)
            tick(done - ticked)
            ticked = done
        out *= 0.5

    def params(self):
        return {"name": self.name, "gamma": self.gamma}


DEFAULT_GAMMA = 0.1
DEFAULT_COEF0 = 1.0
KERNEL_NAMES = ("poly2", "poly3", "poly5", "rbf")


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def make_kernel(kernel: "str | Kernel" = "poly2", gamma: float | None = None,
                coef0: float | None = None, degree: int | None = None) -> Kernel:
    """A kernel from its command-line name (``poly<d>``, ``poly`` with ``degree``, or ``rbf``) with optional overrides.

    Defaults are the paper's: gamma = 0.1, c = 1.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if not isinstance(kernel, str):
        raise InputError(f"kernel must be a name such as {', '.join(KERNEL_NAMES)}; got {kernel!r}")
    g = DEFAULT_GAMMA if gamma is None else gamma
    if not (_is_number(g) and np.isfinite(g) and g > 0):
        raise InputError(f"gamma must be a finite number > 0; got {gamma!r}")
    name = kernel.strip().lower()
    match = re.fullmatch(r"poly(\d*)", name)
    if match:
        named = int(match.group(1)) if match.group(1) else None
        if named is None and degree is None:
            raise InputError(f"kernel {kernel!r} needs its degree: poly<d> (poly2, poly3, ...) or degree=d")
        d = degree if degree is not None else named
        c = DEFAULT_COEF0 if coef0 is None else coef0
        if not (isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1):
            raise InputError(f"polynomial degree must be an integer >= 1; got {d!r}")
        if not (_is_number(c) and np.isfinite(c) and c >= 0):
            raise InputError(f"coef0 (c) must be a finite number >= 0; got {coef0!r}")
        return PolynomialKernel(degree=int(d), gamma=float(g), coef0=float(c))
    if name in ("rbf", "gaussian"):
        if degree is not None or coef0 is not None:
            raise InputError("the Gaussian kernel takes only gamma (no degree, no coef0)")
        return GaussianKernel(gamma=float(g))
    raise InputError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNEL_NAMES)} "
                     "(poly<d> for any degree d)")
