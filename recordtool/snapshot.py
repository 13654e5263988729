"""Snapshots of files: deciding "nothing changed" from sizes and modification times.

A command that only reads (``render`` with nothing new, ``verify`` with every verdict fresh,
``status``) keeps what it read as a snapshot: the size and modification time of every input
file, and recordtool's own code version. The next run takes the same snapshot before opening
anything; when the two agree, what the last run concluded still holds and the project (YAML,
pydantic, the verdicts) need not be loaded at all.

Modification times have a tick (coarse on some filesystems): a file written within ``RACY_NS``
of the snapshot may change again without its time changing, so its content hash is kept too and
compared once it is older ("racy" files, as git calls them).

Shared by the stages: it imports none of them (each stage decides what its inputs are).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RACY_NS = 2_000_000_000  # a file changed this recently may change again within its mtime's tick
PACKAGE = Path(__file__).resolve().parent  # recordtool/, every stage

Files = dict[str, list[Any]]  # path -> [size, mtime_ns] (+ content hash when changed just now)
Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


@dataclass
class Stats:
    """Files as a snapshot stat-ed them (``walk``): ``files`` by path (size, times and inode),
    and ``taken``, the time before the first of them was stat-ed (a file changed within
    ``RACY_NS`` of it may change again unseen)."""

    files: dict[str, Stat]
    taken: int


def content_hash(data: bytes) -> str:
    import hashlib  # loads OpenSSL: only when a hash is wanted

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_file(path: str) -> list[int] | None:
    """[size, mtime_ns] of a file, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def walk(folder: str, into: Files, full: dict[str, Stat] | None = None) -> None:
    """[size, mtime_ns] of every file under ``folder`` (links to folders not followed, as
    loading does not; ``__pycache__`` left out: importing a module rewrites it); with ``full``,
    each file's size, times and inode there too (``Stats``)."""
    stack = [folder]
    while stack:
        try:
            scan = os.scandir(stack.pop())
        except OSError:
            continue
        with scan:
            for item in scan:
                if item.is_dir(follow_symlinks=False):
                    if item.name != "__pycache__":
                        stack.append(item.path)
                    continue
                try:
                    st = item.stat()
                except OSError:
                    into[item.path] = [-1, -1]
                    continue
                into[item.path] = [size, mtime] = [st.st_size, st.st_mtime_ns]
                if full is not None:
                    full[item.path] = (size, mtime, st.st_ctime_ns, st.st_ino)


def take(files: Iterable[str] = (), folders: Iterable[str] = (), stats: Stats | None = None) -> Files:
    """The state of ``files`` (those that exist) and of every file under ``folders``, with the
    content hash of each file changed so recently that it may change again unseen. ``stats``:
    where to keep the ``Stats`` of every file under ``folders`` too, for a stage that would stat
    them again."""
    start = time.time_ns()
    state: Files = {}
    if stats is not None:
        stats.taken = start
    for path in files:
        stat = stat_file(path)
        if stat is not None:
            state[path] = stat
    for folder in folders:
        walk(folder, state, stats.files if stats is not None else None)
    for path, value in state.items():
        if value[1] >= start - RACY_NS:
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                value.append(content_hash(handle.read()))
    return state


def files_hold(then: Any, now: Files) -> bool:
    """Whether the files are as they were: the same paths, sizes and times (and, for a file
    that was racy then, the same content)."""
    if not isinstance(then, dict) or len(then) != len(now):
        return False
    for path, value in now.items():
        old = then.get(path)
        if not isinstance(old, list) or old[:2] != value[:2]:
            return False
        if len(old) > 2 and (len(value) < 3 or value[2] != old[2]):
            if len(value) > 2:
                return False
            try:  # it was racy then, and is old now: check its content
                with open(path, "rb") as handle:
                    if content_hash(handle.read()) != old[2]:
                        return False
            except OSError:
                return False
    return True


def stats_hold(then: Any) -> bool:
    """Whether every file of ``then`` (path -> [size, mtime_ns], or None for none) is as it was."""
    if not isinstance(then, dict):
        return False
    return all(stat_file(path) == old for path, old in then.items())


@functools.lru_cache(maxsize=8)
def code_version(dists: tuple[str, ...] = ()) -> str:
    """A hash of recordtool's own code (every module), its version, Python's, and the versions
    of the distributions ``dists`` (read from their metadata, never by importing them). Worked
    out once a process (``cache_clear`` to forget it): the code that runs is what the process
    imported, and a process that opens projects again and again (tests, ``mkdocs serve``)
    would read every module each time."""
    import hashlib

    import recordtool

    digest = hashlib.blake2b(recordtool.__version__.encode("utf-8"), digest_size=8)
    digest.update(sys.version.encode("utf-8"))
    for dist, version in dist_versions(dists).items():
        if version is not None:
            digest.update(f"{dist}={version}".encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode("utf-8"))
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def dist_versions(dists: Iterable[str]) -> dict[str, str | None]:
    """The installed version of each distribution of ``dists`` (None: none installed), as
    ``importlib.metadata.version`` gives it: from the name of its ``<name>-<version>.dist-info``
    folder in the first folder of ``sys.path`` that holds it (where ``importlib.metadata``
    finds it too). A distribution installed otherwise (an ``.egg-info`` met first, a zip) is
    asked of ``importlib.metadata`` itself. Importing that module imports ``email``,
    ``zipfile`` and ``csv``: more than the rest of a render's "nothing changed" costs."""
    import re

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "_", name).lower()

    wanted = {normal(dist): dist for dist in dists}
    found: dict[str, str | None] = {}  # normal name -> version (None: ask importlib.metadata)
    for folder in sys.path:
        if len(found) == len(wanted):
            break
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info"):
                continue
            dist, dash, named = stem.partition("-")
            key = normal(dist)
            if key in wanted and key not in found:
                found[key] = named if suffix == "dist-info" and dash and named else None
    versions: dict[str, str | None] = {}
    for key, dist in wanted.items():
        version = found.get(key)
        if version is None:
            from importlib import metadata

            try:
                version = metadata.version(dist)
            except metadata.PackageNotFoundError:
                version = None
        versions[dist] = version
    return versions
