"""Work spread over the cores with the standard library's process pool, results in order.

``map_items`` hands chunks to forked workers; ``work`` may be a closure: it is kept in a module
global before the pool forks, so only chunk numbers and results are pickled. Small inputs, one
core, or no safe ``fork``: the work is done here, as is a chunk whose worker failed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent import futures

# ``multiprocessing`` and ``concurrent.futures`` are imported where a pool starts: a command on
# a small record, or after an edit, starts none, and does without them.

T = TypeVar("T")
Progress = Callable[[int], None]  # told how many more items are done

CHUNK = 64  # items per chunk: small enough to share evenly, large enough to cost nothing
MIN_ITEMS = 1_000  # items below which starting workers costs more than they save
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

# The work of the pool being run, set before it forks, so that the workers inherit it.
_job: tuple[Callable[[list[Any]], list[Any]], list[list[Any]]] | None = None
_in_worker = False
_parent = 0  # the pid of the process that started the pool (a worker checks it is still there)


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def workers(jobs: int | None) -> int:
    """How many processes share the work for ``-j jobs`` (None: every core)."""
    return max(1, min(cores(), jobs if jobs is not None else cores()))


def chunked(items: list[T], size: int | None = None) -> list[list[T]]:
    """``items`` cut into lists of ``size`` (default ``CHUNK``) items."""
    size = max(1, size or CHUNK)
    return [items[i:i + size] for i in range(0, len(items), size)]


def map_items(work: Callable[[list[T]], list[Any]], items: list[T], *, jobs: int | None,
              min_items: int | None = None, progress: Progress | None = None) -> list[Any]:
    """``work`` of every chunk of ``items``, one result per item, in order; shared by
    ``workers(jobs)`` forked processes from ``min_items`` items (default ``MIN_ITEMS``)."""
    global _job, _parent
    chunks = chunked(items)
    count = min(workers(jobs), len(chunks))
    if count < 2 or len(items) < (MIN_ITEMS if min_items is None else min_items) or not _forkable():
        return [result for chunk in chunks for result in _result(work, chunk, None, progress)]
    import multiprocessing
    from concurrent import futures

    _job, _parent = (work, chunks), os.getpid()
    pool = futures.ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker)
    try:
        pending = [pool.submit(_run, n) for n in range(len(chunks))]  # (the workers are forked here)
        _job = None
        return [result for chunk, future in zip(chunks, pending, strict=True)
                for result in _result(work, chunk, future, progress)]
    finally:
        _job = None
        pool.shutdown(wait=True, cancel_futures=True)


def _result(work: Callable[[list[T]], list[Any]], chunk: list[T], future: futures.Future[list[Any]] | None,
            progress: Progress | None) -> list[Any]:
    """The results of ``chunk`` from its worker, else (no worker, or it could not give them)
    done here, so that an error is raised here."""
    try:
        results = future.result() if future is not None else None
    except Exception:
        results = None
    if not isinstance(results, list) or len(results) != len(chunk):
        results = work(chunk)
    if progress is not None:
        progress(len(chunk))
    return results


def _forkable() -> bool:
    """Whether this process may fork workers: not inside a worker, ``fork`` offered, and no
    other thread running (forking one is unsafe)."""
    return not _in_worker and hasattr(os, "fork") and threading.active_count() == 1


def _start_worker() -> None:
    """In each worker, first: leave Ctrl-C to the parent and (Linux) die with it."""
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != _parent:  # the parent died before the kernel was asked
            os._exit(1)


def _run(number: int) -> list[Any]:
    """In a worker: the results of chunk ``number`` of the inherited work."""
    assert _job is not None
    work, chunks = _job
    return work(chunks[number])
