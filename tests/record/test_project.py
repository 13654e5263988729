from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from recordtool.record import project as project_module
from recordtool.record.project import GcPause
from tests.conftest import ProjectBuilder, minimal_record


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
@pytest.mark.parametrize("large", [False, True])
def test_a_process_that_opens_projects_again_and_again_holds_no_more_files(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
        large: bool) -> None:
    """A process that opens projects one after another (a test run, ``mkdocs serve``) holds
    what the last one left behind, not what every one did (each render keeps the entry cache's
    rewritten shards open while its entries may still be made from them; a test runner's
    traceback holds the command's frames in a cycle). A large record's objects are frozen out
    of the collector's sight once built (``GcPause``) and given back when the next is opened;
    a small record's are never frozen, and go when the collector next runs."""
    if large:
        monkeypatch.setattr(project_module, "FREEZE_MIN", 1)
    request.addfinalizer(GcPause.thaw)  # whatever happens below: the next tests' objects stay collectable
    gc.collect()
    before = gc.get_freeze_count()  # (0, but on Python 3.12: its collections put immortal objects there)
    minimal_record(project)
    for n in range(30):
        project.add(f"NOTE-{10 + n}", f"title: Note {n}\nbody: See LIT-1 and NOTE-1.\n")
    # Files written within RACY_NS of a render are kept without their times, and the render
    # after the window closes writes their shards again (holding each one's old files open):
    # made a minute ago, only the edited entry's shard is written each time, however slow the
    # machine (in CI, the sixth render once fell after the window and held 46 more files).
    ago = time.time() - 60
    for path in project.root.rglob("*"):
        os.utime(path, (ago, ago))
    counts = []
    for n in range(6):
        project.add("NOTE-9", f"title: Edit {n}\nbody: See LIT-1.\n")
        result = CliRunner().invoke(cli, ["render", "--root", str(project.root)])
        assert result.exit_code == 0, result.output
        assert (gc.get_freeze_count() > before) is large
        if not large:
            gc.collect()
        counts.append(_open_files())
    assert counts[-1] <= counts[1], counts  # (grew by two files a render before)


def test_an_entry_cache_opened_ahead_is_used_only_for_its_own_project(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``open_project(opened=...)`` takes the entry cache read ahead (``open_entry_cache``) as
    if it had read it; one read for another project (or configuration) is let go, and the
    project is what opening it cold gives."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = minimal_record(ProjectBuilder(tmp_path / "first"))
    second = minimal_record(ProjectBuilder(tmp_path / "second"))
    second.add("NOTE-2", "title: Only in the second\ncites: [{id: LIT-1, as: paper}]\n")
    for root in (first.root, second.root):
        project_module.open_project(root=root, cache=True)  # (the entry caches filled)
    ahead, foreign = project_module.open_entry_cache(first.root), project_module.open_entry_cache(first.root)
    assert ahead is not None and ahead.hits == 0 and len(ahead.items) == 3
    read: list[Path] = []
    real = project_module.open_cache

    def open_cache(config: object) -> object:
        read.append(config.root)  # type: ignore[attr-defined]
        return real(config)  # type: ignore[arg-type]

    monkeypatch.setattr(project_module, "open_cache", open_cache)
    opened = project_module.open_project(root=first.root, cache=True, opened=ahead)
    assert ahead.hits == 3 and read == []  # every file as it was: taken from the cache read ahead
    assert list(opened.record.entries) == ["LIT-1", "NOTE-1", "THEORY-1"]
    other = project_module.open_project(root=second.root, cache=True, opened=foreign)
    assert read == [second.root]  # its own cache read instead
    assert list(other.record.entries) == list(project_module.open_project(root=second.root).record.entries)
    assert "NOTE-2" in other.record.entries


def test_a_large_entry_cache_read_ahead_is_frozen_and_stays_so_while_the_project_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Read ahead, a large entry cache is moved out of the collector's sight as ``open_project``
    does with what it builds (else the collector's next pass goes over all of it); opening the
    project with it keeps it so, instead of first giving back what was frozen before."""
    request.addfinalizer(GcPause.thaw)
    (tmp_path / "p").mkdir()
    root = minimal_record(ProjectBuilder(tmp_path / "p")).root
    project_module.open_project(root=root, cache=True)  # (the entry cache filled)
    GcPause.thaw()
    monkeypatch.setattr(project_module, "FREEZE_MIN", 0)
    unfrozen: list[bool] = []
    real = gc.unfreeze
    monkeypatch.setattr(gc, "unfreeze", lambda: (unfrozen.append(True), real())[1])
    ahead = project_module.open_entry_cache(root)
    frozen = gc.get_freeze_count()
    assert ahead is not None and frozen > 0 and gc.isenabled()
    project_module.open_project(root=root, cache=True, opened=ahead)
    assert unfrozen == [] and gc.get_freeze_count() >= frozen and gc.isenabled()
    project_module.open_project(root=root, cache=True)  # without: what was frozen is given back first
    assert unfrozen == [True]
