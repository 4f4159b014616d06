"""The compiled partner sums of minlp_fs.exact.partners against their definition, written with sorts (the code they
replaced), on random symmetric nonnegative Q (hypothesis), ties included."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.exact.partners import partner_items, top_sums
from minlp_fs.objective import NonFiniteError


def sorted_items(own, Q, r):
    """items[t, k] by the definition: own_k + 2 Q_tk + the r - 1 largest Q_kl, l in positions t + 1 .. p - 1, l != k."""
    p = len(own)
    items = np.zeros((p, p))
    for t in range(p):
        for k in range(t + 1, p):
            pool = [Q[k, l] for l in range(t + 1, p) if l != k]
            items[t, k] = own[k] + 2.0 * Q[t, k] + sum(sorted(pool, reverse=True)[:r - 1])
    return items


@given(seed=st.integers(0, 10_000), p=st.integers(2, 12), r=st.integers(1, 5), ties=st.booleans())
@settings(max_examples=60, deadline=None)
def test_items_and_top_sums_match_their_definition(seed, p, r, ties):
    r = min(r, p - 1)
    rng = np.random.default_rng(seed)
    A = rng.random((p, p)).round(1 if ties else 12)          # rounded: many equal pair terms
    Q = A + A.T
    own = rng.normal(size=p).round(1 if ties else 12)
    items = partner_items(own, Q, r)
    expected = sorted_items(own, Q, r)
    assert np.allclose(items, expected, rtol=1e-12, atol=1e-12)
    rows = np.arange(p - r)                                    # the children of a split with need = r + 1
    sums = top_sums(items, r, rows)
    assert np.allclose(sums, [sum(sorted(expected[t, t + 1:], reverse=True)[:r]) for t in rows], rtol=1e-12,
                       atol=1e-12)
    some = rows[::2]
    assert np.allclose(top_sums(items, r, some), sums[some], rtol=0, atol=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_term_is_refused(bad):
    Q = np.ones((4, 4))
    Q[1, 2] = Q[2, 1] = bad
    with pytest.raises(NonFiniteError, match="not finite"):
        partner_items(np.zeros(4), Q, 2)
    with pytest.raises(NonFiniteError, match="not finite"):
        partner_items(np.array([0.0, bad, 0.0, 0.0]), np.ones((4, 4)), 2)
