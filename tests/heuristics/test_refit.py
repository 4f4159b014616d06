"""best_refit's chunks and early stops (minlp_fs/heuristics/refit.py), with a stand-in oracle."""
from types import SimpleNamespace

import numpy as np
import pytest

from minlp_fs.alpha.oracle import PRUNE_RTOL, Fit
from minlp_fs.datasets import make_synthetic
from minlp_fs.heuristics.refit import CHUNK, best_refit
from minlp_fs.instance import make_instance


class _Oracle:
    """Exact values by subset; a solve with ``worse_than`` stops early (exact=False) when the value is worse
    than it by more than PRUNE_RTOL, as AlphaSubproblem.solve may. Records (subset, worse_than) per solve."""

    def __init__(self, values, sign):
        self.values, self.sign, self.calls = values, sign, []

    def solve(self, subset, warm_start=None, worse_than=None, neighbours=None):
        self.calls.append((subset, worse_than))
        v = self.values[subset]
        if worse_than is not None and self.sign * v > self.sign * worse_than + PRUNE_RTOL * max(abs(worse_than), 1):
            return Fit(subset, v + self.sign, None, exact=False)  # SMO's f(alpha): only a bound
        return Fit(subset, v, None)


@pytest.mark.parametrize("sense", ["paper", "fit"])
@pytest.mark.parametrize("seed", range(4))
def test_chunks_of_1_2_4_then_CHUNK_each_against_the_best_before_it_give_the_best_refit(sense, seed):
    """21 candidates, the best 20 by their screening re-fitted: chunks of 1, 2, 4, CHUNK, 5 in the screening
    order; every re-fit of a chunk stops early against the best exact value of the chunks before it (none for
    the first); the answer is the best value of all (the first candidate on ties), as without early stops."""
    d = make_synthetic(m=30, n_informative=2, n_noise=4, seed=0)
    inst = make_instance(d.X, d.y, B=2, kernel="poly2", sense=sense)
    rng = np.random.default_rng(seed)
    candidates = [(0, j) for j in range(1, 22)]
    values = dict(zip(candidates, rng.choice([-3.0, -2.0, -1.0, 0.0], size=21).tolist()))
    # the screening order, unrelated to the values; above them all (in the fit sense f(alpha_c, .) bounds g
    # from above, and best_refit skips candidates whose bound is below the best re-fit)
    screened = 10.0 + rng.permutation(21)
    oracle = _Oracle(values, inst.sign)
    centre = SimpleNamespace(alpha=None, value=0.0)
    best, timed_out = best_refit(inst, oracle, centre, candidates, lambda c: [screened[t] for t in range(len(c))],
                                 20 / 21, 1)
    order = sorted(range(21), key=lambda t: inst.score(screened[t]))[:20]
    assert [c[0] for c in oracle.calls] == [candidates[t] for t in order] and not timed_out
    sizes, lo = [], 0
    while lo < 20:
        sizes.append(min(CHUNK, 1 << len(sizes), 20 - lo))
        lo += sizes[-1]
    assert sizes == [1, 2, 4, CHUNK, 20 - 7 - CHUNK]
    lo = 0
    for size in sizes:
        before = [values[candidates[t]] for t in order[:lo]]
        expected = None if not before else min(before, key=inst.score)
        assert all(w == expected for _, w in oracle.calls[lo:lo + size])
        lo += size
    want = min(order, key=lambda t: (inst.score(values[candidates[t]]), t))
    assert best.exact and best.subset == candidates[want] and best.value == values[candidates[want]]
