"""Which pages a render composes: exactly those that may show something else now."""

from __future__ import annotations

from pathlib import Path

import pytest

from recordtool.record.project import open_project
from recordtool.render import page, plan
from recordtool.render.site import render
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses


def _edit(project: ProjectBuilder, entry_id: str, old: str, new: str, out: Path | None = None) -> list[str]:
    """Replace ``old`` with ``new`` in an entry, render, and give the pages written."""
    path = project.path(entry_id)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    record = open_project(root=project.root)
    return sorted(render(record, out, statuses=statuses(record)).written)


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries whose page is composed, in order."""
    made: list[str] = []
    real = page.render_entry
    monkeypatch.setattr(page, "render_entry", lambda ctx, entry_id: made.append(entry_id) or real(ctx, entry_id))
    return made


def test_a_body_edit_writes_the_entrys_page_and_the_page_that_quotes_it(project: ProjectBuilder) -> None:
    record = small_record(project)
    render(record, statuses=statuses(record))
    written = _edit(project, "LIT-1", "The paper. See NOTE-1.", "The paper. See NOTE-1 first.")
    assert written == ["LIT-1.md", "NOTE-1.md"]  # NOTE-1 quotes the sentence that mentions it


def test_an_edit_of_prose_that_mentions_nothing_composes_the_entrys_own_page_only(
        project: ProjectBuilder, composed: list[str]) -> None:
    """A neighbour's page shows of an entry its title, state, citations and mentions
    (``plan.seen``), not the rest of its prose: an edit there composes the entry's own page,
    not its neighbours'; an edit of a sentence that mentions an id composes them all, and
    writes the one that quotes it. Nothing changed: nothing composed."""
    small_record(project)
    record = open_project(root=project.root)
    render(record, statuses=statuses(record))
    composed.clear()
    # NOTE-1 cites LIT-1 and mentions THEORY-1 (THEORY-2 only in code, which is not a mention)
    assert _edit(project, "NOTE-1", "`THEORY-2` in code.", "`THEORY-2` in a code span.") == ["NOTE-1.md"]
    assert composed == ["NOTE-1"]
    composed.clear()
    assert _edit(project, "NOTE-1", "Its claim is THEORY-1.", "Its main claim is THEORY-1.") == [
        "NOTE-1.md", "THEORY-1.md"]  # THEORY-1's page quotes the sentence
    assert sorted(composed) == ["LIT-1", "NOTE-1", "THEORY-1"]
    composed.clear()
    record = open_project(root=project.root)
    assert render(record, statuses=statuses(record)).written == []
    assert composed == []


def test_index_pages_are_composed_when_what_they_show_changes(project: ProjectBuilder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The index pages are composed together, when what they show of an entry changed
    (``plan.listed``), an entry came or went, or one of their files is not as written."""
    from recordtool.render import index

    record = small_record(project)
    render(record, statuses=statuses(record))
    made: list[str] = []
    real = index.index_page
    monkeypatch.setattr(index, "index_page", lambda ctx, path: made.append(path) or real(ctx, path))
    _edit(project, "NOTE-1", "Read LIT-1 in full.", "Read LIT-1 in full, twice.")  # a body: none
    assert made == []
    _edit(project, "NOTE-1", "title: Notes on the paper", "title: Notes, revised")  # a title: all
    assert len(made) == 8
    made.clear()
    (project.root / "record" / "pages" / "wanted.md").unlink()
    assert _edit(project, "NOTE-1", "Notes, revised", "Notes, revised") == ["wanted.md"] and len(made) == 8


def test_index_pages_follow_what_they_list(project: ProjectBuilder) -> None:
    record = small_record(project)
    render(record, statuses=statuses(record))
    # a sentence quoted on the wanted page (THEORY-99 is not in the record)
    assert "wanted.md" in _edit(project, "THEORY-1", "THEORY-99 would extend it", "THEORY-99 would surely extend it")
    # a title: every listing that shows it
    written = _edit(project, "NOTE-1", "title: Notes on the paper", "title: Notes, revised")
    assert {"kinds/note.md", "tags/alpha.md", "tags/beta.md"} <= set(written)
    # a tag: the dashboard counts tags (and tags/beta.md, used by no entry now, is removed)
    assert _edit(project, "NOTE-1", "tags: [alpha, beta]", "tags: [alpha]") == ["NOTE-1.md", "index.md"]
    assert not (project.root / "record" / "pages" / "tags" / "beta.md").exists()


def test_a_claims_face_follows_what_its_page_shows_of_its_status(project: ProjectBuilder) -> None:
    """A claim's face changes with its state, its reasons and its dependencies; an equal status
    gives the same face."""
    small_record(project)
    record = open_project(root=project.root)
    claim = "THEORY-1"

    def key(status: ClaimStatus) -> str:
        return plan.faces(plan.context(record, statuses(record, THEORY_1=status)))[claim]

    shown = [ClaimStatus(claim, "unchecked", None), ClaimStatus(claim, "stale", None),
             ClaimStatus(claim, "stale", None, reasons=["statement changed"]),
             ClaimStatus(claim, "stale", None, reasons=["checks/a.py changed"]),
             ClaimStatus(claim, "unchecked", None, depends=[("THEORY-2", "unchecked")]),
             ClaimStatus(claim, "unchecked", None, depends=[("THEORY-2", "error")])]
    keys = [key(status) for status in shown]
    assert len(set(keys)) == len(shown)
    assert key(ClaimStatus(claim, "stale", None, reasons=["statement changed"])) == keys[2]


def test_each_output_folder_keeps_what_its_pages_show(project: ProjectBuilder, tmp_path: Path,
                                                     composed: list[str]) -> None:
    """A render into another folder (``render -o``) keeps its page keys apart: back in the
    usual folder, an edit composes only the pages that may have changed."""
    small_record(project)

    def render_into(out: Path | None) -> list[str]:
        composed.clear()
        record = open_project(root=project.root, cache=True)
        render(record, out, statuses=statuses(record))
        return sorted(composed)

    everything = render_into(None)
    assert len(everything) == 4
    other = tmp_path / "other"
    assert render_into(other) == everything  # (a folder of its own: every page the first time)
    _edit(project, "THEORY-2", "A second claim", "The second claim", other)
    assert render_into(None) == ["THEORY-1", "THEORY-2"]  # (THEORY-2 and the claim it uses)
    assert render_into(other) == []


def test_a_page_changed_by_hand_or_deleted_is_composed_and_written_again(project: ProjectBuilder) -> None:
    record = small_record(project)
    render(record, statuses=statuses(record))
    pages = project.root / "record" / "pages"
    before = (pages / "LIT-1.md").read_bytes()
    (pages / "LIT-1.md").write_bytes(b"edited by hand")
    (pages / "NOTE-1.md").unlink()
    report = render(record, statuses=statuses(record))
    assert report.written == ["LIT-1.md", "NOTE-1.md"]
    assert (pages / "LIT-1.md").read_bytes() == before


def test_without_the_kept_keys_every_page_is_composed_and_none_written(project: ProjectBuilder,
                                                                       composed: list[str]) -> None:
    """``fresh`` (``render --no-cache``), a fresh clone or a cache deleted: every page is composed,
    and only those whose bytes differ are written."""
    import shutil

    record = small_record(project)
    render(record, statuses=statuses(record))
    composed.clear()
    report = render(record, statuses=statuses(record), fresh=True)
    assert sorted(composed) == ["LIT-1", "NOTE-1", "THEORY-1", "THEORY-2"] and report.written == []
    shutil.rmtree(project.root / ".recordtool-cache")
    composed.clear()
    report = render(record, statuses=statuses(record))
    assert len(composed) == 4 and report.written == []
