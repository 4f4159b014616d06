"""Worker counts: ``--jobs``/``n_jobs`` capped at the CPUs with a warning, -1 = all, 0 and < -1 refused."""
import warnings

import pytest

from minlp_fs import workers
from minlp_fs.errors import InputError
from minlp_fs.workers import JobsCappedWarning, cap_jobs


@pytest.fixture
def four_cpus(monkeypatch):
    monkeypatch.setattr(workers, "cpu_count", lambda: 4)


def test_within_the_cpus_is_unchanged_without_warning(four_cpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [cap_jobs(n, "certify --jobs") for n in (1, 2, 4)] == [1, 2, 4]


def test_minus_one_means_every_cpu(four_cpus):
    assert cap_jobs(-1, "certify --jobs") == 4


def test_above_the_cpus_is_capped_with_a_warning_naming_the_flag(four_cpus):
    with pytest.warns(JobsCappedWarning,
                      match=r"^certify --jobs 100000 is more than the 4 CPU\(s\) of this machine; using 4$"):
        assert cap_jobs(100000, "certify --jobs") == 4


@pytest.mark.parametrize("bad", [0, -2, -100, 2.5, True, "3", None])
def test_meaningless_requests_are_input_errors(four_cpus, bad):
    with pytest.raises(InputError, match=r"^solve --jobs must be an integer >= 1 or -1 \(one worker per CPU\); got "):
        cap_jobs(bad, "solve --jobs")


def test_the_real_cpu_count_is_at_least_one_and_at_most_os_cpu_count():
    import os

    assert 1 <= workers.cpu_count() <= (os.cpu_count() or 1)


def test_n_workers_caps_silently_and_minus_one_is_every_cpu(four_cpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [workers.n_workers(n) for n in (-1, 1, 3, 4, 100)] == [4, 1, 3, 4, 4]


def test_the_api_follows_the_cli_rule_for_n_jobs(four_cpus, small_poly_instance):
    """solve(n_jobs=...) accepts what --jobs accepts, refuses the rest with the same words, and warns once
    above the CPU count (then runs on the CPUs)."""
    from minlp_fs import solve

    with pytest.raises(InputError, match=r"^ls\*: n_jobs must be an integer >= 1 or -1; got -3$"):
        solve(small_poly_instance, method="ls*", n_jobs=-3)
    with pytest.warns(JobsCappedWarning, match=r"^ls\*: n_jobs 100 is more than the 4 CPU\(s\)") as caught:
        result = solve(small_poly_instance, method="ls*", n_jobs=100)
    assert result.ok and len([w for w in caught if w.category is JobsCappedWarning]) == 1
