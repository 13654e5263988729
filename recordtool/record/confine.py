"""Confinement: the files the record is made of are regular files inside their folders.

An entry, a check module or a figure that is a link leading out of its folder is refused
before it is read or run, so that its text is never published nor its code run; so is
anything that is not a regular file. ``open_inside`` opens a file one name at a time,
following no link, so that a file swapped for a link between the check and the read is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a check's process reads its modules through here: it imports nothing more
    from recordtool.record.config import Config
    from recordtool.record.problems import Problem

NOT_REGULAR = "is not a regular file"


def refused(path: Path | str, folder: Path | str) -> str | None:
    """Why ``path`` may not be read as a file of ``folder`` (None when it may): it leads out
    of the folder (it, or a folder on its way, is a link), or it is not a regular file."""
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(path)
    if real != real_folder and not real.startswith(real_folder.rstrip(os.sep) + os.sep):
        return f"is a link to {real}, outside {os.path.basename(real_folder)}/"
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if not stat.S_ISREG(info.st_mode):
        return NOT_REGULAR
    return None


_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFDIR: "a folder", stat.S_IFIFO: "a named pipe",
          stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}


def not_plain(path: Path | str) -> str | None:
    """Why ``path``, not followed, is not a plain file (None when it is): a regular file of one
    name, as what a check leaves behind must be (never a link, hard link, pipe or device)."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return f"is {_KINDS.get(stat.S_IFMT(info.st_mode), 'not a regular file')}"
    return "is a hard link (the file has another name, maybe outside)" if info.st_nlink > 1 else None


class Refused(OSError):
    """A file that may not be read as a file of its folder; ``str()`` says why."""

    def __init__(self, why: str) -> None:
        super().__init__(errno.EPERM, why)
        self.why = why

    def __str__(self) -> str:
        return self.why


_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def open_inside(path: Path | str, folder: Path | str) -> int:
    """A file descriptor open for reading on ``path``, a regular file inside ``folder``;
    ``Refused`` when it is not, or changed between the check and the opening."""
    real_folder, real = os.path.realpath(folder), os.path.realpath(path)  # once: what is checked is what is opened
    why = refused(real, real_folder)
    if why is not None:
        raise Refused(why)
    parts = os.path.relpath(real, real_folder).split(os.sep)
    if any(part in ("", ".", "..") for part in parts):
        raise Refused(f"changed while it was read (it leads out of {os.path.basename(real_folder)}/ now)")
    where = os.open(real_folder, _FLAGS | _DIRECTORY)
    try:
        fd = _open_by_names(where, parts)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # a link where a file or folder was
            raise Refused(f"changed while it was read (it or a folder on its way is a link now, "
                          f"outside {os.path.basename(real_folder)}/ or not)") from None
        raise Refused(f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(NOT_REGULAR)
    return fd


def _open_by_names(where: int, parts: list[str]) -> int:
    """A file descriptor on the path ``parts`` from the folder open as ``where``, one name at a
    time, following no link (non-blocking: a named pipe opens at once, for the caller to refuse)."""
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FLAGS | _DIRECTORY | _NOFOLLOW, dir_fd=where)
            os.close(where)
            where = inner
        return os.open(parts[-1], _FLAGS | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=where)
    finally:
        os.close(where)


def read_inside(path: Path | str, folder: Path | str, limit: int | None = None) -> bytes:
    """The bytes of ``path``, a regular file inside ``folder`` (``open_inside``): at most
    ``limit`` + 1 of them, so that the caller can tell a file over the limit."""
    with os.fdopen(open_inside(path, folder), "rb") as file:
        return file.read(-1 if limit is None else limit + 1)


def checks_problems(config: Config) -> list[Problem]:
    """A problem for every file or folder of the checks package that leads out of it (a link)
    or that is a module but not a regular file: refused before anything there is read or run."""
    from recordtool.record.problems import Problem

    package = config.root / config.checks
    if not package.is_dir() and not package.is_symlink():
        return []
    problems = []
    if package.is_symlink():
        why = refused(package, config.root)
        if why is not None:
            return [Problem(config.relative(package), 0, 0, f"the checks package {why}; check modules must be "
                            "files inside the project", code="outside")]
    real_package = os.path.realpath(package)
    for dirpath, dirnames, filenames in os.walk(package):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if os.path.islink(path) and real != real_package and not real.startswith(real_package + os.sep):
                problems.append(Problem(config.relative(path), 0, 0,
                                        f"is a link to {real}, outside {config.checks}/; check modules must be "
                                        f"files inside {config.checks}/ (copy it in instead)", code="outside"))
            elif name.endswith(".py") and not os.path.isdir(path) and not os.path.isfile(path):
                problems.append(Problem(config.relative(path), 0, 0,
                                        "is not a regular file; a check module is a Python file", code="not-a-file"))
    return problems
