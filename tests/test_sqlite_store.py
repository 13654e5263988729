"""recordtool.store: values given back only under the digest they were kept under, for the same
version; a damaged file is set aside and the store starts empty; one that cannot be written
keeps nothing and fails nothing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from recordtool.store import FILE, Store, code_version
from tests.conftest import REPO


def _get(store: Store, table: str, key: str, digest: str) -> object:
    """The value kept for ``key`` under ``digest``, or None."""
    return store.get_many(table, {key: digest}).get(key)


def test_a_value_is_given_back_only_under_its_digest(tmp_path: Path) -> None:
    store = Store(tmp_path, "1")
    assert _get(store, "things", "a", "d1") is None
    store.put_many("things", [("a", "d1", {"x": [1, 2]}), ("b", "d2", (3, "y"))])
    assert _get(store, "things", "a", "d1") == {"x": [1, 2]}
    assert _get(store, "things", "a", "d2") is None  # another digest: its inputs changed
    assert store.get_many("things", {"a": "d1", "b": "d2", "c": "d3"}) == {"a": {"x": [1, 2]}, "b": (3, "y")}
    assert _get(store, "other", "a", "d1") is None  # tables apart
    store.put_many("things", [("a", "d9", "new")], drop=["b"])
    assert store.items("things") == {"a": ("d9", "new")}
    assert store.keys("things") == {"a"}
    store.close()
    assert _get(Store(tmp_path, "1"), "things", "a", "d9") == "new"  # kept on disk


def test_many_keys_at_once_give_the_same_as_one_by_one(tmp_path: Path) -> None:
    store = Store(tmp_path, "1")
    store.put_many("t", [(f"k{n}", f"d{n}", n) for n in range(1_200)])
    asked = {f"k{n}": f"d{n}" if n % 3 else "other" for n in range(1_300)}
    assert store.get_many("t", asked) == {f"k{n}": n for n in range(1_200) if n % 3}


def test_another_version_finds_an_empty_store(tmp_path: Path) -> None:
    Store(tmp_path, "1").put_many("t", [("a", "d", 1)])
    assert _get(Store(tmp_path, "2"), "t", "a", "d") is None
    assert _get(Store(tmp_path, "1"), "t", "a", "d") is None  # (written over by version 2's empty store)


def test_a_table_name_is_an_identifier(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a table name"):
        _get(Store(tmp_path, "1"), 'x"; DROP TABLE meta; --', "k", "d")


@pytest.mark.parametrize("damage", ["truncated", "garbage", "zeros"])
def test_a_damaged_file_is_set_aside_and_the_store_starts_empty(tmp_path: Path, damage: str) -> None:
    store = Store(tmp_path, "1")
    store.put_many("t", [(f"k{n}", "d", "x" * 1000) for n in range(200)])
    store.close()
    path = tmp_path / FILE
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    data = path.read_bytes()
    path.write_bytes({"truncated": data[:len(data) // 3], "garbage": os.urandom(len(data)),
                      "zeros": bytes(len(data))}[damage])
    again = Store(tmp_path, "1")
    assert again.get_many("t", {f"k{n}": "d" for n in range(200)}) in ({}, {f"k{n}": "x" * 1000 for n in range(200)})
    again.put_many("t", [("k", "d", 1)])
    assert _get(Store(tmp_path, "1"), "t", "k", "d") == 1  # healed
    if damage != "truncated":  # (a truncated file may still read as an empty database)
        assert (tmp_path / f"{FILE}.damaged").is_file()


def test_a_store_that_cannot_be_written_keeps_nothing_and_fails_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.write_text("a file where the folder would be", encoding="utf-8")
    store = Store(folder, "1")
    store.put_many("t", [("a", "d", 1)])
    assert _get(store, "t", "a", "d") is None
    assert store.keys("t") == set() and store.items("t") == {}
    assert folder.read_text(encoding="utf-8") == "a file where the folder would be"


def test_a_value_that_no_longer_unpickles_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path, "1")
    store.put_many("t", [("a", "d", 1)])
    store.close()
    db = sqlite3.connect(tmp_path / FILE)
    db.execute("UPDATE t SET value = ?", (b"not a pickle",))
    db.commit()
    db.close()
    assert _get(Store(tmp_path, "1"), "t", "a", "d") is None


def test_two_processes_write_at_once_and_both_are_kept(tmp_path: Path) -> None:
    script = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
              "from pathlib import Path\nfrom recordtool.store import Store\n"
              "store = Store(Path(sys.argv[1]), '1')\n"
              "for n in range(200):\n"
              "    store.put_many('t', [(sys.argv[2] + str(n), 'd', n)])\n")
    writers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), name]) for name in ("a", "b")]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    assert len(Store(tmp_path, "1").keys("t")) == 400


def _plant(folder: Path, version: str) -> None:
    """A distribution's metadata folder (``.dist-info`` or ``.egg-info``), as an installer leaves it."""
    folder.mkdir(parents=True)
    meta = "PKG-INFO" if folder.name.endswith(".egg-info") else "METADATA"
    (folder / meta).write_text(f"Metadata-Version: 2.1\nName: markdown-it-py\nVersion: {version}\n", encoding="utf-8")


def test_a_code_version_names_the_versions_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = code_version(("markdown-it-py",))
    _plant(tmp_path / "markdown_it_py-99.0.dist-info", "99.0")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    code_version.cache_clear()
    try:
        assert code_version(("markdown-it-py",)) != before
        assert code_version(()) == code_version(("no-such-distribution",))
    finally:
        code_version.cache_clear()
