"""Choose the number of features B by cross-validation: :class:`KernelFeatureSelectorCV` (RFECV's kind).

For every point of a small (C, gamma) grid and every CV split, the **warm-started path** over B
(:func:`selection_path`) selects one subset per B on the training part; an SVC with the selection's
kernel (same C, gamma, coef0, degree, scaling fitted on the training part) is trained on the selected
columns and scored on the held-out part. The (B, C, gamma) with the best mean score wins (``select="best"``),
or, with ``select="1se"``, the smallest B whose mean score is within one standard error of the best
(standard error = std over the splits / sqrt(number of splits), Hastie, Tibshirani & Friedman 7.10);
ties go to the better mean, then to the earlier grid point. The final subset is the path's subset at
the chosen B, computed again on all of X.

The path (problem (4) for each B of the grid, in the estimator's sense):

* forward, B ascending: the method runs from its default start (the alpha-start: the cold run), then
  again from the previous B's best subset grown by the features whose addition gives the best exact
  g(beta) (one feature at a time, ties to the lowest index);
* backward, B descending: it runs again from the next larger B's best subset shrunk by the features
  whose removal gives the best exact g(beta).

Each B keeps the best of its runs, so the path is never worse than the cold run at any B (a warm start
alone is not: LS* from a grown start can stop at a worse local optimum, as measured at B = n - 1 on
7 columns); a warm run is skipped when its start was already tried at that B or is that B's best subset.
Measured (benchmarks/bench_selection_path.py): with LS*, a warm run beat the cold run at 12 of 54
(instance, B) in the fit sense and 3 of 54 in the paper sense on seeded synthetic sets of 10 columns,
and at none of B = 1..8 on BCD, where the path cost 1.4-1.5x the cold runs alone.
Warm starts apply to start-dependent methods (LS, LS*, ACSO, ...); other methods run once per B.
Every subset's value is the method's answer, re-evaluated by :mod:`minlp_fs.objective` as everywhere.

Defaults, chosen from held-out accuracy on the paper's nine datasets (benchmarks/bench_selectors.py,
RESULTS.md section ``bench_selectors``: stratified 5-fold outer CV, the same folds and the same final
SVC for every variant, selection on the training folds only):

* ``method="ls"`` (KernelFeatureSelector's default is LS*): at B = ceil(n/4), LS's subsets scored the
  same mean held-out accuracy as LS*'s on 6 of 9 datasets, higher on Ionosphere and Sonar (+1.4, +0.9
  points) and lower on German (-0.4), at 7-32x less CPU (German: 1.0 s against 32 s per fit); the path
  runs the method about 2 x (number of B) times per split;
* ``n_features=None`` (B = 1 .. min(n, 10)): the wider grid 1 .. min(n, 20) changed the mean held-out
  accuracy by -0.3 .. +0.5 points on the five datasets with n > 10 where it ran (within the fold
  spread; German not run), at 1.2-3.8x the CPU;
* ``Cs=None, gammas=None`` (C = 10, gamma = 0.1 only): adding gamma = 1 to the search (scored with the
  selector's own SVC at the chosen gamma) moved the mean by -0.7 .. +3.9 points on eight datasets (up on
  four, down on two; +2.6 on Ionosphere and +3.9 on Sonar, one to two fold standard deviations, where the
  gain is the final SVC's gamma = 1: the same subsets scored lower with the gamma = 0.1 SVC), at 2.2-5.2x
  the CPU (German not run); search it when an interaction is suspected (bench_selection_path.py (c)) or
  when the cost is affordable;
* ``select="best"``: the one-standard-error rule chose fewer features but lost 0.5-4.0 points of
  held-out accuracy on 7 of 9 datasets, tied on BCD and gained 1.5 on Sonar;
* ``cv=5``: RFECV's default; not varied (the measured cost is (cv + 1) paths).
"""
from __future__ import annotations

import numbers
import time
from itertools import product

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from . import large_m as large_mode
from .alpha import AlphaSubproblem
from .errors import plain
from .selector import (
    _PARAMS_DOC, _SCALERS, KernelFeatureSelector, _all_features, _SupportSelector, _CardinalityParams, _check_params, _check_targets,
    _TRIVIAL, _degenerate_warning, _instance, _method, _paper_sense_warning, _seed,
)

SELECT_RULES = ("best", "1se")
#: the default grid of B: 1 .. min(number of columns, DEFAULT_MAX_FEATURES)
DEFAULT_MAX_FEATURES = 10


def _extend(oracle, subset, size: int) -> tuple:
    """Grow (or shrink) ``subset`` to ``size`` features one at a time, each step the addition (removal)
    with the best exact g(beta) in the instance's sense; ties to the lowest feature index."""
    inst = oracle.instance
    S = tuple(subset)
    while len(S) != size:
        if len(S) < size:
            cands = [tuple(sorted(S + (j,))) for j in range(inst.n) if j not in S]
        else:
            cands = [tuple(j for j in S if j != out) for out in S]
        fits = [oracle.solve(c) for c in cands]
        S = min(fits, key=lambda fit: inst.score(fit.value)).subset
    return tuple(int(j) for j in S)


def selection_path(est, X, y, ks, tick=None, feature_names=None) -> dict:
    """{B: Result} for every B in ``ks`` (sorted, distinct, 1 <= B <= n) on X (non-constant columns),
    with the warm starts described in the module docstring; ``est`` supplies the kernel, C, gamma,
    sense, scaling and method (as for :class:`KernelFeatureSelector`). ``tick()`` is called once per B
    and pass (2 len(ks) calls). Each Result's ``info["path_start"]`` says how its run was started
    ("default", "grown from n_features=B'" or "shrunk from n_features=B'"); ``feature_names`` (of X's
    columns) name the Results' features. In large-m mode (``est.large_m``, :mod:`minlp_fs.large_m`) the
    path runs on one stratified sample of ``est.large_m_rows`` rows (scaling fitted on all rows), and its
    values are the sample's."""
    seed = _seed(est)                           # once: a RandomState moves on at every draw
    method = _method(est, seed)
    warm = method.uses_start
    n = X.shape[1]
    sampled = large_mode.use_large_m(est.large_m, est.large_m_rows, X.shape[0])
    setup = {}
    for B in ks:
        inst, gamma = _instance(est, X, y, B)
        if feature_names is not None:
            inst = inst.with_params(feature_names=tuple(str(name) for name in feature_names))
        if sampled:
            inst = large_mode.sample_instance(inst, est.large_m_rows, seed)
        setup[B] = (inst, AlphaSubproblem(inst), gamma)
    best, tried = {}, {B: set() for B in ks}

    def run(B, start, origin):
        inst, oracle, _ = setup[B]
        if B == n:
            res = _all_features(inst)
        else:
            res = method.solve(inst, start=start, oracle=oracle)
            if not res.ok:
                raise RuntimeError(f"method {est.method!r} returned no selection at n_features={B} "
                                   f"({res.status}): {res.message}")
        tried[B].add(tuple(res.info.get("start", res.features)))
        res.info["path_start"] = origin
        if B not in best or inst.better(res.objective, best[B].objective):
            best[B] = res

    def run_warm(B, neighbour, origin):
        start = _extend(setup[B][1], best[neighbour].features, B)
        if start not in tried[B] and start != tuple(best[B].features):
            run(B, start, f"{origin} from n_features={neighbour}")

    previous = None
    for B in ks:
        run(B, None, "default")
        if warm and previous is not None and B < n:
            run_warm(B, previous, "grown")
        previous = B
        if tick is not None:
            tick()
    following = None
    for B in reversed(ks):
        if warm and following is not None and B < n:
            run_warm(B, following, "shrunk")
        following = B
        if tick is not None:
            tick()
    for B in ks:
        best[B].info["gamma"] = setup[B][2]
    return best


def _selected(varying, constant, features, B):
    """Column indices of X: the selected non-constant columns, then constant ones for slots left."""
    return np.sort(np.concatenate([varying[list(features)], constant[:B - min(B, varying.size)]])).astype(int)


class KernelFeatureSelectorCV(_SupportSelector, _CardinalityParams, BaseEstimator):
    __doc__ = """Select the number of features of :class:`KernelFeatureSelector` by cross-validation.

    See the module docstring for the warm-started path over ``n_features``, the selection rule, and the
    measurements behind each default (method LS, B = 1 .. 10, one (C, gamma) point, 5 folds, the best mean).
    """ + _PARAMS_DOC.replace("""    n_features : int, default=5
        B, the exact number of features to select. At or above the number of columns of X, every
        column is kept with a warning (``SelectKBest``'s convention) and no method runs.
""", """    n_features : None, int or sequence of int, default=None
        The grid of B. None: 1 .. min(number of columns, 10); an int N: 1 .. min(number of columns, N);
        a sequence: those values (values at or above the number of columns keep every column).
    cv : int, cross-validation generator or iterable, default=5
        As in ``RFECV`` (an int is a ``StratifiedKFold`` without shuffling: deterministic).
    scoring : str, callable or None, default=None
        The score of the SVC on the held-out part (None: accuracy).
    Cs, gammas : sequence or None, default=None
        A grid searched jointly with B; None uses ``C`` (``gamma``) alone.
    select : {"best", "1se"}, default="best"
        The best mean score, or the smallest B within one standard error of it.
""").replace("""    method : str, default="ls*"
""", """    method : str, default="ls"
""").replace("""    time_limit : float or None, default=None
        Seconds, for methods with a ``time_limit`` option (an error for the others).
""", """    time_limit : float or None, default=None
        Seconds for each selection run (methods with a ``time_limit`` option; an error for the others). A fit
        makes up to two runs per B of the grid, per (C, gamma) point and split, plus the final path's: the
        whole fit may take that many times ``time_limit``.
""").replace("""    verbose : int, default=0
        > 0 shows a progress bar of the selection (its incumbent's improvements; with
        ``n_features="auto"`` the cross-validated path); 0 is silent.
""", """    verbose : int, default=0
        > 0 shows a progress bar over the paths (one per grid point and split, and the final one).
""") + """
    Attributes
    ----------
    n_features_ : int
        The chosen B.
    C_, gamma_ : float
        The chosen C and the kernel coefficient used at the chosen point.
    support_, selected_features_ : ndarray
        Mask and sorted indices of the selected features (the final path's subset at ``n_features_``).
    cv_results_ : dict of ndarrays
        One entry per grid point (C, gamma, B) in the order C, gamma, B: ``n_features``, ``C``,
        ``gamma``, ``split{i}_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``, ``mean_objective`` (f at the path's subsets over the splits) and
        ``mean_fit_time`` (seconds per split of the whole path, repeated for each B).
    path_ : dict
        B -> :class:`~minlp_fs.result.Result` of the final path on all of X at the chosen (C, gamma)
        (feature indices refer to the non-constant columns; in large-m mode, values on the sample).
    result_, objective_ :
        The final path's Result at ``n_features_`` and its objective f (in large-m mode re-valued
        exactly on all rows).
    large_m_ : bool
        True when the final path (on all rows of X) ran in large-m mode, searching a sample of
        ``large_m_rows`` rows. With ``large_m="auto"`` each split's path decides on its own training
        rows, so on a set just above the threshold the splits may have run exact.
    estimator_ : sklearn.pipeline.Pipeline
        Scaling and the SVC trained on the selected columns of X.
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted (three or more: one subset shared by the one-vs-rest machines,
        :mod:`minlp_fs.multiclass`; the SVCs scoring it are one-vs-one internally).
    n_features_in_, feature_names_in_ :
        As in every scikit-learn estimator.
    """

    def __init__(self, n_features=None, *, cv=5, scoring=None, Cs=None, gammas=None, select="best",
                 kernel="poly", degree=3, gamma=0.1, coef0=1.0, C=10.0, method="ls", sense="fit",
                 scaling="minmax", random_state=None, n_jobs=1, time_limit=None, method_params=None,
                 verbose=0, large_m="auto", large_m_rows=large_mode.DEFAULT_ROWS):
        super().__init__(n_features, kernel=kernel, degree=degree, gamma=gamma, coef0=coef0, C=C, method=method,
                         sense=sense, scaling=scaling, random_state=random_state, n_jobs=n_jobs,
                         time_limit=time_limit, method_params=method_params, verbose=verbose,
                         large_m=large_m, large_m_rows=large_m_rows)
        self.cv = cv
        self.scoring = scoring
        self.Cs = Cs
        self.gammas = gammas
        self.select = select

    def _grid(self, n_in):
        """The sorted distinct grid of B."""
        g = self.n_features
        if g is None or isinstance(g, numbers.Integral) and not isinstance(g, bool):
            top = DEFAULT_MAX_FEATURES if g is None else int(g)
            if top < 1:
                raise ValueError(f"n_features must be None, an integer >= 1 or a sequence of them; got {g!r}")
            return list(range(1, min(n_in, top) + 1))
        try:
            ks = sorted({int(k) for k in g})
            ok = all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in g)
        except (TypeError, ValueError):
            ks, ok = [], False
        if not ok or not ks or ks[0] < 1:
            raise ValueError(f"n_features must be None, an integer >= 1 or a sequence of them; got {g!r}")
        return ks

    def _points(self):
        """The (C, gamma) grid."""
        for name, values in (("Cs", self.Cs), ("gammas", self.gammas)):
            if values is not None and (isinstance(values, str) or not hasattr(values, "__len__") or not len(values)):
                raise ValueError(f"{name} must be a non-empty sequence or None; got {values!r}")
        Cs = [self.C] if self.Cs is None else list(self.Cs)
        gammas = [self.gamma] if self.gammas is None else list(self.gammas)
        return list(product(Cs, gammas))

    def _selector(self, B, C, gamma, seed=None):
        """The KernelFeatureSelector of one grid point (it carries the kernel, sense and method options);
        ``seed``: the fit's integer seed, in place of a RandomState (drawn once per fit)."""
        params = {k: v for k, v in self.get_params().items() if k in KernelFeatureSelector._get_param_names()}
        params.update(n_features=B, C=C, gamma=gamma)
        if seed is not None and self.random_state is not None:
            params["random_state"] = seed
        return KernelFeatureSelector(**params)

    def _svc(self, C, gamma):
        return Pipeline([("scale", _SCALERS[self.scaling]()),
                         ("svc", SVC(kernel=self.kernel, C=C, gamma=gamma, coef0=self.coef0, degree=self.degree))])

    def _path(self, X, y, ks, C, gamma, tick, seed):
        """(varying, constant, {B: Result}) on X: the path over the non-constant columns."""
        varying = np.flatnonzero(np.ptp(X, axis=0) > 0)
        if varying.size == 0:
            raise ValueError("every column of X is constant: there are no features to select from")
        constant = np.setdiff1d(np.arange(X.shape[1]), varying)
        eff = sorted({min(B, varying.size) for B in ks})
        names = getattr(self, "feature_names_in_", None)
        path = selection_path(self._selector(max(eff), C, gamma, seed), X[:, varying], y, eff, tick,
                              None if names is None else names[varying])
        return varying, constant, {B: path[min(B, varying.size)] for B in ks}

    def fit(self, X, y):
        """Run the CV over the (C, gamma, B) grid, then the path on all of X at the chosen point."""
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        _check_targets(y)
        if self.select not in SELECT_RULES:
            raise ValueError(f"select must be one of {', '.join(SELECT_RULES)}; got {self.select!r}")
        ks = self._grid(X.shape[1])
        points = self._points()
        seed = _seed(self)                          # once per fit: every path and sample uses it
        for C, gamma in points:
            _check_params(self._selector(ks[-1], C, gamma))
        if self.sense == "paper":
            _paper_sense_warning(self)
        splits = list(check_cv(self.cv, y, classifier=True).split(X, y))
        for train, _ in splits:
            if np.unique(y[train]).size < np.unique(y).size:
                labels, counts = np.unique(y, return_counts=True)
                raise ValueError(f"a training split of the cross-validation (cv={self.cv!r}) lacks a class: class "
                                 f"{plain(labels[counts.argmin()])} has only {counts.min()} example(s) for "
                                 f"{len(splits)} splits; give more examples of it or a smaller cv")
        scorer = check_scoring(self._svc(self.C, self.gamma), scoring=self.scoring)
        scores = np.empty((len(points), len(ks), len(splits)))
        objectives = np.empty_like(scores)
        times = np.empty((len(points), len(splits)))
        n_steps = len({min(B, int(np.sum(np.ptp(X, axis=0) > 0))) for B in ks})   # B >= the columns: one step
        bar = tqdm(total=(len(points) * len(splits) + 1) * 2 * n_steps, disable=not self.verbose,
                   desc=type(self).__name__, unit="path step")
        with bar:
            for p, (C, gamma) in enumerate(points):
                for s, (train, test) in enumerate(splits):
                    bar.set_postfix_str(f"C={C} gamma={gamma} split {s + 1}/{len(splits)}")
                    t0 = time.perf_counter()
                    varying, constant, path = self._path(X[train], y[train], ks, C, gamma, bar.update, seed)
                    times[p, s] = time.perf_counter() - t0
                    for b, B in enumerate(ks):
                        cols = _selected(varying, constant, path[B].features, B)
                        svc = self._svc(C, path[B].info["gamma"]).fit(X[train][:, cols], y[train])
                        try:
                            scores[p, b, s] = scorer(svc, X[test][:, cols], y[test])
                        except AttributeError as exc:   # a scorer that needs what the SVC does not give
                            raise ValueError(f"scoring={self.scoring!r} cannot score the SVCs of the "
                                             f"cross-validation (they give decision_function and predict, "
                                             f"no probabilities): {exc}") from None
                        objectives[p, b, s] = path[B].objective
            mean, std = scores.mean(axis=2), scores.std(axis=2)
            p, b = self._choose(mean, std, len(splits), ks)
            C, gamma = points[p]
            bar.set_postfix_str(f"final path C={C} gamma={gamma}")
            varying, constant, path = self._path(X, y, ks, C, gamma, bar.update, seed)
        B = ks[b]
        self.cv_results_ = self._results(points, ks, scores, objectives, times)
        self.n_features_ = B
        self.C_, self.gamma_ = float(C), float(path[B].info["gamma"])
        self.path_ = path
        self.large_m_ = large_mode.use_large_m(self.large_m, self.large_m_rows, X.shape[0])
        self.result_ = self._exact(X, y, varying, path[B], C, gamma, seed) if self.large_m_ else path[B]
        if self.result_.degenerate:
            _degenerate_warning(self, _TRIVIAL)
        self.objective_ = float(self.result_.objective)
        self.selected_features_ = _selected(varying, constant, path[B].features, B)
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[self.selected_features_] = True
        self.classes_ = np.unique(y)
        self.estimator_ = self._svc(self.C_, self.gamma_).fit(X[:, self.support_], y)
        return self

    def _exact(self, X, y, varying, searched, C, gamma, seed):
        """Large-m mode: the path's Result (on a sample) re-valued exactly on all rows of X[:, varying]."""
        B = len(searched.features)
        inst = _instance(self._selector(B, C, gamma), X[:, varying], y, B)[0]
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            inst = inst.with_params(feature_names=tuple(str(name) for name in names[varying]))
        if B == inst.n:
            return large_mode.all_features(inst)
        return large_mode.exact_result(inst, searched, min(self.large_m_rows, inst.m), seed)

    def _choose(self, mean, std, n_splits, ks):
        """(grid point, B index) by the selection rule."""
        order = [(p, b) for p in range(mean.shape[0]) for b in range(mean.shape[1])]
        top = max(order, key=lambda pb: mean[pb])                        # first best in grid order
        if self.select == "best":
            return top
        floor = mean[top] - std[top] / np.sqrt(n_splits)
        within = [pb for pb in order if mean[pb] >= floor]
        return min(within, key=lambda pb: (ks[pb[1]], -mean[pb]))

    @staticmethod
    def _results(points, ks, scores, objectives, times):
        rows = [(p, b) for p in range(len(points)) for b in range(len(ks))]
        res = {"n_features": np.array([ks[b] for _, b in rows]),
               "C": np.array([points[p][0] for p, _ in rows], dtype=object),
               "gamma": np.array([points[p][1] for p, _ in rows], dtype=object)}
        for s in range(scores.shape[2]):
            res[f"split{s}_test_score"] = np.array([scores[p, b, s] for p, b in rows])
        res["mean_test_score"] = np.array([scores[p, b].mean() for p, b in rows])
        res["std_test_score"] = np.array([scores[p, b].std() for p, b in rows])
        mean = res["mean_test_score"]
        res["rank_test_score"] = np.array([1 + int(np.sum(mean > v)) for v in mean])
        res["mean_objective"] = np.array([objectives[p, b].mean() for p, b in rows])
        res["mean_fit_time"] = np.array([times[p].mean() for p, _ in rows])
        return res


def plot_cv_results(selector, ax=None):
    """Mean CV score (+- one std over the splits) against n_features, one line per (C, gamma) point,
    with the chosen n_features marked. ``selector``: a fitted :class:`KernelFeatureSelectorCV`, or a fitted
    ``CardinalitySVC(n_features="auto")`` (its ``selector_``). Needs matplotlib (the ``plots`` extra).
    Returns the Axes."""
    if hasattr(selector, "selector_"):
        selector = selector.selector_
    elif not isinstance(selector, KernelFeatureSelectorCV):
        check_is_fitted(selector)    # an estimator not fitted yet says so first
    if not isinstance(selector, KernelFeatureSelectorCV):
        raise TypeError("plot_cv_results plots a KernelFeatureSelectorCV or a CardinalitySVC(n_features='auto'); "
                        f"got {type(selector).__name__}")
    check_is_fitted(selector, "cv_results_")
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plot_cv_results needs matplotlib: pip install 'minlp-fs[plots]'") from None
    if ax is None:
        _, ax = plt.subplots()
    res = selector.cv_results_
    points = list(dict.fromkeys(zip(res["C"], res["gamma"])))
    for C, gamma in points:
        rows = np.flatnonzero([(c, g) == (C, gamma) for c, g in zip(res["C"], res["gamma"])])
        label = f"C={C}, gamma={gamma}" if len(points) > 1 else None
        ax.errorbar(res["n_features"][rows], res["mean_test_score"][rows], yerr=res["std_test_score"][rows],
                    marker="o", capsize=3, label=label)
    ax.axvline(selector.n_features_, color="grey", linestyle="--",
               label=f"chosen: {selector.n_features_} ({selector.select})")
    ax.set_xlabel("number of features selected")
    ax.set_ylabel("mean CV score")
    ax.legend()
    return ax


__all__ = ["KernelFeatureSelectorCV", "plot_cv_results", "selection_path"]
