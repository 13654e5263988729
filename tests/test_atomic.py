"""Atomic writes (recordtool/atomic.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from recordtool.atomic import exclusive, write_atomic


def test_a_file_is_written_from_text_or_bytes_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "kept.bin"
    write_atomic(path, "héllo")
    assert path.read_bytes() == "héllo".encode()
    write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    assert sorted(p.name for p in path.parent.iterdir()) == ["kept.bin"]


def test_exclusive_refuses_a_second_holder_at_once_and_removes_its_file(tmp_path: Path) -> None:
    """The one file lock: a second holder, in another process, is refused with who holds it;
    the file goes when the lock is released, and the next holder makes it anew."""

    path = tmp_path / "sub" / ".lock"
    other = textwrap.dedent(f"""
        from pathlib import Path
        from recordtool.atomic import exclusive
        try:
            with exclusive(Path({str(path)!r}), lambda holder: RuntimeError(holder)):
                print("held")
        except RuntimeError as exc:
            print("busy:", exc)
    """)

    def second() -> str:
        return subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}).stdout.strip()

    with exclusive(path, RuntimeError):
        assert path.read_text() == f"pid {os.getpid()}"
        assert second() == f"busy: pid {os.getpid()}"
    assert not path.exists()
    assert second() == "held"
    with exclusive(path, RuntimeError):  # (the file left by the other: taken over)
        pass
