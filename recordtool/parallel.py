"""Work shared by two processes: this one and a child forked for the purpose.

Opening and rendering a large record is many independent small steps (parse a file, scan
a text for ids, compose a page). The items are cut into chunks and the chunks' numbers put
in a pipe; this process and a forked child each take the next number until none is left, so
that both stay busy to the end however uneven the chunks are. The child sends each chunk's
results back as plain data (``marshal``: lists, tuples, dicts, strings, numbers) as soon as
it has them, and this process takes them in between its own chunks, so that results do not
pile up on either side.

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
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

CHUNK = 64  # items per chunk: small enough to share evenly, large enough to cost nothing
_WIDTH = 4  # bytes per chunk number in the queue; reads this small from a pipe are atomic
_MAX_CHUNKS = 8_192  # the queue must fit in a pipe's buffer (64 KiB), written before forking
_HEADER = 8  # a result's frame: chunk number and length (4 bytes each), then marshal's bytes
_PIPE_SIZE = 1 << 20  # room for the child's results between two looks (Linux: F_SETPIPE_SZ)


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
    """``work(items)``, shared with a forked child when there are at least ``min_items``:
    one result per item, in order (see ``chunks_in_two``)."""
    groups = chunks if chunks is not None else chunked(items)
    done: dict[int, list[Any]] = dict(chunks_in_two(work, groups, min_items=min_items))
    return [result for i in range(len(groups)) for result in done[i]]


def chunks_in_two(work: Callable[[list[T]], list[Any]], chunks: list[list[T]], *,
                  min_items: int) -> Iterator[tuple[int, list[Any]]]:
    """``(i, work(chunks[i]))`` for every chunk, in the order they are done, shared with a
    forked child when the chunks hold at least ``min_items`` items.

    ``work`` gives one result per item; results made in the child must be plain data that
    ``marshal`` carries. A side effect of ``work`` (writing a file) may happen twice for an
    item when the child fails part way.
    """
    if sum(map(len, chunks)) < min_items or len(chunks) < 2 or len(chunks) > _MAX_CHUNKS or cores() < 2 \
            or not hasattr(os, "fork") or threading.active_count() > 1:
        for i, chunk in enumerate(chunks):
            yield i, work(chunk)
        return
    queue_read, queue_write = os.pipe()
    with os.fdopen(queue_write, "wb") as queue:
        queue.write(b"".join(i.to_bytes(_WIDTH, "little") for i in range(len(chunks))))
    result_read, result_write = os.pipe()
    with contextlib.suppress(ImportError, OSError, AttributeError):
        import fcntl

        fcntl.fcntl(result_write, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    pid = os.fork()
    if pid == 0:
        _child(work, chunks, queue_read, result_read, result_write)
    os.close(result_write)
    done: set[int] = set()
    try:
        with os.fdopen(result_read, "rb", buffering=0) as results:
            os.set_blocking(results.fileno(), False)
            frames = _Frames(chunks)
            while (number := _take(queue_read)) is not None:
                yield number, work(chunks[number])
                done.add(number)
                for j, chunk in frames.feed(_available(results.fileno())):  # the child's, meanwhile
                    if j not in done:
                        done.add(j)
                        yield j, chunk
            os.set_blocking(results.fileno(), True)
            rest = results.read()  # until the child closes its end (whole frames count even if it failed)
        os.waitpid(pid, 0)
        pid = 0
        for j, chunk in frames.feed(rest or b""):
            if j not in done:
                done.add(j)
                yield j, chunk
    finally:
        os.close(queue_read)
        if pid:  # interrupted or failed here: stop the child before going on
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, 9)
                os.waitpid(pid, 0)
    for i, chunk in enumerate(chunks):  # what the child took and did not give back
        if i not in done:
            yield i, work(chunk)


def _child(work: Callable[[list[T]], list[Any]], chunks: list[list[T]], queue: int,
           result_read: int, result_write: int) -> NoReturn:
    """The forked child: take chunks until none is left, send each one's results as soon as
    they are made, leave (never running the parent's cleanup: atexit, finally blocks)."""
    status = 1
    try:
        os.close(result_read)
        with os.fdopen(result_write, "wb") as out:
            while (number := _take(queue)) is not None:
                payload = marshal.dumps(work(chunks[number]))
                out.write(number.to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload)
                out.flush()
        status = 0
    finally:
        os._exit(status)


def _take(queue: int) -> int | None:
    """The number of the next chunk to do, None when none is left."""
    number = os.read(queue, _WIDTH)
    return int.from_bytes(number, "little") if len(number) == _WIDTH else None


def _available(fd: int) -> bytes:
    """What can be read from ``fd`` now, without waiting."""
    parts = []
    while True:
        try:
            part = os.read(fd, _PIPE_SIZE)
        except BlockingIOError:
            break
        if not part:
            break
        parts.append(part)
    return b"".join(parts)


class _Frames:
    """The child's results, read in pieces: whole frames come out, a partial one waits."""

    def __init__(self, chunks: list[list[Any]]) -> None:
        self.chunks = chunks
        self.buffer = bytearray()

    def feed(self, data: bytes) -> Iterator[tuple[int, list[Any]]]:
        self.buffer += data
        start = 0
        try:
            while len(self.buffer) - start >= _HEADER:
                i = int.from_bytes(self.buffer[start:start + 4], "little")
                end = start + _HEADER + int.from_bytes(self.buffer[start + 4:start + _HEADER], "little")
                if len(self.buffer) < end:
                    break
                payload = bytes(self.buffer[start + _HEADER:end])
                start = end
                try:
                    chunk = marshal.loads(payload)
                except (ValueError, EOFError, TypeError):
                    continue  # done again here
                if 0 <= i < len(self.chunks) and isinstance(chunk, list) and len(chunk) == len(self.chunks[i]):
                    yield i, chunk
        finally:
            del self.buffer[:start]
