"""What the record stage keeps in the store: a file whose bytes are as they were is not read
again, a deleted one is forgotten, a damaged store heals, and the project is always what a
cold run makes (``recordtool.record.load``, ``static``); and render's kept values
(``recordtool.record.cache``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import recordtool.record.load as load
import recordtool.record.project as project_module
from recordtool import parallel
from recordtool.record.entry import Loaded
from recordtool.record.project import Project, open_project, open_store
from recordtool.store import FILE
from tests.conftest import ProjectBuilder, count_pools, minimal_record


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _record(project: ProjectBuilder) -> ProjectBuilder:
    """The minimal record with a mention and a citation of ids not in it, and a file that fails."""
    minimal_record(project)
    _edit(project.path("LIT-1"), "See NOTE-1.", "See NOTE-1 and NOTE-9.")
    _edit(project.path("THEORY-1"), "[{id: LIT-1, as: source}]", "[{id: LIT-1, as: source}, {id: LIT-7, as: source}]")
    project.add("NOTE-2", "title: [unclosed\n")
    return project


def _same(a: Project, b: Project) -> None:
    assert a.problems == b.problems
    assert a.record.entries == b.record.entries and a.record.places == b.record.places
    # (models compare equal whatever fields they say were set: that too is kept)
    assert ({k: e.model_dump(exclude_unset=True) for k, e in a.record.entries.items()}
            == {k: e.model_dump(exclude_unset=True) for k, e in b.record.entries.items()})
    assert a.record.failed == b.record.failed
    assert a.graph.mentions_out == b.graph.mentions_out and a.graph.cited_by == b.graph.cited_by
    assert a.graph.dangling == b.graph.dangling
    assert a.graph.orphans() == b.graph.orphans()


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read (not taken from the store), by name."""
    names: list[str] = []
    real = load.load_file

    def spy(path: str, *args: object) -> Loaded:
        names.append(Path(path).name)
        return real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(load, "load_file", spy)
    return names


def test_only_changed_files_are_read_again(project: ProjectBuilder, parsed: list[str]) -> None:
    root = _record(project).root
    cold = open_project(root=root, cache=True)
    assert sorted(parsed) == ["LIT-1.yaml", "NOTE-1.yaml", "NOTE-2.yaml", "THEORY-1.yaml"]
    parsed.clear()
    _same(open_project(root=root, cache=True), cold)
    assert parsed == []  # every file as it was: none read
    path = project.path("NOTE-1")
    stat = path.stat()
    _edit(path, "in full", "at once")  # (the same size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and times: its bytes tell
    again = open_project(root=root, cache=True)
    assert parsed == ["NOTE-1.yaml"]
    assert "at once" in again.record.entries["NOTE-1"].body
    _same(again, open_project(root=root))
    parsed.clear()
    path.write_bytes(path.read_bytes())  # new times, the same bytes: as it was
    open_project(root=root, cache=True)
    assert parsed == []


def test_new_code_or_configuration_reads_every_file(project: ProjectBuilder, parsed: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _record(project).root
    open_project(root=root, cache=True)
    parsed.clear()
    with monkeypatch.context() as patched:
        patched.setattr(project_module, "code_version", lambda dists: "other code")
        open_project(root=root, cache=True)
    assert len(parsed) == 4
    parsed.clear()
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + '\n[tool.recordtool.relations]\nsource = "Source of"\n',
                         encoding="utf-8")
    open_project(root=root, cache=True)
    assert len(parsed) == 4


def test_deleted_files_leave_the_store(project: ProjectBuilder) -> None:
    root = _record(project).root
    open_project(root=root, cache=True)
    project.path("NOTE-1").unlink()
    cached = open_project(root=root, cache=True)
    assert "NOTE-1" not in cached.record.entries
    assert sorted(open_store(cached.config).keys(load.ENTRIES)) == [
        "record/literature/LIT-1.yaml", "record/notes/NOTE-2.yaml", "record/theory/THEORY-1.yaml"]


def test_an_unwritable_store_costs_speed_not_the_answer(project: ProjectBuilder) -> None:
    root = _record(project).root
    (root / ".recordtool-cache").write_text("a file where the folder would be", encoding="utf-8")
    _same(open_project(root=root, cache=True), open_project(root=root))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_store_is_set_aside_and_heals(project: ProjectBuilder, parsed: list[str], damage: str) -> None:
    root = _record(project).root
    cold = open_project(root=root, cache=True)
    path = root / ".recordtool-cache" / FILE
    data = path.read_bytes()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes({"truncated": data[:len(data) // 2], "garbage": os.urandom(len(data)), "empty": b""}[damage])
    parsed.clear()
    _same(open_project(root=root, cache=True), cold)
    assert sorted(parsed) == ["LIT-1.yaml", "NOTE-1.yaml", "NOTE-2.yaml", "THEORY-1.yaml"]
    parsed.clear()
    _same(open_project(root=root, cache=True), cold)  # kept again, whole
    assert parsed == []


def test_a_few_changed_files_start_no_pool(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``-j``, a pool is started for the files to read, not for the whole record."""
    for n in range(1, 21):
        project.add(f"NOTE-{n}", f"title: Note {n}\nbody: See NOTE-{n % 20 + 1}.\n")
    monkeypatch.setattr(parallel, "MIN_ITEMS", 10)
    monkeypatch.setattr(parallel, "CHUNK", 2)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    pools = count_pools(monkeypatch)
    cold = open_project(root=project.root, jobs=2, cache=True)
    assert len(pools) == 1  # reading the whole record, each file scanned by the process that read it
    project.path("NOTE-3").write_text("id: NOTE-3\ntitle: Changed\nbody: See NOTE-1.\n", encoding="utf-8")
    pools.clear()
    again = open_project(root=project.root, jobs=2, cache=True)
    assert pools == []
    assert again.record.entries["NOTE-3"].title == "Changed" != cold.record.entries["NOTE-3"].title


def test_an_entry_moved_to_another_file_has_its_static_problems_placed_in_it(project: ProjectBuilder) -> None:
    """What the static checks found is kept with the file it was found in: the same bytes under
    another name are placed in the new file."""
    project.add("NOTE-3", "title: A new note\nbody: Write the body here, in Markdown.\n")
    open_project(root=project.root, cache=True)
    old = project.path("NOTE-3")
    old.rename(old.with_name("NOTE-4.yaml"))
    warm = open_project(root=project.root, cache=True)
    _same(warm, open_project(root=project.root))
    assert [p.path for p in warm.problems if p.code == "template-placeholder"] == ["record/notes/NOTE-4.yaml"]
