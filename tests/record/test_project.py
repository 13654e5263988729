from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from recordtool.record.project import open_project
from tests.conftest import ProjectBuilder, minimal_record


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
def test_a_process_that_opens_projects_again_and_again_holds_no_more_files(project: ProjectBuilder) -> None:
    """A process that opens projects one after another (a test run, ``mkdocs serve``) holds
    no file of the ones before: the store is closed once the project is open."""
    minimal_record(project)
    for n in range(30):
        project.add(f"NOTE-{10 + n}", f"title: Note {n}\nbody: See LIT-1 and NOTE-1.\n")
    ago = time.time() - 60
    for path in project.root.rglob("*"):
        os.utime(path, (ago, ago))
    counts = []
    for n in range(6):
        project.add("NOTE-9", f"title: Edit {n}\nbody: See LIT-1.\n")
        result = CliRunner().invoke(cli, ["render", "--root", str(project.root)])
        assert result.exit_code == 0, result.output
        gc.collect()
        counts.append(_open_files())
    assert counts[-1] <= counts[1], counts


def test_the_collector_runs_again_once_a_project_is_open(project: ProjectBuilder) -> None:
    """The cyclic collector is paused while the record is built, and only then."""
    minimal_record(project)
    assert gc.isenabled()
    open_project(root=project.root, cache=True)
    assert gc.isenabled()
    gc.disable()
    try:
        open_project(root=project.root)
        assert not gc.isenabled()  # (left as the caller had it)
    finally:
        gc.enable()


def test_errors_come_first_then_warnings_each_in_file_order(project: ProjectBuilder) -> None:
    minimal_record(project)
    project.add("NOTE-2", "title: T\nbody: See THEORY-404.\n")
    project.add("NOTE-3", "title: T\ncites: [{id: LIT-1, as: nonsense}]\n")
    problems = open_project(root=project.root).problems
    assert [(p.severity, Path(p.path).name) for p in problems] == [
        ("error", "NOTE-3.yaml"), ("warning", "NOTE-2.yaml")]


def test_a_large_record_is_moved_out_of_the_collectors_sight_once_built(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    import recordtool.record.project as project_module

    request.addfinalizer(gc.unfreeze)  # (the next tests' objects stay collectable)
    minimal_record(project)
    monkeypatch.setattr(project_module, "FREEZE_MIN", 3)
    gc.collect()
    before = gc.get_freeze_count()
    opened = open_project(root=project.root)
    assert gc.get_freeze_count() > before and gc.isenabled()
    assert list(opened.record.entries) == ["LIT-1", "NOTE-1", "THEORY-1"]
