"""`recordtool render` with nothing changed writes nothing; every kind of change writes what a
render from scratch writes."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import recordtool.record.project
from recordtool.cli import cli
from recordtool.render import site
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, verdict

SUMMARY = "rendered 4 entries into record/pages: {} written, {} unchanged, {} removed\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _age(root: Path) -> None:
    """Make every file look written a minute ago (not 'just now', which is checked by content)."""
    old = (os.stat(root).st_mtime_ns - 60 * 10**9)
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(old, old))


def _rendered(project: ProjectBuilder) -> str:
    small_record(project)
    root = str(project.root)
    assert run("render", "--root", root) == (0, SUMMARY.format(12, 0, 0), "")
    return root


def _edit_entry(project: ProjectBuilder) -> None:
    path = project.path("NOTE-1")
    path.write_text(path.read_text(encoding="utf-8").replace("Notes on the paper", "Notes, revised"), encoding="utf-8")


def _add_entry(project: ProjectBuilder) -> None:
    project.add("NOTE-2", "title: Another note\ncites: [{id: LIT-1, as: paper}]\n")


def _remove_entry(project: ProjectBuilder) -> None:
    project.path("THEORY-2").unlink()


def _write_verdict(project: ProjectBuilder) -> None:
    folder = project.root / "record" / "verdicts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "THEORY-1.json").write_text(verdict().to_json(), encoding="utf-8")


def _edit_checks(project: ProjectBuilder) -> None:
    folder = project.root / "checks"
    folder.mkdir(exist_ok=True)
    (folder / "demo.py").write_text("def measure(ctx, *, n=2):\n    return {'error': 0.0, 'terms': 5}\n",
                                    encoding="utf-8")


def _delete_page(project: ProjectBuilder) -> None:
    (project.root / "record" / "pages" / "LIT-1.md").unlink()


def _edit_page(project: ProjectBuilder) -> None:
    page = project.root / "record" / "pages" / "LIT-1.md"
    page.write_text(page.read_text(encoding="utf-8").replace("A paper", "B paper"), encoding="utf-8")


def _edit_pyproject(project: ProjectBuilder) -> None:
    path = project.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(text + "\n# a comment\n", encoding="utf-8")


CHANGES: dict[str, Callable[[ProjectBuilder], None]] = {
    "entry edited": _edit_entry,
    "entry added": _add_entry,
    "entry removed": _remove_entry,
    "verdict written": _write_verdict,
    "checks edited": _edit_checks,
    "page deleted": _delete_page,
    "page edited": _edit_page,
    "pyproject edited": _edit_pyproject,
}


def _pages(folder: Path) -> dict[str, bytes]:
    """Every page under ``folder`` (kinds/ and tags/ included), by its path there."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.md"))}


def test_unchanged_render_says_unchanged(project: ProjectBuilder) -> None:
    root = _rendered(project)
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")


@pytest.mark.parametrize("broken", [1, 7])
def test_every_render_says_the_records_errors(project: ProjectBuilder, broken: int) -> None:
    """Entries with errors are left out of the pages, which a render says on stderr, each
    error with its place (the first five) and how many there are, then which entry files do
    not load (exit 1); with nothing changed it says exactly that again."""
    small_record(project)
    for n in range(broken):
        project.add(f"NOTE-{50 + n}", "title: T\ntitel: U\n")
    root = str(project.root)
    code, _out, said = run("render", "--root", root)
    assert code == 1 and said.count(": error: ") == min(broken, 5)
    assert said.splitlines()[-2] == (f"warning: {broken} error{'s' if broken > 1 else ''} in the record"
                                     f"{' (2 more not shown)' if broken > 5 else ''}; run `recordtool validate`")
    ids = ", ".join(f"NOTE-{50 + n}" for n in range(min(broken, 5))) + (" and 2 more" if broken > 5 else "")
    assert said.splitlines()[-1] == (f"error: {broken} entry file{'s do' if broken > 1 else ' does'} not load ({ids}); "
                                     f"fix {'them' if broken > 1 else 'it'} and render again")
    again = run("render", "--root", root)
    assert again[2] == said and again[0] == code


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_writes_what_a_render_from_scratch_writes(project: ProjectBuilder, change: str) -> None:
    root = _rendered(project)
    _age(project.root)  # the change below is then seen by its time, not only by its content
    run("render", "--root", root)
    before = _pages(project.root / "record" / "pages")
    CHANGES[change](project)
    code, out, _err = run("render", "--root", root)
    assert code == 0
    fresh = project.root / "fresh"
    run("render", "--root", root, "-o", str(fresh))
    after = _pages(project.root / "record" / "pages")
    assert after == _pages(fresh)
    if change in ("page deleted", "page edited"):
        assert out == SUMMARY.format(1, 11, 0) and after == before
    code, again, _err = run("render", "--root", root)
    assert code == 0 and ": 0 written, " in again and again.endswith(" 0 removed\n")


def test_a_change_made_just_now_is_seen_by_content(project: ProjectBuilder) -> None:
    """A file changed within its timestamp's tick, same size, same time: its content decides."""
    root = _rendered(project)
    path = project.path("LIT-1")
    # changed "just now" as the render sees it, however long a busy machine took to get here
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 60 * 10**9))
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("A paper", "B paper"), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert run("render", "--root", root)[0] == 0
    assert "B paper" in (project.root / "record" / "pages" / "LIT-1.md").read_text(encoding="utf-8")


def test_renderer_code_change_composes_every_page_and_writes_none(project: ProjectBuilder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from recordtool.render import page

    root = _rendered(project)
    monkeypatch.setattr(recordtool.record.project, "code_version", lambda dists: "something else")
    composed: list[str] = []
    real = page.render_entry
    monkeypatch.setattr(page, "render_entry", lambda ctx, entry_id: composed.append(entry_id) or real(ctx, entry_id))
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    assert len(composed) == 4


def test_adding_an_id_quoted_in_a_backlink_updates_the_quoting_page(project: ProjectBuilder) -> None:
    """NOTE-1's backlinks quote THEORY-1's sentence that mentions THEORY-99: once THEORY-99
    is added, that quote links to its page (the page's key covers the ids it quotes)."""
    record = small_record(project)
    site.render(record)
    page = project.root / "record" / "pages" / "NOTE-1.md"
    assert '[THEORY-99](wanted.md#theory-99 "not in the record") would extend it.”' in page.read_text(encoding="utf-8")
    project.add("THEORY-99", "statement: An extension.\n")
    report = site.render(recordtool.record.project.open_project(root=project.root))
    assert "NOTE-1.md" in report.written
    assert "[THEORY-99](THEORY-99.md) would extend it.”" in page.read_text(encoding="utf-8")


def test_a_render_after_an_edit_puts_back_pages_changed_by_hand(project: ProjectBuilder) -> None:
    """The pages the last render wrote are checked against their sizes and times as written:
    one edited by hand keeping its size, one deleted, are written again, the others are not,
    and the manifest is the one a render from scratch writes."""
    root = _rendered(project)
    _age(project.root)
    run("render", "--root", root)
    pages = project.root / "record" / "pages"
    _edit_entry(project)
    page = pages / "THEORY-2.md"  # not a neighbour of the entry edited
    data = page.read_bytes()
    page.write_bytes(data.replace(b"A second claim", b"B second claim"))
    assert page.stat().st_size == len(data) and page.read_bytes() != data
    (pages / "kinds" / "theory.md").unlink()
    code, out, _err = run("render", "--root", root)
    assert code == 0 and out.startswith("rendered 4 entries into record/pages: ") and page.read_bytes() == data
    cold = project.root.parent / "cold"
    shutil.copytree(project.root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert run("render", "--root", str(cold), "--no-cache")[0] == 0
    fresh = cold / "record" / "pages"
    assert _pages(pages) == _pages(fresh)
    assert (pages / ".recordtool-manifest.json").read_bytes() == (fresh / ".recordtool-manifest.json").read_bytes()
