"""The benchmarks' memory figure (benchmarks/measure.py): all of a command's processes, each
page counted once, and the line that says whether issue 14's aim is met."""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import measure  # type: ignore[import-not-found]

linux_kcmp = pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
                                reason="kcmp(2) on Linux x86_64 or aarch64")


@linux_kcmp
def test_a_forked_child_is_counted_and_only_a_child_sharing_its_parents_memory_is_not() -> None:
    assert measure.same_memory(os.getpid(), os.getpid())  # one address space: what a vfork child shows
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        time.sleep(5)
        os._exit(0)
    try:
        assert not measure.same_memory(os.getpid(), pid)  # a copy of it, counted (its PSS shares pages)
        alone = measure.tree_kib(pid)
        both = measure.tree_kib(os.getpid())
        assert alone[1] > 0 and both[0] > alone[0]  # the child's RSS is in the tree's
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_the_aim_is_1_5_billion_bytes_at_100000_entries() -> None:
    assert measure.memory_aim("render", 10_000, 2, 2_000.0) is None  # only at 100,000 entries or more
    met = measure.memory_aim("render", 100_000, 2, 1_400.0)
    missed = measure.memory_aim("validate", 100_000, 1, 1_431.0)  # 1.5e9 bytes is 1,430.5 MiB
    assert met is not None and met.endswith(": met, +31 MiB to spare"), met
    assert "1,400 MiB PSS summed over its processes (1.47 GB) against the aim of 1.5 GB (1,431 MiB)" in met
    assert missed is not None and ": NOT met, -0 MiB to spare" in missed, missed
    assert "of 200,000 entries" in (measure.memory_aim("render", 200_000, 1, 2_000.0) or "")


def test_a_folder_set_aside_is_out_of_the_way_and_kept_whole(tmp_path: Path) -> None:
    entries = tmp_path / "project" / ".recordtool-cache" / "entries"
    entries.mkdir(parents=True)
    (entries / "shard-00.bin").write_bytes(b"kept")
    bin_ = tmp_path / ".set-aside"
    measure.set_aside(entries, bin_)
    assert not entries.exists()
    [moved] = bin_.iterdir()
    assert (moved / "shard-00.bin").read_bytes() == b"kept"
    measure.set_aside(entries, bin_)  # nothing there: nothing to do
    assert len(list(bin_.iterdir())) == 1


def test_the_floor_shared_by_processes_covers_each_file_once(tmp_path: Path) -> None:
    folder = tmp_path / "record" / "notes"
    folder.mkdir(parents=True)
    for i in range(5):
        (folder / f"NOTE-{i}.yaml").write_text(f"id: NOTE-{i}\nbody: |\n  *Text* {i}.\n", encoding="utf-8")
    shares = [measure._floor_here(tmp_path, (k, 2))["files"] for k in range(2)]
    assert shares == [3, 2]
    found = measure.floor(tmp_path, 2)
    assert found.files == 5
    assert found.together_s is not None and found.together() == found.together_s
    alone = measure.floor(tmp_path)
    assert alone.together_s is None and alone.together() == alone.seconds


def test_modules_are_compiled_to_bytecode_also_where_python_would_not_write_it(tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "module.py").write_text("VALUE = 1\n", encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    line = measure.compiled(env, more=(package,))
    assert [p.name.split(".")[0] for p in (package / "__pycache__").glob("*.pyc")] == ["module"]
    assert line.startswith("modules compiled to bytecode first, as an install does (") and str(package) in line
    assert "recordtool" in line.split("(", 1)[1].split(",")[0]  # first the recordtool the commands import
