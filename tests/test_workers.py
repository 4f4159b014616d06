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
