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

one m x m matrix and one product with the |F| columns: no kernel matrix per feature. (The marginal
bound this replaced, no longer in the package, used the gain delta_j = f(alpha, U) - f(alpha, U - j): the
sum of the coefficients of the monomials containing j, each counted WHOLE, so e_j <= delta_j.)

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

**Exact head.** In child t the taken feature j is in every subset, and its own share still carries
z^(t-2) at F through Q_jj. Expanding z_(R + j) = x_j x_j' + z_R in e_j(R + j): the terms with x_j x_j' alone
sum to the monomials of beta_j alone, f(alpha, I + j) - f(alpha, I) (``alone``); every other term holds at least
one factor z_R = sum_{k in R} x_k x_k', so

    e_j(R + j) <= f(alpha, I + j) - f(alpha, I) + sum_{k in R} (Q_jk + P_jk),
    P_jk = sum_{e=0}^{d-3} (u o x_k)' W_e (u o x_k),   u = v o x_j^(2+e),
    W_e = sum_{t=e+3}^d 1/2 binom(d, t) gamma^t binom(t-2, e) a^(d-t) z^(t-3-e)

(binomial expansion of z_(R+j)^(t-2); the remaining z_R factors bounded by z = G_F as above). With P_jk moved
into k's item too, the child's bound becomes

    f(alpha, I + j) + (the r largest over k in P of rest_k + Q_kk + 2 Q_jk + P_jk + top_{r-1}{Q_kl : l in P - k})

(:func:`share_bounds`); for degree 2 (W = gamma^2 / 2, Q_jk = gamma^2 V_jk^2 / 2 with V = X' diag(v) X,
rest_j + Q_jj = f(alpha, I + j) - f(alpha, I)) this is the pair bound of :mod:`.bounds` term by term.
Cost: Q by the Kronecker factors of W (symmetric tensor powers of the rows: :func:`_pair_quads`) or W itself,
O(m^2 |F|^2) at most; the head's pair terms only for the children the cheaper partner bound leaves open and the
head could close (:func:`share_bounds`, ``enough``); a need-1 node (leaf children) needs no Q at all.
Measured when it was introduced (the marginal bound then still in the search), at the root of German poly3
B = 9 (fit, incumbent -5011.9), at the same relaxed alpha: marginal
bound -3063.5, shares alone -3891.7, shares with partners for t = 2 only -3979.1, for every t -4144.9
(the largest f(alpha, S) a local search finds there: -4360.4); German poly5 B = 9, first child: marginal
241.0 (its cap f(alpha, U)), partners for t = 2 only -1729.6, for every t -2611.0 (incumbent -4734.4); with
the exact head -4145.6 and -2615.1 there, and deeper in the tree the marginal bound is no longer the smaller one
for any child (it was for 87 of 221 children on Cleveland poly5 B = 6, 32,962 of 37,834 on Sonar poly3 B = 6;
with the exact head for 0 of 221 and 0 of 23,126), so the search uses this bound alone (:mod:`.bounds`).
"""
from __future__ import annotations

from functools import cached_property, lru_cache
from itertools import combinations_with_replacement
from math import comb, factorial, prod

import numpy as np

from ..multiclass import machines
from .partners import partner_items, top_sums


class FixedAlphaShares:
    """f(alpha, I) and the degree shares of a node (module docstring) at one feasible alpha, split as
    e_j = rest_j + sum_{k in F} Q_jk: rest_j the part of degree 1, Q_jk the pair terms of the parts of degree >= 2;
    ``alone``: f(alpha, I + j) - f(alpha, I), the monomials of beta_j alone,
    sum_{t=1}^d 1/2 binom(d, t) gamma^t (v o x_j^t)' a^(d-t) (v o x_j^t) (per t one product with a^(d-t) or with its
    symmetric tensor factors, :meth:`_Powers.quads`; no kernel matrix per feature); the head's pair terms P_jk (module docstring, exact head) on demand,
    for the pairs a split uses only (:meth:`head`). ``pairs=False``: no Q (None), enough for need = 1, where the
    shares are ``alone`` itself and a child's bound f(alpha, I + j) is exact; refused for need > 1."""

    def __init__(self, instance, alpha: np.ndarray, fixed, free, pairs: bool = True):
        k = instance.kernel
        d, gamma, c = k.degree, k.gamma, k.coef0
        fixed, free = list(fixed), list(free)
        self.free = free
        self.position = {j: i for i, j in enumerate(free)}
        self.f_fixed = 0.0
        self.rest = np.zeros(len(free))
        self.alone = np.zeros(len(free))
        self.Q = np.zeros((len(free), len(free))) if pairs else None
        self._parts = []
        self._degree = d
        self.pairs = pairs
        for part, a in machines(instance, alpha):   # multiclass: f(A, S) = sum_k f(alpha_k, S), term by term
            sv = np.flatnonzero(a > 0)
            v = a[sv] * part.y[sv]
            X = part.X[sv]
            Xf, XI = X[:, free], X[:, fixed]
            pw = _Powers(XI, Xf, c, gamma)
            Xv = Xf * v[:, None]
            coef = {t: 0.5 * comb(d, t) * gamma ** t for t in range(d + 1)}
            Vt = Xv
            for t in range(1, d + 1):                  # the monomials of beta_j alone: t = 1..d
                part_t = coef[t] * pw.quads(d - t, Vt)
                self.alone += part_t
                if t == 1:                             # rest: the part t = 1 of the shares
                    self.rest += part_t
                Vt = Vt * Xf
            if d >= 2 and pairs:                       # W = sum_{t >= 2} coef_t a^(d-t) z^(t-2)
                j, k = np.triu_indices(len(free))      # u_j o x_k = u_k o x_j: the pairs j <= k
                quads = _pair_quads(Xv, pw, [(coef[t], d - t, t - 2) for t in range(2, d + 1)], (j, k))
                self.Q[j, k] += quads
                self.Q[k, j] = self.Q[j, k]
            self._parts.append((pw, Xv, coef))
            self.f_fixed += 0.5 * float(pw.quads(d, v[:, None])[0]) - float(a.sum())

    def head(self, order, rows) -> np.ndarray:
        """P in the coordinates of ``order``: [t, k] = P_{order[t], order[k]} for t in ``rows`` (positions in
        ``order``) and k > t (the pairs child t's bound uses), 0 elsewhere.
        P_jk = sum_{e=0}^{d-3} (u o x_k)' W_e (u o x_k), u = v o x_j^(2+e) (module docstring, exact head)."""
        d = self._degree
        o = self.index(order)
        t, k = np.triu_indices(len(o), 1)
        chosen = np.isin(t, np.asarray(rows, dtype=int))
        t, k = t[chosen], k[chosen]
        out = np.zeros((len(o), len(o)))
        if not len(t):
            return out
        for pw, Xv, coef in self._parts:
            for e in range(d - 2):                     # u_j = v o x_j^(2+e), W_e
                out[t, k] += _pair_quads(Xv * pw.Xf ** (1 + e), pw,
                                         [(coef[s] * comb(s - 2, e), d - s, s - 3 - e) for s in range(e + 3, d + 1)],
                                         (o[t], o[k]))
        return out

    def index(self, subset) -> np.ndarray:
        return np.array([self.position[int(j)] for j in subset], dtype=int)

    def shares(self, need: int) -> dict:
        """{j: an upper bound of e_j(R) over the R of size ``need`` holding j}: rest_j + Q_jj + the need - 1
        largest Q_jk, k in F - j (the order of a split, largest first); for need = 1 (R = {j}) e_j itself,
        ``alone`` = f(alpha, I + j) - f(alpha, I)."""
        _check_pairs(self, need)
        if need == 1:
            return dict(zip(self.free, self.alone.tolist()))
        off = self.Q.copy()
        np.fill_diagonal(off, -np.inf)
        top = -np.sort(-off, axis=1)[:, :need - 1].sum(axis=1)
        return dict(zip(self.free, (self.rest + np.diagonal(self.Q) + top).tolist()))


def _check_pairs(shares: FixedAlphaShares, need: int) -> None:
    if need > 1 and not shares.pairs:
        raise ValueError("FixedAlphaShares(pairs=False) has no pair terms Q: need must be 1")


def _kron_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise Kronecker product: row i is A[i] (x) B[i]."""
    return (A[:, :, None] * B[:, None, :]).reshape(A.shape[0], -1)


class _Powers:
    """Entrywise powers a^p of base = c + gamma X_I X_I' and z^q of z = X_F X_F' (over the support rows), each
    computed once per fixed alpha when first asked for, by products of lower powers (a^0 = z^0: the scalar 1 for the
    matrix 1 1')."""

    def __init__(self, XI: np.ndarray, Xf: np.ndarray, c: float, gamma: float):
        self.XI, self.Xf, self.c, self.gamma = XI, Xf, c, gamma
        self._a, self._z = {0: 1.0}, {0: 1.0}

    def a(self, p: int):
        if p not in self._a:
            self._a[p] = self.c + self.gamma * (self.XI @ self.XI.T) if p == 1 else self.a(p - 1) * self.a(1)
        return self._a[p]

    def quads(self, p: int, Y: np.ndarray) -> np.ndarray:
        """[y_col' a^p y_col] over the columns of Y. a^p = Psi Psi' with Psi the symmetric tensor power of the rows
        phi = [sqrt(c), sqrt(gamma) X_I] (:func:`_symmetric_power`: C(p + |I|, p) columns), so the form is
        ||Psi' y||^2, O(m C) per column, when C is below the m rows and a^p is not built; else by a^p itself,
        O(m^2) per column. (German poly5 fit B = 6, |I| = 5, p = 4: 126 columns against 580 rows.)"""
        if p in self._a or comb(p + self.XI.shape[1], p) >= len(self.Xf):
            return _quads(self.a(p), Y)
        return np.square(_symmetric_power(self.phi, p).T @ Y).sum(axis=0)

    @cached_property
    def phi(self) -> np.ndarray:
        """The rows' features of base = phi phi': [sqrt(c), sqrt(gamma) X_I]."""
        return np.hstack([np.full((len(self.Xf), 1), np.sqrt(self.c)), np.sqrt(self.gamma) * self.XI])

    def z(self, q: int):
        if q not in self._z:
            self._z[q] = self.Xf @ self.Xf.T if q == 1 else self.z(q - 1) * self._z[1]
        return self._z[q]

    def term(self, s: float, p: int, q: int):
        """s a^p o z^q (a scalar when p = q = 0)."""
        return s * self.a(p) * self.z(q) if p or q else s


def _symmetric_power(phi: np.ndarray, p: int) -> np.ndarray:
    """Psi with Psi Psi' = (phi phi')^p entrywise: a column per multiset M of p columns of phi, the product of its
    columns times sqrt(p! / prod_k mult_k(M)!) (the multinomial theorem on (sum_k phi_ik phi_hk)^p)."""
    combos, scale = _multisets(phi.shape[1], p)
    return phi[:, combos].prod(axis=2) * scale


@lru_cache(maxsize=None)
def _multisets(r: int, p: int) -> tuple:
    """The multisets of p of r columns (rows of an index array) and sqrt of their multinomial coefficients."""
    multisets = list(combinations_with_replacement(range(r), p))
    combos = np.array(multisets, dtype=int).reshape(len(multisets), p)
    weights = [factorial(p) / prod(factorial(n) for n in np.bincount(row, minlength=1)) for row in combos]
    return combos, np.sqrt(weights)


def _quads(W, Y: np.ndarray) -> np.ndarray:
    """[y_col' W y_col] over the columns of Y; a scalar W stands for the constant matrix W 1 1'."""
    return W * np.square(Y.sum(axis=0)) if np.ndim(W) == 0 else np.einsum("ij,ij->j", Y, W @ Y)


def _pair_quads(U: np.ndarray, pw: _Powers, terms, pairs=None) -> np.ndarray:
    """[sum over (s, p, q) in ``terms`` of s (u_j o x_k)' (base^p o z^q) (u_j o x_k)]_{j,k} (powers entrywise;
    base = c + gamma X_I X_I', z = X_F X_F'). Each base^p o z^q is a Gram matrix Phi Phi': Phi the row-wise
    Kronecker product of the symmetric tensor powers (:func:`_symmetric_power`) of [sqrt(c), sqrt(gamma) X_I] to p
    and of X_F to q, so the entry is
    sum_Phi sum_col ((u_j o phi_col)' x_k)^2, O(columns x m |F|) per j when the columns are fewer than the m rows;
    else O(m^2 |F|^2) with the matrix itself. ``pairs``: the (j, k) wanted only (two index arrays: then the
    vector over them is returned; the Kronecker route computes the rows j of ``pairs``; a constant W = s 1 1':
    s (1'Y)^2)."""
    Xf = pw.Xf
    m, nf = Xf.shape
    if sum(comb(p + pw.XI.shape[1], p) * comb(q + nf - 1, q) for _, p, q in terms) < m:
        rows = np.arange(nf) if pairs is None else np.unique(pairs[0])
        out = np.zeros((nf, nf))
        for s, p, q in terms:
            factor = _kron_rows(_symmetric_power(pw.phi, p), _symmetric_power(Xf, q))
            products = (_kron_rows(U[:, rows], factor).T @ Xf).reshape(len(rows), -1, nf)     # [j, column, k]
            out[rows] += s * np.square(products).sum(axis=1)
        return out if pairs is None else out[pairs]
    W = pw.term(*terms[0])
    for s, p, q in terms[1:]:
        W = W + pw.term(s, p, q)
    if pairs is None:
        return _quads(W, _kron_rows(U, Xf)).reshape(nf, nf)     # column (j, k): u_j o x_k
    j, k = pairs
    return _quads(W, U[:, j] * Xf[:, k])


def share_bounds(shares: FixedAlphaShares, order, need: int, enough: float | None = None) -> list:
    """Upper bounds of f(alpha, S) >= g(S) over each child t of the split of (I, F, need) by ``order`` (module
    docstring, partner bound with the exact head): child t takes j = order[t] and R, r = need - 1 features of
    P = order[t+1:]; its bound is f(alpha, I + j) + the r largest over k in P of
    rest_k + Q_kk + 2 Q_jk + P_jk + top_{r-1}{Q_kl : l in P - k} (the pairs (j, k) moved to k's item).

    ``enough``: a value of f (None: every child gets its exact head); the head's pair terms, which cost most, are
    computed only for the children whose bound they could bring to ``enough`` or below, each keeping the smaller of
    its two bounds; the others keep the bound without the exact head (f(alpha, I) + rest_j + Q_jj + the same items
    without P_jk: the partner bound). That is a child whose partner bound is already at most ``enough``, and a child
    whose headed bound cannot reach it: P_jk >= 0 (quadratic forms of PSD matrices), so the headed bound is at
    least f(alpha, I + j) + the r largest items without P_jk, which the partner bound's sums give for free. Whether a
    child is at most ``enough`` is thus the same as with every head. (German poly5 fit B = 6: the partner bound
    settles 5,878 of 9,075 children against the optimum, the head 121 more. In a search there, the head could reach
    the threshold for 136 of the 3,398 children the partner bound left and did for 109; skipping the other heads
    left the same tree there, on Ionosphere poly5 fit B = 5 and on Cleveland poly3 / poly5 fit B = 6, where 70 of 72
    heads are skipped; one process alternating the two rules: Cleveland poly5 1.2x less CPU, Parkinsons poly5 fit
    B = 6 1.25x with one QP more, German and Ionosphere within the runs' noise.)"""
    _check_pairs(shares, need)
    o = shares.index(order)
    alone = shares.alone[o]
    n = len(order) - need + 1                          # the children
    if need == 1:
        return (shares.f_fixed + alone[:n]).tolist()
    r = need - 1
    Q = shares.Q[np.ix_(o, o)]
    own = shares.rest[o] + np.diagonal(Q)
    items = partner_items(own, Q, r)                   # child t's items over P = order[t+1:], before P_jk
    sums = top_sums(items, r, np.arange(n))
    bounds = shares.f_fixed + own[:n] + sums
    floor = shares.f_fixed + alone[:n] + sums          # the headed bound is at least this (P_jk >= 0)
    rows = [t for t in range(n) if enough is None or bounds[t] > enough >= floor[t]]
    if rows:
        headed = shares.f_fixed + alone[rows] + top_sums(items + shares.head(order, rows), r, rows)
        bounds[rows] = np.minimum(bounds[rows], headed)
    return bounds.tolist()
