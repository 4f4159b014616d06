"""f(alpha_bar, beta) at a fixed alpha: the cheap screening score of LS*, ACSO and RFE1.

With alpha fixed, only the support rows sv = {i : alpha_i > 0} enter f, and

    f(alpha_bar, S) = 1/2 v' phi( sum_{j in S} T_j[sv, sv] ) v - e'alpha_bar,   v = alpha_bar * y

(problem (5) plus the constant -e'alpha_bar). This is F(S)/2 - e'alpha_bar with F of section 4.2.
Single values, removal and addition scores are computed by :func:`minlp_fs.objective.dual_objective`
on the support-restricted arrays (one base matrix of the current subset, updated per candidate in
O(|sv|^2)), or, for a polynomial kernel where a cost model says it is cheaper (small subsets of a
large support), from the subset's monomials (:func:`poly_half_quad`). The B(n-B) swap scores of N1
come in one batch from :func:`swap_matrix`, which regroups the same quadratic forms by the kernel's
structure (binomial expansion for the polynomial kernel, per-feature factors for the Gaussian)
instead of building a kernel matrix per swap. Both agree with the direct computation to rounding
(1e-10 of the quadratic form's scale, tested).

Every evaluation is counted by :meth:`FixedAlpha._count`, which checks the ``deadline`` (a
:class:`~minlp_fs.stopping.Deadline`) every :data:`CHECK_EVERY` evaluations (and a batch of swaps
before it starts), so one screening pass or greedy elimination over 10^5 features stops soon after a
time limit (``SearchStopped``).
"""
from __future__ import annotations

import weakref
from math import comb

import numpy as np

from ..kernels import GaussianKernel, PolynomialKernel
from ..objective import dual_objective

#: evaluations between two checks of the deadline
CHECK_EVERY = 256


class FixedAlpha:
    """Evaluate f(alpha_bar, S) for many subsets S at one fixed alpha_bar (within ``deadline``)."""

    def __new__(cls, instance, *args, **kwargs):
        """For a multiclass instance, :class:`~minlp_fs.multiclass.screening.StackedFixedAlpha` (f at a
        fixed stack of alphas, one per class), so no method needs to know about classes."""
        if cls is FixedAlpha and getattr(instance, "n_classes", 2) > 2:
            from ..multiclass.screening import StackedFixedAlpha
            cls = StackedFixedAlpha
        return super().__new__(cls)

    def __init__(self, instance, alpha: np.ndarray, deadline=None):
        self.instance = instance
        self.deadline = deadline
        self.n_evals = 0
        self.alpha = np.asarray(alpha, dtype=float)
        self.sv = np.flatnonzero(self.alpha > 0)
        self.X = instance.X[self.sv]
        self.y = instance.y[self.sv]
        self.a = self.alpha[self.sv]
        self.kernel = instance.kernel
        self.v = self.a * self.y
        self.a_sum = float(self.a.sum())
        self._terms: dict[int, np.ndarray] = {}

    def term(self, j: int) -> np.ndarray:
        """T_j restricted to the support (cached)."""
        t = self._terms.get(j)
        if t is None:
            t = self._terms[j] = self.kernel.feature_term(self.X, j)
        return t

    def base(self, subset) -> np.ndarray:
        return self.kernel.base(self.X, list(subset))

    def _count(self, evaluations: int = 1) -> None:
        """Count evaluations; check the deadline each time the count passes a multiple of CHECK_EVERY."""
        before = self.n_evals
        self.n_evals += evaluations
        if self.deadline is not None and self.n_evals // CHECK_EVERY > before // CHECK_EVERY:
            self.deadline.check()

    def value_of_base(self, base: np.ndarray, out: np.ndarray | None = None) -> float:
        """f(alpha_bar, S) for the base matrix of S; ``out`` is a scratch buffer of its shape."""
        self._count()
        return dual_objective(self.a, self.kernel.apply(base, out=out), self.y)

    def _addition_values(self, base: np.ndarray, candidates) -> dict:
        """{j: f(alpha_bar, base + T_j)} reusing two scratch buffers (no allocation per j)."""
        moved, gram = np.empty_like(base), np.empty_like(base)
        values = {}
        for j in candidates:
            np.add(base, self.term(j), out=moved)
            values[j] = self.value_of_base(moved, out=gram)
        return values

    def value(self, subset) -> float:
        """f(alpha_bar, subset); by :func:`poly_half_quad` (no kernel matrix) where that is cheaper."""
        subset = list(subset)
        if self._by_monomials(len(subset)):
            self._count()
            return poly_half_quad(self.kernel, self.X[:, subset], self.v) - self.a_sum
        return self.value_of_base(self.base(subset))

    def removal_value(self, kept, base: np.ndarray, j: int) -> float:
        """f(alpha_bar, kept - {j}) given the base matrix of ``kept`` (used where it is cheaper)."""
        if self._by_monomials(len(kept) - 1):
            self._count()
            return poly_half_quad(self.kernel, self.X[:, [e for e in kept if e != j]], self.v) - self.a_sum
        return self.value_of_base(base - self.term(j))

    def _by_monomials(self, size: int) -> bool:
        """A polynomial kernel's value of a ``size``-subset is cheaper from its C(size + d, d) monomials
        (measured ~10 ns per monomial and support row, plus ~8 us of interpreter work per degree and
        column) than from the kernel matrix (~0.1 ns per flop of the m^2 size product in BLAS, ~2 ns per
        entry and degree for phi, ~1 ns per entry for the quadratic form): nanoseconds on one core."""
        k = self.kernel
        if not isinstance(k, PolynomialKernel) or size == 0:
            return False
        m, d = self.a.size, k.degree
        return 10 * m * comb(size + d, d) + 8000 * d * size < m * m * (0.1 * size + 2 * d + 1)

    def removal_values(self, subset) -> dict:
        """{j: f(alpha_bar, subset - {j})} for every j in subset (the branch-and-bound's marginal gains)."""
        subset = list(subset)
        base = self.base(subset)
        return {j: self.removal_value(subset, base, j) for j in subset}

    def addition_values(self, subset, candidates) -> dict:
        """{j: f(alpha_bar, subset + {j})} for every candidate j (the branch-and-bound's marginal gains)."""
        return self._addition_values(self.base(subset), candidates)

    def swap_values(self, subset) -> dict:
        """{(j_out, j_in): f(alpha_bar, subset - j_out + j_in)} over the neighbourhood N1 (B(n-B) swaps).

        All B(n-B) values at once by :func:`swap_matrix` (no kernel matrix per swap); keys in the
        order (j_out, j_in) ascending. Gaussian kernel with a large support: the same sums over every
        row with v = 0 off the support, against the instance's E_j computed once (:func:`_instance_factors`).
        """
        chosen_set = set(subset)
        chosen = sorted(chosen_set)
        outside = [j for j in range(self.instance.n) if j not in chosen_set]
        factors = _instance_factors(self.instance, len(chosen), self.sv.size)
        if factors is not None:  # every row, v = 0 off the support, the instance's E_j
            v = np.zeros(self.instance.m)
            v[self.sv] = self.v
            table = np.empty((len(chosen), len(outside)))
            _gaussian_swaps(self.kernel, self.instance.X, v, chosen, outside, table, factors, tick=self._count)
            table -= self.a_sum
        else:
            table = swap_matrix(self.kernel, self.X, self.v, chosen, outside, tick=self._count) - self.a_sum
        return {(j_out, j_in): float(table[r, c]) for r, j_out in enumerate(chosen)
                for c, j_in in enumerate(outside)}


def poly_half_quad(kernel, A: np.ndarray, v: np.ndarray) -> float:
    """1/2 v' K v for the polynomial kernel K = (gamma A A' + c)^{.d} of the rows of A, from monomials.

    Entrywise (gamma a_h'a_l + c)^d = sum_k binom(d, k) gamma^k c^(d-k) (a_h'a_l)^k, and by the
    multinomial theorem (a_h'a_l)^k = sum_{|mu| = k} (k!/mu!) a_h^mu a_l^mu over the monomials
    a^mu = prod_f a_f^mu_f of degree k in the B columns. So

        v' K v = sum_{k=0}^{d} binom(d, k) gamma^k c^(d-k) sum_{|mu| = k} (k!/mu!) (sum_h v_h a_h^mu)^2:

    O(m C(B + d, d)) work for the C(B + d, d) monomials instead of O(m^2 (B + d)) for the kernel
    matrix and its quadratic form. The monomials of degree k are those of degree k - 1 times a
    column f >= their last column (so each appears once, ordered by last column); the weight k!/mu!
    is the parent's times k / mu_f.
    """
    g, c, d = kernel.gamma, kernel.coef0, kernel.degree
    At = np.ascontiguousarray(np.asarray(A, dtype=float).T)  # columns as contiguous rows
    Z = np.asarray(v, dtype=float)[None, :]  # rows v o a^mu of the current degree
    last = np.full(1, -1)  # each monomial's last column (-1: the empty monomial)
    mult = np.zeros(1)  # that column's exponent
    weight = np.ones(1)  # k!/mu!
    total = c ** d * float(Z.sum()) ** 2
    for k in range(1, d + 1):
        blocks, lasts, mults, weights = [], [], [], []
        for f in range(At.shape[0]):
            n_keep = int(np.searchsorted(last, f, side="right"))  # last is sorted: a prefix
            e = np.where(last[:n_keep] == f, mult[:n_keep] + 1.0, 1.0)
            blocks.append(Z[:n_keep] * At[f])
            lasts.append(np.full(n_keep, f))
            mults.append(e)
            weights.append(weight[:n_keep] * (k / e))
        Z, last = np.concatenate(blocks), np.concatenate(lasts)
        mult, weight = np.concatenate(mults), np.concatenate(weights)
        sums = Z.sum(axis=1)
        total += comb(d, k) * g ** k * c ** (d - k) * float(weight @ (sums * sums))
    return 0.5 * total


#: upper bound on the elements of one temporary block of the Gaussian batch (32 MB of doubles)
_BLOCK = 1 << 22


def swap_matrix(kernel, X: np.ndarray, v: np.ndarray, chosen, outside, tick=None) -> np.ndarray:
    """Q[r, c] = 1/2 v' K_{S - i + j} v for i = chosen[r], j = outside[c] (S = chosen), batched.

    ``tick(k)``, if given, is called after each block of rows with the k values it computed (the
    caller's evaluation count and deadline check: :meth:`FixedAlpha._count`).

    Notation as above: rows of X and v = alpha_bar * y are the support's; the base of S is
    A_S = sum_{f in S} T_f, and K_S = phi(A_S). A swap changes the base by -T_i + T_j.

    **Polynomial kernel**, phi(s) = (gamma s + c)^d, T_j = x_j x_j'. With P_i = gamma (A_S - T_i) + c 1 1'
    (the masked, shifted inner products of S - i), entrywise by the binomial theorem

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

    **Gaussian kernel**, phi(s) = exp(-gamma s), T_j = [(x_hj - x_lj)^2]_{hl}. With E_j = exp(-gamma T_j)
    entrywise, K_{S-i+j} = exp(-gamma (A_S - T_i)) o E_j = K_{S-i} o E_j, so

        v' K_{S-i+j} v = sum_{h,l} N_i[h, l] E_j[h, l],   N_i = K_{S-i} o v v',

    an inner product of two m x m matrices: one matrix product N (B x m^2) by E' (m^2 x (n-B)) gives
    them all. Cost: O(B (n-B) m^2) flops in BLAS and B + (n-B) exponentials of m x m matrices,
    instead of B (n-B) of them; built by broadcasting (contiguous, no index gathers) in blocks of
    at most ``_BLOCK`` elements.
    """
    X = np.asarray(X, dtype=float)
    v = np.asarray(v, dtype=float)
    chosen, outside = list(chosen), list(outside)
    out = np.empty((len(chosen), len(outside)))
    if not out.size or not v.size:  # no swap, or alpha_bar = 0: every quadratic form is 0
        out[...] = 0.0
        return out
    tick = tick or (lambda k: None)
    if isinstance(kernel, PolynomialKernel):
        _poly_swaps(kernel, X, v, chosen, outside, out, tick)
    elif isinstance(kernel, GaussianKernel):
        _gaussian_swaps(kernel, X, v, chosen, outside, out, tick=tick)
    else:  # any other kernel: one kernel matrix per swap, base - T_i + T_j
        base = kernel.base(X, chosen)
        for r, i in enumerate(chosen):
            without = base - kernel.feature_term(X, i)
            for c, j in enumerate(outside):
                out[r, c] = 0.5 * v @ kernel.apply(without + kernel.feature_term(X, j)) @ v
            tick(len(outside))
    return out


def _poly_swaps(kernel, X, v, chosen, outside, out, tick) -> None:
    """The polynomial case of :func:`swap_matrix` (binomial expansion in the added column)."""
    g, c, d = kernel.gamma, kernel.coef0, kernel.degree
    base = kernel.base(X, chosen)
    Xo = X[:, outside]
    W = [None] + [np.ascontiguousarray(Xo ** k * v[:, None]) for k in range(1, d + 1)]
    coef = [comb(d, k) * g ** k for k in range(d + 1)]
    last = coef[d] * W[d].sum(axis=0) ** 2  # k = d: P_i^0 = 1 1'
    for r, i in enumerate(chosen):
        P = base - np.multiply.outer(X[:, i], X[:, i])
        P *= g
        P += c
        powers = [None, P]  # powers[e] = P_i^{.e}, e = 1..d
        for _ in range(2, d + 1):
            powers.append(powers[-1] * P)
        row = np.full(len(outside), 0.5 * coef[0] * (v @ powers[d] @ v))
        for k in range(1, d):
            W_k = W[k]
            row += 0.5 * coef[k] * np.einsum("hj,hj->j", W_k, powers[d - k] @ W_k)
        row += 0.5 * last
        out[r] = row
        tick(len(outside))


#: instance -> its Gaussian factors E_j = exp(-gamma T_j) of every feature on every row (n x m^2)
_FACTORS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _instance_factors(instance, B: int, n_support: int):
    """The instance's E_j (computed once, kept while the instance lives) when reusing them is cheaper
    than building E_j on the support: a Gaussian kernel, n m^2 within ``_BLOCK`` and, by a cost count
    of exponentials and products, a support large against m (paper-sense alphas); else None."""
    m, n = instance.m, instance.n
    if not isinstance(instance.kernel, GaussianKernel) or n * m * m > _BLOCK \
            or n * n_support ** 2 <= B * m * m * (1 + 0.07 * n):
        return None
    E = _FACTORS.get(instance)
    if E is None:
        Xt = np.ascontiguousarray(instance.X.T)
        E = (Xt[:, :, None] - Xt[:, None, :]).reshape(n, m * m)
        E *= E
        E *= -instance.kernel.gamma
        np.exp(E, out=E)
        _FACTORS[instance] = E
    return E


def _gaussian_swaps(kernel, X, v, chosen, outside, out, all_factors=None, tick=lambda k: None) -> None:
    """The Gaussian case of :func:`swap_matrix` (per-feature factors E_j). ``all_factors``: E_j of every
    column of X (n x m^2) if known; then one product with all of them, the outside columns kept."""
    g = kernel.gamma
    m = X.shape[0]
    vv = np.multiply.outer(v, v).reshape(-1)
    Xc, Xo = np.ascontiguousarray(X[:, chosen].T), np.ascontiguousarray(X[:, outside].T)

    def factors(rows):
        """[(x_hf - x_lf)^2]_{hl} flattened, one row per feature f of ``rows`` (broadcast, no gathers)."""
        D = (rows[:, :, None] - rows[:, None, :]).reshape(rows.shape[0], m * m)
        D *= D
        return D

    per = max(1, _BLOCK // (m * m))
    base = np.zeros(m * m)
    for lo in range(0, len(chosen), per):
        base += factors(Xc[lo:lo + per]).sum(axis=0)
    for lo in range(0, len(chosen), per):
        N = factors(Xc[lo:lo + per])
        N -= base
        N *= g
        np.exp(N, out=N)  # K_{S-i}, one row per i
        N *= vv
        if all_factors is not None:
            out[lo:lo + per] = 0.5 * (N @ all_factors.T)[:, outside]
            tick(N.shape[0] * len(outside))
            continue
        for lo_j in range(0, len(outside), per):
            E = factors(Xo[lo_j:lo_j + per])
            E *= -g
            np.exp(E, out=E)
            out[lo:lo + per, lo_j:lo_j + per] = 0.5 * (N @ E.T)
            tick(N.shape[0] * E.shape[0])
