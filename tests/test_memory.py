"""minlp_fs.memory: the heap pad is set by the outermost solve only, restored after it, and left to the user's
MALLOC_TOP_PAD_."""
import sys
import threading

import pytest

from minlp_fs import memory
from minlp_fs.api import build_instance, solve

#: the calls of the outermost block's start (the pad, then the mmap threshold it freezes) and end (the pad)
SET = [(memory.M_TOP_PAD, memory.HEAP_PAD), (memory.M_MMAP_THRESHOLD, memory.MMAP_THRESHOLD)]
RESTORE = [(memory.M_TOP_PAD, memory.DEFAULT_TOP_PAD)]


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(memory, "_mallopt", lambda: lambda param, value: seen.append((param, value)) or 1)
    return seen


def test_nested_blocks_set_the_pad_once_and_restore_it_once(calls):
    with memory.heap_pad():
        with memory.heap_pad():
            assert calls == SET
        assert calls == SET
    assert calls == SET + RESTORE


def test_the_pad_is_restored_when_the_block_raises(calls):
    with pytest.raises(KeyboardInterrupt):
        with memory.heap_pad():
            raise KeyboardInterrupt
    assert calls == SET + RESTORE and memory._depth == 0


def test_concurrent_blocks_share_one_setting(calls):
    inside, release = threading.Barrier(3), threading.Event()

    def run():
        with memory.heap_pad():
            inside.wait()
            release.wait()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert calls == SET
    release.set()
    for t in threads:
        t.join()
    assert calls == SET + RESTORE


def test_a_solve_runs_inside_the_pad(calls):
    inst = build_instance("synthetic", B=2)
    result = solve(inst, method="enumerate")
    assert result.certified
    assert calls == SET + RESTORE


def test_the_users_own_pad_is_left_alone(monkeypatch):
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1000000")
    memory._mallopt.cache_clear()
    try:
        assert memory._mallopt() is None
    finally:
        memory._mallopt.cache_clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_glibc_accepts_the_setting(monkeypatch):
    monkeypatch.delenv("MALLOC_TOP_PAD_", raising=False)
    memory._mallopt.cache_clear()
    try:
        mallopt = memory._mallopt()
        if mallopt is None:
            pytest.skip("no mallopt in this C library")
        for param, value in SET + RESTORE:
            assert mallopt(param, value) == 1
    finally:
        memory._mallopt.cache_clear()
