"""Degree-share bound of a fit-sense node at a fixed alpha, polynomial kernels of any degree with c >= 0.

Fit sense (maximise g): for ANY feasible alpha, g(S) <= f(alpha, S) = 1/2 v'K_S v - e'alpha, v = alpha * y
(g is a minimum over alpha). A node (I, F, need) holds the S = I u R, R subset of F, |R| = r = need.
With beta_j in {0, 1} on F (1 on I) and a = c + gamma G_I, G_I = X_I X_I' (over the rows),

    p(beta) = 1/2 sum_{i,h} v_i v_h (a_ih + gamma sum_{j in F} beta_j x_ij x_hj)^d,   f(alpha, I u R) = p(1_R) - e'alpha.

Expanding the power, the part homogeneous of degree t in beta is
p_t(beta) = 1/2 binom(d, t) gamma^t sum_{i,h} v_i v_h a_ih^(d-t) (sum_j beta_j x_ij x_hj)^t, and the
coefficient of a monomial beta^m (|m| = t) is 1/2 binom(d, t) gamma^t multinom(t; m) w'A_t w with
w_i = v_i prod_j x_ij^(m_j) and A_t = (a_ih^(d-t)): entrywise powers of the polynomial kernel matrix
c + gamma G_I with c >= 0 are PSD (Schur product theorem), so EVERY monomial coefficient is >= 0
(Proposition 1's argument, with I's features folded into a; the signs of x do not matter).

**Allocation.** Charge each monomial m of degree t >= 1 to the features of its support, m_j / t to j, and let
e_j be j's total charge at beta = 1_F:

    e_j = sum_{t=1}^d (1/t) [beta_j d p_t / d beta_j](1_F)   (Euler: sum_j beta_j d_j p_t = t p_t).

A monomial whose support lies in R is charged wholly to R, every other one charges R >= 0, and on
{0, 1} points p(1_R) = p(0) + sum of the monomials with support in R. Hence

    f(alpha, I u R) = f(alpha, I) + sum_{m: supp m in R} coef(m) <= f(alpha, I) + sum_{j in R} e_j
                    <= f(alpha, I) + (sum of the r largest e_j over any pool containing R),

and sum_{j in F} e_j = f(alpha, I u F) - f(alpha, I) (Euler on each p_t). In closed form, with z = G_F:

    e_j = (v o x_j)' W (v o x_j),   W = 1/2 sum_{t=1}^d binom(d, t) gamma^t a^(d-t) z^(t-1)   (entrywise),

one m x m matrix and one product with the |F| columns: no kernel matrix per feature. The marginal
bound's gain delta_j = f(alpha, U) - f(alpha, U - j) is the sum of the coefficients of the monomials
containing j, each counted WHOLE, so e_j <= delta_j.

**Partners.** The charges depend on R: at beta = 1_R the same allocation gives e_j(R) with z = G_R,
sum_{j in R} e_j(R) = f(alpha, I u R) - f(alpha, I) exactly. Write the part of degree t >= 2 of e_j(R),
1/2 binom(d, t) gamma^t sum_{i,h} v_i v_h x_ij x_hj a_ih^(d-t) z_ih^(t-1), with z^(t-1) = z^(t-2) o z and
z = sum_{k in R} x_k x_k': it is sum_{k in R} of (v o x_j o x_k)' [a^(d-t) o G_R^(t-2)] (v o x_j o x_k), each a
quadratic form of a PSD matrix (Schur products of Gram matrices) that only grows when R grows to F
(G_F^(t-2) - G_R^(t-2) is PSD: a sum of Schur products of Gram matrices). Hence, with

    Q_jk = (v o x_j o x_k)' W (v o x_j o x_k) >= 0,   W = 1/2 sum_{t=2}^d binom(d, t) gamma^t a^(d-t) z^(t-2)  (z = G_F),
    rest_j = 1/2 d gamma (v o x_j)' a^(d-1) (v o x_j)   (the part t = 1, independent of R),

e_j(R) <= rest_j + sum_{k in R} Q_jk <= rest_j + Q_jj + top_{r-1}{Q_jk : k in P - j} for |R| = r inside
a pool P (and rest_j + sum_{k in F} Q_jk = e_j: the allocation above): each feature is charged its r - 1 best
partners only, for every degree t >= 2. A child of the split by ``order`` takes j = order[t] and R of
size r = need - 1 from P = order[t+1:]; moving the pair terms (j, k) into k's item (Q is symmetric), its
bound is

    f(alpha, I) + rest_j + Q_jj + (the r largest over k in P of rest_k + Q_kk + 2 Q_jk + top_{r-1}{Q_kl : l in P - k})

(:func:`share_bounds`); for degree 2 (W = gamma^2 / 2, Q_jk = gamma^2 V_jk^2 / 2 with V = X' diag(v) X,
rest_j + Q_jj = f(alpha, I + j) - f(alpha, I)) this is the pair bound of :mod:`.bounds` term by term.
Cost: Q by the Kronecker factors of W (:func:`_pair_quads`) or W itself, O(m^2 |F|^2) at most.
Measured at the root of German poly3 B = 9 (fit, incumbent -5011.9), at the same relaxed alpha: marginal
bound -3063.5, shares alone -3891.7, shares with partners for t = 2 only -3979.1, for every t -4144.9
(the largest f(alpha, S) a local search finds there: -4360.4); German poly5 B = 9, first child: marginal
241.0 (its cap f(alpha, U)), partners for t = 2 only -1729.6, for every t -2611.0 (incumbent -4734.4).
"""
from __future__ import annotations

from math import comb

import numpy as np


class FixedAlphaShares:
    """f(alpha, I) and the degree shares of a node (module docstring) at one feasible alpha, split as
    e_j = rest_j + sum_{k in F} Q_jk: rest_j the part of degree 1, Q_jk the pair terms of the parts of degree >= 2;
    ``alone``: f(alpha, I + j) - f(alpha, I)."""

    def __init__(self, instance, alpha: np.ndarray, fixed, free):
        from .bounds import _machines     # here: bounds imports this module (its fit-sense hook)

        k = instance.kernel
        d, gamma, c = k.degree, k.gamma, k.coef0
        fixed, free = list(fixed), list(free)
        self.free = free
        self.position = {j: i for i, j in enumerate(free)}
        self.f_fixed = 0.0
        self.rest = np.zeros(len(free))
        self.alone = np.zeros(len(free))
        self.Q = np.zeros((len(free), len(free)))
        for part, a in _machines(instance, alpha):   # multiclass: f(A, S) = sum_k f(alpha_k, S), term by term
            sv = np.flatnonzero(a > 0)
            v = a[sv] * part.y[sv]
            X = part.X[sv]
            base = c + gamma * (X[:, fixed] @ X[:, fixed].T)
            Xv = X[:, free] * v[:, None]
            self.rest += 0.5 * d * gamma * np.einsum("ij,ij->j", Xv, (base ** (d - 1)) @ Xv)   # t = 1
            if d >= 2:
                self.Q += _pair_quads(Xv, X[:, free], X[:, fixed], base, c, gamma, d)
            Vt = Xv
            for t in range(1, d + 1):                  # the monomials of beta_j alone: t = 1..d
                self.alone += 0.5 * comb(d, t) * gamma ** t * np.einsum("ij,ij->j", Vt, (base ** (d - t)) @ Vt)
                Vt = Vt * X[:, free]
            self.f_fixed += 0.5 * float(v @ (base ** d) @ v) - float(a.sum())

    def takes(self) -> dict:
        """{j: f(alpha, I + {j})} over F: f(alpha, I) + the monomials of beta_j alone,
        sum_{t=1}^d 1/2 binom(d, t) gamma^t (v o x_j^t)' a^(d-t) (v o x_j^t) (one m x m product per t, no
        kernel matrix per feature)."""
        return dict(zip(self.free, (self.f_fixed + self.alone).tolist()))

    def index(self, subset) -> np.ndarray:
        return np.array([self.position[int(j)] for j in subset], dtype=int)

    def shares(self, need: int) -> dict:
        """{j: an upper bound of e_j(R) over the R of size ``need`` holding j}: rest_j + Q_jj + the need - 1
        largest Q_jk, k in F - j (the order of a split, largest first)."""
        off = self.Q.copy()
        np.fill_diagonal(off, -np.inf)
        top = -np.sort(-off, axis=1)[:, :need - 1].sum(axis=1) if need > 1 else 0.0
        return dict(zip(self.free, (self.rest + np.diagonal(self.Q) + top).tolist()))


def _kron_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise Kronecker product: row i is A[i] (x) B[i]."""
    return (A[:, :, None] * B[:, None, :]).reshape(A.shape[0], -1)


def _pair_quads(Xv: np.ndarray, Xf: np.ndarray, XI: np.ndarray, base: np.ndarray, c: float, gamma: float,
                d: int) -> np.ndarray:
    """Q_jk = (v o x_j o x_k)' W (v o x_j o x_k) with W = 1/2 sum_{t=2}^d binom(d, t) gamma^t base^(d-t) z^(t-2)
    (entrywise; base = c + gamma X_I X_I', z = X_F X_F'). Each term is a Gram matrix Phi_t Phi_t': Phi_t the
    row-wise Kronecker product of d - t copies of [sqrt(c), sqrt(gamma) X_I] and t - 2 of X_F, so
    Q_jk = sum_t sum_q ((v o x_j o phi_tq)' x_k)^2 costs O(columns x m |F|^2) when the columns are fewer
    than the m rows; else O(m^2 |F|^2) with W itself."""
    m, nf = Xf.shape
    phi = np.hstack([np.full((m, 1), np.sqrt(c)), np.sqrt(gamma) * XI])
    scale = {t: 0.5 * comb(d, t) * gamma ** t for t in range(2, d + 1)}
    if sum(phi.shape[1] ** (d - t) * nf ** (t - 2) for t in scale) < m:
        out = np.zeros((nf, nf))
        for t, s in scale.items():
            factor = np.ones((m, 1))
            for _ in range(d - t):
                factor = _kron_rows(factor, phi)
            for _ in range(t - 2):
                factor = _kron_rows(factor, Xf)
            products = (_kron_rows(Xv, factor).T @ Xf).reshape(nf, -1, nf)     # [j, q, k]
            out += s * np.square(products).sum(axis=1)
        return out
    z = Xf @ Xf.T
    W = np.zeros_like(z)
    for t in range(d, 1, -1):                          # Horner in z
        W = W * z + scale[t] * base ** (d - t)
    Y = _kron_rows(Xv, Xf)                             # column (j, k): v o x_j o x_k
    return np.einsum("ij,ij->j", Y, W @ Y).reshape(nf, nf)


def share_bounds(shares: FixedAlphaShares, order, need: int) -> list:
    """Upper bounds of f(alpha, S) >= g(S) over each child t of the split of (I, F, need) by ``order`` (module
    docstring, partner bound): child t takes j = order[t] and R, r = need - 1 features of P = order[t+1:];
    its bound is f(alpha, I) + rest_j + Q_jj + the r largest over k in P of
    rest_k + Q_kk + 2 Q_jk + top_{r-1}{Q_kl : l in P - k} (the pairs (j, k) moved to k's item). For
    degree 2 this is :func:`.bounds.pair_bounds` (rest_j + Q_jj is the gain at I, 2 Q = D)."""
    o = shares.index(order)
    Q = shares.Q[np.ix_(o, o)]
    alone = shares.rest[o] + np.diagonal(Q)
    r = need - 1
    bounds = []
    for t in range(len(order) - need + 1):
        head = shares.f_fixed + alone[t]
        if r > 0:
            partners = 0.0
            if r > 1:
                pool = Q[t + 1:, t + 1:].copy()
                np.fill_diagonal(pool, -np.inf)
                partners = -np.sort(-pool, axis=1)[:, :r - 1].sum(axis=1)
            head += float(-np.sort(-(alone[t + 1:] + 2.0 * Q[t + 1:, t] + partners))[:r].sum())
        bounds.append(float(head))
    return bounds
