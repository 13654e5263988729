"""The guard in tests/conftest.py: a test that reads the shipped record fails, unless marked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO, SHIPPED, ShippedRecordGuard


def noted(guard: ShippedRecordGuard, action: Callable[[], object]) -> list[str]:
    """What the guard notes while ``action()`` runs, then forgotten (this test is not failed)."""
    before = len(guard.touched)
    action()
    new = guard.touched[before:]
    del guard.touched[before:]
    return new


def test_listing_or_opening_the_shipped_record_in_this_process_is_noted(
        tmp_path: Path, shipped_record_guard: ShippedRecordGuard) -> None:
    guard = shipped_record_guard
    assert noted(guard, lambda: os.listdir(SHIPPED)) == [f"os.listdir {SHIPPED}"]
    assert noted(guard, lambda: list(os.scandir(os.path.join(SHIPPED, "theory", "..")))) == [
        f"os.scandir {SHIPPED}/theory/.."]
    assert noted(guard, lambda: open(tmp_path / "mine.yaml", "w").close()) == []
    assert noted(guard, lambda: os.listdir(REPO / "recordtool")) == []  # the code is not the record


def test_a_process_that_would_read_the_shipped_record_is_noted(
        tmp_path: Path, shipped_record_guard: ShippedRecordGuard) -> None:
    guard = shipped_record_guard

    def start(*args: str, cwd: Path | str | None) -> None:
        subprocess.run([sys.executable, "-c", "pass", *args], cwd=cwd, check=True)

    python = f"subprocess {sys.executable} -c pass"
    assert noted(guard, lambda: start("recordtool", "validate", cwd=REPO)) == [  # no --root: the repository's
        f"{python} recordtool validate (in {REPO}, no --root)"]
    assert noted(guard, lambda: start("recordtool", "validate", "--root", str(REPO), cwd=tmp_path)) == [
        f"{python} recordtool validate --root {REPO}"]
    assert noted(guard, lambda: start(f"--root={REPO}", cwd=tmp_path)) == [f"{python} --root={REPO}"]
    assert noted(guard, lambda: start(f"{SHIPPED}/theory", cwd=tmp_path)) == [
        f"{python} {SHIPPED}/theory (in {tmp_path})"]
    assert noted(guard, lambda: start("x", cwd=SHIPPED)) == [f"{python} x (in {SHIPPED})"]
    assert noted(guard, lambda: start("recordtool", "validate", "--root", str(tmp_path), cwd=REPO)) == []
    assert noted(guard, lambda: start("recordtool", "validate", cwd=tmp_path)) == []


def test_a_test_that_reads_the_record_fails_with_where_and_a_marked_one_passes(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    (tmp_path / "record").mkdir()
    (tmp_path / "record" / "NOTE-1.yaml").write_text("id: NOTE-1\n", encoding="utf-8")
    (tmp_path / "tests" / "test_reads.py").write_text(textwrap.dedent("""
        from pathlib import Path
        import pytest
        RECORD = Path(__file__).resolve().parents[1] / "record"

        def test_reads():
            assert (RECORD / "NOTE-1.yaml").read_text() == "id: NOTE-1\\n"

        @pytest.mark.shipped_record
        def test_marked():
            assert (RECORD / "NOTE-1.yaml").read_text() == "id: NOTE-1\\n"

        def test_own(tmp_path):
            (tmp_path / "NOTE-2.yaml").write_text("x")
            assert (tmp_path / "NOTE-2.yaml").read_text() == "x"
    """), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nmarkers = ["shipped_record: reads it"]\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed, 1 error" in run.stdout, run.stdout
    record = tmp_path.resolve() / "record"
    assert (f"tests/test_reads.py::test_reads read the shipped record: open {record}/NOTE-1.yaml. Tests build "
            "their own records in tmp_path (the `project` fixture); the few that must read this repository's "
            "record/ are marked @pytest.mark.shipped_record.") in run.stdout, run.stdout
