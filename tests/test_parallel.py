"""Work shared with a forked child: the same results, in order, whatever the child does."""

from __future__ import annotations

import os
import select
import threading

import pytest

from recordtool import parallel
from tests.conftest import ChildFirst


@pytest.fixture(autouse=True)
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "cores", lambda: 2)


def square_with_pid(items: list[int]) -> list[tuple[int, int]]:
    return [(i * i, os.getpid()) for i in items]


def test_results_come_back_in_order_and_both_processes_work() -> None:
    items = list(range(1_000))
    results = parallel.in_two(ChildFirst(square_with_pid), items, min_items=1, chunks=parallel.chunked(items, 10))
    assert [r[0] for r in results] == [i * i for i in items]
    pids = {r[1] for r in results}
    assert os.getpid() in pids and len(pids) == 2  # the child did some of the chunks
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # and it was reaped


@pytest.fixture
def no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything forks."""
    def refuse() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", refuse)


@pytest.mark.usefixtures("no_fork")
def test_small_work_stays_here() -> None:
    results = parallel.in_two(square_with_pid, list(range(100)), min_items=101)
    assert [r[0] for r in results] == [i * i for i in range(100)]
    one_chunk = parallel.in_two(square_with_pid, list(range(100)), min_items=1, chunks=[list(range(100))])
    assert [r[0] for r in one_chunk] == [i * i for i in range(100)]


@pytest.mark.usefixtures("no_fork")
def test_one_core_or_running_threads_keep_the_work_here(monkeypatch: pytest.MonkeyPatch) -> None:
    items = list(range(200))
    chunks = parallel.chunked(items, 10)
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert [r[0] for r in parallel.in_two(square_with_pid, items, min_items=1, chunks=chunks)] == [i * i for i in items]
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        results = parallel.in_two(square_with_pid, items, min_items=1, chunks=chunks)
    finally:
        stop.set()
        thread.join()
    assert [r[0] for r in results] == [i * i for i in items]


def test_a_failing_child_changes_nothing_but_who_did_the_work() -> None:
    parent = os.getpid()

    def fails_in_the_child(items: list[int]) -> list[tuple[int, int]]:
        if os.getpid() != parent:
            raise OSError("disk full")
        return square_with_pid(items)

    items = list(range(500))
    work = ChildFirst(fails_in_the_child)
    results = parallel.in_two(work, items, min_items=1, chunks=parallel.chunked(items, 10))
    assert len(work.pids()) == 2  # the child took a chunk, and failed on it
    assert results == [(i * i, parent) for i in items]


def test_a_child_whose_results_marshal_cannot_carry_is_redone_here() -> None:
    parent = os.getpid()

    def objects(items: list[int]) -> list[object]:
        return [object() if os.getpid() != parent else i for i in items]  # marshal refuses object()

    items = list(range(300))
    work = ChildFirst(objects)
    assert parallel.in_two(work, items, min_items=1, chunks=parallel.chunked(items, 10)) == items
    assert len(work.pids()) == 2  # the child made results that could not be sent


def test_an_error_here_stops_the_child_and_goes_on() -> None:
    parent = os.getpid()
    hold, release = os.pipe()  # the child waits on its first chunk, so this process surely takes one

    def fails_here(items: list[int]) -> list[int]:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        select.select([hold], [], [])  # never written: the child waits until it is stopped
        return items

    items = list(range(300))
    try:
        with pytest.raises(KeyboardInterrupt):
            parallel.in_two(fails_here, items, min_items=1, chunks=parallel.chunked(items, 10))
    finally:
        os.close(hold)
        os.close(release)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left behind


def test_chunks_are_few_enough_for_the_queue() -> None:
    assert [len(c) for c in parallel.chunked(list(range(10)), 4)] == [4, 4, 2]
    many = parallel.chunked(list(range(1_000_000)), 1)
    assert len(many) <= 8_192 and sum(len(c) for c in many) == 1_000_000


def test_what_a_child_sent_before_failing_is_kept_and_the_rest_done_here() -> None:
    parent = os.getpid()
    calls = [0]

    def fails_on_its_third_chunk(items: list[int]) -> list[tuple[int, int]]:
        calls[0] += 1  # counted in each process on its own (the child has a copy)
        if os.getpid() != parent and calls[0] == 3:
            os._exit(3)  # dies as abruptly as it can, with the chunk half done
        return square_with_pid(items)

    items = list(range(400))
    results = parallel.in_two(ChildFirst(fails_on_its_third_chunk, lead=3), items, min_items=1,
                              chunks=parallel.chunked(items, 10))  # here waits until the child is dying
    assert [r[0] for r in results] == [i * i for i in items]
    by_child = [r for r in results if r[1] != parent]
    assert len(by_child) == 20  # the child's first two chunks, sent before it died


def test_chunks_come_as_they_are_done_each_once() -> None:
    items = list(range(500))
    chunks = parallel.chunked(items, 10)
    seen = [number for number, _results in parallel.chunks_in_two(ChildFirst(square_with_pid), chunks, min_items=1)]
    assert sorted(seen) == list(range(len(chunks)))


def test_both_processes_work_even_when_this_one_is_slow_after_forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """The case that made tests flaky on a busy machine: the child could take every chunk
    before this process took one. ChildFirst holds the child back until this one has a chunk."""
    import time

    real_fork = os.fork

    def slow_fork() -> int:
        pid = real_fork()
        if pid:
            time.sleep(0.3)  # as if descheduled right after the fork
        return pid

    monkeypatch.setattr(os, "fork", slow_fork)
    items = list(range(100))
    results = parallel.in_two(ChildFirst(square_with_pid), items, min_items=1, chunks=parallel.chunked(items, 10))
    assert [r[0] for r in results] == [i * i for i in items]
    assert len({r[1] for r in results}) == 2
