"""Hand-made raw records for the table, metric and figure tests."""


def record(method, B, value, sense="paper", kernel="poly2", dataset="wholesale", certified=False,
           degenerate=False, time=1.0, seed=None, n_svm=10, options=None, n=7, error=None):
    unit = {"dataset": dataset, "kernel": kernel, "B": B, "sense": sense, "method": method}
    if seed is not None:
        unit.update(start="random", seed=seed)
    if options is not None:
        unit["options"] = options
    if error is not None:
        return {"unit": unit, "error": error}
    return {"unit": unit, "instance": {"n": n, "m": 100, "trivial_bound": -1000.0},
            "result": {"method": method, "sense": sense, "objective": value, "features": list(range(B)),
                       "status": "optimal" if certified else "converged", "certified": certified,
                       "degenerate": degenerate, "wall_time_s": time, "n_svm_solves": n_svm, "bound": None,
                       "message": "", "info": {}}}


def certified_records():
    """Paper sense: optima -100 (B=1, degenerate) and -200 (B=2); fit sense: optimum -50 (B=1)."""
    return [
        record("enumerate", 1, -100.0, certified=True, degenerate=True),
        record("enumerate", 2, -200.0, certified=True),
        record("ls*", 1, -100.0, time=1.0),
        record("ls*", 2, -190.0, time=3.0),          # gap 5 %
        record("rfe1", 1, -90.0, time=0.5),          # gap 10 %
        record("rfe1", 2, None, error="RuntimeError: boom"),
        record("enumerate", 1, -50.0, sense="fit", certified=True),
        record("ls*", 1, -55.0, sense="fit"),        # gap 10 % (fit sense maximises)
        record("ls*", 3, -1.0),                      # no certified optimum: ignored
    ]


def multistart_records():
    """One paper-sense instance: LS* from 3 starts, ACSO* from 2, RFE2 once; best known -100."""
    return [record("ls*", 3, v, seed=s, kernel="poly3", time=2.0) for s, v in enumerate((-100.0, -95.0, -90.0))] + \
        [record("acso*", 3, -100.0, seed=s, kernel="poly3", time=4.0) for s in range(2)] + \
        [record("rfe2", 3, -80.0, kernel="poly3", time=1.0),
         record("ls*", 3, -40.0, seed=0, kernel="rbf"), record("ls*", 3, -50.0, seed=1, kernel="rbf")]


DEFAULTS = {"ls*": {"refit_fraction": 0.1, "n_samples": 200}}


def params_records():
    """One case; default config and three variations; best -100."""
    def opts(**kw):
        return {**DEFAULTS["ls*"], **kw}
    return [record("ls*", 3, -100.0, options=opts(), n_svm=40, time=2.0),
            record("ls*", 3, -100.0, options=opts(refit_fraction=1.0), n_svm=150, time=6.0),
            record("ls*", 3, -90.0, options=opts(refit_fraction=1e-9), n_svm=8, time=1.0),
            record("ls*", 3, -95.0, options=opts(n_samples=100), n_svm=35, time=1.5)]


def accuracy_records():
    out = []
    for fold, (a, b) in enumerate([(0.8, 0.9), (0.9, 0.7)]):
        unit = {"dataset": "cleveland", "kernel": "poly2", "B": 5, "fold": fold, "n_folds": 2, "seed": 0}
        out.append({"unit": {**unit, "method": "ls*", "sense": "fit"}, "accuracy": a, "selection_time_s": 2.0,
                    "features": [0, 1, 2, 3, 4]})
        out.append({"unit": {**unit, "method": "all-features", "sense": None}, "accuracy": b,
                    "selection_time_s": 0.0, "features": list(range(13))})
    return out
