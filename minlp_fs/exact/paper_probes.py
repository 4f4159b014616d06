"""The paper sense's node expansion by probes (problem (4), polynomial kernels with c >= 0; issue 12), a part of
:class:`.search._Search`.

g is monotone nondecreasing in the subset (the paper's appendix: Q_T - Q_S is PSD for S in T), so a node (I, F, need)
is bounded by its probes g(I + j), j in F: every subset of child t of a split by ``order`` (:func:`.tree.split`)
takes order[t] and need - 1 features of order[t+1:], so its score is at least max(g(I + order[t]), the need-th
smallest probe over order[t:]) (:func:`.bounds.probe_bounds`). :meth:`PaperProbes._expand_probes` solves the probes
(lazily, loosely and in compiled chunks: its docstring), orders the children by probe score and gives them these
bounds; :meth:`PaperProbes._tighten` re-solves the loose probes whose bracket straddles the incumbent, and
:meth:`PaperProbes._subset_probe` the probes that are B-subsets.
"""
from __future__ import annotations

import numpy as np

from . import tree
from .bounds import instance_lower_bound, probe_bounds
from .probe_gram import ProbeGrams
from .probe_solves import solve_probes

#: KKT tolerance a straddling loose probe is continued to (``_tighten``). Measured (CPU s, nodes) on Parkinsons
#: poly2 paper B=6: 0.53 s, 487 nodes without tightening; 0.91 s, 163 at the search's tolerance; 0.62 s, 228 at
#: 1e-4; 0.61 s, 320 at 3e-4. German poly3 paper B=6: 349 nodes without, 235 at 1e-4, same wall time
TIGHTEN_TOL = 1e-4
#: a straddling probe is tightened only when the incumbent lies in the upper part of its bracket [score, f]:
#: f - incumbent >= TIGHTEN_SHARE (f - score). Measured on Parkinsons paper poly2/poly3 B = 6: of 444/238 tightened
#: probes, those with f - incumbent < 0.2 (f - score) were lifted to the incumbent 0 times in 80/63 (the dual value f
#: converges faster than -P: g lies near f), below 0.4 1 in 141 / 8 in 107, above 0.7 107 in 140 / 52 in 53. CPU s,
#: share 0 / 0.2 / 0.3 / 0.4 / 0.5 (before the better_than stop): poly2 0.55 / 0.43 / 0.42 / 0.41 / 0.39, poly3
#: 0.33 / 0.26 / 0.25 / 0.26 / 0.27, poly5 0.26 / 0.23 / 0.23 / 0.23 / 0.23; B = 7: poly2 0.51 -> 0.35 at 0.3; B = 10,
#: 11 and other datasets' paper sense the same trees and times (they tighten little). With it, 0.2 / 0.3 / 0.4 / 0.5:
#: poly2 B = 6 0.36 / 0.34 / 0.33 / 0.32, poly3 0.21 / 0.20 / 0.21 / 0.22, poly2 B = 7 0.31 / 0.30 / 0.31 / 0.28
TIGHTEN_SHARE = 0.3


class PaperProbes:
    """The probe expansion of :class:`.search._Search` (paper sense; module docstring): its methods use the search's
    QPs (``qp``, ``loose_qp``, ``tighten_qp``), incumbent and counts."""

    def _expand_probes(self, node: tree.Node) -> None:
        """Paper sense: the probe QP g(I + j) of every free j; children ordered by probe, probe bounds.

        Lazy probes: ``node.lower[j]`` is the parent's probe score of I_parent + j, a subset of I + j,
        so (monotone g) a lower bound of this probe's score; a probe whose lower bound already reaches
        the incumbent is not solved (its score bound is the lower bound: :func:`.bounds.probe_bounds`
        needs lower bounds only). Such a probe would have stopped early against the incumbent: every
        child it could bound is pruned either way, so skipping it changes no decision.

        Settled probes (compiled chunks, inner nodes): a probe also stops once SMO's tracked f(alpha) proves
        g(I + j) below the node's bound b (:meth:`_settled`), its score then -P at the alpha reached. Child t's bound
        is max(b, score of order[t], the need-th smallest score over order[t:]) (:func:`.bounds.probe_bounds`), and
        any two lower bounds of a probe below b give it the same value: the count of scores below b and the
        scores above it are unchanged, so every child bound is, for the same order; the children's lazy probes skip
        only scores at the incumbent, above b. Only the order among the probes below b can differ (their scores are
        rougher), which changes no bound's validity. Cleveland paper B = 6 (m = 297, whose probes often fall below
        their node's bound): poly2/poly3/poly5 22.8/23.9/50.7 -> 20.8/21.2/41.0 ms with the same nodes and QPs;
        Parkinsons poly2/poly3 the same trees and times. (Stopping them higher, at b + theta (incumbent - b), changes
        the child bounds: theta = 0.25/0.5/0.75 took Cleveland poly5 to 37.8/32.9/23.3 ms but Parkinsons poly3 from
        0.17 to 0.24/0.27/0.25 s with 1.5-1.7x the QPs.)
        """
        incumbent = self._prune_value()  # every inner probe prunes against it: the same tree for any n_jobs
        at_incumbent = self._prune_at()
        warm = node.alpha if node.alpha is not None else self.last_alpha
        lower = node.lower or {}
        solve = [j for j in node.free if lower.get(j, -np.inf) < at_incumbent]
        if node.need == 1:   # B-subsets, best first by their parent probe's score (:meth:`_subset_probe`)
            solve.sort(key=lambda j: (lower.get(j, -np.inf), j))
        grams = ProbeGrams(self.inst, node.fixed) if solve else None
        upper = {}  # loose probes at PROBE_TOL: score of f(alpha_j, I + j) >= g(I + j) (SMO's tracked f), for _tighten
        groups = {}  # each probe's duplicate-row groups (_groups), reused by _tighten

        for j in solve:
            groups[j] = self._groups(tree.probe_set(node.fixed, j))
        batch = self._batch(node, grams, solve, groups, warm, incumbent) if node.need > 1 else {}

        def probe(j):
            if node.need == 1:
                return self._subset_probe(node, grams, j, groups[j], warm)
            if batch.get(j) is not None:   # solved in a compiled chunk, as below
                exact, alpha, value, bound = batch[j]
                if not exact and bound is not None:   # settled: stopped below the node's bound, -P its score bound
                    upper[j] = self.inst.score(value)
                    self.counts["probes_settled"] += 1
                    return self._finite(self.inst.score(bound)), False, alpha, None
                if not exact:
                    return self.inst.score(incumbent), False, alpha, None
                upper[j] = self.inst.score(value)
                return self._finite(self.inst.score(bound)), True, alpha, None
            self._check_time()
            stats = {}
            result = self._qp(grams.gram(j), warm, incumbent, loose=True, groups=groups[j], stats=stats)
            if result[1]:
                upper[j] = self.inst.score(stats["value"])
            return result

        results = [probe(j) for j in solve]
        self._count(results)
        self.counts["probes_skipped"] += len(node.free) - len(solve)
        scores = {j: lower[j] for j in node.free if j not in solve}
        alphas, values = dict.fromkeys(scores), dict.fromkeys(scores)
        for j, (score, exact, alphas[j], values[j]) in zip(solve, results):
            scores[j] = max(score, lower.get(j, -np.inf))
        if node.need > 1:
            self._tighten(node, grams, groups, upper, scores, alphas, incumbent)
        order = sorted(node.free, key=lambda j: (scores[j], j))
        if self.recorder:
            self.recorder.probes(node.fixed, node.free, node.need, order, values, scores, alphas)
        bounds = probe_bounds(scores, order, node.need, node.bound)
        # every child reads its probes' lower bounds from the one dict of the node's scores (none writes to it)
        self._branch(node, order, bounds, lambda t, f, F: tree.Node(f, F, node.need - 1, bounds[t], alphas[order[t]],
                                                                   scores))

    def _batch(self, node: tree.Node, grams, solve: list, groups: dict, warm, incumbent) -> dict:
        """:func:`.probe_solves.solve_probes` of an inner node's probes on a binary instance from the node's base, over
        their duplicate-row ``groups``, at PROBE_TOL (:meth:`_qp`): {j: (exact, alpha, f, -P) or None}; {}
        otherwise."""
        if not (solve and self._compiled(self.loose_qp)):
            return {}
        return solve_probes(grams, solve, warm, self.loose_qp, incumbent, self._check_time,
                            self._settled(node), groups={j: groups[j]["groups"] for j in solve})

    def _subset_probe(self, node: tree.Node, grams, j, groups: dict, warm) -> tuple:
        """(score, exact, alpha, value) of the probe I + j of a node of need 1, a B-subset: solved (compiled on a
        binary instance, :mod:`.probe_solves`) to the search's tolerance, stopped early against the incumbent of
        its time, and offered as the incumbent. The node's probes come best first (by their parent probe's score):
        a better B-subset found by one stops the later ones early, where one incumbent for the whole expansion let
        them run to the tolerance (Cleveland paper poly2 B = 6: a B-subset 350 above the optimum took 5,201 SMO steps
        after the optimum was found in the same node). The node's children are these B-subsets, every one of them
        pruned by its own score (exact, or the incumbent's after an early stop), so the tree is the same."""
        incumbent = self._prune_value()
        found = None
        if self._compiled(self.qp):
            found = solve_probes(grams, [j], warm, self.qp, incumbent, self._check_time,
                                 groups={j: groups["groups"]})[j]
        if found is None:   # handed back, or not compiled: the oracle's solve (its value by the one objective)
            self._check_time()
            score, exact, alpha, value = self._qp(grams.gram(j), warm, incumbent, groups=groups)
        else:
            exact, alpha = found[:2]
            value = self.inst.gram_objective(alpha, grams.gram(j)) if exact else None   # by the one objective
            score = self._finite(self.inst.score(value)) if exact else self.inst.score(incumbent)
        if exact:
            self.inc.offer(value, tree.probe_set(node.fixed, j), alpha, "bnb")
        return score, exact, alpha, value

    def _settled(self, node: tree.Node):
        """The value below which an inner node's probe is settled (:meth:`_expand_probes`): the node's bound; None
        for a node of B-subset probes (need 1: their values are wanted) or without a finite bound."""
        return self.inst.sign * node.bound if node.need > 1 and np.isfinite(node.bound) else None

    def _compiled(self, oracle) -> bool:
        """Whether :mod:`.probe_solves` solves the probes: a binary instance's, by SMO."""
        return self.binary and oracle.backend == "smo"

    def _tighten(self, node: tree.Node, grams, groups: dict, upper: dict, scores: dict, alphas: dict, incumbent) -> None:
        """Paper sense: re-solve to TIGHTEN_TOL the loose probes that could reach the incumbent.

        A loose probe j (a key of ``upper``: solved to PROBE_TOL, not stopped early) has the bracket
        -P(alpha_j) <= g(I + j) <= f(alpha_j, I + j) = ``upper[j]`` (weak duality; g is a minimum over alpha). Sorted,
        child t's bound is the (t + need)-th smallest score (:func:`.bounds.probe_bounds`), so the node keeps
        max(0, #{j: score_j < incumbent} - need + 1) children, and every probe lifted to the incumbent
        removes one while at least ``need`` scores stay below it. A probe can be lifted only when its
        bracket straddles the incumbent's score (f(alpha_j) < incumbent proves g(I + j) below it). Those whose
        incumbent lies in the bracket's upper part (f - incumbent >= TIGHTEN_SHARE (f - score): g lies near f, and
        the others were almost never lifted) are continued from alpha_j (``grams``: the node's
        :class:`.probe_gram.ProbeGrams`) by the SMO at TIGHTEN_TOL over the probe's duplicate-row ``groups`` (those
        of its loose solve), stopped early once proven worse than ``incumbent`` (the score bound is then the
        incumbent's score, as for any early stop) or, for a binary instance, once f(alpha) < incumbent proves that it
        cannot be lifted (``better_than``: g is below the incumbent), else bound by -P at the tighter alpha; the score
        kept is the larger of the two lower bounds, with its alpha (the certificate's replay recomputes -P there).
        Highest loose bound first: the likeliest to be lifted. Measured: fewer nodes on every instance
        tried, CPU time within about 20 % either way (benchmarks/RESULTS.md, bench_bnb_paper).
        """
        at_incumbent = np.inf if incumbent is None else self.inst.score(incumbent)
        below = sum(s < at_incumbent for s in scores.values())
        straddling = [j for j in upper if scores[j] < at_incumbent <= upper[j]
                      and upper[j] - at_incumbent >= TIGHTEN_SHARE * (upper[j] - scores[j])]
        for j in sorted(straddling, key=lambda j: -scores[j]):
            if below < node.need:
                break
            exact, alpha, score = self._tighten_one(j, grams, groups[j], alphas[j], incumbent, at_incumbent)
            self.counts["qps"] += 1
            self.counts["probes_tightened"] += 1
            self.counts["qps_stopped_early"] += not exact
            if score > scores[j]:
                scores[j], alphas[j] = score, alpha
            below -= scores[j] >= at_incumbent

    def _tighten_one(self, j, grams, groups: dict, warm, incumbent, at_incumbent) -> tuple:
        """(exact, alpha, score bound) of probe j continued to TIGHTEN_TOL from ``warm`` (:meth:`_tighten`), in a
        compiled chunk on a binary instance (:mod:`.probe_solves`), else by the oracle. Stopped early, it is
        lifted (g proven worse than the incumbent: the incumbent's score), unless (binary instances) the tracked
        f(alpha) < incumbent, SMO's own test, proved g below it; -P at alpha is then the bound, as at the tolerance."""
        found = None
        if self._compiled(self.tighten_qp):
            found = solve_probes(grams, [j], warm, self.tighten_qp, incumbent, self._check_time, incumbent,
                                 {j: groups["groups"]})[j]
        if found is not None:
            exact, alpha, value, lower = found
        else:
            self._check_time()
            K = grams.gram(j)
            stats = {}
            alpha, exact = self.tighten_qp.solve_gram(K, warm, incumbent, stats=stats, **groups,
                                                      **self._better_than(incumbent))
            value = stats["value"]
        if not exact and self.inst.score(value) >= at_incumbent:   # lifted
            return exact, alpha, self.inst.score(incumbent)
        if found is None:
            lower = instance_lower_bound(self.inst, K, alpha)
        return exact, alpha, self.inst.score(lower)
