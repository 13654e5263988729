"""Work shared by two processes: this one and a child forked for the purpose.

Opening and rendering a large record is many independent small steps (parse a file, scan
a text for ids, compose a page). ``in_two`` cuts the items into chunks and puts the chunks'
numbers in a pipe; this process and a forked child each take the next number until none is
left, so that both stay busy to the end however uneven the chunks are. The child sends its
results back as plain data (``marshal``: lists, tuples, dicts, strings, numbers) and leaves;
the results come back in the order of the items, the same as ``work(items)`` gives them.

Below ``min_items``, on one core, without ``fork`` (Windows), with other threads running
(forking those is unsafe), or when the child fails in any way, the work is done here, so the
outcome never depends on the child. Ctrl-C reaches both processes; the child is then stopped
and reaped before the interrupt goes on.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

CHUNK = 64  # items per chunk: small enough to share evenly, large enough to cost nothing
_WIDTH = 4  # bytes per chunk number in the queue; reads this small from a pipe are atomic
_MAX_CHUNKS = 8_192  # the queue must fit in a pipe's buffer (64 KiB), written before forking


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def chunked(items: list[T], size: int | None = None) -> list[list[T]]:
    """``items`` cut into lists of ``size`` (fewer, larger ones when there are very many)."""
    size = max(size or CHUNK, -(-len(items) // _MAX_CHUNKS))
    return [items[i:i + size] for i in range(0, len(items), size)]


def in_two(work: Callable[[list[T]], list[Any]], items: list[T], *, min_items: int,
           chunks: list[list[T]] | None = None) -> list[Any]:
    """``work(items)`` shared with a forked child when there are at least ``min_items``.

    ``work`` gives one result per item, in order, and is called on chunks of the items
    (``chunks``, when given, says which: their concatenation must be ``items``). Results
    made in the child must be plain data that ``marshal`` carries. A side effect of ``work``
    (writing a file) may happen twice for an item when the child fails part way.
    """
    groups = chunks if chunks is not None else chunked(items)
    if len(items) < min_items or len(groups) < 2 or len(groups) > _MAX_CHUNKS or cores() < 2 \
            or not hasattr(os, "fork") or threading.active_count() > 1:
        return work(items)
    queue_read, queue_write = os.pipe()
    with os.fdopen(queue_write, "wb") as queue:
        queue.write(b"".join(i.to_bytes(_WIDTH, "little") for i in range(len(groups))))
    result_read, result_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: take chunks until none is left, send the results, leave
        status = 1
        try:
            os.close(result_read)
            done = _take(work, groups, queue_read)
            with os.fdopen(result_write, "wb") as results:
                results.write(marshal.dumps(done))
            status = 0
        finally:
            os._exit(status)  # never run the parent's cleanup (atexit, finally blocks) here
    os.close(result_write)
    payload = b""
    try:
        with os.fdopen(result_read, "rb") as pipe:
            done = _take(work, groups, queue_read)
            payload = pipe.read()  # the child waits on a full pipe until this reads
        _, wait_status = os.waitpid(pid, 0)
        pid = 0
    finally:
        os.close(queue_read)
        if pid:  # interrupted or failed here: stop the child before going on
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, 9)
                os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) == 0 and payload:
        with contextlib.suppress(ValueError, EOFError, TypeError):
            theirs = marshal.loads(payload)
            if isinstance(theirs, dict):
                done.update(theirs)
    merged: list[Any] = []
    for i, group in enumerate(groups):
        chunk = done.get(i)
        if not isinstance(chunk, list) or len(chunk) != len(group):
            chunk = work(group)  # the child failed: what it took is done here
        merged.extend(chunk)
    return merged


def _take(work: Callable[[list[T]], list[Any]], groups: list[list[T]], queue: int) -> dict[int, list[Any]]:
    """Do the chunks whose numbers this process reads from ``queue``, until it is empty."""
    done: dict[int, list[Any]] = {}
    while True:
        number = os.read(queue, _WIDTH)
        if len(number) < _WIDTH:
            return done
        i = int.from_bytes(number, "little")
        done[i] = work(groups[i])
