"""Atomic writes (recordtool/atomic.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recordtool.atomic import write_atomic


def test_a_file_is_written_from_text_bytes_or_parts_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "kept.bin"
    write_atomic(path, "héllo")
    assert path.read_bytes() == "héllo".encode()
    write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    write_atomic(path, [b"head:", b"", b"payload"])  # parts written one after the other, not joined first
    assert path.read_bytes() == b"head:payload"
    assert sorted(p.name for p in path.parent.iterdir()) == ["kept.bin"]


def test_a_file_not_durable_is_written_atomically_without_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    path = tmp_path / "kept.bin"
    write_atomic(path, b"cache", durable=False)
    assert path.read_bytes() == b"cache" and synced == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.bin"]
    write_atomic(path, b"verdict")
    assert path.read_bytes() == b"verdict" and len(synced) == 1
