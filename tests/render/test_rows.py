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
from tests.conftest import ProjectBuilder, record_made, same_as_afresh
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

    def spy(ctx: Context, entry_id: str) -> rows.Row:
        made.append(entry_id)
        return real(ctx, entry_id)

    monkeypatch.setattr(rows, "_row", spy)
    return made


def test_a_title_edit_makes_only_the_entries_its_pages_show(project: ProjectBuilder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """After a title edit the index pages that list the entry are made again from the pages
    as written, the entry's line replaced (``index.spliced``): the entry cache makes the edited
    entry and its neighbours (whose pages show its title), not every entry listed; no index page
    is composed. With splicing turned off, the same pages are composed from the kept rows."""
    monkeypatch.setattr(mermaid, "WHOLE_MAX", 4)  # graph.md summarised by tag: it shows no title
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    real = load.Entries._made
    made = record_made(monkeypatch)
    composed: list[str] = []
    for name in ("dashboard", "wanted", "graph_page", "_kind_page", "_tag_page"):
        real_page = getattr(index, name)
        monkeypatch.setattr(index, name, lambda ctx, *args, name=name, real_page=real_page: composed.append(
            " ".join([name, *args])) or real_page(ctx, *args))
    spliced = _spliced_pages(monkeypatch)
    _edit(project.path("LIT-5"), "title: Paper 5", "title: Paper five")
    rendered = invoke("render", "--root", str(root))
    assert rendered.code == 0 and not rendered.err
    # LIT-5's page, THEORY-5's (it shows what it cites), the lists of LIT-5's kind and tag
    assert ": 4 written, " in rendered.out, rendered.out
    assert composed == [] and sorted(spliced) == ["kinds/literature.md", "tags/t2.md"]
    assert set(made) <= {"LIT-5", "THEORY-5"}, sorted(set(made))
    spliced.clear()
    _edit(project.path("THEORY-4"), "title: Claim 4", "title: Claim four")  # a claim: the dashboard lists it
    rendered = invoke("render", "--root", str(root))
    assert ": 5 written, " in rendered.out, rendered.out  # its page, LIT-4's (cited by it), three lists
    assert composed == [] and sorted(spliced) == ["index.md", "kinds/theory.md", "tags/t0.md"]
    _same_as_cold(root, tmp_path)
    monkeypatch.setattr(index, "spliced", lambda *args: None)  # composed instead
    composed.clear()  # (the cold render composed every page)
    _edit(project.path("THEORY-4"), "title: Claim four", "title: Claim 4")
    rendered = invoke("render", "--root", str(root))
    assert ": 5 written, " in rendered.out, rendered.out
    assert sorted(composed) == ["_kind_page theory", "_tag_page t0", "dashboard"]
    monkeypatch.setattr(load.Entries, "_made", real)
    _same_as_cold(root, tmp_path)
    same_as_afresh(root)


def _spliced_pages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index pages made from the pages as written (``index.spliced``), as each render makes them."""
    spliced: list[str] = []
    real = index.spliced

    def spy(ctx: Context, shared: str, path: str, written: str, key: str) -> str | None:
        made = real(ctx, shared, path, written, key)
        if made is not None:
            spliced.append(path)
        return made

    monkeypatch.setattr(index, "spliced", spy)
    return spliced


def test_rows_are_kept_and_made_again_only_for_changed_new_or_gone_entries(
        project: ProjectBuilder, tmp_path: Path, made_rows: list[str]) -> None:
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    kept = root / ".recordtool-cache" / rows.ROWS_FILE
    assert kept.is_file() and len(made_rows) == 25  # a first render: every row
    changes = root / ".recordtool-cache" / rows.CHANGES_FILE
    steps = [  # (what changes, the rows made again, whether the whole file is written again)
        (lambda: _edit(project.path("NOTE-1"), "title: A note", "title: A | note"), ["NOTE-1"], False),
        (lambda: _edit(project.path("THEORY-3"), "tags: [t1]", "tags: [t0, t2]\nstatus: draft"), ["THEORY-3"], False),
        (lambda: project.add("NOTE-2", "title: Another note\ntags: [t9]\n"), ["NOTE-2"], True),
        (lambda: project.path("LIT-4").unlink(), [], True),
        (lambda: project.add("LIT-4", "title: Paper 4, back\nreference: {authors: [A], year: 2020, title: P}\n"),
         ["LIT-4"], True),
        (lambda: _edit(project.path("THEORY-7"), "Claim 7 holds.", "Claim 7 holds, said again."), ["THEORY-7"], False),
        # a body: the row is made again (the file changed), the same as kept
        (lambda: _edit(project.path("NOTE-1"), "On LIT-2.", "On LIT-2, again."), ["NOTE-1"], False),
        (lambda: _edit(project.path("LIT-8"), "title: Paper 8", "title: Paper eight"), ["LIT-8"], False),
    ]
    for n, (change, again, whole) in enumerate(steps):
        made_rows.clear()
        change()
        before = kept.stat().st_mtime_ns
        assert invoke("render", "--root", str(root)).code == 0
        assert sorted(made_rows) == again, n
        assert (kept.stat().st_mtime_ns != before) == whole, n
        assert changes.is_file() != whole, n  # the whole file written: no changes beside it
        _same_as_cold(root, tmp_path)
        same_as_afresh(root)


def test_the_whole_file_is_written_again_once_the_changes_grow(project: ProjectBuilder, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows, "CHANGES_MIN", 3)
    root = _record(project)  # 25 entries: changes kept beside the whole file up to 6 (a quarter)
    assert invoke("render", "--root", str(root)).code == 0
    kept = root / ".recordtool-cache" / rows.ROWS_FILE
    changes = root / ".recordtool-cache" / rows.CHANGES_FILE
    for n in range(1, 9):
        before = kept.stat().st_mtime_ns
        _edit(project.path(f"LIT-{n}"), f"title: Paper {n}\n", f"title: Paper {n}, renamed\n")
        assert invoke("render", "--root", str(root)).code == 0
        whole = kept.stat().st_mtime_ns != before
        assert whole == (n == 7) and changes.is_file() == (n != 7), n  # the seventh change: written whole
        _same_as_cold(root, tmp_path)
        same_as_afresh(root)


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

    good = pickle.loads(kept.read_bytes()[len(rows.ROWS_FORM) + 20:])
    wrong = [Foreign(), ["not", "a", "tuple"], {"NOTE-1": ("too", "short")}, (good[0], good[1][:-1]),
             (good[0], (*good[1][:2], good[1][2][:-1], *good[1][3:])),  # a look short
             (good[0], (*good[1][:5], good[1][5] + "\0theory", *good[1][6:])),  # a kind more
             (good[0], (*good[1][:4], {"kinds/note.md": [1, 0]}, *good[1][5:]))]  # a tally short
    for n, value in enumerate(wrong):
        payload = pickle.dumps(value)
        kept.write_bytes(rows.ROWS_FORM + cache_key(load_config(root)) + zlib.crc32(payload).to_bytes(4, "big")
                         + payload)
        made_rows.clear()
        _edit(project.path("NOTE-1"), "title: A note", f"title: A note, take {n}")
        assert invoke("render", "--root", str(root)).code == 0
        assert len(made_rows) == 25, n
        assert victim.read_text(encoding="utf-8") == "still here"
        _same_as_cold(root, tmp_path)
        same_as_afresh(root)


def test_changes_that_are_lost_damaged_foreign_or_of_another_generation_are_not_used(
        project: ProjectBuilder, tmp_path: Path, made_rows: list[str]) -> None:
    """The changes beside the whole file are used only as written against its generation;
    otherwise the whole file's rows are brought up to date: the entries changed since it was
    written are gone over again, and the pages are a cold render's."""
    root = _record(project)
    assert invoke("render", "--root", str(root)).code == 0
    changes = root / ".recordtool-cache" / rows.CHANGES_FILE
    key = cache_key(load_config(root))

    def kept_as(payload: bytes) -> None:
        changes.write_bytes(rows.CHANGES_FORM + key + zlib.crc32(payload).to_bytes(4, "big") + payload)

    for n, spoil in enumerate(["lost", "damaged", "generation", "position", "tally", "row"]):
        _edit(project.path("NOTE-1"), "title: A note", f"title: A note {n}")
        _edit(project.path(f"LIT-{n + 1}"), f"title: Paper {n + 1}\n", f"title: Paper {n + 1}, renamed\n")
        assert invoke("render", "--root", str(root)).code == 0
        written = pickle.loads(changes.read_bytes()[len(rows.CHANGES_FORM) + 20:])
        generation, changed, tallies = written
        assert len(changed) == 1 + (n + 1) + n  # since the whole file: NOTE-1, each step's paper, the claims before
        if spoil == "lost":
            changes.unlink()
        elif spoil == "damaged":
            changes.write_bytes(changes.read_bytes()[:-2] + b"!!")
        elif spoil == "generation":
            kept_as(pickle.dumps(("another", changed, tallies)))
        elif spoil == "position":
            kept_as(pickle.dumps((generation, {**changed, 99: next(iter(changed.values()))}, tallies)))
        elif spoil == "tally":
            kept_as(pickle.dumps((generation, changed, {**tallies, "index.md": [1, 2, -3]})))
        else:
            position, change = next(iter(changed.items()))
            kept_as(pickle.dumps((generation, {**changed, position: (*change[:4], ("a", "row"))}, tallies)))
        made_rows.clear()
        _edit(project.path(f"THEORY-{n + 7}"), f"Claim {n + 7} holds.", f"Claim {n + 7} holds, again.")
        assert invoke("render", "--root", str(root)).code == 0
        # every entry changed since the whole file was written (its rows as the whole file has them)
        assert sorted(made_rows) == sorted({"NOTE-1", *(f"LIT-{i}" for i in range(1, n + 2)),
                                            *(f"THEORY-{i}" for i in range(7, n + 8))}), spoil
        _same_as_cold(root, tmp_path)
        same_as_afresh(root)


def test_the_rows_of_a_record_with_no_entry_read_back_as_none() -> None:
    """No entry: every column joined is the empty string, which is also one empty entry; read
    back, the kept file lists none (a render after every entry was deleted and one added again
    failed on it)."""
    empty = rows.Listed([], [], [], bytearray(), {}, None, [])
    kept = rows._from_whole(empty.whole())
    assert kept is not None and kept.ids == [] and kept.rows() == [] and kept.by_id() == {}
    one = rows.Listed(["NOTE-1"], ["record/notes/NOTE-1.yaml x"], [None], bytearray(rows.HASHES), {}, None,
                      [("note", "active", False, (), "")])  # one entry, every text of its row empty
    kept = rows._from_whole(one.whole())
    assert kept is not None and kept.rows() == [("note", "active", False, (), "")]


def test_rows_read_back_from_the_whole_file_are_those_written_with_one_object_per_kind_status_and_tags() -> None:
    """Rows made again from the whole file's columns are the rows written, a claim's flag a
    bool, and the kinds, statuses and sets of tags that many rows share are one object each
    (a large record holds a hundred thousand rows)."""
    written = [("literature", "active", False, ("t1", "t2"), "A paper \\| on heads"),
               ("theory", "draft", True, (), "A claim"),
               ("theory", "active", True, ("t1", "t2"), ""),
               ("note", "active", False, ("t2",), "A note")]
    ids = ["LIT-1", "THEORY-1", "THEORY-2", "NOTE-1"]
    listed = rows.Listed(ids, [f"record/{i}.yaml x" for i in ids], [None, "unchecked", "verified", None],
                         bytearray(rows.HASHES * len(ids)), {}, None, written)
    kept = rows._from_whole(listed.whole())
    assert kept is not None
    made = kept.rows()
    assert made == written
    assert [type(row[rows.CLAIM]) for row in made] == [bool] * len(made)
    assert made[0][rows.TAGS] is made[2][rows.TAGS]
    assert made[1][rows.KIND] is made[2][rows.KIND] and made[0][rows.STATUS] is made[3][rows.STATUS]
    assert made[1][rows.TAGS] == ()


def test_a_kept_row_asked_for_alone_is_the_row_all_of_them_give(project: ProjectBuilder) -> None:
    """``Listed.row`` makes one row from the kept columns (and the changes kept beside them)
    without making the others: each is the row ``rows()`` makes."""
    from recordtool.record.project import open_project
    from recordtool.render.plan import context

    root = _record(project)
    project.add("NOTE-2", "title: 'A note, untagged'\n")  # (no tags: an empty cell of the tags' column)
    assert invoke("render", "--root", str(root)).code == 0
    _edit(project.path("LIT-7"), "title: Paper 7", "title: Paper seven")  # kept as a change beside the columns
    assert invoke("render", "--root", str(root)).code == 0
    ctx = context(open_project(root=root, cache=True), {})
    alone, whole = rows._read(ctx), rows._read(ctx)
    assert alone is not None and whole is not None and alone.changes and alone.columns is not None
    made = [alone.row(n) for n in range(len(alone.ids))]
    assert alone._rows is None  # (none made but those asked for)
    assert made == whole.rows() and len(made) == 26
    assert made[alone.ids.index("NOTE-2")][rows.TAGS] == () and made[alone.ids.index("LIT-7")][rows.TITLE] == "Paper seven"


def test_the_tags_in_use_are_read_off_the_entries_only_when_every_one_is_made(
        project: ProjectBuilder, made_rows: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold render plans its pages without working out a row (the tags name the index pages,
    and every entry is made already); the rows come later, with the index pages' keys. A
    render with the entry cache reads the tags from the rows kept, making no entry."""
    from recordtool.record.project import open_project
    from recordtool.render import plan
    from tests.render_record import statuses

    root = _record(project)
    project.add("NOTE-2", "title: Untagged\n")
    cold = open_project(root=root)
    ctx = plan.context(cold, statuses(cold))
    assert cold.record.all_made()
    planned = plan.plan_site(ctx)
    assert made_rows == []
    assert rows.tags_in_use(ctx) == {"t0", "t1", "t2"}
    assert [p for p in planned.indexes if p.startswith("tags/")] == ["tags/t0.md", "tags/t1.md", "tags/t2.md"]
    assert rows.tags_in_use(ctx) == rows.listed(ctx).tags() and len(made_rows) == 26  # (asked for now)

    assert invoke("render", "--root", str(root)).code == 0  # keeps the rows
    made_rows.clear()
    cached = open_project(root=root, cache=True)
    assert not cached.record.all_made()
    ctx = plan.context(cached, statuses(cached))  # (the claims made: they are asked for their ids)
    made = record_made(monkeypatch)
    assert rows.tags_in_use(ctx) == {"t0", "t1", "t2"} and made == [] and made_rows == []


def test_the_rows_are_worked_out_in_steps_once_whoever_asks(project: ProjectBuilder, made_rows: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``listed_in_steps`` works the rows out a step at a time (a worker composing pages waits
    while a step lasts); ``listed``, asked while it is part done, goes on with the same working
    out, which then ends at once: every row made and kept once, the same ``Listed`` for both."""
    from recordtool import parallel
    from recordtool.record.project import open_project
    from recordtool.render import plan
    from tests.render_record import statuses

    root = _record(project)
    monkeypatch.setattr(parallel, "STEP_SECONDS", 0.0)  # a step at every look at the clock
    written: list[rows.Listed] = []
    real_write = rows._write

    def write(ctx: Context, found: rows.Listed) -> None:
        written.append(found)
        real_write(ctx, found)

    monkeypatch.setattr(rows, "_write", write)
    opened = open_project(root=root, cache=True)
    ctx = plan.context(opened, statuses(opened))
    steps = rows.listed_in_steps(ctx)
    for _ in range(3):
        next(steps)
    assert 0 < len(made_rows) < 26  # part done
    found = rows.listed(ctx)  # goes on with it
    assert sorted(made_rows) == sorted(opened.record.entries) and written == [found]
    assert parallel.finished(steps) is found and rows.listed(ctx) is found and written == [found]
    assert sorted(made_rows) == sorted(opened.record.entries)  # (none made twice)

    fresh = open_project(root=root)  # all at once, without the cache: the same rows and tallies
    made_rows.clear()
    again = rows.listed(plan.context(fresh, statuses(fresh)))
    assert (again.ids, again.rows(), again.tallies, again.hashes) == (found.ids, found.rows(), found.tallies, found.hashes)
