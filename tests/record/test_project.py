from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from recordtool.record import project as project_module
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
    request.addfinalizer(gc.unfreeze)  # whatever happens below: the next tests' objects stay collectable
    minimal_record(project)
    for n in range(30):
        project.add(f"NOTE-{10 + n}", f"title: Note {n}\nbody: See LIT-1 and NOTE-1.\n")
    counts = []
    for n in range(6):
        project.add("NOTE-9", f"title: Edit {n}\nbody: See LIT-1.\n")
        result = CliRunner().invoke(cli, ["render", "--root", str(project.root)])
        assert result.exit_code == 0, result.output
        assert bool(gc.get_freeze_count()) is large
        if not large:
            gc.collect()
        counts.append(_open_files())
    assert counts[-1] <= counts[1], counts  # (grew by two files a render before)
