"""Render's kept files (page keys, rows, the index's key), kept in the store (``recordtool.store``).

Render keeps a few values of its own between runs, each once named by a file of the cache
folder and a format. They live in the store's ``files`` table, under that file's name, and
are given back only under the digest they were kept under: the format and ``cache_key`` (the
configuration and recordtool's code). For render's callers until it keeps them in tables of
its own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from recordtool.record.config import Config
from recordtool.record.load import config_digest
from recordtool.record.project import DEPENDENCIES
from recordtool.snapshot import code_version
from recordtool.store import Store

FILES = "files"  # the store's table of render's kept values: file name -> (format and key, value)


def cache_key(config: Config) -> bytes:
    """What a kept value depends on beyond its own inputs: the configuration (its root
    included) and recordtool's code and the versions it reads with."""
    text = f"{config_digest(config)}:{code_version(DEPENDENCIES)}"
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def read_plain(path: Path, key: bytes, form: bytes) -> Any:
    """The value ``write_plain`` kept as ``path`` for ``key`` in the format ``form``; None when
    there is none (or it was kept for another key or format)."""
    store = Store(path.parent, code_version(DEPENDENCIES))
    try:
        return store.get(FILES, path.name, _digest(key, form))
    finally:
        store.close()


def write_plain(path: Path, key: bytes, form: bytes, value: Any) -> None:
    """Keep ``value`` as ``path`` for ``key`` in the format ``form``."""
    store = Store(path.parent, code_version(DEPENDENCIES))
    try:
        store.put_many(FILES, [(path.name, _digest(key, form), value)])
    finally:
        store.close()


def _digest(key: bytes, form: bytes) -> str:
    return f"{form.decode('utf-8', 'replace').strip()}:{key.hex()}"
