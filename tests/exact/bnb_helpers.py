"""Small random instances and exact value tables for the branch-and-bound tests."""
import itertools

import numpy as np

from minlp_fs.alpha import AlphaSubproblem
from minlp_fs.instance import make_instance

KERNELS = ("poly2", "poly3", "poly5", "rbf")
SENSES = ("paper", "fit")


def random_instance(seed: int, m: int, n: int, B: int, kernel: str, sense: str, C: float = 10.0):
    """Gaussian features with a weak signal on the first two, labels with both classes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=1.0, size=m) > 0, 1, -1)
    y[:2] = (1, -1)
    return make_instance(X, y, B=B, kernel=kernel, sense=sense, C=C)


def random_node(data, n: int, B: int) -> tuple:
    """(I, F, need) of a random node of the tree over n features and budget B, drawn by hypothesis's ``data``."""
    from hypothesis import strategies as st

    k = data.draw(st.integers(0, B - 1))
    perm = data.draw(st.permutations(range(n)))
    return tuple(sorted(perm[:k])), tuple(sorted(perm[k:])), B - k


def value_table(inst, sizes=None) -> dict:
    """g(S) of every subset of the given sizes (default 0..n), by exact SVM solves (enumeration)."""
    oracle = AlphaSubproblem(inst)
    sizes = range(1, inst.n + 1) if sizes is None else sizes
    return {S: oracle.solve(S).value for k in sizes for S in itertools.combinations(range(inst.n), k)}


def interrupt_second_wave(monkeypatch) -> list:
    """Ctrl-C in parallel bnb's second wave: joblib's second Parallel call raises KeyboardInterrupt (waves of 2
    subtrees); the returned list counts the calls."""
    import joblib

    from minlp_fs.exact import parallel

    calls, real = [], joblib.Parallel.__call__

    def stop_second(self, tasks):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, tasks)

    monkeypatch.setattr(joblib.Parallel, "__call__", stop_second)
    monkeypatch.setattr(parallel, "WAVE", 2)
    return calls
