"""Quadratic forms of the polynomial kernel at a fixed alpha from monomials (the multinomial expansion).

For K_T = (gamma X_T X_T' + c)^{.d} (entrywise power) and v = alpha_bar * y, the binomial and multinomial
theorems give, entry by entry, (gamma x_a'x_b + c)^d = sum_k binom(d, k) gamma^k c^(d-k) sum_{|mu| = k}
(k!/mu!) x_a^mu x_b^mu over the monomials x^mu = prod_f x_f^mu_f of degree k in the features T, so

    v' K_T v = sum_{k=0}^{d} coef_k sum_{|mu| = k, supp mu in T} (k!/mu!) M_mu^2,
    coef_k = binom(d, k) gamma^k c^(d-k),    M_mu = sum_a v_a x_a^mu                    (the moments)

(the k = 0 term is c^d (sum_a v_a)^2). A value costs O(m) per monomial instead of O(m^2) for a kernel
matrix, and with c >= 0 every term is nonnegative, so the outer sum has no cancellation (the moments
have the signs of v, as the direct quadratic form's terms do). :class:`~minlp_fs.kernels.PolynomialKernel`
takes this route where a count of operations says it is cheaper (:func:`swap_costs` for the swap table,
:meth:`MomentTable.cheaper` for the greedy's removals, :meth:`MomentTable.cheaper_for_subsets` for batches of
subsets, ``PolynomialKernel.by_monomials`` for one subset's own monomials).

The monomials of degree k of a set of B features are its nondecreasing index tuples of length k, visited
in lexicographic order with the prefix products Z[p] = v o x_{idx_0} o ... o x_{idx_{p-1}} kept, so each
new monomial costs one product of length m (on average little more).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .fastmath import FASTMATH


@njit(cache=True, nogil=True)
def _factorials(d):  # pragma: no cover - compiled
    fact = np.ones(d + 1)
    for k in range(1, d + 1):
        fact[k] = fact[k - 1] * k
    return fact


@njit(cache=True, nogil=True)
def _multiplicity_factorial(idx, k, fact):  # pragma: no cover - compiled
    """mu! = prod_f mu_f! for the monomial of the nondecreasing tuple idx[:k]."""
    out, run = 1.0, 1
    for p in range(1, k):
        if idx[p] == idx[p - 1]:
            run += 1
        else:
            out *= fact[run]
            run = 1
    return out * fact[run] if k > 0 else 1.0


@njit(cache=True, nogil=True)
def _next_tuple(idx, k, size):  # pragma: no cover - compiled
    """Advance the nondecreasing tuple idx[:k] over 0..size-1 lexicographically; the first position that
    changed, or -1 after the last tuple."""
    p = k - 1
    while p >= 0 and idx[p] == size - 1:
        p -= 1
    if p < 0:
        return -1
    idx[p] += 1
    for q in range(p + 1, k):
        idx[q] = idx[p]
    return p


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def poly_monomial_quads(X, v, subsets, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[t] = 1/2 v' K v for K = (gamma A A' + c)^{.d}, A = X[:, subsets[t]]: the module's expansion,
    O(m C(s + d, d)) per subset of size s instead of O(m^2 (s + d)) (fastmath: the sums are reassociated,
    a difference of rounding only)."""
    m, n_sub, size = X.shape[0], subsets.shape[0], subsets.shape[1]
    Z = np.empty((degree + 1, m))
    idx = np.zeros(degree, dtype=np.int64)
    fact = _factorials(degree)
    for t in range(n_sub):
        A = _columns_of(X, subsets[t])
        v_sum = 0.0
        for a in range(m):
            Z[0, a] = v[a]
            v_sum += v[a]
        total = coef0 ** degree * v_sum * v_sum
        for k in range(1, degree + 1):
            for p in range(k):
                idx[p] = 0
            for p in range(k - 1):
                for a in range(m):
                    Z[p + 1, a] = Z[p, a] * A[idx[p], a]
            acc = 0.0
            while True:
                s, last = 0.0, idx[k - 1]
                for a in range(m):
                    s += Z[k - 1, a] * A[last, a]
                weight, run = fact[k], 1
                for p in range(1, k):
                    if idx[p] == idx[p - 1]:
                        run += 1
                    else:
                        weight /= fact[run]
                        run = 1
                weight /= fact[run]
                acc += weight * s * s
                p = _next_tuple(idx, k, size)
                if p < 0:
                    break
                for q in range(p, k - 1):
                    for a in range(m):
                        Z[q + 1, a] = Z[q, a] * A[idx[q], a]
            binom = fact[degree] / (fact[k] * fact[degree - k])
            total += binom * gamma ** k * coef0 ** (degree - k) * acc
        out[t] = 0.5 * total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _prefixes(Z, A, idx, first, k):  # pragma: no cover - compiled
    """Z[e + 1] = Z[e] o A[idx[e]] for e = first..k-1: the prefix products after idx changed at ``first``."""
    m = Z.shape[1]
    for e in range(first, k):
        for a in range(m):
            Z[e + 1, a] = Z[e, a] * A[idx[e], a]


@njit(cache=True, nogil=True)
def _add_to_others(V, idx, k, within, term):  # pragma: no cover - compiled
    """V[r] += term for every r not among idx[:k]: the sets S - r that keep the monomial idx[:k] (``within``:
    all False, scratch)."""
    for p in range(k):
        within[idx[p]] = True
    for r in range(V.shape[0]):
        if not within[r]:
            V[r] += term
    for p in range(k):
        within[idx[p]] = False


@njit(cache=True, nogil=True)
def _coefficients(gamma, coef0, d, fact):  # pragma: no cover - compiled
    """coef_k = binom(d, k) gamma^k c^(d-k), k = 0..d."""
    coef = np.empty(d + 1)
    for k in range(d + 1):
        coef[k] = fact[d] / (fact[k] * fact[d - k]) * gamma ** k * coef0 ** (d - k)
    return coef


@njit(cache=True, nogil=True)
def _columns_of(X, cols):  # pragma: no cover - compiled
    """The columns ``cols`` of X as rows (contiguous)."""
    A = np.empty((cols.size, X.shape[0]))
    for r in range(cols.size):
        for a in range(X.shape[0]):
            A[r, a] = X[a, cols[r]]
    return A


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def poly_monomial_additions(X, v, chosen, outside, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[r, c] = q(S - i + j) - q(S - i) for i = chosen[r], j = outside[c], S = chosen (q = 1/2 v' K v): the
    swap table less the removals (:meth:`MomentTable.removals` of S), from the monomials that contain j.

    The monomials of S - i + j are those of S - i and those containing j, mu = t e_j + nu with t >= 1 and
    nu a monomial of S - i of degree <= d - t, for which |mu|!/mu! = (|nu| + t)!/(t! nu!). So

        q(S - i + j) - q(S - i) = 1/2 sum_{nu in S - i, |nu| < d} sum_{t=1}^{d-|nu|}
                                  coef_{|nu|+t} ((|nu| + t)!/(t! nu!)) M_{nu + t e_j}^2,

    with M_{nu + t e_j} = sum_a (v o x^nu)_a x_aj^t: one pass over the rows per monomial nu of S of degree
    < d gives them for every j and t at once. Work: O(m (n - B) sum_{k<d} C(B + k - 1, k) (d - k)) plus
    B (n - B) C(B + d - 1, d - 1) additions, against O(B (n - B) d m^2) for the binomial expansion in the
    added column (``PolynomialKernel.swap_quads``); nonnegative terms when c >= 0."""
    m, B, q, d = X.shape[0], chosen.size, outside.size, degree
    A = _columns_of(X, chosen)
    powers = np.empty((d + 1, q, m))  # powers[t, c] = x_{outside[c]}^t over the rows
    for c in range(q):
        for a in range(m):
            x, p = X[a, outside[c]], 1.0
            for t in range(1, d + 1):
                p *= x
                powers[t, c, a] = p
    fact = _factorials(d)
    coef = _coefficients(gamma, coef0, d, fact)
    J = np.zeros((B, q))
    Z = np.empty((d + 1, m))
    idx = np.zeros(d + 1, dtype=np.int64)
    within = np.zeros(B, dtype=np.bool_)
    moments = np.empty((d + 1, q))
    row = np.empty(q)
    Z[0] = v
    for k in range(d if B else 1):  # the monomials nu of S of degree k < d, Z[k] = v o x^nu
        idx[:k] = 0
        _prefixes(Z, A, idx, 0, k)
        while True:
            top = d - k
            for t in range(1, top + 1):
                for c in range(q):
                    s, column = 0.0, powers[t, c]
                    for a in range(m):
                        s += Z[k, a] * column[a]
                    moments[t, c] = s
            nu_fact = _multiplicity_factorial(idx, k, fact)
            row[:] = 0.0
            for t in range(1, top + 1):
                w = coef[k + t] * fact[k + t] / (fact[t] * nu_fact)
                for c in range(q):
                    row[c] += w * moments[t, c] * moments[t, c]
            for p in range(k):
                within[idx[p]] = True
            for r in range(B):
                if not within[r]:
                    for c in range(q):
                        J[r, c] += row[c]
            for p in range(k):
                within[idx[p]] = False
            p = _next_tuple(idx, k, B) if k > 0 else -1
            if p < 0:
                break
            _prefixes(Z, A, idx, p, k)
    for r in range(B):
        for c in range(q):
            out[r, c] = 0.5 * J[r, c]


@njit(cache=True, nogil=True)
def _rank(features, k, g, binom):  # pragma: no cover - compiled
    """Index of the monomial of the nondecreasing tuple ``features[:k]`` (over g features) in a moment table:
    the C(g + k - 1, k - 1) monomials of degree < k first, then the colex rank of the combination
    (features[p] + p)_p, sum_p C(features[p] + p, p + 1)."""
    r = binom[g + k - 1, k - 1] if k > 0 else 0
    for p in range(k):
        r += binom[features[p] + p, p + 1]
    return r


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def poly_moment_table(A, v, degree, binom):  # pragma: no cover - compiled
    """M_nu = sum_a v_a x_a^nu for every monomial nu of degree <= d of the g rows of A (the features, as
    rows), at index :func:`_rank`: C(g + d, d) passes over the m entries of v."""
    g, m, d = A.shape[0], A.shape[1], degree
    out = np.empty(binom[g + d, d])
    Z = np.empty((d + 1, m))
    idx = np.zeros(d + 1, dtype=np.int64)
    Z[0] = v
    out[0] = 0.0
    for a in range(m):
        out[0] += v[a]
    for k in range(1, d + 1 if g else 1):
        idx[:k] = 0
        _prefixes(Z, A, idx, 0, k - 1)
        while True:
            s, last = 0.0, idx[k - 1]
            for a in range(m):
                s += Z[k - 1, a] * A[last, a]
            out[_rank(idx, k, g, binom)] = s
            p = _next_tuple(idx, k, g)
            if p < 0:
                break
            _prefixes(Z, A, idx, p, k - 1)
    return out


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _table_sum(moments, binom, g, kept, coef, fact, d, V, within):  # pragma: no cover - compiled
    """sum over the monomials nu of S = kept of coef_|nu| (|nu|!/nu!) M_nu^2 (= 2 q(S)), each term also added to
    V[r] for every r whose removal keeps it when V is not empty (``within``: |S| False, scratch)."""
    s = kept.size
    total = 0.0
    idx = np.zeros(d + 1, dtype=np.int64)
    features = np.zeros(d + 1, dtype=np.int64)
    for k in range(d + 1 if s else 1):
        idx[:k] = 0
        while True:
            for p in range(k):
                features[p] = kept[idx[p]]
            M = moments[_rank(features, k, g, binom)]
            term = coef[k] * fact[k] / _multiplicity_factorial(idx, k, fact) * M * M
            total += term
            if V.size:
                _add_to_others(V, idx, k, within, term)
            if k == 0 or _next_tuple(idx, k, s) < 0:
                break
    return total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def poly_table_removals(moments, binom, g, kept, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[r] = 1/2 v' K_{S - kept[r]} v and out[s] = 1/2 v' K_S v for S = kept (positions among the table's g
    features, increasing, s = |S|), from a moment table (:func:`poly_moment_table`): the expansion of the
    module with every M_nu looked up, O((s + d) C(s + d, d)) and no pass over the rows."""
    s, d = kept.size, degree
    fact = _factorials(d)
    coef = _coefficients(gamma, coef0, d, fact)
    V = np.zeros(s)
    total = _table_sum(moments, binom, g, kept, coef, fact, d, V, np.zeros(s, dtype=np.bool_))
    for r in range(s):
        out[r] = 0.5 * V[r]
    out[s] = 0.5 * total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def poly_table_quads(moments, binom, g, rows, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out[t] = 1/2 v' K_S v for S = rows[t] (positions among the table's g features, increasing), by look-ups:
    O(d C(s + d, d)) per subset of size s, no pass over the rows."""
    fact = _factorials(degree)
    coef = _coefficients(gamma, coef0, degree, fact)
    none, within = np.zeros(0), np.zeros(rows.shape[1], dtype=np.bool_)
    for t in range(rows.shape[0]):
        out[t] = 0.5 * _table_sum(moments, binom, g, rows[t], coef, fact, degree, none, within)


class MomentTable:
    """The moments M_nu of every monomial of degree <= d in the features ``ground`` at one v = alpha_bar * y
    (:func:`poly_moment_table`), from which q(S) = 1/2 v' K_S v of any S in ``ground`` and of its removals
    follow without a pass over the rows: the greedy eliminations at a fixed alpha and the swap table's
    removals (:meth:`removals`), LS*'s N2 samples (:meth:`quads`)."""

    def __init__(self, X: np.ndarray, v: np.ndarray, ground, gamma: float, coef0: float, degree: int):
        self.ground = list(ground)
        self.position = {j: p for p, j in enumerate(self.ground)}
        self.gamma, self.coef0, self.degree = gamma, coef0, degree
        g = len(self.ground)
        self.binom = np.array([[math.comb(a, b) for b in range(degree + 2)] for a in range(g + degree + 1)],
                              dtype=np.int64)
        A = np.ascontiguousarray(np.asarray(X, dtype=float)[:, self.ground].T)
        self.moments = poly_moment_table(A, np.ascontiguousarray(v, dtype=float), degree, self.binom)

    @staticmethod
    def cheaper(m: int, g: int, degree: int) -> bool:
        """The table of g features costs fewer operations than the g removals from a base matrix it replaces
        (one pass over the m x m upper triangle per removal, about d + 2 operations per entry)."""
        return (2 * m + degree) * monomials_up_to(g, degree) <= g * m * m * (degree + 2) / 2

    @staticmethod
    def cheaper_for_subsets(m: int, g: int, k: int, size: int, degree: int) -> bool:
        """The table of the g features that k subsets of ``size`` use, then a look-up per monomial of each
        subset (about d + 2 operations), costs fewer operations than the subsets' own passes over the rows:
        by their monomials (two operations per monomial and row) or by pairs of rows (``size`` + d per pair),
        whichever is cheaper (``PolynomialKernel.by_monomials``). Never for one subset."""
        own = monomials_up_to(size, degree)
        per_subset = m * min(2 * own, m * (size + degree))
        return (2 * m + degree) * monomials_up_to(g, degree) + k * (degree + 2) * own < k * per_subset

    def quads(self, subsets: np.ndarray) -> np.ndarray:
        """[q(S) for S in the rows of ``subsets``] (a k x s array of features of ``ground``, each row increasing)."""
        rows = np.vectorize(self.position.__getitem__, otypes=[np.int64])(subsets) if subsets.size else \
            np.zeros(subsets.shape, dtype=np.int64)
        out = np.empty(subsets.shape[0])
        poly_table_quads(self.moments, self.binom, len(self.ground), np.ascontiguousarray(rows), self.gamma,
                         self.coef0, self.degree, out)
        return out

    def removals(self, kept) -> tuple[float, np.ndarray]:
        """(q(S), [q(S - j) for j in S]) for S = ``kept`` (features of ``ground``, increasing)."""
        positions = np.array([self.position[j] for j in kept], dtype=np.int64)
        out = np.empty(positions.size + 1)
        poly_table_removals(self.moments, self.binom, len(self.ground), positions, self.gamma, self.coef0,
                            self.degree, out)
        return float(out[-1]), out[:-1]


def monomials_of_degree(size: int, degree: int) -> int:
    """C(size + degree - 1, degree): the monomials of degree exactly ``degree`` in ``size`` features."""
    return math.comb(size + degree - 1, degree) if size else int(degree == 0)


def monomials_up_to(size: int, degree: int) -> int:
    """C(size + degree, degree): the monomials of degree <= ``degree`` in ``size`` features."""
    return math.comb(size + degree, degree)


def swap_costs(m: int, B: int, q: int, degree: int) -> tuple[float, float, float]:
    """Operation counts of the two routes to a swap table of B x q values on m rows: (removals, additions per
    outside column) of the monomials (:class:`MomentTable` of S, :func:`poly_monomial_additions`) and
    the binomial expansion's total (``PolynomialKernel.swap_quads``), in units of equal measured time.

    Monomials: per monomial of S two passes over the rows and B additions; per monomial of degree k < d
    and outside column, a pass of d - k multiply-adds over the rows and B additions. Binomial expansion:
    per removed feature about d + 3 passes over an m x m matrix and d - 1 products of m x m by m x q in
    BLAS; measured on one core at 0.1-0.3 ns per counted operation against 0.2-0.5 ns for the monomials'
    (m = 50-1000, B = 4-60, d = 2-5; Sonar poly5 B = 15: 0.13 ns against 0.34 ns), hence its weight 0.4."""
    d = degree
    removals = (2 * m + B) * monomials_up_to(B, d)
    low = sum(monomials_of_degree(B, k) * (d - k) for k in range(d))
    per_column = m * low + B * monomials_up_to(B, d - 1)
    binomial = 0.4 * B * m * m * ((d + 3) + (d - 1) * q)
    return float(removals), float(per_column), float(binomial)
