"""What the index pages show of each entry, kept between renders (``recordtool.render.rows``)."""

from __future__ import annotations

import os
import pickle
import shutil
import zlib
from pathlib import Path

import pytest

from recordtool.record import load
from recordtool.record.cache import cache_key
from recordtool.record.config import load_config
from recordtool.render import index, mermaid, rows
from recordtool.render.sitemap import Context
from tests.conftest import ProjectBuilder, record_made
from tests.corpus import invoke

LONG_AGO = 1_600_000_000_000_000_000


def _record(project: ProjectBuilder) -> Path:
    """Twelve papers, twelve claims each citing its paper, a note; every file written long ago
    (the entry cache then trusts sizes and times)."""
    for n in range(1, 13):
        project.add(f"LIT-{n}", f"title: Paper {n}\ntags: [t{n % 3}]\n"
                                'reference: {authors: ["Doe, J."], year: 2021, title: A paper}\n')
        project.add(f"THEORY-{n}", f"title: Claim {n}\nstatement: Claim {n} holds.\ntags: [t{n % 2}]\n"
                                   f"cites: [{{id: LIT-{n}, as: source}}]\n")
    project.add("NOTE-1", "title: A note\ntags: [t1]\ncites: [{id: LIT-1, as: paper}]\nbody: On LIT-2.\n")
    for folder, _dirs, files in os.walk(project.root):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(LONG_AGO, LONG_AGO))
    return project.root


def _pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".recordtool-snapshot.json"}


def _same_as_cold(root: Path, tmp_path: Path) -> None:
    cold = tmp_path / "cold"
    shutil.rmtree(cold, ignore_errors=True)
    shutil.copytree(root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert _pages(root / "record" / "pages") == _pages(cold / "record" / "pages")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture
def made_rows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids whose row is worked out from their entry (not kept)."""
    made: list[str] = []
    real = rows._row

    def spy(ctx: Context, entry_id: str, file: str) -> rows.Row:
        made.append(entry_id)
        return real(ctx, entry_id, file)

    monkeypatch.setattr(rows, "_row", spy)
    return made


def test_a_title_edit_makes_only_the_entries_its_pages_show(project: ProjectBuilder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """After a title edit the index pages that list the entry are composed again from the
    kept rows: the entry cache makes the edited entry and its neighbours (whose pages show its
    title), not every entry listed."""
    monkeypatch.setattr(mermaid, "WHOLE_MAX", 4)  # graph.md summarised by tag: it shows no title
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    real = load.Entries._made
    made = record_made(monkeypatch)
    composed: list[str] = []
    for name in ("dashboard", "wanted", "graph_page", "kind_pages", "tag_pages", "index_pages"):
        real_page = getattr(index, name)
        monkeypatch.setattr(index, name, lambda ctx, name=name, real_page=real_page: composed.append(name)
                            or real_page(ctx))
    _edit(project.path("LIT-5"), "title: Paper 5", "title: Paper five")
    rendered = invoke("render", "--root", str(root))
    assert rendered.code == 0 and not rendered.err
    # LIT-5's page, THEORY-5's (it shows what it cites), the lists of LIT-5's kind and tag
    assert ": 4 written, " in rendered.out, rendered.out
    # the pages whose key is every listed title, from the kept rows: not the graph (no title shown)
    assert sorted(composed) == ["dashboard", "kind_pages", "tag_pages", "wanted"]
    assert set(made) <= {"LIT-5", "THEORY-5"}, sorted(set(made))
    monkeypatch.setattr(load.Entries, "_made", real)
    _same_as_cold(root, tmp_path)


def test_rows_are_kept_and_made_again_only_for_changed_new_or_gone_entries(
        project: ProjectBuilder, tmp_path: Path, made_rows: list[str]) -> None:
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    kept = root / ".recordtool-cache" / rows.ROWS_FILE
    assert kept.is_file() and len(made_rows) == 25  # a first render: every row
    steps = [  # (what changes, the rows made again)
        (lambda: _edit(project.path("NOTE-1"), "title: A note", "title: A | note"), ["NOTE-1"]),
        (lambda: _edit(project.path("THEORY-3"), "tags: [t1]", "tags: [t0, t2]\nstatus: draft"), ["THEORY-3"]),
        (lambda: project.add("NOTE-2", "title: Another note\ntags: [t9]\n"), ["NOTE-2"]),
        (lambda: project.path("LIT-4").unlink(), []),
        (lambda: project.add("LIT-4", "title: Paper 4, back\nreference: {authors: [A], year: 2020, title: P}\n"),
         ["LIT-4"]),
        (lambda: _edit(project.path("THEORY-7"), "Claim 7 holds.", "Claim 7 holds, said again."), ["THEORY-7"]),
        # a body: no index page is composed, no row made; its row is made again when one is
        (lambda: _edit(project.path("NOTE-1"), "On LIT-2.", "On LIT-2, again."), []),
        (lambda: _edit(project.path("LIT-8"), "title: Paper 8", "title: Paper eight"), ["LIT-8", "NOTE-1"]),
    ]
    for n, (change, again) in enumerate(steps):
        made_rows.clear()
        change()
        assert invoke("render", "--root", str(root)).code == 0
        assert sorted(made_rows) == again, n
        _same_as_cold(root, tmp_path)


def test_a_damaged_or_foreign_rows_file_is_not_used(project: ProjectBuilder, tmp_path: Path,
                                                    made_rows: list[str]) -> None:
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    kept = root / ".recordtool-cache" / rows.ROWS_FILE
    damaged = bytearray(kept.read_bytes())
    damaged[-3] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    made_rows.clear()
    _edit(project.path("NOTE-1"), "title: A note", "title: A note, again")
    assert invoke("render", "--root", str(root)).code == 0
    assert len(made_rows) == 25  # every row worked out again
    _same_as_cold(root, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("still here", encoding="utf-8")

    class Foreign:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.remove, (str(victim),))

    for n, value in enumerate((Foreign(), ["not", "a", "dict"], {"NOTE-1": ("too", "short")})):
        payload = pickle.dumps(value)
        kept.write_bytes(rows.ROWS_FORM + cache_key(load_config(root)) + zlib.crc32(payload).to_bytes(4, "big")
                         + payload)
        made_rows.clear()
        _edit(project.path("NOTE-1"), "title: A note", f"title: A note, take {n}")
        assert invoke("render", "--root", str(root)).code == 0
        assert len(made_rows) == 25, value
        assert victim.read_text(encoding="utf-8") == "still here"
        _same_as_cold(root, tmp_path)
