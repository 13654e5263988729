"""The one store of what recordtool keeps between runs: a SQLite file in the cache folder.

Named tables of ``key -> (digest, value)``. The one rule of invalidation: a value is returned
only while the digest it was kept under is the one the caller works out now from its inputs.
The store as a whole is keyed by recordtool's code and ``FORM``. A damaged file is set aside
and the store starts empty: a cache only ever costs time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import recordtool

FORM = "recordtool-store 1"  # bump when what any table holds changes shape
FILE = "store.sqlite"  # under the cache folder
TIMEOUT_S = 30.0  # how long a writer waits for another process's transaction
PACKAGE = Path(__file__).resolve().parent  # recordtool/, every stage


class Store:
    """Tables of ``key -> (digest, value)`` in one SQLite file; see the module's docstring."""

    def __init__(self, folder: Path, version: str) -> None:
        self.path = folder / FILE
        self._version = f"{FORM} {version}"
        self._db: sqlite3.Connection | None = None
        self._tables: set[str] = set()

    def _connect(self) -> sqlite3.Connection:
        """The open database; sqlite3.OperationalError when the folder cannot hold one (a file
        where it would be, no permission), which every caller takes as an empty store."""
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise sqlite3.OperationalError(f"cannot make {self.path.parent}: {exc}") from exc
            try:
                self._db = self._open()
            except sqlite3.OperationalError:
                raise
            except sqlite3.DatabaseError:  # damaged: set aside, start again
                self._set_aside()
                self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=TIMEOUT_S, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: a power cut may lose the last commit, never corrupt
        # (in one transaction: a second process opening the store at once waits, then finds the
        # version this one wrote, and leaves what it keeps meanwhile alone)
        with _transaction(db):
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            row = db.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
            if row is None or row[0] != self._version:
                for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'meta'").fetchall():
                    db.execute(f'DROP TABLE "{name}"')
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (self._version,))
        return db

    def _set_aside(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{self.path}{suffix}", f"{self.path}{suffix}.damaged")

    def _table(self, table: str) -> str:
        if table not in self._tables:
            if not table.isidentifier():
                raise ValueError(f"not a table name: {table!r}")
            self._connect().execute(
                f'CREATE TABLE IF NOT EXISTS "{table}" (key TEXT PRIMARY KEY, digest TEXT NOT NULL, value BLOB NOT NULL)'
            )
            self._tables.add(table)
        return f'"{table}"'

    def get_many(self, table: str, digests: dict[str, str]) -> dict[str, Any]:
        """The values kept for the keys of ``digests`` under the digest given for each."""
        if len(digests) > 500:  # (one pass over the table beats a query per key)
            rows = self._rows("SELECT key, digest, value FROM {}", table, ())
        else:
            rows = [row for key in digests for row in self._rows(
                "SELECT key, digest, value FROM {} WHERE key = ?", table, (key,))]
        found: dict[str, Any] = {}
        for key, digest, value in rows:
            if digests.get(key) == digest:
                with contextlib.suppress(Exception):  # a value that no longer unpickles is a miss
                    found[key] = pickle.loads(value)
        return found

    def keys(self, table: str) -> set[str]:
        """Every key kept in ``table``."""
        return {key for (key,) in self._rows("SELECT key FROM {}", table, ())}

    def items(self, table: str) -> dict[str, tuple[str, Any]]:
        """Every ``key -> (digest, value)`` kept in ``table``."""
        kept: dict[str, tuple[str, Any]] = {}
        for key, digest, value in self._rows("SELECT key, digest, value FROM {}", table, ()):
            with contextlib.suppress(Exception):
                kept[key] = (digest, pickle.loads(value))
        return kept

    def _rows(self, query: str, table: str, args: tuple[Any, ...]) -> list[Any]:
        """The rows ``query`` (with ``{}`` for the table) gives; none when the store cannot be
        read (then a damaged file is set aside, a busy or unreadable one left as it is)."""
        try:
            return self._connect().execute(query.format(self._table(table)), args).fetchall()
        except sqlite3.OperationalError:
            return []
        except sqlite3.DatabaseError:
            self._reset()
            return []

    def put_many(self, table: str, items: Iterable[tuple[str, str, Any]], *, drop: Iterable[str] = ()) -> None:
        """Keep each ``(key, digest, value)`` and forget the keys in ``drop``, in one transaction.
        A store that cannot be written (a read-only folder, a full disk) keeps nothing."""
        # (pickled as they are written: never every value's bytes at once)
        rows = ((key, digest, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) for key, digest, value in items)
        dropped = [(key,) for key in drop]
        try:
            name = self._table(table)
            db = self._connect()
            with _transaction(db):
                db.executemany(f"INSERT OR REPLACE INTO {name} VALUES (?, ?, ?)", rows)
                db.executemany(f"DELETE FROM {name} WHERE key = ?", dropped)
        except sqlite3.OperationalError:  # read-only, full or locked too long: a cache may stay behind
            pass
        except sqlite3.DatabaseError:
            self._reset()

    def _reset(self) -> None:
        """A damaged file: set it aside, and start again on the next use."""
        self.close()
        self._set_aside()

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
            self._tables.clear()


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@functools.lru_cache(maxsize=8)
def code_version(dists: tuple[str, ...] = ()) -> str:
    """A hash of recordtool's own code, its version, Python's, and the installed versions of the
    distributions ``dists`` (from their metadata), worked out once a process."""
    digest = hashlib.blake2b(recordtool.__version__.encode("utf-8"), digest_size=8)
    digest.update(sys.version.encode("utf-8"))
    for dist in dists:
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{dist}={metadata.version(dist)}".encode())
    digest.update(code_digest().encode())
    return digest.hexdigest()


@functools.cache
def code_digest() -> str:
    """A hash of recordtool's own modules (their paths and bytes, as on disk), once a process."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode("utf-8") + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()
