"""Atomic file writes: a reader sees the old file or the new one, never half of either; and
the one file lock.

A temporary file is named after the process that writes it, so that one left by a process
that died is removed by the next run (``sweep``, and ``sweep_runs`` for a run's folder).
``exclusive`` holds an ``fcntl`` lock, which the kernel releases however the process dies.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

_TEMPORARY = re.compile(r"^\..*recordtool-(\d+)(?:-[0-9a-f]+)?\.tmp$")


def temporary_name(folder: str | Path, name: str) -> str:
    """A fresh temporary name in ``folder`` for writing ``name``, naming this process."""
    return os.path.join(folder, f".{name}.recordtool-{os.getpid()}-{os.urandom(4).hex()}.tmp")


def write_atomic(path: Path, data: bytes | str, *, new: bool = False) -> None:
    """Write ``data`` to ``path`` through a fsynced temporary file renamed over it (``new``:
    linked to it, FileExistsError when a file is there); on any error ``path`` is as it was."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_name = temporary_name(path.parent, path.name)
    try:
        fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        (os.link if new else os.replace)(tmp_name, path)
    except OSError as exc:
        if exc.errno is not None:  # named after the file meant, not the temporary one
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)


def sweep(folder: str | Path) -> None:
    """Remove the temporary files in ``folder`` left by recordtool processes that are gone
    (their id names no running process)."""
    for name in _names(folder):
        match = _TEMPORARY.match(name)
        if match is not None and not _alive(int(match.group(1))):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                os.unlink(os.path.join(folder, name))


def sweep_runs(folder: str | Path) -> None:
    """Remove the folders in ``folder`` named ``<pid>-...`` by recordtool processes that are
    gone: what a run killed before it could clean up left there."""
    for name in _names(folder):
        pid, dash, _rest = name.partition("-")
        if dash and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _names(folder: str | Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process writes under fresh names; an old one of this id died
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True  # (a PermissionError too: the process is there, another user's)


@contextlib.contextmanager
def exclusive(path: Path, busy: Callable[[str], Exception]) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the block, with this process named in it; when
    another process holds it, raise ``busy(holder)`` at once (``holder``: "pid 1234"). The
    file is removed when the block ends; put it where nothing else deletes it meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = _lock(path, busy)
    try:
        try:  # unbuffered: nothing is left to flush when the handle closes
            os.write(handle.fileno(), f"pid {os.getpid()}".encode())
        except OSError as exc:  # a full disk
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # (still held: a process that opened it meanwhile finds it gone, and opens anew)
        handle.close()


def _lock(path: Path, busy: Callable[[str], Exception]) -> TextIO:
    """``path`` opened and locked, emptied; the file that is at ``path`` now, not one that
    its last holder removed after this process opened it."""
    import fcntl  # (POSIX only: imported here so that the atomic writes above work everywhere)

    while True:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - the caller closes it
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise busy(holder) from None
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.fstat(handle.fileno()), os.stat(path)):
                handle.seek(0)
                handle.truncate()
                return handle
        handle.close()  # removed by its last holder after this process opened it: open the new one
