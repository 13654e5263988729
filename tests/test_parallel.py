"""Work shared by a pool of forked workers: the same results, in order, whatever the workers do,
and no worker left behind whichever way the parent ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from recordtool import parallel
from tests.conftest import REPO, EveryWorker, no_children_left


@pytest.fixture(autouse=True)
def many_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine with 8 cores, whatever this one has: the pool's size is ``-j``'s."""
    monkeypatch.setattr(parallel, "cores", lambda: 8)


def square_with_pid(items: list[int]) -> list[tuple[int, int]]:
    return [(i * i, os.getpid()) for i in items]


@pytest.mark.parametrize("jobs", [2, 3])
def test_results_come_back_in_order_and_every_worker_works(jobs: int, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK", 10)
    items = list(range(1_000))
    work = EveryWorker(square_with_pid, jobs, tmp_path / "calls")
    results = parallel.map_items(work, items, jobs=jobs, min_items=1)
    assert [r[0] for r in results] == [i * i for i in items]
    pids = {r[1] for r in results}
    assert len(pids) == jobs and os.getpid() not in pids  # the workers did the chunks
    assert no_children_left()


def test_the_result_is_the_same_for_one_two_and_three_workers() -> None:
    """The bytes a caller builds do not depend on how many workers built them; the work may be
    a closure (the workers inherit it)."""
    salt = "x"

    def work(items: list[int]) -> list[str]:
        return [f"{i}:{i * i % 97}:{salt * (i % 7)}" for i in items]

    items = list(range(2_500))
    results = [parallel.map_items(work, items, jobs=jobs, min_items=1) for jobs in (1, 2, 3)]
    assert results[0] == work(items)
    assert results[1] == results[0] and results[2] == results[0]


def test_the_pool_has_as_many_workers_as_jobs_and_cores_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [parallel.workers(j) for j in (1, 2, 3, 100)] == [1, 2, 3, 8]
    assert parallel.workers(None) == 8
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    assert [parallel.workers(j) for j in (1, 3, None)] == [1, 2, 2]


def test_chunks() -> None:
    assert parallel.chunked(list(range(5)), 2) == [[0, 1], [2, 3], [4]]
    assert parallel.chunked([], 2) == []
    assert [len(c) for c in parallel.chunked(list(range(130)))] == [64, 64, 2]


@pytest.fixture
def no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything forks."""
    def refuse() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", refuse)


@pytest.mark.usefixtures("no_fork")
def test_small_work_one_job_or_one_chunk_stay_here(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [(i * i, os.getpid()) for i in range(100)]
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=None, min_items=101) == expected
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=None) == expected  # (below ``MIN_ITEMS``)
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=1, min_items=1) == expected
    monkeypatch.setattr(parallel, "CHUNK", 100)
    assert parallel.map_items(square_with_pid, list(range(100)), jobs=4, min_items=1) == expected


@pytest.mark.usefixtures("no_fork")
def test_one_core_or_running_threads_keep_the_work_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK", 10)
    items = list(range(200))
    expected = [(i * i, os.getpid()) for i in items]
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert parallel.map_items(square_with_pid, items, jobs=None, min_items=1) == expected
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        results = parallel.map_items(square_with_pid, items, jobs=None, min_items=1)
    finally:
        stop.set()
        thread.join()
    assert results == expected


def test_work_that_fails_in_the_workers_is_done_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK", 10)
    parent = os.getpid()

    def fails_in_a_worker(items: list[int]) -> list[tuple[int, int]]:
        if os.getpid() != parent:
            raise OSError("disk full")
        return square_with_pid(items)

    items = list(range(500))
    work = EveryWorker(fails_in_a_worker, 2, tmp_path / "calls")
    results = parallel.map_items(work, items, jobs=2, min_items=1)
    assert len(work.pids()) == 3 and parent in work.pids()  # two workers took chunks and failed; redone here
    assert results == [(i * i, parent) for i in items]
    assert no_children_left()


def test_an_error_of_the_work_is_raised_here() -> None:
    def fails(items: list[int]) -> list[int]:
        raise ValueError("bad item")

    with pytest.raises(ValueError, match="bad item"):
        parallel.map_items(fails, list(range(300)), jobs=2, min_items=1)
    assert no_children_left()


def test_results_that_cannot_be_sent_back_are_made_here() -> None:
    parent = os.getpid()

    def unpicklable(items: list[int]) -> list[object]:
        return [threading.Lock() if os.getpid() != parent else i for i in items]  # a worker's cannot pickle

    items = list(range(300))
    assert parallel.map_items(unpicklable, items, jobs=2, min_items=1) == items


def test_a_worker_that_dies_costs_nothing_but_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK", 10)
    parent = os.getpid()
    calls = [0]

    def dies_on_its_third_chunk(items: list[int]) -> list[tuple[int, int]]:
        calls[0] += 1  # counted in each process on its own (each worker has a copy)
        if os.getpid() != parent and calls[0] == 3:
            os._exit(3)  # dies as abruptly as it can, with the chunk half done
        return square_with_pid(items)

    items = list(range(400))
    work = EveryWorker(dies_on_its_third_chunk, 2, tmp_path / "calls")
    results = parallel.map_items(work, items, jobs=2, min_items=1)
    assert [r[0] for r in results] == [i * i for i in items]
    assert {r[1] for r in results[:20]} != {parent}  # the first chunks came from the workers
    assert parent in {r[1] for r in results}  # the rest were done here once the pool broke
    assert no_children_left()


def test_progress_is_told_of_each_chunk_once_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK", 7)
    told: list[tuple[int, int]] = []
    items = list(range(1_000))
    parallel.map_items(square_with_pid, items, jobs=2, min_items=1, progress=lambda n: told.append((n, os.getpid())))
    assert sorted(n for n, _pid in told) == sorted(map(len, parallel.chunked(items)))
    assert {pid for _n, pid in told} == {os.getpid()}


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_lets_running_chunks_finish_and_leaves_no_worker(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C reaches every process of the terminal's group: the workers ignore it, this
    process stops the pool; every item a worker started is finished (a page whole)."""
    monkeypatch.setattr(parallel, "CHUNK", 5)
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

    def interrupt(*_args: object) -> None:
        for pid in work.pids():  # as the terminal does: the workers and this process
            os.kill(pid, signal.SIGINT)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            parallel.map_items(work, list(range(2_000)), jobs=2, min_items=1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert no_children_left()
    assert sorted(p.name for p in started.iterdir()) == sorted(p.name for p in finished.iterdir())
    assert len(list(finished.iterdir())) < 2_000  # the pool stopped early


def _workers_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="PR_SET_PDEATHSIG is Linux's; a pool needs two cores")
@pytest.mark.parametrize("command", [["validate", "-j", "2"], ["render"], ["render", "-j", "2"]],
                         ids=["validate-j2", "render", "render-j2"])
def test_class_3_pool_workers_die_with_their_parent(tmp_path: Path, command: list[str]) -> None:
    """Issue 66, class 3: ``kill -9`` of ``recordtool validate -j 2``, ``render`` (every core by
    default) or ``render -j 2`` while its pool works leaves no worker behind (the kernel kills
    each when its parent dies)."""
    notes = tmp_path / "record" / "notes"
    notes.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[tool.recordtool]\n", encoding="utf-8")
    for n in range(1, 4001):
        (notes / f"NOTE-{n}.yaml").write_text(f"id: NOTE-{n}\ntitle: Note {n}\nbody: See NOTE-{n % 4000 + 1}.\n",
                                              encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-m", "recordtool", *command, "--no-cache"], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2 and child.poll() is None:
            workers = _workers_of(child.pid)
            time.sleep(0.01)
        assert len(workers) >= 2, "the pool did not start"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(map(_alive, workers)):
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)]
