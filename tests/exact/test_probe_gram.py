"""ProbeGrams: K_{I+j} from the node's base X_I X_I' equals the instance's Gram of I + j."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.exact.probe_gram import ProbeGrams

from bnb_helpers import random_instance


@given(seed=st.integers(0, 10_000), n=st.integers(2, 7), degree=st.sampled_from([2, 3, 5]), data=st.data())
@settings(max_examples=25, deadline=None)
def test_probe_grams_equal_the_instance_gram(seed, n, degree, data):
    inst = random_instance(seed, 20, n, 1, f"poly{degree}", "paper")
    fixed = tuple(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n - 1))))
    j = data.draw(st.sampled_from([k for k in range(n) if k not in fixed]))
    expected = inst.gram(tuple(sorted((*fixed, j))))
    K = ProbeGrams(inst, fixed).gram(j)
    assert np.allclose(K, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    assert np.array_equal(K, K.T)
