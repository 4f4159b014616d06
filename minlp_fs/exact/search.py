"""The sequential branch-and-bound search of problem (4) (issue 12; the method ``bnb`` is :mod:`.bnb`).

Depth-first search of the set-enumeration tree of :mod:`.tree` (nodes (I, F, need): I fixed in,
F free, the rest fixed out) with the proven bounds of :mod:`.bounds`, in score terms (sign * g):

1. An incumbent first: by default LS* in the paper sense on large instances, else the alpha-start, or any
   heuristic (``incumbent``), and the user's start.
2. A node is popped; it is pruned, with no QP, when its bound (set by its parent) is >= the
   incumbent's score: the incumbent only improves, so bounds computed earlier still prune.
3. A node holding one subset is solved (warm-started SMO, stopped early once duality proves it worse
   than the incumbent). Otherwise it is expanded (polynomial kernels, c >= 0):

   * paper sense (min g), :mod:`.paper_probes`: the probe QP g(I + j) of every free j, warm-started from the
     alpha of I and stopped early once proven worse than the incumbent (its score is then bounded by the
     incumbent's); lazily: a probe whose parent probe g(I_parent + j) already reaches the incumbent
     is not solved (monotone g: it can only be larger); probes of inner nodes are solved to a loose
     tolerance (PROBE_TOL) and bound by weak duality (on a binary instance every probe is solved in compiled
     chunks, :mod:`.probe_solves`, and stops once it proves g(I + j) below the node's bound: its value then moves
     no child's bound), and those whose bracket [-P, f] straddles the incumbent in its upper part are continued to a
     tighter tolerance (TIGHTEN_TOL, TIGHTEN_SHARE, ``_tighten``); probes of size B are exact and offered as
     incumbents, best first, each stopped against the incumbent of its time. Every probe of a binary instance is
     solved over the subset's duplicate rows where they are few (``AlphaSubproblem.groups``: German's categorical
     features), its kernel matrix built from the node's base X_I X_I' (:class:`.probe_gram.ProbeGrams`). Children
     are ordered by probe value, smallest first, and child t gets the probe bound max(g(I + j_t), the need-th
     smallest probe over order[t:]) (:func:`.bounds.probe_bounds`).
   * fit sense (max g): one QP of the universe U = I u F (every subset of the node lies in U, so g(U) bounds
     them), warm-started from the parent's alpha and stopped early once g(U) is proven below the incumbent
     (the node is then pruned); otherwise f(alpha, U) >= g(U) at the alpha reached, solved to PROBE_TOL and
     for at most min(UNIVERSE_STEPS, m) SMO steps (weak duality holds at any feasible alpha; the pruning stops come
     early, the rest of an exact solve bought a slightly tighter bound at several times the cost). The first
     child of a split keeps its parent's universe (order[0] in, order[1:] free), so it takes the parent's
     bound without a QP; and child t's universe I + order[t:] holds every later sibling's subsets, so a child is
     pruned with no QP once the best universe bound of its earlier siblings reaches the threshold
     (:class:`.tree.Siblings`, :meth:`_Search._pruned_by_sibling`; the same nodes, QPs fewer where universes
     prune: fit B = 6, Cleveland poly2 / poly3 / poly5 106 / 132 / 139 -> 73 / 104 / 113, German poly2 / poly3
     1,249 / 2,737 -> 934 / 2,082, Ionosphere poly3 5,803 -> 5,650; Parkinsons, BCD and Sonar unchanged; CPU, one
     process alternating the rule off and on: Cleveland 1.15x / 1.10x / 1.00x, German 1.13x / 1.15x). Then
     one more QP, the alpha of the
     relaxed beta (1 on I, about 1.5 need / |F| on F: :func:`.bounds.relaxed_gram`), a feasible alpha
     fitted to the node's B-subsets rather than to U, warm-started from the parent's relaxed alpha (Ionosphere poly5
     fit B = 5: 5 % less CPU than from the universe's alpha; a leaf's QP starts there too, where its bound was
     computed: 3 % less), solved to PROBE_TOL only and for at most RELAXED_STEPS SMO steps (the fixed-alpha
     bounds hold at ANY feasible alpha; on Cleveland poly2/3/5 B = 6 fit the same QPs and nodes as at the
     default tolerance, ~5 % less CPU; the cap: German poly5 fit B = 6 15 % less); at it, children are ordered
     by estimated gain, largest first (:func:`.bounds.fit_order`), and child t gets a fixed-alpha bound of its
     subsets (:func:`.bounds.fit_child_bounds`: the pair bound for degree 2, the degree-share bound otherwise),
     both from one fixed-alpha basis (:func:`.bounds.fit_split`), which prunes most children without
     any QP. (At the alpha of U the bounds were 3-30x looser on
     Ionosphere/Sonar/German poly2: benchmarks/RESULTS.md, bench_bnb.)

   Children at or beyond the incumbent are pruned; the rest are pushed so the first is searched first.

With a Gaussian kernel no probe bound holds (g is not monotone) and g(U) bounds nothing. In the fit sense
a node is expanded as above without the QP of U: the relaxed alpha's chord bounds (:mod:`.chords`) order and
bound the children. In the paper sense nodes split without QPs and every leaf is solved (the trivial bound
prunes); ``minlp-fs certify --method auto`` uses enumeration there.

Relative gap (``gap_tol`` > 0): every prune and every early stop compares with the incumbent's score less
gap_tol * max(1, |incumbent|) instead of the score itself (:meth:`_Search._prune_at`), so each pruned node's
bound (an early-stopped leaf's: that threshold) is proven and at least the threshold of its time; ``floor``,
the least such bound below the incumbent's score (:meth:`_Search._pruned`), bounds every subset pruned. A
complete search then proves the incumbent within incumbent - floor (at most gap_tol * max(1, |incumbent|)
for the largest |incumbent| the search held): the status is ``optimal`` but the result is not ``certified``
(which means optimal); its bound is floor, its message and gap say by how much, and the certificate states it
(``claim['tolerance']``, which ``minlp-fs verify --max-gap`` accepts and closes children with).

Anytime: the global bound is the least bound over the open nodes (and the incumbent); a time limit
or Ctrl-C returns the incumbent with that bound, status ``time_limit``/``interrupted``. The trace
has the incumbent's improvements and, with source ``bound``, the global bound over time
(``TracePoint.bound``). ``certificate``: a file the proof is written to (:mod:`.certificate`).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from tqdm.auto import tqdm

from ..alpha import DEFAULT_TOL, AlphaSubproblem
from ..objective import NonFiniteError
from ..result import Status, TracePoint
from ..stopping import SearchStopped
from . import tree
from .bounds import bnb_bounds, fit_split, instance_lower_bound, monotone, relaxed_gram
from .certificate import Recorder
from .paper_probes import TIGHTEN_TOL, PaperProbes

#: seconds between two refreshes of the global bound (trace, progress bar)
REFRESH_S = 0.5
#: KKT tolerance of the paper-sense probes of inner nodes (their lower bound is used, not their value):
#: 10-40x fewer SMO iterations than at 1e-5 on Cleveland poly3, lower bounds within 3e-4 relative.
#: Measured on Parkinsons poly3/poly2 paper B=6 (CPU s): 0.80/0.83 at 1e-4, 0.59/0.64 at 3e-4,
#: 0.48/0.64 at 1e-3, 0.56/0.81 at 3e-3 (looser bounds, more nodes); 1.7/1.6 with exact probes
PROBE_TOL = 1e-3

#: fit sense: SMO steps the QP of a node's universe U takes at most (at PROBE_TOL); its bound is f(alpha, U) >= g(U)
#: at the alpha reached. German poly5 fit B = 6: the universes that prune stop at a median of 184 steps (mean 242),
#: the others took a median of 10,791 to PROBE_TOL (13,601 to 1e-5); bnb 56 s with exact universes, 50 s at
#: PROBE_TOL, 44-45 s capped at 500, 1,000 or 2,000 steps, the same nodes to 0.1 %. Also at most m steps (one per row):
#: with the relaxed QP capped (RELAXED_STEPS), CPU s at 1,000 / m steps: Sonar poly2 fit B = 6 7.2 / 6.5, Ionosphere
#: poly5 fit B = 6 59.3 / 51.9, Cleveland poly5 fit B = 6 0.062 / 0.055 (within 0.3 % of the nodes); 300 steps on
#: German (m = 1,000): poly5 fit B = 6 26.1 -> 29.8 s (18 % more nodes)
UNIVERSE_STEPS = 1000

#: fit sense: SMO steps the QP of a node's relaxed beta takes at most (at PROBE_TOL): its alpha is only the point the
#: fixed-alpha bounds are taken at (they hold at any feasible alpha), and each child's relaxed QP starts from it, so
#: the alpha goes on improving down the tree. German poly5 fit B = 6: uncapped, a median of 3,592 steps (7.2M of the
#: search's 9.3M); CPU s uncapped / capped at 100 / 200 / 300 / 500 / 1,000 steps: German poly5 B = 6 29.1 / 44.0 /
#: 27.8 / 24.8 / 27.7 / 27.1, poly3 B = 6 6.2 / 5.7 / 5.6 / 5.5 / 5.6 / 6.0, poly3 B = 9 22.3 / 26.8 / 21.2 / 20.0 /
#: 20.1 / 22.4, Ionosphere poly3 B = 10 17.3 / 14.8 / 15.6 / 16.1 / 16.5 / 17.4 (nodes within -13 % / +59 %
#: / +24 % / +2 % / +6 % / -3 %); Cleveland poly2 / poly3 / poly5 B = 6, the Gaussian kernel's rows of bench_bnb
#: (chords), Parkinsons, BCD and Sonar: the same trees at 300, or within 0.3 % of their nodes
RELAXED_STEPS = 300


class _Search(PaperProbes):
    """One search of the tree for a :class:`~minlp_fs.exact.bnb.BranchAndBound` and its run (module docstring);
    :mod:`.parallel` runs the same loop (:meth:`start`, :meth:`search_nodes`, :meth:`finish`) on subtrees."""

    def __init__(self, method, run):
        self.method, self.inst, self.run = method, run.instance, run
        inst = run.instance
        self.paper = inst.sense == "paper"
        self.binary = getattr(inst, "parts", None) is None   # a multiclass instance has its one-vs-rest parts
        self.probes = monotone(inst.kernel)
        self.chords = bnb_bounds(inst.kernel, inst.sense) and not self.probes   # the Gaussian fit sense's chords
        self.qp = AlphaSubproblem(inst, tol=run.oracle.tol if run.has_oracle else DEFAULT_TOL, cache=False)
        self.loose_qp = AlphaSubproblem(inst, tol=max(PROBE_TOL, self.qp.tol), cache=False)
        self.tighten_qp = AlphaSubproblem(inst, tol=max(TIGHTEN_TOL, self.qp.tol), cache=False)
        self._universe_steps = None if UNIVERSE_STEPS is None else min(UNIVERSE_STEPS, inst.m)
        self.inc = run.incumbent
        self.deadline = run.deadline
        self.stack: list[tree.Node] = []
        self.current: tree.Node | None = None
        self.last_alpha = None
        self.counts = {"nodes": 0, "expanded": 0, "leaves": 0, "pruned_bound": 0, "pruned_children": 0,
                       "pruned_universe": 0, "pruned_sibling": 0, "pruned_marginal": 0, "probes_skipped": 0,
                       "probes_tightened": 0, "probes_settled": 0, "qps": 0,
                       "qps_stopped_early": 0, "max_open": 0, "universe_reused": 0}
        self.recorder = Recorder(inst) if method.certificate else None
        self.best_bound_seen = -np.inf
        self.heuristic = "none"
        self.next_refresh = 0.0
        self.gap_tol = float(method.gap_tol)
        #: least bound of a node pruned below the incumbent's score (module docstring, relative gap); +inf with gap_tol = 0
        self.floor = np.inf

    # ---- incumbent -------------------------------------------------------------------------
    def _score_inc(self) -> float:
        return np.inf if self.inc.value is None else self.inst.score(self.inc.value)

    def _prune_at(self) -> float:
        """The score a bound must reach to prune (module docstring, relative gap): the incumbent's, less
        gap_tol * max(1, |incumbent|)."""
        score = self._score_inc()
        if self.gap_tol > 0 and self.inc.value is not None:
            score -= self.gap_tol * max(1.0, abs(self.inc.value))
        return score

    def _pruned(self, bound: float) -> None:
        """A node with this proven bound is closed: one below the incumbent's score (a prune within gap_tol)
        lowers ``floor``."""
        if bound < self._score_inc():
            self.floor = min(self.floor, bound)

    def _prune_value(self):
        """:meth:`_prune_at` as a value of g (what QPs stop early against), None without an incumbent."""
        return None if self.inc.value is None else self.inst.sign * self._prune_at()

    def _heuristic(self) -> None:
        """Run the incumbent heuristic (and solve the user's start), counting its SVM solves."""
        self.heuristic = self.method.heuristic(self.inst)
        self.run.seed_incumbent(self.heuristic, self.qp.tol)   # its solves: run.seed_solves

    # ---- QPs --------------------------------------------------------------------------------
    def _groups(self, key) -> dict:
        """``groups=`` of a binary instance's solve of subset ``key`` (its duplicate rows, or None); {} for a
        multiclass instance, whose stacked solve takes none."""
        return {"groups": self.qp.groups(key)} if self.binary else {}

    def _better_than(self, incumbent) -> dict:
        """``better_than=`` of a solve that may stop as soon as g is proven on either side of ``incumbent`` (a
        binary instance's; {} for a multiclass instance, whose stacked solve stops on the worse side only)."""
        return {"better_than": incumbent} if self.binary else {}

    def _qp(self, K, warm, incumbent, loose: bool = False, groups=None, max_steps=None, stats=None):
        """(score, exact, alpha, value) of one QP stopped early once proven worse than ``incumbent``
        (a value, or None); ``groups``: :meth:`_groups` of the subset; ``stats``: receives SMO's tracked f(alpha)
        (``value``; :meth:`AlphaSubproblem.solve_gram`). ``loose``: solved to
        PROBE_TOL only, its score a bound by weak duality, its value None (a score bound is all a probe of an
        inner node or a universe is used for): paper sense, g >= -P (:func:`.bounds.instance_lower_bound`);
        fit sense, g <= f(alpha) at the feasible alpha. ``max_steps``: SMO's steps at most (loose solves only:
        their bounds hold at any feasible alpha)."""
        alpha, exact = (self.loose_qp if loose else self.qp).solve_gram(K, warm, incumbent, max_steps=max_steps,
                                                                        stats=stats, **(groups or {}))
        if exact and loose:
            bound = instance_lower_bound(self.inst, K, alpha) if self.paper else self.inst.gram_objective(alpha, K)
            return self._finite(self.inst.score(bound)), True, alpha, None
        if exact:
            value = self.inst.gram_objective(alpha, K)
            return self._finite(self.inst.score(value)), True, alpha, value
        return self.inst.score(incumbent), False, alpha, None

    @staticmethod
    def _finite(score: float) -> float:
        """``score``, refused when it is not finite (a NaN bound would prune silently: NaN < x is False)."""
        if not np.isfinite(score):
            raise NonFiniteError(f"bnb: a QP's value or bound is not finite ({score}); the kernel matrix or "
                                 "the data must hold a non-finite or overflowing value")
        return score

    def _count(self, results) -> None:
        self.counts["qps"] += len(results)
        self.counts["qps_stopped_early"] += sum(not r[1] for r in results)
        if results:
            self.last_alpha = results[-1][2]

    def _solve(self, K, warm, loose: bool = False, max_steps=None):
        result = self._qp(K, warm, self._prune_value(), loose, max_steps=max_steps)
        self._count([result])
        return result

    def _leaf(self, node: tree.Node) -> None:
        subset = tree.leaf_subset(node.fixed, node.free, node.need)
        warm = next((a for a in (node.relaxed, node.alpha, self.last_alpha) if a is not None), None)
        score, exact, alpha, value = self._solve(self.inst.gram(subset), warm)
        self.counts["leaves"] += 1
        if exact:
            self.inc.offer(value, subset, alpha, "bnb")
        else:
            self._pruned(score)
        if self.recorder:
            self.recorder.leaf(subset, value, alpha)

    def _branch(self, node: tree.Node, order, bounds: list, child) -> int:
        """Split ``node`` by ``order``: prune the children whose bound (``bounds[t]``, child t's) reaches the
        incumbent, push the others (``child(t, I_t, F_t)``: child t's Node, built for those only) so that the first
        is popped first. Returns the number pruned. A bound that is NaN is refused: it would be neither kept nor
        pruned, and its subsets would leave the search silently."""
        if any(b != b for b in bounds):
            raise NonFiniteError(f"bnb: a child's bound of the node fixing {list(node.fixed)} in is not a number; "
                                 "the kernel matrix or the data must hold a non-finite or overflowing value")
        at = self._prune_at()
        kept = [t for t, b in enumerate(bounds) if b < at]
        pruned = [b for b in bounds if b >= at]
        if pruned:
            self._pruned(min(pruned))
        self.counts["pruned_children"] += len(pruned)
        self.stack.extend(reversed([child(t, f, F) for t, f, F in
                                    tree.split(node.fixed, node.free, node.need, order, only=kept)]))
        return len(pruned)

    def _split_plain(self, node: tree.Node) -> None:
        """No bound holds (Gaussian kernel, paper sense; or ``marginal=False``): split in index order, children
        inherit the node's bound."""
        order = node.free
        self._branch(node, order, [node.bound] * (len(order) - node.need + 1),
                     lambda t, f, F: tree.Node(f, F, node.need - 1, node.bound, node.alpha))
        if self.recorder:
            self.recorder.split(node.fixed, node.free, node.need, order)

    def _universe_gram(self, node: tree.Node) -> np.ndarray:
        """K_U of the node's universe U = I u F by one BLAS product X_U X_U' and the kernel's power, not
        ``Instance.gram``'s entrywise pass (bit for bit the formula, which the heuristics' SMO paths need; a bound
        does not): at m = 1,000 and |U| = 12-20, 0.8-0.9 ms against 1.4-1.9 ms."""
        k = self.inst.kernel
        return k.apply(k.base(self.inst.X, tree.universe(node.fixed, node.free)))

    def _expand_fit(self, node: tree.Node) -> None:
        """Fit sense: f(alpha, U) >= g(U) at the universe's capped QP bounds the node and its later siblings (monotone
        kernels; :class:`.tree.Siblings`); at the relaxed alpha, fixed-alpha bounds order and bound every child (the
        Gaussian kernel: the chords only)."""
        warm = node.alpha if node.alpha is not None else self.last_alpha
        bound, alpha, known = node.bound, warm, None
        if self.probes:
            # the first child's universe I + order[0] u order[1:] is its parent's: its bound is known, not solved again
            known = node.universe or self._solve(self._universe_gram(node), warm, loose=True,
                                                 max_steps=self._universe_steps)
            score, _, alpha, _ = known
            self.counts["universe_reused"] += node.universe is not None
            bound = max(bound, score)
            if node.siblings is not None:   # it bounds the later siblings, whose universes lie in this one
                node.siblings.offer(node.index, score, alpha)
        order, at = None, alpha
        siblings = tree.Siblings() if self.probes else None   # the children's universe bounds, for the later ones
        if bound < self._prune_at():
            if self.method.marginal:
                at, _ = self.loose_qp.solve_gram(relaxed_gram(self.inst, node.fixed, node.free, node.need),
                                                 node.relaxed if node.relaxed is not None else alpha,
                                                 max_steps=RELAXED_STEPS)
                self.counts["qps"] += 1
                order, bounds = fit_split(self.inst, at, node.fixed, node.free, node.need, self._prune_at())
                bounds = np.maximum(bound, bounds).tolist()   # (a NaN stays one, for _branch to refuse)
                self.counts["pruned_marginal"] += self._branch(   # bound < the threshold: the fixed-alpha bounds prune
                    node, order, bounds, lambda t, f, F: tree.Node(f, F, node.need - 1, bounds[t],
                                                                   alpha if self.probes else at,
                                                                   universe=known if t == 0 else None, relaxed=at,
                                                                   siblings=siblings, index=t))
            else:
                order = node.free
                self._branch(node, order, [bound] * (len(order) - node.need + 1),
                             lambda t, f, F: tree.Node(f, F, node.need - 1, bound, alpha, siblings=siblings, index=t))
        else:
            self.counts["pruned_universe"] += 1
            self._pruned(bound)
        if self.recorder:
            self.recorder.fit(node.fixed, node.free, node.need, at, order, self.method.marginal)

    def _process(self, node: tree.Node) -> None:
        self.counts["nodes"] += 1
        if node.bound >= self._prune_at():
            self.counts["pruned_bound"] += 1
            self._pruned(node.bound)
            return
        if self._pruned_by_sibling(node):
            return
        if tree.is_leaf(node.free, node.need):
            self._leaf(node)
            return
        self.counts["expanded"] += 1
        if self.paper and self.probes:
            self._expand_probes(node)
        elif self.probes or (self.chords and self.method.marginal):   # fit sense (chords: fit sense only)
            self._expand_fit(node)
        else:
            self._split_plain(node)

    def _pruned_by_sibling(self, node: tree.Node) -> bool:
        """Fit sense: prune ``node``, with no QP, when the universe bound of an earlier child of its split reaches the
        threshold (:class:`.tree.Siblings`: that universe holds every subset of the node). Recorded with that
        universe's alpha, at which the verifier bounds the node's own universe (or its one subset)."""
        known = node.siblings.bound(node.index) if node.siblings is not None else None
        if known is None or known[0] < self._prune_at():
            return False
        score, alpha = known
        self.counts["pruned_sibling"] += 1
        self._pruned(score)
        if self.recorder and tree.is_leaf(node.free, node.need):
            self.recorder.leaf(tree.leaf_subset(node.fixed, node.free, node.need), None, alpha)
        elif self.recorder:
            self.recorder.fit(node.fixed, node.free, node.need, alpha, None, self.method.marginal)
        return True

    # ---- bound, time, progress ---------------------------------------------------------------
    def global_bound(self) -> float:
        """Least score bound over the open nodes and the incumbent (score terms)."""
        bounds = [n.bound for n in self.stack]
        if self.current is not None:
            bounds.append(self.current.bound)
        return min([self._score_inc(), self.floor, *bounds])

    def _check_time(self) -> None:
        self.deadline.check()

    def _refresh(self, bar, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now < self.next_refresh:
            return
        self.next_refresh = now + REFRESH_S
        bound = self.global_bound()
        if np.isfinite(bound) and bound > self.best_bound_seen and self.inc.value is not None:
            self.best_bound_seen = bound
            self.inc.trace.append(TracePoint(self.inc.elapsed(), float(self.inc.value), "bound",
                                             bound=float(self.inst.sign * bound)))
        bar.set_postfix(open=len(self.stack), qps=self.counts["qps"], gap=f"{self.gap(bound):.3g}%", refresh=False)
        bar.update(self.counts["nodes"] - bar.n)

    def gap(self, bound: float) -> float:
        """100 |incumbent - bound| / max(|incumbent|, 1e-12), in percent (inf without a bound)."""
        if self.inc.value is None or not np.isfinite(bound):
            return float("inf")
        return 100.0 * max(self._score_inc() - bound, 0.0) / max(abs(self.inc.value), 1e-12)

    # ---- entry points of the parallel search (minlp_fs.exact.parallel) ------------------------
    def start(self) -> list:
        """The root node, warm-started by the incumbent heuristic's alpha ([] once the incumbent proves optimal)."""
        self._root()
        self._heuristic()
        root = self.stack.pop()
        root.alpha = self.inc.alpha
        return [] if self.inc.proves_optimal else [root]

    def expand(self, node: tree.Node) -> list:
        """Process one node (bound, expand or solve it); its surviving children, first to search first."""
        self._process(node)
        children = self.stack[::-1]
        self.stack.clear()
        return children

    def search_nodes(self, nodes: list, max_nodes: int | None = None, bar=None) -> Status:
        """Depth-first search of the subtrees of ``nodes`` (first searched first) from the current incumbent,
        processing at most ``max_nodes`` nodes; a stop or the budget leaves the open nodes in ``stack`` (the
        next one last) and ``current`` (their bounds stay valid). ``bar``: a progress bar to refresh."""
        self.stack.extend(reversed(nodes))
        budget = self.counts["nodes"] + max_nodes if max_nodes is not None else None
        try:
            while self.stack and (budget is None or self.counts["nodes"] < budget):
                self.counts["max_open"] = max(self.counts["max_open"], len(self.stack))
                self.current = self.stack.pop()
                self._process(self.current)
                self.current = None
                if self.inc.proves_optimal:  # paper sense: at the trivial bound (to 1e-6), nothing can beat it
                    self.stack.clear()
                if bar is not None:
                    self._refresh(bar)
                if self.stack:   # a search that has just finished is complete, whatever the clock says
                    self._check_time()
        except SearchStopped as stop:
            return stop.status
        except KeyboardInterrupt:
            return Status.INTERRUPTED
        return Status.OPTIMAL

    # ---- main loop --------------------------------------------------------------------------
    def _root(self) -> None:
        fixed, free, need = tree.root(self.inst.n, self.inst.B)
        bound = self.inst.trivial_bound if self.paper else -np.inf
        self.stack.append(tree.Node(fixed, free, need, bound, None))

    def search(self) -> Status:
        bar = tqdm(disable=not self.method.progress, unit="node", desc=f"bnb {self.inst.name}")
        try:
            roots = self.start()   # a stop in the heuristic leaves the root open: a valid bound
            status = self.search_nodes(roots, bar=bar)
        except SearchStopped as stop:
            status = stop.status
        except KeyboardInterrupt:
            status = Status.INTERRUPTED
        finally:
            self._refresh(bar, force=True)
            bar.close()
        return self.finish(status, self.global_bound, len(self.stack) + (self.current is not None), "open nodes")

    def finish(self, status, open_bound, n_open: int, what: str, extra: dict | None = None) -> Status:
        """Set the run's certified flag, bound, message, info and certificate (the sequential search's and the
        parallel one's): complete when the search ended optimal with an incumbent, else the bound
        ``open_bound()`` over the ``n_open`` open ``what`` (nodes, subtrees); ``extra`` joins the info."""
        m = self.method
        complete = status == Status.OPTIMAL and self.inc.value is not None
        bound = min(self._score_inc(), self.floor) if complete else open_bound()
        slack = self._score_inc() - bound if complete else None   # > 0 only with gap_tol: what was pruned within it
        if complete and self.inc.proves_optimal:   # Remark 1 proves it, whatever was pruned within gap_tol: the
            bound, slack = self.inst.score(self.inst.trivial_bound), 0.0   # bound and gap of Incumbent.result's claim
        info = dict(self.counts, heuristic=self.heuristic, heuristic_svm_solves=self.run.seed_solves, gap_tol=self.gap_tol,
                    bounds=("probe" if self.paper else "universe+fixed-alpha" if m.marginal else "universe")
                    if self.probes else ("trivial" if self.paper else "none"),
                    open_nodes=n_open, gap_percent=self.gap(bound), **(extra or {}))
        value_bound = float(self.inst.sign * bound) if np.isfinite(bound) else None
        message = "" if complete else (f"{status}: {n_open} {what}, bound {value_bound}, "
                                       f"gap {info['gap_percent']:.3g}%")
        if complete and slack > 0:
            message = (f"optimal within {slack:.6g} ({info['gap_percent']:.3g}% of the incumbent, gap_tol "
                       f"{self.gap_tol:g}): no subset is better than bound {value_bound}")
        if self.recorder and m.certificate:
            try:
                self.recorder.write(m.certificate, self.inc, complete, value_bound, slack or 0.0)
                info["certificate"] = m.certificate
            except OSError as exc:   # the answer is kept: info["certificate_error"] and a warning say why no file
                info["certificate_error"] = f"cannot write the certificate {m.certificate}: {exc.strerror or exc}"
                warnings.warn(info["certificate_error"], RuntimeWarning, stacklevel=2)
        run = self.run
        run.n_svm_solves = run.seed_solves + self.counts["qps"]
        # certified = proven optimal (to the values' accuracy); a search that pruned within gap_tol is complete
        # (status optimal, the certificate proves its bound) but not certified: its message and gap say by how much
        run.certified, run.bound, run.message = complete and not slack, value_bound, message
        run.info.update(info)
        return status
