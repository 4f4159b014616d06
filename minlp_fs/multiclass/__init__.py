"""Multiclass DFS-SVM: one feature subset shared by K >= 3 one-vs-rest SVMs.

With classes 1..K and the one-vs-rest labels y^k (y^k_i = +1 when row i is of class k, else -1), the
value of a subset S (beta) is the sum of the K binary SVM duals (3),

    g(S) = sum_k g_k(S),   g_k(S) = min_{alpha_k in Delta_k} f(alpha_k, S),
    f(alpha_k, S) = 1/2 alpha_k' Q^k_S alpha_k - e'alpha_k,   Q^k_S = (y^k y^k') o K_S,
    Delta_k = {alpha_k : y^k' alpha_k = 0, 0 <= alpha_k <= C},

and problem (4) becomes min (paper sense; max in the fit sense) of g(S) over |S| = B. Given S the
problem is separable: stacking A = (alpha_1, ..., alpha_K), its Hessian is block-diagonal (one block
Q^k_S per class, all built from the one Gram K_S), with one equality constraint per class, so

    f(A, S) = sum_k f(alpha_k, S)   and   g(S) = min_A f(A, S) = sum_k g_k(S).

Every property the methods use survives the sum, term by term:

* monotonicity in S for polynomial kernels with c >= 0 (each g_k is monotone, so is their sum): the
  probe bound of bnb (:mod:`minlp_fs.exact.bounds`);
* at a fixed stack A, F(S) = sum_k alpha_k' Q^k_S alpha_k is supermodular and nondecreasing
  (Proposition 1 for each term; a sum of supermodular functions is supermodular): the greedy
  beta-step (problem (10)) and bnb's fixed-alpha bounds (pair and degree shares);
* g(S) <= f(A, S) for any feasible stack A (each g_k is a minimum): screening by f at a fixed A;
* the trivial bound (Remark 1): g(S) >= sum_k -2C min(|I+_k|, |I-_k|); a value at this sum has every
  one-vs-rest machine at its own bound (each g_k is >= its bound), so it is degenerate, and optimal in
  the paper sense.

Two classes are not a special case of this module: they give the one binary machine of
:class:`~minlp_fs.binary.Instance` (K = 2 would give two mirror machines, alpha_1 = alpha_2).

Design: a :class:`MulticlassInstance` (``make_instance`` builds it for K >= 3 labels) plugs into the
interfaces every method already goes through, so no method knows about classes:

* the alpha-subproblem oracle (``AlphaSubproblem(instance)`` gives a
  :class:`~minlp_fs.multiclass.oracle.MulticlassSubproblem`): ``solve`` -> Fit whose value is g(S)
  and whose alpha is the K x m stack A;
* the fixed-alpha evaluations (``FixedAlpha(instance, A)`` gives a
  :class:`~minlp_fs.multiclass.screening.StackedFixedAlpha`): value, addition, removal and swap
  values of f(A, S);
* the instance's ``trivial_bound``, ``is_degenerate``, ``proves_optimal``, ``objective`` and
  ``gram_objective`` (the sum, by :func:`minlp_fs.objective.stacked_objective`).

Its ``y`` raises "binary only": code that needs binary labels (the MINLP model export, the general
solvers, solution-file evaluation, certificates) refuses a multiclass instance with a clear error
(:func:`binary_only`) instead of computing something else.
"""
from .instance import MulticlassInstance, binary_only, machines

__all__ = ["MulticlassInstance", "binary_only", "machines"]
