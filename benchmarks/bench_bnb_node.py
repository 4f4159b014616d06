"""Where a fit-sense node's bound is lost (issue 12): one node of the branch-and-bound tree, every subset solved.

The fit sense maximises g(S) = min_alpha f(alpha, S); bnb bounds a node (I, F, need) by f(alpha, .) at one feasible
alpha (g(S) <= f(alpha, S) for every alpha), namely the relaxed beta's alpha (:func:`minlp_fs.exact.bounds.relaxed_gram`),
and bounds the maximum of f(alpha, .) over each child by the degree shares (:mod:`minlp_fs.exact.shares`). Two gaps
separate that bound from the node's true maximum of g: the choice of one alpha for all the node's subsets (the
exact maximum of f(alpha, .) over the child against its maximum of g) and the share bound's own slack (the share
bound against that exact maximum). This script measures both on one node: I = the first ``--fixed`` features of
LS*'s subset (an optimum where bnb certified one), F = every other feature, need = B - |I|; every subset of the node
is solved (g) and evaluated at the node's relaxed alpha (f), and, per child of bnb's split, at the child's own
relaxed alpha too. A child can be pruned only when its bound is at or below the incumbent (fit: larger is better).

No alpha does better than a floor that the last column computes: min over alpha of max over the child's subsets S of
f(alpha, S) equals max over mixtures lambda (a point of the simplex) of g(sum_S lambda_S K_S) (f is convex in alpha and
linear in lambda: Sion's minimax theorem), the multiple-kernel-learning value of the child's kernels; Frank-Wolfe on
lambda (step 2 / (k + 2) towards the subset whose f at the current alpha is largest) gives mixtures whose g, bounded
from below by weak duality (:func:`minlp_fs.exact.bounds.primal_lower_bound`), is such a floor.

    python benchmarks/bench_bnb_node.py [--dataset ionosphere --kernel poly5 --B 6 --fixed 3] [--children 10]
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from threadpoolctl import threadpool_limits

from minlp_fs import build_instance, solve
from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.exact import tree
from minlp_fs.exact.bounds import fit_split, primal_lower_bound, relaxed_gram
from minlp_fs.heuristics.screening import FixedAlpha

from _common import add_io_args, command, machine, write_section


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="ionosphere")
    ap.add_argument("--kernel", default="poly5")
    ap.add_argument("--B", type=int, default=6)
    ap.add_argument("--fixed", type=int, default=3, help="features of LS*'s subset fixed in at the node")
    ap.add_argument("--children", type=int, default=10, help="children of the split to report")
    ap.add_argument("--mixture-steps", type=int, default=40, help="Frank-Wolfe steps of the no-alpha-below floor")
    add_io_args(ap)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    inst = build_instance(args.dataset, B=args.B, kernel=args.kernel, sense="fit", data_dir=args.data_dir)
    with threadpool_limits(limits=1):
        best = solve(inst, method="ls*", seed=0)
        incumbent = sorted(best.features)
        qp = AlphaSubproblem(inst)
        fixed = incumbent[:args.fixed]
        free = [j for j in range(inst.n) if j not in fixed]
        need = args.B - args.fixed
        relaxed, _ = qp.solve_gram(relaxed_gram(inst, fixed, free, need), None)
        order, bounds = fit_split(inst, relaxed, fixed, free, need)
        subsets = [tuple(sorted(fixed + list(rest))) for rest in itertools.combinations(free, need)]
        g = {S: qp.solve(S).value for S in subsets}
        f = dict(zip(subsets, FixedAlpha(inst, relaxed).values(subsets)))
        rows = []
        for (t, f_in, F), bound in zip(tree.split(fixed, free, need, order), bounds):
            kids = [S for S in g if set(f_in) <= set(S) and set(S) - set(f_in) <= set(F)]
            if not kids or t >= args.children:
                continue
            own, _ = qp.solve_gram(relaxed_gram(inst, list(f_in), list(F), need - 1), None)
            rows.append((t, order[t], len(kids), bound, max(f[S] for S in kids),
                         FixedAlpha(inst, own).values(kids).max(), mixture_floor(inst, qp, kids, own, args.mixture_steps),
                         max(g[S] for S in kids)))
    elapsed = time.perf_counter() - t0
    out = ["## Where a fit-sense node's bound is lost (bench_bnb_node.py)", "",
           f"Command: `{command('bench_bnb_node.py', argv)}` (from the repository root), {elapsed:.0f} s. "
           f"Machine: {machine()}.", "",
           f"{args.dataset} {args.kernel} B = {args.B}, fit sense (larger g is better): LS*'s subset {incumbent}, "
           f"g = {best.objective:.3f} (the incumbent). Node: I = {fixed} fixed in, F = the other {len(free)} features, "
           f"need = {need}: {len(g)} subsets, every one solved. Max of g over the node {max(g.values()):.3f}; "
           f"max of f(alpha_relaxed, .) over the node {max(f.values()):.3f}. A child is pruned when its bound is at or "
           f"below the incumbent {best.objective:.3f} (to 1e-9 relative).", "",
           "| child | feature taken | subsets | share bound (bnb) | exact max f at the node's relaxed alpha "
           f"| exact max f at the child's own relaxed alpha | no alpha below ({args.mixture_steps} mixture steps) "
           "| max g (truth) |", "|---|---|---|---|---|---|---|---|"]
    out += [f"| {t} | {j} | {k} | {b:.1f} | {fr:.1f} | {fo:.1f} | {fl:.1f} | {gt:.1f} |"
            for t, j, k, b, fr, fo, fl, gt in rows]
    below = [sum(r[c] <= best.objective + 1e-9 * abs(best.objective) for r in rows) for c in (3, 4, 5, 6, 7)]
    out += ["", f"Children of these {len(rows)} whose column is at or below the incumbent (pruned by it): share bound {below[0]}, "
            f"exact maximum of f at the node's relaxed alpha {below[1]}, at the child's own {below[2]}; "
            f"floor below which no alpha's exact maximum goes {below[3]} (when 0, no fixed-alpha bound prunes the child); "
            f"by the truth (max g at or below it: no better subset inside) {below[4]}."]
    write_section(args.output, "bench_bnb_node", "\n".join(out))
    print("\n".join(out))


def mixture_floor(inst, qp, kids, alpha: np.ndarray, steps: int) -> float:
    """A value below min_alpha max_{S in kids} f(alpha, S): the largest weak-duality lower bound of g over the
    Frank-Wolfe mixtures of the kids' kernel matrices, started at ``alpha`` (module docstring)."""
    kids = np.array(kids, dtype=np.intp)
    K, floor = None, -np.inf
    for k in range(steps):
        top = kids[int(np.argmax(FixedAlpha(inst, alpha).values(kids)))]
        step = 2.0 / (k + 2)
        K = inst.gram(list(top)) if K is None else (1.0 - step) * K + step * inst.gram(list(top))
        alpha, _ = qp.solve_gram(K, alpha)
        floor = max(floor, primal_lower_bound(K, inst.y, inst.C, alpha))
    return floor


if __name__ == "__main__":
    main()
