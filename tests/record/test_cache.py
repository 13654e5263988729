"""The entry cache: unchanged files are not read again, and a bad cache is never trusted."""

from __future__ import annotations

import io
import os
import pickle
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import recordtool.record.load as load
from recordtool.record import cache as cache_module
from recordtool.record.cache import FOLDER, SHARDS, open_cache
from recordtool.record.project import Project, open_project
from tests.conftest import ProjectBuilder, count_pools, dropped_at_exit, minimal_record

PAST = 1_600_000_000_000_000_000


def _old(path: Path, seconds: int = 0) -> None:
    """A time long past for ``path`` (a file the cache may trust by its size and times)."""
    os.utime(path, ns=(PAST + seconds * 1_000_000_000,) * 2)


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
    for path in (project.root / "record").glob("*/*.yaml"):
        _old(path)
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
    """The files parsed (not taken from the cache), by name."""
    names: list[str] = []
    real = load._read_sources

    def spy(paths: list[str], *args: str) -> list[load._Read]:
        names.extend(Path(p).name for p in paths)
        return real(paths, *args)

    monkeypatch.setattr(load, "_read_sources", spy)
    return names


def test_only_changed_files_are_read_again(project: ProjectBuilder, parsed: list[str]) -> None:
    root = _record(project).root
    cold = open_project(root=root, cache=True)
    assert sorted(parsed) == ["LIT-1.yaml", "NOTE-1.yaml", "NOTE-2.yaml", "THEORY-1.yaml"]
    parsed.clear()
    _same(open_project(root=root, cache=True), cold)
    assert parsed == []  # every file as it was: none parsed
    path = project.path("NOTE-1")
    path.write_text(path.read_text(encoding="utf-8").replace("in full", "twice"), encoding="utf-8")
    _old(path, 1)
    again = open_project(root=root, cache=True)
    assert parsed == ["NOTE-1.yaml"]
    _same(again, open_project(root=root))
    parsed.clear()
    path.write_bytes(path.read_bytes())  # new times, the same bytes: its hash says it is as it was
    _old(path, 2)
    open_project(root=root, cache=True)
    assert parsed == []


def test_a_file_changed_just_now_is_compared_by_content(project: ProjectBuilder, parsed: list[str]) -> None:
    root = _record(project).root
    path = project.path("NOTE-1")
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    # changed "just now" as the next command sees it (racy), however long a busy machine takes to get there
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 60 * 10**9))
    open_project(root=root, cache=True)
    kept = open_cache(open_project(root=root).config)
    item = next(i for shard in kept.shards for rel, i in shard.items() if rel.endswith("NOTE-1.yaml"))
    assert item.stat is None  # its times cannot be trusted yet
    stat = os.stat(path)
    path.write_text(path.read_text(encoding="utf-8").replace("in full", "at once"), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time, other content
    parsed.clear()
    again = open_project(root=root, cache=True)
    assert parsed == ["NOTE-1.yaml"]
    assert "at once" in again.record.entries["NOTE-1"].body


def _shards(root: Path) -> list[Path]:
    return sorted((root / ".recordtool-cache" / FOLDER).glob("shard-*.bin"))


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda data: data[: len(data) // 2],
    "a byte changed": lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
    "empty": lambda data: b"",
    "another format": lambda data: b"recordtool-entries 0\n" + data[21:],
    "another key": lambda data: data[:21] + bytes(16) + data[37:],
    "garbage": lambda data: os.urandom(len(data)),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cache_is_read_again_never_trusted(project: ProjectBuilder, parsed: list[str], damage: str) -> None:
    root = _record(project).root
    cold = open_project(root=root, cache=True)
    shards = _shards(root)
    assert shards
    for shard in shards:
        shard.write_bytes(DAMAGE[damage](shard.read_bytes()))
    parsed.clear()
    _same(open_project(root=root, cache=True), cold)
    assert sorted(parsed) == ["LIT-1.yaml", "NOTE-1.yaml", "NOTE-2.yaml", "THEORY-1.yaml"]
    parsed.clear()
    open_project(root=root, cache=True)  # written again, whole
    assert parsed == []


def test_a_kept_file_is_read_whole_and_checked_at_its_edges(tmp_path: Path) -> None:
    """``_payload`` gives what ``write_plain`` wrote after its head, for this key and format
    only: a file cut anywhere (even inside its head), of another key or format, or with a byte
    changed gives None; an empty value and a large one come back as written."""
    import zlib

    form, key = b"recordtool-test 1\n", bytes(range(16))
    path = tmp_path / "kept.bin"
    large = os.urandom(300_000)  # (more than a buffered reader's buffer)
    cache_module.write_plain(path, key, form, large)
    whole = path.read_bytes()
    payload = cache_module._payload(path, key, form)
    assert payload is not None and pickle.loads(payload) == large
    assert cache_module._read_plain(path, key, form) == large
    for cut in (0, len(form) - 1, len(form) + 19, len(form) + 20, len(whole) - 1):
        path.write_bytes(whole[:cut])
        assert cache_module._payload(path, key, form) is None, cut
    path.write_bytes(whole)
    assert cache_module._payload(path, bytes(16), form) is None
    assert cache_module._payload(path, key, b"recordtool-test 2\n") is None
    path.write_bytes(whole[:-1] + bytes([whole[-1] ^ 1]))
    assert cache_module._payload(path, key, form) is None
    path.write_bytes(form + key + zlib.crc32(b"").to_bytes(4, "big"))  # nothing after the head
    assert cache_module._payload(path, key, form) == b""
    assert cache_module._payload(tmp_path / "gone.bin", key, form) is None


def test_the_cache_is_written_without_fsync(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its files are checked when read (above: a file cut short by a power cut is one more
    damage), so none is fsynced: an fsync per file cost a large record's cold run seconds."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    root = _record(project).root
    open_project(root=root, cache=True)
    assert _shards(root) and synced == []


class _Run:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch pwned",))


def test_a_shard_that_names_a_function_is_refused(project: ProjectBuilder, parsed: list[str]) -> None:
    """A shard is made of data classes only: one that would call anything else (a crafted
    pickle with the right format, key and hash) is not loaded, and its files are read again."""
    import zlib

    root = _record(project).root
    config = open_project(root=root, cache=True).config
    key = cache_module.cache_key(config)
    payload = pickle.dumps({"record/notes/NOTE-1.yaml": _Run()})
    data = cache_module.FORMAT + key + zlib.crc32(payload).to_bytes(4, "big") + payload
    for n in range(SHARDS):
        (root / ".recordtool-cache" / FOLDER / f"shard-{n:02d}.bin").write_bytes(data)
    parsed.clear()
    os.chdir(root)
    open_project(root=root, cache=True)
    assert not (root / "pwned").exists()
    assert len(parsed) == 4


@pytest.mark.parametrize("where", ["nothing", "a string", "two numbers", "numbers as text"])
def test_a_shard_whose_items_are_not_what_it_keeps_is_refused(project: ProjectBuilder, parsed: list[str],
                                                              where: str) -> None:
    """A shard of the right format, key and checksum whose items do not hold what a shard keeps
    (where an entry is kept: three numbers) is not used: its files are read again."""
    import dataclasses
    import zlib

    root = _record(project).root
    config = open_project(root=root, cache=True).config
    kept = open_cache(config)
    key = cache_module.cache_key(config)
    for n, shard in enumerate(kept.shards):
        if not shard:
            continue
        bad = {"nothing": {}, "a string": {"entry": "here"}, "two numbers": {"entry": (1, 2)}, "numbers as text": {"entry": ("1", "2", "3")}}[where]
        items = {rel: dataclasses.replace(item, entry=item.entry if isinstance(item.entry, tuple) else None,
                                          scan=bool(item.scan)) for rel, item in shard.items()}
        items[next(iter(items))] = dataclasses.replace(next(iter(items.values())), **bad)
        head = (root / ".recordtool-cache" / FOLDER / f"shard-{n:02d}.entries").read_bytes()
        generation = head[len(cache_module.ENTRIES_FORMAT):len(cache_module.ENTRIES_FORMAT) + 16]
        payload = pickle.dumps((generation, items))
        data = cache_module.FORMAT + key + zlib.crc32(payload).to_bytes(4, "big") + payload
        (root / ".recordtool-cache" / FOLDER / f"shard-{n:02d}.bin").write_bytes(data)
    parsed.clear()
    open_project(root=root, cache=True)
    assert len(parsed) == (0 if where == "nothing" else 4)


def test_new_code_or_configuration_reads_every_file(project: ProjectBuilder, parsed: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _record(project).root
    open_project(root=root, cache=True)
    parsed.clear()
    with monkeypatch.context() as patched:
        patched.setattr(cache_module, "code_version", lambda dists: "other code")
        open_project(root=root, cache=True)
    assert len(parsed) == 4
    parsed.clear()
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + '\n[tool.recordtool.relations]\nsource = "Source of"\n',
                         encoding="utf-8")
    open_project(root=root, cache=True)
    assert len(parsed) == 4


def test_states_a_snapshot_gave_are_judged_as_states_stat_ed_here(project: ProjectBuilder) -> None:
    """Render hands the entry cache the states its snapshot took (``use``): each file is then
    judged exactly as when the cache stats it itself: as it was, changed, changed just now
    (compared by content), of another kind, new, or one the snapshot did not see."""
    from recordtool.snapshot import Stats, take

    root = _record(project).root
    open_project(root=root, cache=True)
    config = open_project(root=root).config
    path = project.path("NOTE-1")
    _edit(path, "in full", "twice")
    _old(path, 1)  # other bytes
    racy = project.path("NOTE-2")
    racy.write_bytes(racy.read_bytes())  # new times, the same bytes: compared by content
    project.add("NOTE-3", "id: NOTE-3\nkind: note\ntitle: New\nbody: Fresh.\n")
    files, _problems = load.entry_files(config)
    kinds = {kind.name: kind for kind in config.kinds.values()}
    other = next(kind for kind in kinds.values() if kind.name != "theory")
    files = [(p, other) if p.endswith("THEORY-1.yaml") else (p, k) for p, k in files]  # not the kind kept
    rels = [os.path.relpath(p, root).replace(os.sep, "/") for p, _kind in files]

    def judged(stats: Stats | None) -> tuple[list[object], dict[str, object], int, set[int]]:
        kept = open_cache(config)
        if stats is not None:
            kept.use(stats)
        out = kept.unchanged(files, rels)
        return out, dict(kept.pending), kept.hits, set(kept.dirty)

    here = judged(None)
    stats = Stats({}, 0)
    take(folders=[str(root / "record")], stats=stats)
    assert {p for p, _kind in files} <= stats.files.keys()
    unseen = project.path("LIT-1")
    del stats.files[str(unseen)]  # (a file the snapshot did not see is stat-ed here)
    given = judged(stats)
    assert given == here
    out, pending, hits, dirty = given
    by_name = {Path(p).name: found for (p, _kind), found in zip(files, out, strict=True)}
    assert by_name["LIT-1.yaml"] is not None and by_name["NOTE-2.yaml"] is not None
    assert by_name["NOTE-1.yaml"] is None and by_name["NOTE-3.yaml"] is None and by_name["THEORY-1.yaml"] is None
    assert hits == 2 and sorted(Path(rel).name for rel in pending) == ["NOTE-1.yaml", "NOTE-3.yaml", "THEORY-1.yaml"]
    assert dirty  # NOTE-2's new times are kept (as "racy")


def test_deleted_files_leave_the_cache(project: ProjectBuilder) -> None:
    root = _record(project).root
    open_project(root=root, cache=True)
    project.path("NOTE-1").unlink()
    open_project(root=root, cache=True)
    kept = open_cache(open_project(root=root).config)
    assert sorted(rel for shard in kept.shards for rel in shard) == [
        "record/literature/LIT-1.yaml", "record/notes/NOTE-2.yaml", "record/theory/THEORY-1.yaml"]


def test_an_unwritable_cache_costs_speed_not_the_answer(project: ProjectBuilder) -> None:
    root = _record(project).root
    (root / ".recordtool-cache").write_text("a file where the folder would be", encoding="utf-8")
    _same(open_project(root=root, cache=True), open_project(root=root))


def test_a_few_changed_files_start_no_pool(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``-j``, a pool is started for the files to read, not for the whole record."""
    import recordtool.parallel as parallel
    import recordtool.record.graph as graph

    for n in range(1, 21):
        project.add(f"NOTE-{n}", f"title: Note {n}\nbody: See NOTE-{n % 20 + 1}.\n")
        _old(project.path(f"NOTE-{n}"))
    monkeypatch.setattr(load, "PARALLEL_MIN", 10)
    monkeypatch.setattr(graph, "PARALLEL_MIN", 10)
    monkeypatch.setattr(parallel, "CHUNK", 2)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    pools = count_pools(monkeypatch)
    cold = open_project(root=project.root, jobs=2, cache=True)
    assert len(pools) == 1  # reading the whole record, each file scanned by the process that read it
    path = project.path("NOTE-3")
    path.write_text("id: NOTE-3\ntitle: Changed\nbody: See NOTE-1.\n", encoding="utf-8")
    _old(path, 1)
    pools.clear()
    again = open_project(root=project.root, jobs=2, cache=True)
    assert pools == []
    assert again.record.entries["NOTE-3"].title == "Changed" != cold.record.entries["NOTE-3"].title


def _with_static_problems(project: ProjectBuilder) -> ProjectBuilder:
    """``_record``, a package of checks, a claim whose check names a function that is not there
    (and that 'uses' a claim that uses it), and a note still holding ``recordtool new``'s
    placeholder: problems of every check that spans the record."""
    _record(project)
    (project.root / "checks").mkdir()
    (project.root / "checks" / "__init__.py").write_text("", encoding="utf-8")
    (project.root / "checks" / "m.py").write_text("def measure(ctx):\n    return {}\n", encoding="utf-8")
    _edit(project.path("THEORY-1"), "{id: LIT-7, as: source}", "{id: LIT-7, as: source}, {id: THEORY-2, as: uses}")
    project.add("THEORY-2", """
        statement: A claim with a check.
        cites: [{id: THEORY-1, as: uses}, {id: NOTE-2, as: source}]
        checks: [{name: c, run: "checks.m:nothing", expect: {x: "> 1"}}]
    """)
    project.add("NOTE-3", """
        title: A new note
        body: Write the body here, in Markdown.
    """)
    for path in (project.root / "record").glob("*/*.yaml"):
        _old(path)
    return project


def test_kept_entries_are_made_only_when_asked_for(project: ProjectBuilder) -> None:
    """With the cache, opening the record and every check that spans it (citations, mentions,
    cycles, orphans, the claims' checks and placeholders) makes no entry of a file as it was
    (the static checks' results are kept too): they stay their kept bytes until asked for,
    and then are the entries a cold run reads."""
    root = _with_static_problems(project).root
    cold = open_project(root=root)
    open_project(root=root, cache=True)
    path = project.path("LIT-1")
    _edit(path, "The paper.", "The paper, read again.")
    _old(path, 1)
    cold = open_project(root=root)
    warm = open_project(root=root, cache=True)
    entries = warm.record.entries
    assert isinstance(entries, load.Entries)
    assert warm.graph.orphans() == cold.graph.orphans()
    made = sorted(i for i in entries if not entries.kept(i))
    assert made == ["LIT-1"]  # read again; the static checks' results for the others are kept (``KeptStatic``)
    assert sorted(warm.record.links) == sorted(set(entries) - set(made))  # a made entry has its own citations
    assert [c.id for c in warm.record.claims()] == ["THEORY-1", "THEORY-2"]
    assert not entries.kept("THEORY-1")
    assert entries["NOTE-1"] == cold.record.entries["NOTE-1"] and not entries.kept("NOTE-1")
    made, read = entries["NOTE-1"], cold.record.entries["NOTE-1"]  # their models share their sets of field names
    assert made.__pydantic_fields_set__ is read.__pydantic_fields_set__
    assert made.cites[0].__pydantic_fields_set__ is read.cites[0].__pydantic_fields_set__
    assert {p.code for p in warm.problems} >= {"template-placeholder", "check-spec", "missing-citation",
                                              "dangling-mention", "not-loaded", "uses-cycle"}
    _same(warm, cold)  # every entry made now, each equal to a cold run's
    assert warm.record.links == {}
    assert {i: warm.record.cites(i) for i in entries} == {i: cold.record.cites(i) for i in entries}


def test_entries_read_as_a_dict_give_entries_never_their_kept_bytes(project: ProjectBuilder) -> None:
    root = _record(project).root
    open_project(root=root, cache=True)
    cold = open_project(root=root).record.entries
    ways: dict[str, Callable[[dict[str, object]], dict[str, object]]] = {
        "dict()": dict, "{**}": lambda e: {**e}, "items": lambda e: dict(e.items()),
        "values": lambda e: dict(zip(e, e.values(), strict=True)), "get": lambda e: {i: e.get(i) for i in e},
        "copy": lambda e: e.copy(), "pickle": lambda e: pickle.loads(pickle.dumps(e)),
    }
    for way, read in ways.items():
        entries = open_project(root=root, cache=True).record.entries
        assert isinstance(entries, load.Entries) and all(entries.kept(i) for i in entries), way
        assert read(entries) == cold, way  # type: ignore[arg-type]
    entries = open_project(root=root, cache=True).record.entries
    assert entries.get("NOTE-99") is None and "NOTE-1" in entries and len(entries) == len(cold) == 3
    assert list(entries) == list(cold) and all(entries.kept(i) for i in entries)


def _flip(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-7] + bytes([data[-7] ^ 1]) + data[-6:])


def _another_generation(path: Path) -> None:
    data, at = path.read_bytes(), len(cache_module.ENTRIES_FORMAT)
    path.write_bytes(data[:at] + bytes(16) + data[at + 16:])


ENTRY_DAMAGE: dict[str, Callable[[Path], None]] = {
    "a byte changed": _flip,
    "truncated": lambda path: path.write_bytes(path.read_bytes()[:60]),
    "gone": lambda path: path.unlink(),
    "another generation": _another_generation,
}


@pytest.mark.parametrize("damage", list(ENTRY_DAMAGE))
def test_kept_entries_whose_bytes_are_not_those_kept_are_read_again(project: ProjectBuilder, damage: str) -> None:
    """A kept entry whose bytes in the entries file are not those the shard names (a file
    damaged, cut, gone or written for another shard) is read again from its YAML file when
    asked for: it costs time, never the answer; and the cache is whole again afterwards."""
    root = _record(project).root
    cold = open_project(root=root)
    open_project(root=root, cache=True)
    files = sorted((root / ".recordtool-cache" / FOLDER).glob("*.entries"))
    assert files
    for path in files:
        ENTRY_DAMAGE[damage](path)
    _same(open_project(root=root, cache=True), cold)


class _NamesAsNumbers(cache_module._Pickler):
    """Pickles an entry as the entry cache does, but each model's set of field names as numbers."""

    def reducer_override(self, obj: object) -> object:
        reduced = super().reducer_override(obj)
        if reduced is NotImplemented:
            return reduced
        made, (model, state, _names) = reduced
        return made, (model, state, (1, 2))


def test_only_models_are_made_as_models() -> None:
    """``_model`` (the one function a kept entry may name) makes nothing but a model of the
    record: a data class the unpickler allows, or a state that is not a dict, is refused."""
    from recordtool.record.problems import Problem
    from recordtool.record.schema import Note

    with pytest.raises(pickle.UnpicklingError):
        cache_module._model(Problem, {"__dict__": {}}, ())
    with pytest.raises(pickle.UnpicklingError):
        cache_module._model(Note, ["not", "a", "state"], ())


@pytest.mark.parametrize("kept", ["not a pickle", "another entry", "another model", "not names"])
def test_kept_bytes_that_are_not_the_entry_are_read_again_from_the_file(project: ProjectBuilder, kept: str) -> None:
    """Kept bytes with the right checksum that do not make the entry they should (a forged
    entries file and shard) are not trusted: the entry is read again from its YAML file."""
    import zlib

    from recordtool.record.schema import Note

    root = _record(project).root
    cold = open_project(root=root)
    config = open_project(root=root, cache=True).config
    other = cold.record.entries["LIT-1"] if kept == "another model" else Note(id="NOTE-7", kind="note", title="Other")
    wrong = b"\x80\x05garbage" if kept == "not a pickle" else pickle.dumps(other)
    if kept == "not names":  # a set of field names kept as something else than names
        out = io.BytesIO()
        _NamesAsNumbers(out).dump(cold.record.entries["NOTE-1"])
        wrong = out.getvalue()
    head = len(cache_module.FORMAT) + 20
    for shard in _shards(root):
        generation, items = cache_module._Unpickler(io.BytesIO(shard.read_bytes()[head:])).load()
        entries = shard.with_suffix(".entries")
        at = len(cache_module.ENTRIES_FORMAT) + len(generation)
        for item in items.values():
            if item.entry is not None:
                item.entry = (at, len(wrong), zlib.crc32(wrong))
        entries.write_bytes(cache_module.ENTRIES_FORMAT + generation + wrong)
        payload = pickle.dumps((generation, items))
        shard.write_bytes(cache_module.FORMAT + cache_module.cache_key(config) + zlib.crc32(payload).to_bytes(4, "big")
                          + payload)
    _same(open_project(root=root, cache=True), cold)


def test_entries_are_made_from_what_was_kept_even_once_their_shard_is_written_again(
        project: ProjectBuilder, parsed: list[str]) -> None:
    """Opening the record writes again the shards of the files that changed (their entries
    files too) before anyone asks for an entry: every kept entry is still made from what was
    kept (no YAML file read again), as a cold run reads it."""
    for n in range(1, 4 * SHARDS):
        project.add(f"NOTE-{n}", f"title: Note {n}\nbody: See NOTE-{n + 1}.\n")
        _old(project.path(f"NOTE-{n}"))
    root = project.root
    open_project(root=root, cache=True)
    for n in (5, 50):
        _edit(project.path(f"NOTE-{n}"), f"Note {n}", f"Note {n} again")
        _old(project.path(f"NOTE-{n}"), 1)
    kept = {p: p.read_bytes() for p in (root / ".recordtool-cache" / FOLDER).glob("*.entries")}
    parsed.clear()
    warm = open_project(root=root, cache=True)
    written = [p for p, data in kept.items() if p.read_bytes() != data]
    assert parsed == ["NOTE-5.yaml", "NOTE-50.yaml"]
    entries = warm.record.entries
    assert sum(entries.kept(i) for i in entries) == len(entries) - 2  # type: ignore[attr-defined]
    cold = open_project(root=root).record.entries
    parsed.clear()
    assert entries == cold
    assert parsed == [] and written


def _loaded_record(project: ProjectBuilder) -> ProjectBuilder:
    """``_record`` without the file that fails (the graph then keeps what spans the record:
    ``graph.KeptLinks``), with a 'uses' cycle and an orphan."""
    _record(project)
    project.path("NOTE-2").unlink()
    project.add("THEORY-2", "title: A\nstatement: A.\ncites: [{id: THEORY-3, as: uses}]\n")
    project.add("THEORY-3", "title: B\nstatement: B.\ncites: [{id: THEORY-2, as: uses}, {id: LIT-1, as: uses}]\n")
    project.add("NOTE-3", "title: Alone\nbody: Nothing here.\n")
    for path in (project.root / "record").glob("*/*.yaml"):
        _old(path)
    return project


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries whose prose was scanned for mentions (not taken from the cache), by id."""
    import recordtool.record.graph as graph

    ids: list[str] = []
    real = graph._texts

    def spy(record: load.Record, some: list[str]) -> graph.Texts:
        ids.extend(some)
        return real(record, some)

    monkeypatch.setattr(graph, "_texts", spy)
    return ids


@pytest.mark.parametrize("links", ["kept", "gone"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_kept_mentions_that_cannot_be_read_back_are_scanned_again(
        project: ProjectBuilder, scanned: list[str], damage: str, links: str) -> None:
    """Mentions are kept in each shard's scans file, read only when asked for: a damaged,
    foreign or cut one costs the scan of its entries again (when the graph needs them: with
    what spans the record kept, it needs none), never the answer; the file is whole again
    afterwards."""
    root = _loaded_record(project).root
    cold = open_project(root=root)
    open_project(root=root, cache=True)
    folder = root / ".recordtool-cache" / FOLDER
    files = sorted(folder.glob("*.scans"))
    assert files
    for path in files:
        path.write_bytes(DAMAGE[damage](path.read_bytes()))
    if links == "gone":
        (folder / cache_module.LINKS).unlink()
    scanned.clear()
    warm = open_project(root=root, cache=True)
    assert sorted(scanned) == ([] if links == "kept" else sorted(cold.record.entries))
    _same(warm, cold)  # (its indexes made whole: every entry's mentions asked for)
    scanned.clear()
    (folder / cache_module.LINKS).unlink(missing_ok=True)
    warm = open_project(root=root, cache=True)
    assert scanned == [] or links == "kept"  # written whole again where the graph found it damaged
    _same(warm, cold)


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_file_of_what_spans_the_record_is_worked_out_again(project: ProjectBuilder, damage: str) -> None:
    """What the graph keeps of the whole record (dangling mentions, links, cycles, missing
    citations) is read back only when whole and written for this code and configuration."""
    root = _loaded_record(project).root
    cold = open_project(root=root)
    assert cold.graph.orphans() == ["NOTE-3"] and any(p.code == "uses-cycle" for p in cold.problems)
    open_project(root=root, cache=True)
    path = root / ".recordtool-cache" / FOLDER / cache_module.LINKS
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    _same(open_project(root=root, cache=True), cold)
    _same(open_project(root=root, cache=True), cold)


def test_what_spans_the_record_is_gone_over_again_for_the_changed_entries_only(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit, the graph goes over the changed entry only (``graph.KeptLinks``); after an
    entry is added or deleted, over it and the entries whose links or problems that changes;
    the answer is a cold run's."""
    import recordtool.record.graph as graph

    root = _loaded_record(project).root
    gone_over: list[str] = []
    real = graph._entry_links

    def spy(record: load.Record, entry_id: str, *args: object) -> object:
        gone_over.append(entry_id)
        return real(record, entry_id, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(graph, "_entry_links", spy)
    project.add("NOTE-4", "title: Target\nbody: Nothing.\n")
    _old(project.path("NOTE-4"))
    open_project(root=root, cache=True)
    assert len(gone_over) == 7
    for n, (entry_id, old, new) in enumerate([
            ("THEORY-3", "{id: THEORY-2, as: uses}, ", ""),  # the cycle is gone
            ("NOTE-3", "Nothing here.", "See NOTE-4 and THEORY-404."),  # no orphan, a dangling mention
            ("NOTE-3", "See NOTE-4 and THEORY-404.", "Nothing here."),  # orphans again: NOTE-3 and NOTE-4
            ("THEORY-3", "cites: [", "cites: [{id: THEORY-2, as: uses}, {id: NOTE-77, as: uses}, ")]):
        _edit(project.path(entry_id), old, new)
        _old(project.path(entry_id), n + 1)
        gone_over.clear()
        warm = open_project(root=root, cache=True)
        _same(warm, open_project(root=root))
        assert gone_over == [entry_id]
        assert ("NOTE-4" in warm.graph.orphans()) == (n != 1)
    project.add("NOTE-77", "title: Wanted\n")
    _old(project.path("NOTE-77"), 9)
    gone_over.clear()
    _same(open_project(root=root, cache=True), open_project(root=root))
    # the new entry, the one that cited it before it was there, and one citing an id not in the
    # record (its hint names the closest id there is)
    assert gone_over == ["NOTE-77", "THEORY-1", "THEORY-3"]
    project.path("NOTE-77").unlink()
    gone_over.clear()
    _same(open_project(root=root, cache=True), open_project(root=root))
    assert gone_over == ["THEORY-1", "THEORY-3"]  # (THEORY-3 cites it: a missing citation again)


def test_a_scans_file_gives_each_entrys_mentions_on_their_own(tmp_path: Path) -> None:
    """A shard's scans file keeps each entry's mentions, with its body composed (or None), on
    their own (``_scans_file``): one is read without the others, a damaged one is not given (its
    entry is scanned again) while the others still are, and a file of another generation or
    damaged in its index gives none."""
    generation = os.urandom(16)
    scans = {f"record/notes/NOTE-{n}.yaml": ([(f"LIT-{n}", "body", n, f"See LIT-{n}, twice." * n)],
                                            None if n % 2 else f"composed {n}".encode())
             for n in range(1, 6)}
    path = tmp_path / "shard-00.scans"
    path.write_bytes(b"".join(cache_module._scans_file(generation, scans)))
    kept = cache_module._Scans(path, generation)
    assert {rel: kept.get(rel) for rel in scans} == scans
    assert kept.get("record/notes/NOTE-9.yaml") is None
    data = bytearray(path.read_bytes())
    last = scans["record/notes/NOTE-5.yaml"]
    at = data.rindex(pickle.dumps(last, protocol=pickle.HIGHEST_PROTOCOL)[-8:])  # within NOTE-5's own bytes
    data[at] ^= 1
    path.write_bytes(bytes(data))
    kept = cache_module._Scans(path, generation)
    assert kept.get("record/notes/NOTE-5.yaml") is None
    assert {rel: kept.get(rel) for rel in list(scans)[:4]} == dict(list(scans.items())[:4])
    assert cache_module._Scans(path, os.urandom(16)).get("record/notes/NOTE-1.yaml") is None
    head = len(cache_module.SCANS_FORMAT) + len(generation) + 8
    data[head + 3] ^= 1  # the index
    path.write_bytes(bytes(data))
    assert cache_module._Scans(path, generation).get("record/notes/NOTE-1.yaml") is None


def test_the_static_checks_results_are_kept_while_the_entry_and_the_package_are_as_they_were(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The static checks look again at an entry only when its file or the checks package
    changed (a module's bytes, a module added or removed, a link): else what they found is
    kept (``static.KeptStatic``); the problems are always a cold run's."""
    import recordtool.record.project as project_module
    import recordtool.record.static as static

    root = _with_static_problems(project).root
    looked: list[str] = []
    checking: list[bool] = []
    real, real_problems = static._placeholders, static.static_problems

    def spy(entry: object) -> object:
        if checking:  # (loading a file looks for placeholders too)
            looked.append(entry.id)  # type: ignore[attr-defined]
        return real(entry)  # type: ignore[arg-type]

    def problems(*args: object) -> object:
        checking.append(True)
        try:
            return real_problems(*args)  # type: ignore[arg-type]
        finally:
            checking.clear()

    monkeypatch.setattr(static, "_placeholders", spy)
    monkeypatch.setattr(project_module, "static_problems", problems)

    def same_as_cold() -> list[str]:
        looked.clear()
        warm = open_project(root=root, cache=True)
        seen = sorted(looked)
        _same(warm, open_project(root=root))
        return seen

    assert same_as_cold() == ["NOTE-3", "THEORY-2"]  # nothing kept yet
    assert same_as_cold() == []
    module = root / "checks" / "m.py"
    for n, (old, new) in enumerate([("def measure(ctx):", "def nothing(ctx):"),  # the function is there now
                                    ("    return {}", "    return {}\n")]):  # the same size and times, other bytes
        stat = module.stat()
        _edit(module, old, new)
        if n == 1:
            module.write_text(module.read_text(encoding="utf-8")[:-1] + "#", encoding="utf-8")
            os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert same_as_cold() == ["NOTE-3", "THEORY-2"]  # every entry looked at again
        assert same_as_cold() == []
    (root / "checks" / "other.py").write_text("def nothing(ctx):\n    return {}\n", encoding="utf-8")
    assert same_as_cold() == ["NOTE-3", "THEORY-2"]  # a module added: the hints name every module
    _edit(project.path("NOTE-3"), "A new note", "A newer note")
    _old(project.path("NOTE-3"), 1)
    assert same_as_cold() == ["NOTE-3"]
    _edit(project.path("NOTE-3"), "Write the body here, in Markdown.", "Written.")
    _old(project.path("NOTE-3"), 2)
    assert same_as_cold() == []  # its placeholder gone: nothing to look at
    assert not any(p.code == "template-placeholder" and p.path.endswith("NOTE-3.yaml")
                   for p in open_project(root=root, cache=True).problems)
    _edit(project.path("NOTE-3"), "Written.", "Write the body here, in Markdown.")
    _old(project.path("NOTE-3"), 3)
    assert same_as_cold() == ["NOTE-3"]  # broken again, mended, broken: each time a cold run's answer
    shutil.rmtree(root / "checks")
    assert same_as_cold() == ["NOTE-3", "THEORY-2"]  # no package: nothing to read, the claim looked at again


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_static_results_are_worked_out_again(project: ProjectBuilder, damage: str) -> None:
    root = _with_static_problems(project).root
    cold = open_project(root=root)
    open_project(root=root, cache=True)
    path = root / ".recordtool-cache" / FOLDER / cache_module.STATIC
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    _same(open_project(root=root, cache=True), cold)
    _same(open_project(root=root, cache=True), cold)


def test_a_kept_file_read_ahead_is_taken_once_and_only_while_it_is_the_same_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_ahead`` reads a kept file for the next ``read_plain`` of it: that read takes the
    value without reading the file again, once; a file written over since, or a read for another
    key or format, reads the file."""
    path, key, form = tmp_path / "kept.bin", b"k" * 16, b"recordtool-test 1\n"
    cache_module.write_plain(path, key, form, {"a": [1, 2]})
    reads: list[Path] = []
    real = cache_module._read_plain

    def counted(at: Path, key: bytes, form: bytes) -> object:
        reads.append(at)
        return real(at, key, form)

    monkeypatch.setattr(cache_module, "_read_plain", counted)
    cache_module.read_ahead(path, key, form)
    assert reads == [path]
    assert cache_module.read_plain(path, key, form) == {"a": [1, 2]} and reads == [path]  # taken, not read again
    assert cache_module.read_plain(path, key, form) == {"a": [1, 2]} and reads == [path, path]  # once only

    cache_module.read_ahead(path, key, form)
    cache_module.write_plain(path, key, form, {"a": [3]})  # written over (a new file): read again
    assert cache_module.read_plain(path, key, form) == {"a": [3]} and len(reads) == 4

    cache_module.read_ahead(path, key, form)
    assert cache_module.read_plain(path, b"x" * 16, form) is None  # another key: the file says
    cache_module.read_ahead(path, key, form)
    assert cache_module.read_plain(path, key, b"recordtool-test 2\n") is None  # another format
    assert cache_module.read_plain(path, key, form) == {"a": [3]}

    cache_module.read_ahead(tmp_path / "none.bin", key, form)  # no such file: nothing kept
    assert cache_module._AHEAD == {}


@pytest.mark.parametrize("kind", ["_Blobs", "_Scans"])
def test_a_cache_file_held_open_is_closed_at_the_interpreters_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   kind: str) -> None:
    """A shard's entries or scans file held open is closed when its object goes, also at the
    interpreter's exit, when the module's globals may be gone before it (``os`` then None):
    no error is printed, and the descriptor is closed."""
    path = tmp_path / "shard-00.entries"
    path.write_bytes(b"kept")
    held = [getattr(cache_module, kind)(path, os.urandom(16))]  # (its only reference)
    fd = held[0].fd = os.open(path, os.O_RDONLY)
    assert dropped_at_exit(monkeypatch, cache_module, held) == []
    with pytest.raises(OSError):
        os.fstat(fd)  # closed


def test_an_item_pickles_as_its_class_and_every_field() -> None:
    """A shard's items are made back by one call each (``Item.__reduce__``, ``Item(*fields)``):
    every field in ``__init__``'s order, so a field ``__init__`` does not take fails here, not in
    a user's cache."""
    import dataclasses

    fields = [f.name for f in dataclasses.fields(cache_module.Item)]
    item = cache_module.Item(*(f"value of {name}" for name in fields))
    made, args = item.__reduce__()
    assert made is cache_module.Item and list(args) == [getattr(item, name) for name in fields]
    back = cache_module._Unpickler(io.BytesIO(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))).load()
    assert back == item and type(back) is cache_module.Item
    # with slots, no dict of its own: each run makes a hundred thousand of them back on a large
    # record and reads their fields several times (``Item``'s docstring has what that costs)
    assert not hasattr(back, "__dict__") and set(cache_module.Item.__slots__) == set(fields)
