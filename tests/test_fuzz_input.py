"""Fuzz (hypothesis): arbitrary small CSV text and arrays either give a valid Instance or an InputError."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minlp_fs.datasets import read_csv
from minlp_fs.errors import InputError
from minlp_fs.instance import make_instance

FIELDS = st.one_of(
    st.sampled_from(["1", "-1", "0", "2.5", "1e308", "-1e308", "1e-320", "nan", "inf", "", " ", "x", "y", "é",
                     '"1"', '"a,b"', "\ufeff", "\x00", "1e400"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=4),
)
LINES = st.lists(st.lists(FIELDS, min_size=0, max_size=5).map(",".join), min_size=0, max_size=8)
HEADERS = st.one_of(st.lists(st.sampled_from(["a", "b", "y", "Y", "", "a"]), min_size=1, max_size=4).map(",".join),
                    st.text(max_size=10))
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "latin-1"])


def _is_valid(inst) -> bool:
    return (np.isfinite(inst.X).all() and set(np.unique(inst.y)) == {-1.0, 1.0}
            and inst.X.shape == (inst.y.size, len(inst.feature_names)) and 1 <= inst.B <= inst.n)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=HEADERS, lines=LINES, encoding=ENCODINGS, kernel=st.sampled_from(["poly2", "poly5", "rbf"]),
       scaling=st.sampled_from(["minmax", "standard", "none"]))
def test_csv_text_loads_into_a_valid_instance_or_raises_input_error(tmp_path, header, lines, encoding, kernel,
                                                                    scaling):
    path = tmp_path / "fuzz.csv"
    try:
        path.write_bytes("\n".join([header, *lines]).encode(encoding))
    except UnicodeEncodeError:
        return
    try:
        d = read_csv(path)
        inst = make_instance(d.X, d.y, B=1, kernel=kernel, scaling=scaling, feature_names=d.feature_names)
    except InputError:
        return
    assert _is_valid(inst)


ELEMENTS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**400, 10**400),
                     st.sampled_from([0, 1, -1, 1e300, -1e300, 1e-300, True, "1", "a", None, 1j]))


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(0, 6), cols=st.integers(0, 4), data=st.data(), B=st.sampled_from([1, 2, 0, 5, 1.5, "1"]),
       kernel=st.sampled_from(["poly2", "poly5", "rbf"]), gamma=st.sampled_from([None, 1.0, 1e70, -1.0]),
       C=st.sampled_from([10.0, 1e300, 0.0, float("nan")]), scaling=st.sampled_from(["minmax", "none"]))
def test_arrays_give_a_valid_instance_or_raise_input_error(rows, cols, data, B, kernel, gamma, C, scaling):
    X = data.draw(st.lists(st.lists(ELEMENTS, min_size=cols, max_size=cols), min_size=rows, max_size=rows))
    y = data.draw(st.lists(st.one_of(st.sampled_from([1, -1, 0, 2, "a", "b", None, 1.5, float("nan")])),
                           min_size=rows, max_size=rows))
    try:
        inst = make_instance(X, y, B=B, kernel=kernel, gamma=gamma, C=C, scaling=scaling)
    except InputError:
        return
    assert _is_valid(inst)


def test_the_fuzz_strategies_reach_both_outcomes(tmp_path):
    """A valid and an invalid example of each kind, so neither fuzz test can pass vacuously."""
    path = tmp_path / "ok.csv"
    path.write_text("a,y\n1,1\n2,-1\n")
    assert _is_valid(make_instance(read_csv(path).X, read_csv(path).y, B=1))
    with pytest.raises(InputError):
        make_instance([[1e300], [-1e300]], [1, -1], B=1, scaling="none", kernel="poly5")
