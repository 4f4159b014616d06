"""Scores of the experiments, computed from raw records: gaps, summaries, performance profiles.

Gap of a value f to a reference f_ref (the certified optimum or the best known), in percent and in
the instance's sense (section 5.1.2): gap = 100 sign (f - f_ref) / |f_ref|, sign = +1 in the paper
sense (minimise), -1 in the fit sense (maximise). A method *reaches* the reference when its gap is
at most :data:`REACHED_PCT` (the alpha-subproblem's KKT tolerance makes equal subsets agree to
about 1e-9 relative). Performance profiles follow Dolan and More (2002): for costs c_{p,s} > 0,
r_{p,s} = c_{p,s} / min_s c_{p,s} and rho_s(tau) = |{p : r_{p,s} <= tau}| / #problems (failures:
r = inf); the paper's quality profiles (Figure b2-pp) use the gap itself as the measure:
rho_s(tau) = fraction of instances with gap <= tau.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..workers import n_workers

#: gap (%) below which a method counts as having reached the reference
REACHED_PCT = 1e-3
#: methods whose certified records are the reference optimum of an instance
EXACT_METHODS = ("enumerate", "bnb")
#: the "exact" column's name for a certificate by the paper sense's trivial bound (below)
TRIVIAL_BOUND = "trivial bound"


def certifies(record: dict) -> bool:
    """The record proves its value optimal: an exact method's certified run, or (paper sense) any method's
    answer that attains the trivial bound -2C min(|I+|, |I-|), a lower bound of every subset's value (Remark 1;
    ``result['degenerate']``, set by the package's own re-evaluation, to the relative tolerance of
    ``objective.attains_trivial_bound``, 1e-6). A general solver's own proof (SCIP, BARON) is not counted here:
    the grid's reference optima are the package's."""
    if "error" in record or not record["result"]["certified"]:
        return False
    return record["unit"]["method"] in EXACT_METHODS or \
        (record["unit"]["sense"] == "paper" and bool(record["result"]["degenerate"]))


def certified_optima(records: list) -> dict:
    """{instance key: (certified optimum, degenerate)}: the exact method's certified value, else (paper sense,
    no exact run certified) the best value of the answers certified by the trivial bound."""
    exact, trivial = {}, {}
    for r in records:
        if not certifies(r):
            continue
        u, res = r["unit"], r["result"]
        key = instance_key(u)
        if u["method"] in EXACT_METHODS:
            exact[key] = (res["objective"], res["degenerate"])
        elif key not in trivial or _better(res["objective"], trivial[key][0], u["sense"]):
            trivial[key] = (res["objective"], res["degenerate"])
    return {**trivial, **exact}


def sense_sign(sense: str) -> float:
    return 1.0 if sense == "paper" else -1.0


def gap_pct(value: float, ref: float, sense: str) -> float:
    """100 sign (value - ref) / |ref| (>= 0 when ``ref`` is at least as good as ``value``)."""
    return 100.0 * sense_sign(sense) * (value - ref) / max(abs(ref), 1e-12)


def family(kernel: str) -> str:
    return "rbf" if kernel == "rbf" else "poly"


def instance_key(unit: dict) -> tuple:
    """What identifies a DFS-SVM instance in a unit (its method, start and seed excluded)."""
    return (unit["dataset"], unit["kernel"], unit["B"], unit["sense"], unit.get("C", 10.0),
            unit.get("gamma"), unit.get("m"))


def objective(record: dict) -> float | None:
    """The record's objective, None when the unit failed or the method returned nothing."""
    return None if "error" in record else record["result"]["objective"]


def _better(a: float, b: float, sense: str) -> bool:
    return sense_sign(sense) * a < sense_sign(sense) * b


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return float(np.mean(xs)) if xs else None


def certified_summary(records: list) -> dict:
    """Per (sense, family, dataset, method): instances, mean gap to the certified optimum, # reached, time.

    Only instances with a certified optimum count (:func:`certified_optima`: a certified exact record,
    ``enumerate`` or ``bnb``, or an answer at the trivial bound). Returns ``{"rows": [...],
    "overall": [...], "by_B": [...], "n_degenerate": {(sense, family, dataset): k}}``; a row's
    ``gap`` averages the methods' finite answers, ``n_failed`` counts runs without an answer.
    """
    certified = certified_optima(records)
    optimum = {key: value for key, (value, _) in certified.items()}
    degenerate = {key: deg for key, (_, deg) in certified.items()}
    groups, by_b, overall = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in records:
        u = r["unit"]
        key = instance_key(u)
        if u["method"] in EXACT_METHODS or key not in optimum:
            continue
        value = objective(r)
        gap = None if value is None else gap_pct(value, optimum[key], u["sense"])
        entry = (gap, None if value is None else r["result"]["wall_time_s"])
        groups[(u["sense"], family(u["kernel"]), u["dataset"], u["method"])].append(entry)
        overall[(u["sense"], family(u["kernel"]), u["method"])].append(entry)
        by_b[(u["sense"], family(u["kernel"]), u["dataset"], u["method"], u["B"])].append(
            None if gap is None else max(gap, 0.0))
    n_deg = defaultdict(int)
    for key, deg in degenerate.items():
        n_deg[(key[3], family(key[1]), key[0])] += bool(deg)
    return {"rows": [_row(k, v) for k, v in groups.items()],
            "overall": [_row(k, v) for k, v in overall.items()],
            "by_B": [{"key": k, "gap": _mean(v)} for k, v in by_b.items()],
            "n_degenerate": dict(n_deg), "n_certified": len(optimum)}


def stopped_gap(record: dict) -> float | None:
    """The gap (%) an exact run that stopped uncertified reports between its incumbent and its global bound:
    bnb's ``info['gap_percent']``, else 100 |bound - objective| / |objective| from the record (None
    without a bound or an answer)."""
    res = record["result"]
    gap = res.get("info", {}).get("gap_percent")
    if gap is not None:
        return float(gap)
    if res.get("bound") is None or res.get("objective") is None:
        return None
    return 100.0 * abs(res["bound"] - res["objective"]) / max(abs(res["objective"]), 1e-12)


def core_seconds(record: dict) -> float:
    """A record's unit time in one-core seconds: its wall time times the processes its method ran on (its
    ``n_jobs`` option, -1 = every CPU of this machine; 1 without), so that a parallel unit counts what it used."""
    jobs = int((record["unit"].get("options") or {}).get("n_jobs", 1))
    return record.get("unit_time_s", 0.0) * (n_workers(jobs) if jobs == -1 else max(1, jobs))


def certification_reach(records: list, units: list) -> dict:
    """Per (dataset, kernel, sense) of the grid ``units``: how far its exact units certified (Table cert-coverage).

    Returns ``{key: {"target": largest B of the grid, "reach": largest B with every B' <= B certified (0:
    none), "certified": sorted certified Bs, "stopped": {B: gap % or None} of exact runs that ended
    uncertified (time limit, failure) at a B no other record certified, "missing": sorted Bs without an
    exact record, "methods": sorted exact methods (and :data:`TRIVIAL_BOUND` where an answer at the trivial
    bound certified a B), "exact_s": sum of the exact units' times, "all_s": sum of every unit's time}}``, in
    one-core seconds (:func:`core_seconds`).
    Only :func:`certifies` counts: a run stopped at its time limit is never certified.
    """
    out = {}
    for u in units:
        key = (u["dataset"], u["kernel"], u["sense"])
        e = out.setdefault(key, {"target": 0, "certified": [], "stopped": {}, "missing": set(), "methods": set(),
                                 "trivial": set(), "exact_s": 0.0, "all_s": 0.0})
        e["target"] = max(e["target"], u["B"])
        if u["method"] in EXACT_METHODS:
            e["missing"].add(u["B"])
            e["methods"].add(u["method"])
    for r in records:
        u = r["unit"]
        e = out.get((u["dataset"], u["kernel"], u["sense"]))
        if e is None:
            continue
        e["all_s"] += core_seconds(r)
        if u["method"] not in EXACT_METHODS:
            if certifies(r):
                e["trivial"].add(u["B"])
            continue
        e["exact_s"] += core_seconds(r)
        e["missing"].discard(u["B"])
        if certifies(r):
            e["certified"].append(u["B"])
        else:
            e["stopped"][u["B"]] = None if "error" in r else stopped_gap(r)
    for e in out.values():
        trivial_only = e.pop("trivial") - set(e["certified"])
        if trivial_only:
            e["methods"].add(TRIVIAL_BOUND)
        done = set(e["certified"]) | trivial_only
        e["stopped"] = {b: g for b, g in e["stopped"].items() if b not in done}
        e["reach"] = min(set(range(1, e["target"] + 2)) - done) - 1
        e["certified"], e["missing"], e["methods"] = sorted(done), sorted(e["missing"] - done), sorted(e["methods"])
    return out


def _row(key: tuple, entries: list) -> dict:
    gaps = [g for g, _ in entries if g is not None]
    return {"key": key, "n": len(entries), "gap": _mean([max(g, 0.0) for g in gaps]),
            "n_reached": sum(g <= REACHED_PCT for g in gaps), "n_failed": len(entries) - len(gaps),
            "n_below_reference": sum(g < -REACHED_PCT for g in gaps),
            "time": _mean([t for _, t in entries])}


def multistart_summary(records: list) -> dict:
    """Per instance and method: gaps of every start to the best known; per (sense, method): Table b2-summary
    (``rows``); per (sense, dataset, method): the same over the dataset's kernels (``by_dataset``).

    The best known of an instance is the best value of any record (any method, start, or the
    enumeration). Spread = gap of the worst start - gap of the best start (None for one run).
    """
    best, certified = {}, {}
    runs = defaultdict(list)
    for r in records:
        u, value = r["unit"], objective(r)
        key = instance_key(u)
        if value is not None and (key not in best or _better(value, best[key], u["sense"])):
            best[key] = value
        if u["method"] in EXACT_METHODS:
            if value is not None and r["result"]["certified"]:
                certified[key] = value
            continue
        runs[(key, u["method"])].append((value, None if value is None else r["result"]["wall_time_s"]))
    per_instance, rows, by_dataset = [], defaultdict(list), defaultdict(list)
    for (key, method), vals in runs.items():
        gaps = [None if v is None or key not in best else gap_pct(v, best[key], key[3]) for v, _ in vals]
        ok = [g for g in gaps if g is not None]
        item = {"key": key, "method": method, "gaps": ok, "n_runs": len(vals), "n_failed": len(vals) - len(ok),
                "gap_best": min(ok) if ok else None,
                "spread": (max(ok) - min(ok)) if len(ok) > 1 else None,
                "time": _mean([t for _, t in vals])}
        per_instance.append(item)
        rows[(key[3], method)].append(item)
        by_dataset[(key[3], key[0], method)].append(item)
    agree = sum(abs(gap_pct(best[k], v, k[3])) <= REACHED_PCT for k, v in certified.items())
    return {"rows": _instance_rows(rows), "by_dataset": _instance_rows(by_dataset), "per_instance": per_instance,
            "n_certified": len(certified), "n_best_is_certified": agree}


def _instance_rows(groups: dict) -> list:
    """Per group of instances: how many, mean best-start gap, # reaching the best known, mean spread and time."""
    return [{"key": key, "n": len(items), "gap": _mean([i["gap_best"] for i in items]),
             "n_reached": sum(i["gap_best"] is not None and i["gap_best"] <= REACHED_PCT for i in items),
             "spread": _mean([i["spread"] for i in items]), "time": _mean([i["time"] for i in items])}
            for key, items in groups.items()]


def params_summary(records: list, defaults: dict) -> dict:
    """Per (method, option, value): cases, mean gap to the best of all configurations, SVM solves, time.

    A configuration varies one option from ``defaults[method]``; the default configuration counts
    for every option. ``by_B`` splits the rows by the budget fraction B/n (one decimal).
    """
    best = {}
    for r in records:
        value = objective(r)
        key = instance_key(r["unit"])
        if value is not None and (key not in best or _better(value, best[key], key[3])):
            best[key] = value
    cells, by_b = defaultdict(list), defaultdict(list)
    for r in records:
        u, value = r["unit"], objective(r)
        if value is None:
            continue
        base = defaults[u["method"]]
        varied = [k for k, v in u["options"].items() if base.get(k) != v]
        entry = (gap_pct(value, best[instance_key(u)], u["sense"]), r["result"]["n_svm_solves"],
                 r["result"]["wall_time_s"])
        frac = round(u["B"] / r["instance"]["n"], 1)
        for opt in (varied or list(base)):
            cells[(u["method"], opt, u["options"][opt])].append(entry)
            by_b[(u["method"], opt, u["options"][opt], frac)].append(entry)

    def row(key, entries):
        g, s, t = zip(*entries)
        return {"key": key, "n": len(entries), "gap": float(np.mean(g)), "svm_solves": float(np.mean(s)),
                "time": float(np.mean(t))}

    return {"rows": [row(k, v) for k, v in sorted(cells.items())],
            "by_B": [row(k, v) for k, v in sorted(by_b.items())]}


def accuracy_summary(records: list) -> list:
    """Per (dataset, kernel, B, method, sense): mean and std of the fold accuracies, selection time."""
    cells = defaultdict(list)
    for r in records:
        if "error" in r:
            continue
        u = r["unit"]
        cells[(u["dataset"], u["kernel"], u["B"], u["method"], u["sense"])].append(
            (r["accuracy"], r["selection_time_s"]))
    return [{"key": k, "n_folds": len(v), "mean": float(np.mean([a for a, _ in v])),
             "std": float(np.std([a for a, _ in v])), "time": float(np.mean([t for _, t in v]))}
            for k, v in cells.items()]


def performance_ratios(costs: dict) -> dict:
    """Dolan-More ratios r_{p,s} = c_{p,s} / min_s c_{p,s}; ``costs``: method -> list over problems.

    A cost None (failure) gives r = inf; a problem that no method solved gives inf for all.
    """
    methods = list(costs)
    matrix = np.array([[np.inf if c is None else float(c) for c in costs[s]] for s in methods])
    best = matrix.min(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(np.isfinite(best), matrix / best, np.inf)
    return {s: ratios[i] for i, s in enumerate(methods)}


def profile(values, taus) -> np.ndarray:
    """rho(tau) = fraction of the values <= tau, for each tau (None and inf never count)."""
    v = np.array([np.inf if x is None else float(x) for x in values])
    if v.size == 0:
        return np.zeros(len(taus))
    return np.array([(v <= t).mean() for t in taus])
