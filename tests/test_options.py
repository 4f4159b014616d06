"""Options declared once (minlp_fs/options.py) and checked in one place, in one message format."""
import pytest

from minlp_fs.errors import InputError
from minlp_fs.options import check_integer
from minlp_fs.methods import REGISTRY, get_method, method_class
from minlp_fs.options import Opt, check_value, declared


def _cls(name):
    try:
        return method_class(name)
    except ImportError as exc:  # an optional adapter that cannot be imported here
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_method_declares_every_option(name):
    cls = _cls(name)
    assert set(declared(cls)) == set(cls.options())
    assert all(doc for doc in cls.option_docs().values())


@pytest.mark.parametrize("name", [*REGISTRY, "hybrid:scip"])
def test_every_method_rejects_a_bool_for_a_number_in_one_format(name):
    cls = _cls(name)
    numeric = {key: spec for key, spec in declared(cls).items() if spec.kind in (int, float)}
    assert numeric or name == "alpha-start"
    owner = cls.name
    for key, spec in numeric.items():
        for bad in (True, False):
            with pytest.raises(InputError) as err:
                get_method(name, **{key: bad})
            assert str(err.value) == f"{owner}: {key} must be {spec.describe()}; got {bad!r}"


def test_the_inconsistencies_the_issue_names_are_gone():
    with pytest.raises(InputError, match=r"^scip: memory_limit_mb must be an integer >= 1; got True$"):
        get_method("scip", memory_limit_mb=True)
    with pytest.raises(InputError, match=r"^scip: gap must be a number >= 0; got True$"):
        get_method("scip", gap=True)
    # time_limit: one message, whether None is allowed or not
    with pytest.raises(InputError, match=r"^ls\*: time_limit must be None or a number > 0; got 0$"):
        get_method("ls*", time_limit=0)
    with pytest.raises(InputError, match=r"^scip: time_limit must be a number > 0; got None$"):
        get_method("scip", time_limit=None)
    with pytest.raises(InputError, match=r"^hybrid: time_limit must be a number > 0; got inf$"):
        get_method("hybrid:scip", time_limit=float("inf"))


@pytest.mark.parametrize("spec, good, bad, words", [
    (Opt(int, low=1), [1, 7], [0, 1.0, True, "2", None], "an integer >= 1"),
    (Opt(int, nonzero=True), [-1, 3], [0, 2.5, False], "a non-zero integer"),
    (Opt(int, low=-1, nonzero=True), [-1, 1, 64], [0, -2, 2.5, True], "an integer >= 1 or -1"),
    (Opt(float, low=0, high=1, low_open=True), [0.5, 1, 1.0], [0, 1.5, float("nan"), True], "a number in (0, 1]"),
    (Opt(float, low=0, low_open=True, none=True), [None, 1e-9, 3], [0, -1, float("inf")], "None or a number > 0"),
    (Opt(bool), [True, False], [0, 1, "yes", None], "True or False"),
    (Opt(str, choices=("a", "b")), ["a"], ["c", 1, None], "one of a, b"),
])
def test_opt_accepts_and_describes(spec, good, bad, words):
    assert spec.describe() == words
    assert all(spec.accepts(v) for v in good)
    assert not any(spec.accepts(v) for v in bad)


def test_options_are_checked_again_when_solving(small_poly_instance):
    method = get_method("ls*")
    method.pool_size = True  # not an option of ls*: ignored
    method.n_samples = True
    with pytest.raises(InputError, match=r"^ls\*: n_samples must be an integer >= 0; got True$"):
        method.solve(small_poly_instance)


def test_function_arguments_use_the_same_checker():
    with pytest.raises(InputError, match=r"^multistart: k must be an integer >= 1; got True$"):
        check_value("multistart", "k", True, int, low=1)
    with pytest.raises(InputError, match=r"^synthetic data: seed must be an integer >= 0; got -1$"):
        check_integer("synthetic data", "seed", -1, 0)
