"""Work shared by a pool of workers (forked, or fresh interpreters given what they need): the
same results, in order, whatever the workers do."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from recordtool import parallel
from tests.conftest import REPO, EveryWorker, count_pools, no_children_left


@pytest.fixture(autouse=True)
def many_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine with 8 cores, whatever this one has: the pool's size is ``-j``'s."""
    monkeypatch.setattr(parallel, "cores", lambda: 8)


def square_with_pid(items: list[int]) -> list[tuple[int, int]]:
    return [(i * i, os.getpid()) for i in items]


@pytest.mark.parametrize("jobs", [2, 3])
def test_results_come_back_in_order_and_every_worker_works(jobs: int, tmp_path: Path) -> None:
    items = list(range(1_000))
    work = EveryWorker(square_with_pid, jobs, tmp_path / "calls")
    with parallel.chunk_results(work, parallel.chunked(items, 10), jobs=jobs, min_items=1) as chunks:
        results = [result for chunk in chunks for result in chunk]
    assert [r[0] for r in results] == [i * i for i in items]
    pids = {r[1] for r in results}
    assert len(pids) == jobs and os.getpid() not in pids  # the workers did the chunks
    assert no_children_left()


@pytest.mark.parametrize("jobs", [2, 3])
def test_a_caller_that_only_waits_is_one_of_the_workers(jobs: int, tmp_path: Path) -> None:
    items = list(range(1_000))
    work = EveryWorker(square_with_pid, jobs, tmp_path / "calls")
    results = parallel.map_chunks(work, parallel.chunked(items, 10), jobs=jobs, min_items=1)
    assert [r[0] for r in results] == [i * i for i in items]
    pids = {r[1] for r in results}
    assert len(pids) == jobs and os.getpid() in pids  # jobs - 1 forked workers, and this process
    assert no_children_left()


def test_the_result_is_the_same_for_one_two_and_three_workers() -> None:
    """The bytes a caller builds do not depend on how many workers built them."""
    def work(items: list[int]) -> list[str]:
        return [f"{i}:{i * i % 97}:{'x' * (i % 7)}" for i in items]

    items = list(range(2_500))
    results = [parallel.map_items(work, items, jobs=jobs, min_items=1) for jobs in (1, 2, 3)]
    assert results[0] == work(items)
    assert results[1] == results[0] and results[2] == results[0]


def test_the_pool_has_as_many_workers_as_jobs_and_cores_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [parallel.workers(j) for j in (1, 2, 3, 100)] == [1, 2, 3, 8]
    assert parallel.workers(None) == 8
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    assert [parallel.workers(j) for j in (1, 3, None)] == [1, 2, 2]


@pytest.fixture
def no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything forks."""
    def refuse() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", refuse)


@pytest.mark.usefixtures("no_fork")
def test_small_work_one_job_or_one_chunk_stay_here() -> None:
    expected = [(i * i, os.getpid()) for i in range(100)]
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=None, min_items=101) == expected
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=1, min_items=1) == expected
    assert parallel.map_chunks(square_with_pid, [list(range(100))], jobs=4, min_items=1) == expected


@pytest.mark.usefixtures("no_fork")
def test_one_core_or_running_threads_keep_the_work_here(monkeypatch: pytest.MonkeyPatch) -> None:
    items = list(range(200))
    chunks = parallel.chunked(items, 10)
    expected = [(i * i, os.getpid()) for i in items]
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert parallel.map_chunks(square_with_pid, chunks, jobs=None, min_items=1) == expected
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        results = parallel.map_chunks(square_with_pid, chunks, jobs=None, min_items=1)
    finally:
        stop.set()
        thread.join()
    assert results == expected


def test_work_that_fails_in_the_workers_is_done_here(tmp_path: Path) -> None:
    parent = os.getpid()

    def fails_in_a_worker(items: list[int]) -> list[tuple[int, int]]:
        if os.getpid() != parent:
            raise OSError("disk full")
        return square_with_pid(items)

    items = list(range(500))
    work = EveryWorker(fails_in_a_worker, 2, tmp_path / "calls")
    with parallel.chunk_results(work, parallel.chunked(items, 10), jobs=2, min_items=1) as chunks:
        results = [result for chunk in chunks for result in chunk]
    assert len(work.pids()) == 3 and parent in work.pids()  # two workers took chunks and failed; redone here
    assert results == [(i * i, parent) for i in items]
    assert no_children_left()


def test_results_that_cannot_be_sent_back_are_made_here() -> None:
    parent = os.getpid()

    def unpicklable(items: list[int]) -> list[object]:
        return [threading.Lock() if os.getpid() != parent else i for i in items]  # a worker's cannot pickle

    items = list(range(300))
    assert parallel.map_items(unpicklable, items, jobs=2, min_items=1) == items


def test_a_worker_that_dies_costs_nothing_but_time(tmp_path: Path) -> None:
    parent = os.getpid()
    calls = [0]

    def dies_on_its_third_chunk(items: list[int]) -> list[tuple[int, int]]:
        calls[0] += 1  # counted in each process on its own (each worker has a copy)
        if os.getpid() != parent and calls[0] == 3:
            os._exit(3)  # dies as abruptly as it can, with the chunk half done
        return square_with_pid(items)

    items = list(range(400))
    work = EveryWorker(dies_on_its_third_chunk, 2, tmp_path / "calls")
    results = parallel.map_chunks(work, parallel.chunked(items, 10), jobs=2, min_items=1)
    assert [r[0] for r in results] == [i * i for i in items]
    assert {r[1] for r in results[:20]} != {parent}  # the first chunks came from the workers
    assert parent in {r[1] for r in results}  # the rest were done here once the pool broke
    assert no_children_left()


def test_an_error_here_stops_the_pool_and_goes_on(tmp_path: Path) -> None:
    items = list(range(300))
    chunks = parallel.chunked(items, 10)
    with pytest.raises(KeyboardInterrupt), parallel.chunk_results(square_with_pid, chunks, jobs=2,
                                                                  min_items=1) as results:
        for _done in results:
            raise KeyboardInterrupt
    assert no_children_left()


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_lets_running_chunks_finish_and_leaves_no_worker(tmp_path: Path) -> None:
    """Ctrl-C reaches every process of the terminal's group: the workers ignore it, this
    process stops the pool; every item a worker started is finished (a page whole)."""
    started, finished = tmp_path / "started", tmp_path / "finished"
    started.mkdir()
    finished.mkdir()

    def slow(items: list[int]) -> list[int]:
        for i in items:
            (started / str(i)).touch()
            time.sleep(0.02)
            (finished / str(i)).touch()
        return items

    work = EveryWorker(slow, 2, tmp_path / "calls")
    items = list(range(2_000))
    with pytest.raises(KeyboardInterrupt), parallel.chunk_results(work, parallel.chunked(items, 5), jobs=2,
                                                                  min_items=1) as results:
        for _done in results:
            for pid in [*work.pids(), os.getpid()]:  # as the terminal does: the workers and this process
                os.kill(pid, signal.SIGINT)
            time.sleep(1)  # delivered here at the latest when this returns
    assert no_children_left()
    assert sorted(p.name for p in started.iterdir()) == sorted(p.name for p in finished.iterdir())
    assert len(list(finished.iterdir())) < len(items)  # the pool stopped early


def test_steps_taken_at_once_give_what_their_generator_gives() -> None:
    taken: list[int] = []

    def steps() -> Generator[None, None, dict[str, int]]:
        for n in range(3):
            taken.append(n)
            yield
        return {"steps": len(taken)}

    assert parallel.finished(steps()) == {"steps": 3}
    assert taken == [0, 1, 2]


def test_chunks() -> None:
    assert [len(c) for c in parallel.chunked(list(range(10)), 4)] == [4, 4, 2]
    assert [len(c) for c in parallel.chunked(list(range(130)))] == [parallel.CHUNK, parallel.CHUNK, 2]


@pytest.mark.parametrize("jobs", [2, 8])
def test_the_last_chunks_for_a_pool_are_small(jobs: int) -> None:
    """Whoever takes the last chunks takes small ones: at most what is left over twice the
    chunks the processes hold at once, at least ``MIN_CHUNK``, full ones before that."""
    items = list(range(5_000))
    chunks = parallel.chunked(items, jobs=jobs)
    sizes = [len(c) for c in chunks]
    assert [i for c in chunks for i in c] == items
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == parallel.CHUNK
    held = 2 * parallel.WINDOW * parallel.workers(jobs)
    left = len(items)
    for size in sizes[:-1]:
        assert size == min(parallel.CHUNK, max(parallel.MIN_CHUNK, -(-left // held)))
        left -= size
    assert sizes[-1] <= parallel.MIN_CHUNK and max(sizes[-held:]) < parallel.CHUNK // 2


class _Done(Future[list[Any]]):
    """A chunk handed to ``_Pool``: waiting for it finishes it."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number

    def result(self, timeout: float | None = None) -> list[Any]:
        if not self.done():
            self.set_result([("pool", self.number)])
        return super().result(timeout)


class _Pool:
    """A stand-in for a pool of one worker as fast as the caller: each chunk the caller does
    itself lets the worker finish the oldest chunk it was handed (and one waited for is done)."""

    def __init__(self) -> None:
        self.handed: list[int] = []
        self.waiting: list[tuple[int, Future[list[Any]]]] = []

    def submit(self, number: int) -> Future[list[Any]]:
        future = _Done(number)
        self.handed.append(number)
        self.waiting.append((number, future))
        return future

    def work_here(self, done_here: list[int]) -> Callable[[list[int]], list[Any]]:
        def work(chunk: list[int]) -> list[Any]:
            done_here.append(chunk[0])
            while self.waiting and self.waiting[0][1].done():
                self.waiting.pop(0)
            if self.waiting:
                number, future = self.waiting.pop(0)
                future.set_result([("pool", number)])
            return [("here", chunk[0])]
        return work


def test_a_caller_that_helps_takes_the_next_chunk_not_handed_out_and_its_own_last() -> None:
    chunks = [[n] for n in range(10)]
    pool = _Pool()
    done_here: list[int] = []
    results = list(parallel._in_order(pool.submit, pool.work_here(done_here), chunks, 2, True, own=1))
    assert len(results) == 10 and [r[0][1] for r in results] == list(range(10))  # in order
    # its own chunk first (after its steps: none here), never handed out; then, each time it would
    # wait, the chunk after those the pool holds: the chunks are taken in order, to the last
    assert done_here == [9, 3, 5, 7] and pool.handed == [0, 1, 2, 4, 6, 8]
    assert [r[0][0] for r in results] == ["pool"] * 3 + ["here", "pool"] * 3 + ["here"]


# map_shipped: workers that hold nothing of this process --------------------------------------

HELD = "as imported"  # what a fresh interpreter sees; this process changes it below


def shipped_square(shared: tuple[int, str], packed: list[int]) -> list[tuple[int, int, str]]:
    """In a worker of ``map_shipped``: each item squared plus ``shared``'s number, this
    process's id, and ``HELD`` as it is here; the worker notes itself in ``shared``'s folder."""
    plus, folder = shared
    Path(folder, str(os.getpid())).touch()
    if -1 in packed:
        raise ValueError("a chunk a worker cannot do")
    return [(i * i + plus, os.getpid(), HELD) for i in packed]


def local_square_after_a_worker(folder: Path) -> Callable[[list[int]], list[tuple[int, int, str]]]:
    """This process's part of ``shipped_square``, once a worker has done a chunk (``EveryWorker.WAIT_S``
    at most): the workers surely do some of the work, however busy the machine."""
    def local(items: list[int]) -> list[tuple[int, int, str]]:
        deadline = time.monotonic() + EveryWorker.WAIT_S
        while not any(folder.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.01)
        return [(i * i + 1, os.getpid(), HELD) for i in items]
    return local


def test_shipped_work_is_done_by_workers_that_hold_nothing_of_this_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "HELD", "changed here")
    items = list(range(300))
    results = parallel.map_shipped(local_square_after_a_worker(tmp_path), shipped_square, lambda chunk: chunk,
                                   lambda: (1, str(tmp_path)), parallel.chunked(items, 10), jobs=3, min_items=1)
    assert [r[0] for r in results] == [i * i + 1 for i in items]  # in order, whoever did them
    workers = {pid for _square, pid, _held in results} - {os.getpid()}
    assert workers and workers <= {int(p.name) for p in tmp_path.iterdir()}
    assert {held for _square, pid, held in results if pid != os.getpid()} == {"as imported"}  # fresh interpreters
    assert {held for _square, pid, held in results if pid == os.getpid()} <= {"changed here"}
    assert no_children_left()


def test_shipped_chunks_a_worker_cannot_do_are_done_here(tmp_path: Path) -> None:
    items = [*range(100), -1, *range(100, 200)]  # the chunk with -1 fails in a worker

    def pack(chunk: list[int]) -> list[int]:
        if 150 in chunk:
            raise RuntimeError("cannot pack")  # nor this one: both done here
        return chunk

    results = parallel.map_shipped(local_square_after_a_worker(tmp_path), shipped_square, pack,
                                   lambda: (1, str(tmp_path)), parallel.chunked(items, 10), jobs=2, min_items=1)
    assert [r[0] for r in results] == [i * i + 1 for i in items]
    here = {i for i, (_square, pid, _held) in zip(items, results, strict=True) if pid == os.getpid()}
    assert {-1, 150} <= here
    assert no_children_left()


def test_shipped_work_below_the_threshold_or_with_one_job_starts_no_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pools = count_pools(monkeypatch)
    items = list(range(50))
    def local(chunk: list[int]) -> list[tuple[int, int, str]]:
        return [(i * i + 1, os.getpid(), HELD) for i in chunk]

    for jobs, least in ((1, 1), (4, 51)):
        results = parallel.map_shipped(local, shipped_square, lambda c: c,
                                       lambda: (1, str(tmp_path)), parallel.chunked(items, 10), jobs=jobs,
                                       min_items=least)
        assert results == [(i * i + 1, os.getpid(), HELD) for i in items]
    assert pools == []


def test_shipped_work_whose_shared_state_does_not_pickle_is_done_here(tmp_path: Path) -> None:
    items = list(range(100))

    def local(chunk: list[int]) -> list[tuple[int, int, str]]:
        return [(i * i + 1, os.getpid(), HELD) for i in chunk]

    results = parallel.map_shipped(local, shipped_square, lambda c: c, lambda: (1, lambda: None),
                                   parallel.chunked(items, 10), jobs=2, min_items=1)
    assert results == local(items)
    assert no_children_left()


def test_fresh_interpreters_start_only_as_many_as_the_items_repay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine with many cores, a small record starts few fresh interpreters: one per
    ``min_items // 2`` items at most (each costs about half a second to start)."""
    import concurrent.futures

    sizes: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def sized(workers: int, *args: object, **kwargs: object) -> object:
        sizes.append(workers)
        return real(workers, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", sized)

    def local(chunk: list[int]) -> list[tuple[int, int, str]]:
        return [(i * i + 1, os.getpid(), HELD) for i in chunk]

    items = list(range(60))
    for least, expected in ((20, 6), (40, 3), (60, 2), (1, 7)):  # 60 items, 8 cores, -j 8: at most 7
        results = parallel.map_shipped(local, shipped_square, lambda c: c, lambda: (1, str(tmp_path)),
                                       parallel.chunked(items, 5), jobs=8, min_items=least)
        assert [r[0] for r in results] == [i * i + 1 for i in items]
        assert sizes.pop() == expected, least
    assert no_children_left()


@pytest.mark.parametrize(("jobs", "least"), [(2, 1), (1, 1), (4, 1_000)])
def test_work_meanwhile_is_done_step_by_step_after_the_first_chunks_are_handed_out(
        jobs: int, least: int, tmp_path: Path) -> None:
    """``meanwhile``'s steps are each done once, in order: with a pool, after the workers have
    their first chunks (so they overlap their start) and before this process does any chunk;
    without, first."""
    events: list[str] = []

    def local(chunk: list[int]) -> list[tuple[int, int, str]]:
        events.append("here")
        return [(i * i + 1, os.getpid(), HELD) for i in chunk]

    def pack(chunk: list[int]) -> list[int]:
        events.append("packed")
        return chunk

    def steps() -> Iterator[None]:
        for n in range(3):
            events.append(f"step {n}")
            yield

    items = list(range(100))
    results = parallel.map_shipped(local, shipped_square, pack, lambda: (1, str(tmp_path)),
                                   parallel.chunked(items, 10), jobs=jobs, min_items=least, meanwhile=steps())
    assert [r[0] for r in results] == [i * i + 1 for i in items]
    done = [event for event in events if event.startswith("step")]
    assert done == ["step 0", "step 1", "step 2"]
    before = events[:events.index("step 0")]
    if jobs > 1 and least == 1 and parallel.cores() > 1:  # a pool: its first chunks went out first
        assert before and set(before) == {"packed"}
    else:
        assert before == []
    assert "here" not in events[:events.index("step 2")]
    assert no_children_left()


def test_chunks_are_handed_out_between_the_steps_of_work_meanwhile() -> None:
    """While the chunk it waits for is not done, this process takes a step of its own work;
    when it is, its result is taken and the workers are handed the next chunk before the next
    step; once the steps are done, it does chunks from the back (``_in_order``, with futures
    this test completes itself, from inside the steps)."""
    events: list[str] = []
    futures: dict[int, Future[list[int]]] = {}

    def submit(number: int) -> Future[list[int]]:
        events.append(f"handed {number}")
        futures[number] = Future()
        return futures[number]

    def work(chunk: list[int]) -> list[int]:
        events.append(f"here {chunk[0]}")
        for number, future in futures.items():  # meanwhile, the workers finish what they were handed
            if not future.done():
                future.set_result([-number])
        return [-i for i in chunk]

    def steps() -> Iterator[None]:
        events.append("step 0")
        futures[0].set_result([0])
        yield
        events.append("step 1")
        futures[1].set_result([-1])
        futures[2].set_result([-2])
        yield

    results = list(parallel._in_order(submit, work, [[i] for i in range(6)], 2, True, steps()))
    assert results == [[-i] for i in range(6)]
    assert events == ["handed 0", "handed 1", "step 0",  # chunk 0 not done: a step, which does it
                      "handed 2", "step 1",  # chunk 1 not done: the next step
                      "handed 3",  # chunk 2 done already: taken at once, the next handed out
                      "handed 4", "here 5"]  # chunk 3 not done, no step left: a chunk from the back


@pytest.mark.parametrize(("jobs", "least"), [(2, 1), (1, 1), (4, 1_000)])
def test_forked_work_meanwhile_is_done_once_in_order_and_first_without_a_pool(jobs: int, least: int) -> None:
    """``map_chunks``' ``meanwhile``, as ``map_shipped``'s: each step once, in order, with a
    pool or without one (then before any chunk)."""
    events: list[str] = []
    parent = os.getpid()

    def work(chunk: list[int]) -> list[tuple[int, int]]:
        if os.getpid() == parent:
            events.append("here")
        return square_with_pid(chunk)

    def steps() -> Iterator[None]:
        for n in range(3):
            events.append(f"step {n}")
            yield

    items = list(range(100))
    results = parallel.map_chunks(work, parallel.chunked(items, 10), jobs=jobs, min_items=least, meanwhile=steps())
    assert [r[0] for r in results] == [i * i for i in items]
    assert [event for event in events if event.startswith("step")] == ["step 0", "step 1", "step 2"]
    if jobs == 1 or least > 1:
        assert events[:3] == ["step 0", "step 1", "step 2"]
    assert no_children_left()


def test_work_is_forked_only_while_the_workers_could_copy_this_process_within_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``fork_fits``: each forked worker may come to copy all of this process (``resident``),
    so there must be room in ``FORK_BUDGET`` for ``jobs - 1`` such copies."""
    size = parallel.resident()
    assert 10 * 2**20 < size < 64 * 2**30  # this interpreter, pytest and recordtool: more than 10 MiB
    monkeypatch.setattr(parallel, "resident", lambda: 100)
    monkeypatch.setattr(parallel, "FORK_BUDGET", 300)
    assert [parallel.fork_fits(jobs) for jobs in (1, 2, 3, 4, 5)] == [False, True, True, True, False]
    assert parallel.fork_fits(None) is False  # every core: 7 workers, 700 > 300
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert not parallel.fork_fits(4)  # one core: no worker at all
    monkeypatch.setattr(parallel, "cores", lambda: 8)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not parallel.fork_fits(2)  # forking while another thread runs is unsafe


def _pipe_size_allowed() -> int:
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are set on Linux only")
    try:
        with open("/proc/sys/fs/pipe-max-size", "rb") as handle:
            return min(parallel.RESULT_PIPE, int(handle.read()))
    except (OSError, ValueError):
        return parallel.RESULT_PIPE


@pytest.mark.parametrize("shipped", [False, True])
def test_results_come_back_through_a_pipe_that_holds_a_chunks_results(
        shipped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker hands its results over without waiting for this process (whose pool thread
    reads the pipe a turn at a time, between this process's own work): the pipe holds
    ``RESULT_PIPE`` bytes, not the 64 KiB a pipe holds by default."""
    import concurrent.futures
    import fcntl

    allowed = _pipe_size_allowed()
    pools: list[concurrent.futures.ProcessPoolExecutor] = []
    real = concurrent.futures.ProcessPoolExecutor

    def kept(*args: object, **kwargs: object) -> object:
        pool = real(*args, **kwargs)  # type: ignore[arg-type]
        pools.append(pool)
        return pool

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", kept)
    sizes: list[int] = []

    def size_now() -> None:
        sizes.append(fcntl.fcntl(pools[-1]._result_queue._reader.fileno(), fcntl.F_GETPIPE_SZ))  # type: ignore[attr-defined]

    items = list(range(400))
    if shipped:
        def pack(chunk: list[int]) -> list[int]:
            if not sizes:
                size_now()
            return chunk

        results = parallel.map_shipped(lambda c: [(i * i + 1, 0, HELD) for i in c], shipped_square, pack,
                                       lambda: (1, str(tmp_path)), parallel.chunked(items, 10), jobs=2, min_items=1)
        assert [r[0] for r in results] == [i * i + 1 for i in items]
    else:
        with parallel.chunk_results(square_with_pid, parallel.chunked(items, 10), jobs=2, min_items=1) as chunks:
            size_now()
            assert [r[0] for chunk in chunks for r in chunk] == [i * i for i in items]
    assert len(pools) == 1 and sizes[0] >= allowed > 65_536
    assert no_children_left()


def test_where_the_pipe_cannot_be_made_roomier_the_results_come_all_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A system that refuses the size (a lower ``pipe-max-size``, not Linux), or a pool with no
    such pipe: nothing is set, nothing fails, the results are the same."""
    fcntl = pytest.importorskip("fcntl")

    def refuse(*args: object) -> int:
        raise PermissionError(1, "Operation not permitted")  # as F_SETPIPE_SZ over the limit

    monkeypatch.setattr(fcntl, "fcntl", refuse)
    with parallel.chunk_results(square_with_pid, parallel.chunked(list(range(200)), 10), jobs=2, min_items=1) as chunks:
        results = [result for chunk in chunks for result in chunk]
    assert [r[0] for r in results] == [i * i for i in range(200)]
    assert os.getpid() not in {r[1] for r in results}  # the pool's workers did them
    parallel.roomy_results(object())  # not the standard library's pool: nothing to set
    assert no_children_left()


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_progress_is_told_of_each_chunk_once_here_whoever_did_it(jobs: int, tmp_path: Path) -> None:
    """``progress`` (a command's progress line) gets each chunk's number of items once that
    chunk is done, in this process, whether a worker or this process did it (with a pool, this
    process waits for a worker's first chunk before doing one: both surely do some)."""
    items = list(range(1_000))
    chunks = parallel.chunked(items, 7)
    for shipped in (False, True):
        folder = tmp_path / ("shipped" if shipped else "forked")
        folder.mkdir()
        told: list[tuple[int, int]] = []
        progress = functools.partial(_tell, told)
        if shipped:
            local = local_square_after_a_worker(folder) if jobs > 1 else _square_here
            results = parallel.map_shipped(local, shipped_square, lambda c: c, functools.partial(tuple, (1, str(folder))), chunks,
                                           jobs=jobs, min_items=1, progress=progress)
            assert [r[0] for r in results] == [i * i + 1 for i in items]
        else:
            results = parallel.map_chunks(functools.partial(_square_after_a_worker, os.getpid() if jobs > 1 else None, folder), chunks,
                                          jobs=jobs, min_items=1, progress=progress)
            assert [r[0] for r in results] == [i * i for i in items]
        assert sorted(n for n, _pid in told) == sorted(map(len, chunks)), shipped
        assert {pid for _n, pid in told} == {os.getpid()}
        by = {r[1] for r in results}
        assert (os.getpid() in by, len(by) > 1) == (True, jobs > 1), shipped  # here, and a worker with a pool
    assert no_children_left()


def _square_after_a_worker(parent: int | None, folder: Path, items: list[int]) -> list[tuple[int, int]]:
    """``square_with_pid``; with a pool (``parent``: the process that started it), a forked
    worker notes itself in ``folder`` and ``parent`` first waits for one to have done so
    (``EveryWorker.WAIT_S`` at most)."""
    if parent is None:
        pass
    elif os.getpid() != parent:
        Path(folder, str(os.getpid())).touch()
    else:
        deadline = time.monotonic() + EveryWorker.WAIT_S
        while not any(folder.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.01)
    return square_with_pid(items)


def _tell(told: list[tuple[int, int]], n: int) -> None:
    told.append((n, os.getpid()))


def _square_here(items: list[int]) -> list[tuple[int, int, str]]:
    return [(i * i + 1, os.getpid(), HELD) for i in items]


# map_shipped's fresh interpreters: two faults of the standard library's ``spawn`` mended -------

class EndsWhereUnpickled:
    """Shared state whose unpickling ends the process: a worker that dies as it starts, before it
    has read what it was sent."""

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return os._exit, (3,)


def _run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """``body`` as a script of its own (``python script.py``, no ``if __name__ == "__main__":``),
    run with a deadline: a caller that hangs fails the test instead of the suite."""
    script = tmp_path / "script.py"
    script.write_text(f"import os, sys\nsys.path.insert(0, {str(REPO)!r})\n{textwrap.dedent(body)}", encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_a_fresh_worker_that_dies_as_it_starts_costs_nothing_but_time(tmp_path: Path) -> None:
    """A worker that ends before reading the pool's state (megabytes: the ids of a large record)
    is told apart and its chunks done here. The standard library's launcher held the worker's end
    of the pipe it wrote that state into, and wrote for ever (CPython gh-118981)."""
    done = _run_script(tmp_path, f"""
        from recordtool import parallel
        from tests.test_parallel import EndsWhereUnpickled, shipped_square
        items = list(range(200))
        results = parallel.map_shipped(lambda c: [(i * i + 1, os.getpid(), "here") for i in c], shipped_square,
                                       lambda c: c, lambda: (1, {str(tmp_path)!r}, EndsWhereUnpickled(), b"x" * 4_000_000),
                                       parallel.chunked(items, 10), jobs=2, min_items=1)
        assert [r[0] for r in results] == [i * i + 1 for i in items]
        assert {{pid for _r, pid, _held in results}} == {{os.getpid()}}  # every chunk here
        from tests.conftest import no_children_left
        assert no_children_left()  # the worker reaped
        print("done")
    """)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr


def test_a_fresh_worker_does_not_run_the_callers_script_again(tmp_path: Path) -> None:
    """``spawn`` runs the caller's ``__main__`` again in each worker (so that what it defines can
    be unpickled there): a script that calls recordtool without ``if __name__ == "__main__":``
    ran whole in every worker. A worker of ``map_shipped`` runs recordtool's code only."""
    workers = tmp_path / "workers"
    done = _run_script(tmp_path, f"""
        from pathlib import Path
        print("the script", flush=True)
        Path({str(workers)!r}).mkdir(exist_ok=True)
        from recordtool import parallel
        from tests.test_parallel import local_square_after_a_worker, shipped_square
        items = list(range(200))
        results = parallel.map_shipped(local_square_after_a_worker(Path({str(workers)!r})), shipped_square,
                                       lambda c: c, lambda: (1, {str(workers)!r}), parallel.chunked(items, 10),
                                       jobs=2, min_items=1)
        assert [r[0] for r in results] == [i * i + 1 for i in items]
        assert {{pid for _r, pid, _held in results}} - {{os.getpid()}}  # a worker did some
        print("done")
    """)
    assert (done.returncode, done.stdout) == (0, "the script\ndone\n"), done.stderr


def test_what_a_fresh_worker_cannot_unpickle_from_the_callers_script_is_done_here(tmp_path: Path) -> None:
    """A worker that is sent something of a class the caller's script defines cannot make it (the
    script is not run there): its chunks are done here, with the same results."""
    done = _run_script(tmp_path, f"""
        from recordtool import parallel
        from tests.test_parallel import shipped_square
        class Folder(str):  # what a worker would take, were it able to make it
            pass
        items = list(range(200))
        results = parallel.map_shipped(lambda c: [(i * i + 1, os.getpid(), "here") for i in c], shipped_square,
                                       lambda c: c, lambda: (1, Folder({str(tmp_path)!r})),
                                       parallel.chunked(items, 10), jobs=2, min_items=1)
        assert [r[0] for r in results] == [i * i + 1 for i in items]
        assert {{pid for _r, pid, _held in results}} == {{os.getpid()}}
        print("done")
    """)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
