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
def _gram_product(A, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out = (gamma A A' + coef0) ** degree, one pass over the upper triangle, mirrored."""
    m, B = A.shape
    for a in range(m):
        for b in range(a, m):
            s = 0.0
            for j in range(B):
                s += A[a, j] * A[b, j]
            t = gamma * s + coef0
            r = t
            for _ in range(degree - 1):
                r *= t
            out[a, b] = r
            out[b, a] = r


@njit(cache=True, nogil=True)
def _gram_sqdist(A, gamma, out):  # pragma: no cover - compiled
    """out = exp(-gamma ||a_a - a_b||^2), one pass over the upper triangle, mirrored."""
    m, B = A.shape
    for a in range(m):
        out[a, a] = 1.0
        for b in range(a + 1, m):
            s = 0.0
            for j in range(B):
                d = A[a, j] - A[b, j]
                s += d * d
            r = np.exp(-gamma * s)
            out[a, b] = r
            out[b, a] = r


@njit(cache=True, nogil=True)
def _poly_apply(base, gamma, coef0, degree, out):  # pragma: no cover - compiled
    """out = (gamma * base + coef0) ** degree elementwise (flat arrays), by repeated multiplication."""
    for a in range(base.shape[0]):
        t = gamma * base[a] + coef0
        r = t
        for _ in range(degree - 1):
            r *= t
        out[a] = r


# Neighbour fills (K' and the warm gradient of a swap, alpha/neighbours.py): full rows, written in
# order: measured 1.5-2x faster than the upper triangle with mirrored writes (strided column stores, and the scattered gradient updates keep the loop from vectorising), except
# where an exp per entry dominates (_fill_rbf).
# fastmath lets LLVM reassociate the row sums and fuse multiply-adds (differences of a few ulps):
# grad is a warm-start gradient, and the value of every fit is recomputed by the one objective.


@njit(cache=True, nogil=True, fastmath=True)
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


@njit(cache=True, nogil=True)
def _fill_rbf(base, x_out, x_in, gamma, y, ay, K, grad):  # pragma: no cover - compiled
    """K = exp(-gamma (base - d_out + d_in)) and grad = y * (K ay) - 1, one pass over the upper
    triangle (the exp dominates: half of them beats contiguous writes here)."""
    m = base.shape[0]
    acc = np.zeros(m)
    for a in range(m):
        ia, oa, ca = x_in[a], x_out[a], ay[a]
        K[a, a] = 1.0
        row = ca
        for b in range(a + 1, m):
            di = ia - x_in[b]
            do = oa - x_out[b]
            r = np.exp(-gamma * (base[a, b] - do * do + di * di))
            K[a, b] = r
            K[b, a] = r
            row += r * ay[b]
            acc[b] += r * ca
        acc[a] += row
    for t in range(m):
        grad[t] = y[t] * acc[t] - 1.0


class Kernel(ABC):
    """A masked kernel ``phi(sum_j beta_j t_j)``; subclasses give ``t_j``, ``phi`` and its derivatives.

    Everything kernel-specific lives on the subclass: the terms and phi (``feature_term``, ``base``,
    ``apply``), phi' and phi'' (``derivative``, ``second_derivative``: the relaxation's gradient and
    exact Hessian, :mod:`minlp_fs.solvers.nlp`), the symbolic form for model writers (``affine``,
    ``outer``, ``magnitude``, ``monomials``: :mod:`minlp_fs.models`), and the hooks of the swap-neighbour
    tables (``multiplicative``, ``fill_neighbour``: :mod:`minlp_fs.alpha.neighbours`). A new kernel is
    one subclass here (plus its name in :func:`make_kernel`).
    """

    #: name used on the command line and in results
    name: str
    #: True when, at fixed alpha, the beta-subproblem (5) is a monotone submodular maximisation
    submodular: bool
    #: True when phi(s + t) = phi(s) phi(t): a swap's Gram is then an elementwise product of a
    #: "centre without j_out" matrix and a per-feature table phi(T_j_in) (alpha/neighbours.py)
    multiplicative: bool

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

    @abstractmethod
    def params(self) -> dict:
        """The kernel's parameters as a JSON-ready dict (with its name)."""


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

    def params(self):
        return {"name": self.name, "degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


@dataclass(frozen=True)
class GaussianKernel(Kernel):
    """exp(-gamma ||x - z||^2_beta); F is neither sub- nor supermodular (appendix counterexample)."""

    gamma: float = 0.1
    submodular = False
    multiplicative = True
    name = "rbf"
    _fused_swap = staticmethod(_swap_sqdiff)

    def feature_term(self, X, j, Z=None):
        z = X[:, j] if Z is None else Z[:, j]
        return np.subtract.outer(X[:, j], z) ** 2

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
        out = np.multiply(base, -self.gamma, out=out)
        return np.exp(out, out=out)

    def derivative(self, base):
        return -self.gamma * np.exp(-self.gamma * base)

    def second_derivative(self, base):
        return self.gamma ** 2 * np.exp(-self.gamma * base)

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

    def params(self):
        return {"name": self.name, "gamma": self.gamma}


DEFAULT_GAMMA = 0.1
DEFAULT_COEF0 = 1.0
KERNEL_NAMES = ("poly2", "poly3", "poly5", "rbf")


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def make_kernel(kernel: "str | Kernel" = "poly2", gamma: float | None = None,
                coef0: float | None = None, degree: int | None = None) -> Kernel:
    """A kernel from its command-line name (``poly<d>`` or ``rbf``) with optional overrides.

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
        d = degree if degree is not None else int(match.group(1) or 2)
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
