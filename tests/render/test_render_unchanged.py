"""`recordtool render` with nothing changed: decided from a snapshot, without opening the
project; and every kind of change falls through to a real render."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import recordtool.record.project
from recordtool.cli import cli
from recordtool.record import cache as cache_module
from recordtool.record.cache import EntryCache
from recordtool.render import plan, site, snapshot
from recordtool.snapshot import Stats
from tests.conftest import ProjectBuilder, dropped_at_exit
from tests.render_record import small_record, verdict

SUMMARY = "rendered 4 entries into record/pages: {} written, {} unchanged, {} removed\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every project the command opens (none when it decides from the snapshot)."""
    calls: list[Path] = []
    real = recordtool.record.project.open_project

    def spy(start: Path | None = None, *, root: Path | None = None, **kwargs: Any) -> recordtool.record.project.Project:
        calls.append(root or Path("."))
        return real(start, root=root, **kwargs)

    monkeypatch.setattr(recordtool.record.project, "open_project", spy)
    return calls


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


def test_unchanged_render_opens_nothing_and_says_unchanged(project: ProjectBuilder, opened: list[Path]) -> None:
    root = _rendered(project)
    opened.clear()
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    assert opened == []
    assert (project.root / "record" / "pages" / snapshot.SNAPSHOT).is_file()


@pytest.mark.parametrize("broken", [1, 7])
def test_unchanged_render_says_what_the_render_before_said_of_the_errors(project: ProjectBuilder, opened: list[Path],
                                                                         broken: int) -> None:
    """Entries with errors are left out of the pages, which a render says on stderr, each
    error with its place (the first five) and how many there are; with nothing changed it
    says exactly that again, without opening the project."""
    small_record(project)
    for n in range(broken):
        project.add(f"NOTE-{50 + n}", "title: T\ntitel: U\n")
    root = str(project.root)
    code, _out, said = run("render", "--root", root)
    assert code == 0 and said.count(": error: ") == min(broken, 5)
    assert said.splitlines()[-1] == (f"warning: {broken} error{'s' if broken > 1 else ''} in the record"
                                     f"{' (2 more not shown)' if broken > 5 else ''}; run `recordtool validate`")
    opened.clear()
    again = run("render", "--root", root)
    assert opened == [] and again[2] == said and again[0] == 0


def test_unchanged_render_holds_for_old_files_too(project: ProjectBuilder, opened: list[Path]) -> None:
    root = _rendered(project)
    _age(project.root / "record")
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")  # a real one: times changed
    opened.clear()
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    assert opened == []


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


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_makes_a_real_render(project: ProjectBuilder, opened: list[Path], change: str) -> None:
    root = _rendered(project)
    _age(project.root)  # the change below is then seen by its time, not only by its content
    run("render", "--root", root)
    before = _pages(project.root / "record" / "pages")
    CHANGES[change](project)
    opened.clear()
    code, out, _err = run("render", "--root", root)
    assert code == 0 and opened, f"{change}: not rendered again"
    # and it wrote what a render from scratch writes
    fresh = project.root / "fresh"
    run("render", "--root", root, "-o", str(fresh))
    after = _pages(project.root / "record" / "pages")
    assert after == _pages(fresh)
    if change in ("page deleted", "page edited"):
        assert out == SUMMARY.format(1, 11, 0) and after == before
    # and then, nothing having changed since, the next one decides from the snapshot
    opened.clear()
    code, again, _err = run("render", "--root", root)
    assert code == 0 and opened == [] and ": 0 written, " in again and again.endswith(" 0 removed\n")


def test_a_change_made_just_now_is_seen_by_content(project: ProjectBuilder, opened: list[Path]) -> None:
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
    opened.clear()
    code, _out, _err = run("render", "--root", root)
    assert code == 0 and opened
    assert "B paper" in (project.root / "record" / "pages" / "LIT-1.md").read_text(encoding="utf-8")


def test_renderer_code_change_makes_a_real_render(project: ProjectBuilder, opened: list[Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = _rendered(project)
    monkeypatch.setattr(plan, "code_version", lambda: "something else")
    opened.clear()
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    assert opened


def test_check_always_renders(project: ProjectBuilder, opened: list[Path]) -> None:
    root = _rendered(project)
    opened.clear()
    assert run("render", "--root", root, "--check") == (0, SUMMARY.format(0, 12, 0), "")
    assert opened


def test_library_render_drops_the_snapshot(project: ProjectBuilder) -> None:
    root = _rendered(project)
    record = recordtool.record.project.open_project(root=Path(root))
    site.render(record)
    assert not (project.root / "record" / "pages" / snapshot.SNAPSHOT).exists()


def test_snapshot_is_only_taken_of_a_usable_project(project: ProjectBuilder) -> None:
    small_record(project)
    assert snapshot.snapshot_inputs(project.root, project.root / "record" / "theory") is None
    inputs = snapshot.snapshot_inputs(project.root)
    assert inputs is not None and any(p.endswith("LIT-1.yaml") for p in inputs.files)
    assert site.unchanged(inputs) is None  # never rendered


def test_adding_an_id_quoted_in_a_backlink_updates_the_quoting_page(project: ProjectBuilder) -> None:
    """NOTE-1's backlinks quote THEORY-1's sentence that mentions THEORY-99: once THEORY-99
    is added, that quote links to its page (the page's key covers the ids it quotes)."""
    record = small_record(project)
    site.render(record)
    page = project.root / "record" / "pages" / "NOTE-1.md"
    assert '[THEORY-99](wanted.md "not in the record") would extend it.”' in page.read_text(encoding="utf-8")
    project.add("THEORY-99", "statement: An extension.\n")
    report = site.render(recordtool.record.project.open_project(root=project.root))
    assert "NOTE-1.md" in report.written
    assert "[THEORY-99](THEORY-99.md) would extend it.”" in page.read_text(encoding="utf-8")


def test_packed_files_read_back_and_compare_as_the_files_do(tmp_path: Path) -> None:
    racy = tmp_path / "racy.yaml"
    racy.write_text("a: 1\n", encoding="utf-8")
    from recordtool.snapshot import content_hash

    digest = content_hash(racy.read_bytes())
    files: dict[str, list[object]] = {"b/x.yaml": [10, 2**62], "a/y.yaml": [-1, -1], str(racy): [5, 7, digest]}
    packed = snapshot.pack(files)  # type: ignore[arg-type]
    assert snapshot.unpack(packed) == files
    assert snapshot.unpack({**packed, "stats": packed["stats"][:-4]}) is None  # damaged: not trusted
    assert snapshot.unpack({**packed, "paths": packed["paths"][:-1]}) is None
    plain = {"b/x.yaml": [10, 2**62], "a/y.yaml": [3, 4]}
    held = snapshot.pack(plain)  # type: ignore[arg-type]
    assert snapshot._files_hold(held, {"b/x.yaml": [10, 2**62], "a/y.yaml": [3, 4]})
    assert snapshot._files_hold(held, {"a/y.yaml": [3, 4], "b/x.yaml": [10, 2**62]})  # listed in another order
    assert not snapshot._files_hold(held, {"b/x.yaml": [10, 2**62], "a/y.yaml": [3, 5]})
    assert not snapshot._files_hold(held, {"b/x.yaml": [10, 2**62]})
    assert not snapshot._files_hold(held, {**plain, "c.yaml": [1, 1]})
    # a file racy then is compared by content: the same bytes hold, others do not
    assert snapshot._files_hold(packed, {"b/x.yaml": [10, 2**62], "a/y.yaml": [-1, -1], str(racy): [5, 7]})
    racy.write_text("a: 2\n", encoding="utf-8")
    assert not snapshot._files_hold(packed, {"b/x.yaml": [10, 2**62], "a/y.yaml": [-1, -1], str(racy): [5, 7]})


def test_packed_files_compare_as_the_files_do_in_every_case(tmp_path: Path) -> None:
    """Compared packed (whole when in the same order, the files racy then one by one), the
    answer is the one ``files_hold`` gives for the files unpacked: random snapshots and states
    now, with files racy then or now, whose content is the same or not, listed in the same
    order or not, some gone or come."""
    import random

    from recordtool.snapshot import content_hash, files_hold

    rng = random.Random(14)
    paths = [tmp_path / f"f{n}.yaml" for n in range(6)]
    for n, path in enumerate(paths):
        path.write_text(f"n: {n}\n", encoding="utf-8")
    digests = [content_hash(path.read_bytes()) for path in paths]
    seen = {True: 0, False: 0}
    for _round in range(600):
        then: dict[str, list[Any]] = {}
        for n in rng.sample(range(6), rng.randint(0, 6)):
            state: list[Any] = [rng.choice([3, 4]), rng.choice([7, 8])]
            if rng.random() < 0.4:  # racy then: its content's hash, right or wrong
                state.append(digests[n] if rng.random() < 0.7 else digests[(n + 1) % 6])
            then[str(paths[n])] = state
        now: dict[str, list[Any]] = {}
        keys = list(then)
        if rng.random() < 0.3:
            rng.shuffle(keys)
        for key in keys:
            if rng.random() < 0.1:
                continue  # gone
            value = list(then[key][:2]) if rng.random() < 0.8 else [rng.choice([3, 4]), rng.choice([7, 8])]
            if rng.random() < 0.2:  # racy now too
                value.append(digests[paths.index(Path(key))] if rng.random() < 0.7 else "0" * 32)
            now[key] = value
        if rng.random() < 0.1:
            now[str(paths[rng.randrange(6)])] = [3, 7]  # come (or listed again, at the end)
        expected = files_hold(then, now)
        packed = snapshot.pack(then)  # type: ignore[arg-type]
        assert snapshot._files_hold(packed, now) == expected, (then, now)
        # a hash kept of a file not listed (not written so: a snapshot changed by hand) is not a file
        assert snapshot._files_hold({**packed, "hashes": {**packed["hashes"], "elsewhere": "0"}}, now) == expected
        seen[expected] += 1
    assert min(seen.values()) > 100  # both answers met often


def test_a_render_reads_the_snapshot_once(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _rendered(project)
    _edit_entry(project)
    reads: list[str] = []
    real = snapshot.read_snapshot

    def spy(base: str) -> dict[str, object]:
        reads.append(base)
        return real(base)

    monkeypatch.setattr(snapshot, "read_snapshot", spy)
    code, out, _err = run("render", "--root", root)
    assert code == 0 and " 0 written" not in out
    assert len(reads) == 1


def test_a_render_after_an_edit_puts_back_pages_changed_by_hand(project: ProjectBuilder) -> None:
    """The pages the last render wrote are checked against its snapshot (their sizes and
    times): one edited by hand keeping its size, one deleted, are written again, the others
    are not, and the manifest is the one a render from scratch writes."""
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


def _ahead(root: str, jobs: int = 2, judge: Callable[[snapshot.Inputs], object] = site.unchanged
           ) -> Callable[[], tuple[snapshot.Inputs | None, object]] | None:
    """The inputs taken and judged by a worker: the function that waits for them; None: no worker."""
    taking = snapshot.Taking(Path(root), None, jobs, judge)
    if not taking.ahead:
        inputs, _judged = taking.result()  # (taken here then)
        assert inputs is not None and inputs.files
        return None
    return taking.result


def _as_taken_here(root: str) -> tuple[snapshot.Inputs | None, object]:
    inputs = snapshot.snapshot_inputs(Path(root))
    assert inputs is not None
    return inputs, site.unchanged(inputs)


def _same_inputs(a: snapshot.Inputs | None, b: snapshot.Inputs | None) -> None:
    assert a is not None and b is not None
    assert (a.root, a.out, a.code) == (b.root, b.out, b.code)
    assert a.files == b.files
    assert a.last() == b.last()
    stats_a, stats_b = a.stats(), b.stats()
    assert stats_a is not None and stats_b is not None
    assert stats_a.files == stats_b.files


def test_a_worker_takes_and_judges_the_inputs_as_this_process_would(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a large record (``AHEAD_MIN`` input files, lowered here) a forked worker stats the
    inputs and decides "nothing changed" while the command reads the entry cache: what it
    gives is what taking them here gives, changed or not."""
    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    _age(project.root)
    run("render", "--root", root)  # (the snapshot of files as they are now)
    for change in (None, _edit_entry, _add_entry):
        if change is not None:
            change(project)
        wait = _ahead(root)
        assert wait is not None
        inputs, report = wait()
        here, said = _as_taken_here(root)
        _same_inputs(inputs, here)
        assert report == said
        assert (report is not None) == (change is None)
    wait = _ahead(root, judge=lambda _inputs: "judged")
    assert wait is not None and wait()[1] == "judged"


def test_no_worker_where_it_would_not_pay_or_could_not_run(project: ProjectBuilder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    root = _rendered(project)
    assert _ahead(root) is None  # a small record: fewer input files than AHEAD_MIN
    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    assert _ahead(root, jobs=1) is None  # one process
    unusable = snapshot.Taking(project.root, project.root, 2, site.unchanged)  # pages into the project's own folder
    assert not unusable.ahead and unusable.result() == (None, None)  # (rendering says why)
    (project.root / "record" / "pages" / snapshot.SNAPSHOT).unlink()
    assert _ahead(root) is None  # no snapshot: nothing to compare against
    run("render", "--root", root)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _ahead(root) is None  # another thread runs: no fork
    finally:
        stop.set()
        other.join()
    assert _ahead(root) is not None


@pytest.mark.parametrize("how", ["raises", "killed", "garbled"])
def test_a_worker_that_fails_costs_the_snapshot_taken_here(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch,
                                                            how: str) -> None:
    import pickle
    import signal

    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    _edit_entry(project)
    parent = os.getpid()
    real_take, real_dumps = snapshot._take, pickle.dumps

    def take(*args: object, **kwargs: object) -> snapshot.Inputs:
        if os.getpid() != parent:
            if how == "raises":
                raise OSError("a fault in the worker")
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
        return real_take(*args, **kwargs)  # type: ignore[arg-type]

    def dumps(*args: object, **kwargs: object) -> bytes:
        data = real_dumps(*args, **kwargs)  # type: ignore[arg-type]
        return data[:len(data) // 2] if how == "garbled" and os.getpid() != parent else data

    monkeypatch.setattr(snapshot, "_take", take)
    monkeypatch.setattr(snapshot.pickle, "dumps", dumps)
    wait = _ahead(root)
    assert wait is not None
    inputs, report = wait()
    here, said = _as_taken_here(root)
    _same_inputs(inputs, here)
    assert report is None and said is None


def test_a_render_with_its_inputs_taken_ahead_is_the_same_render(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch, opened: list[Path]) -> None:
    """The command: unchanged, it says so without opening the project (the entry cache read
    meanwhile is let go); after an edit, the project is opened with the entry cache read
    ahead, and the pages are those of a render without the worker."""
    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    used: list[bool] = []
    real = snapshot.Taking

    def taking(root: Path | None, out: Path | None, jobs: int | None, judge: Callable[..., object]) -> object:
        taken = real(root, out, 2, judge)
        used.append(taken.ahead)
        return taken

    monkeypatch.setattr(snapshot, "Taking", taking)
    opened.clear()
    assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
    assert opened == [] and used == [True]
    _edit_entry(project)
    cached: list[object] = []
    real_open = recordtool.record.project.open_project

    def open_project(*args: object, opened: EntryCache | None = None, **kwargs: object) -> object:
        cached.append(opened)
        return real_open(*args, opened=opened, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recordtool.record.project, "open_project", open_project)
    # While the worker has not answered (held so here), the kept files are read ahead; the
    # render takes each of them instead of reading it again.
    monkeypatch.setattr(real, "answered", lambda _self: False)
    read: list[str] = []
    real_read = cache_module.read_ahead
    monkeypatch.setattr(cache_module, "read_ahead", lambda path, *a: read.append(path.name) or real_read(path, *a))
    code, _out, err = run("render", "--root", root)
    assert (code, err) == (0, "") and used == [True, True]
    assert len(cached) == 1 and isinstance(cached[0], EntryCache)
    assert {"links.bin", "rows.bin"} <= set(read) and any(name.startswith("keys-") for name in read)
    assert cache_module._AHEAD == {}  # each taken by the render
    pages = project.root / "record" / "pages"
    ahead = {p.name: p.read_bytes() for p in pages.glob("*.md")}
    shutil.rmtree(pages)
    monkeypatch.setattr(snapshot, "AHEAD_MIN", 10**9)
    assert run("render", "--root", root, "--no-cache")[0] == 0
    assert {p.name: p.read_bytes() for p in pages.glob("*.md")} == ahead


def test_once_the_worker_has_answered_the_render_imports_and_reads_nothing_more_ahead(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the worker takes the snapshot, the render imports what opening the project needs,
    a module at a time (``AHEAD_IMPORTS``), then opens the entry cache; once the worker has
    answered, it stops: "nothing changed" does not wait for pydantic."""
    import importlib

    import recordtool.cli as cli_module

    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    imported: list[str] = []
    real_import = importlib.import_module
    monkeypatch.setattr(importlib, "import_module",
                        lambda name, *args: imported.append(name) or real_import(name, *args))
    caches: list[str] = []
    real_open = recordtool.record.project.open_entry_cache
    monkeypatch.setattr(recordtool.record.project, "open_entry_cache",
                        lambda *args, **kwargs: caches.append("opened") or real_open(*args, **kwargs))
    ahead = list(cli_module.AHEAD_IMPORTS)
    for answers, then, modules, opened in (([False], True, ahead[:1], []),  # once the first module was imported
                                           ([], False, ahead, ["opened"]),  # only when its answer is read
                                           ([], True, [], [])):  # at once
        asked = iter(answers)
        monkeypatch.setattr(snapshot.Taking, "answered", lambda _self, asked=asked, then=then: next(asked, then))
        imported.clear()
        caches.clear()
        assert run("render", "--root", root) == (0, SUMMARY.format(0, 12, 0), "")
        assert [name for name in imported if name in ahead] == modules
        assert caches == opened
        assert cache_module._AHEAD == {}  # what it read ahead and did not take: not held on


def test_what_a_worker_sends_is_made_back_whole_or_refused() -> None:
    files: dict[str, list[object]] = {"/p/pyproject.toml": [10, 2**62], "/p/record/a b.yaml": [-1, -1],
                                      "/p/record/racy.yaml": [5, 7, "0" * 32]}
    stats = Stats({"/p/record/a b.yaml": (3, 4, 5, 6), "/p/record/racy.yaml": (5, 7, 8, 2**40)}, 123)
    sent = snapshot._sent(files, stats)  # type: ignore[arg-type]
    got_packed, got_stats = snapshot._received(sent)
    got_files = snapshot.unpack(got_packed)
    assert got_files == files and list(got_files) == list(files)  # (in the same order: compared as packed)
    assert got_stats.files == stats.files and got_stats.taken == 123
    # The files' states are left packed until asked for; kept again as they came, or as they are then
    inputs = snapshot.Inputs("/p", "/out", "code", None, _packed=got_packed)
    assert inputs.as_json()["files"] is got_packed
    assert inputs.files == files
    assert inputs.as_json()["files"] == got_packed
    packed, places, full, taken = sent
    # each stat-ed file sent by its place among the inputs (eight bytes), its path not sent again
    assert len(places) == 8 * len(stats.files) and not any(path.encode() in places for path in stats.files)
    beyond = array("q", [len(files), 1]).tobytes()  # (a place past the inputs' paths)
    for broken in [({**packed, "paths": packed["paths"][:-1]}, places, full, taken),
                   ({**packed, "stats": packed["stats"][:-4]}, places, full, taken),
                   (packed, places[:-1], full, taken), (packed, places[:-8], full, taken),
                   (packed, places, full[8:], taken), (packed, beyond, full, taken),
                   (packed, array("q", [-1, 1]).tobytes(), full, taken)]:
        with pytest.raises(ValueError):
            snapshot._received(broken)
    assert snapshot._received(snapshot._sent({}, Stats({}, 0))) == (snapshot.pack({}), Stats({}, 0))


@pytest.mark.parametrize("how", ["answers", "killed"])
def test_after_a_change_the_worker_stats_the_pages_written_before(project: ProjectBuilder,
                                                                   monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """When something changed, the worker that judged it then stats the pages the last render
    wrote, for ``Outputs.spoiled`` (no second worker is forked); killed before it answers, they
    are stat-ed here: either way a page changed by hand is found."""
    import signal

    from recordtool.render import write

    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    pages = project.root / "record" / "pages"
    wait = _ahead(root)
    assert wait is not None
    inputs, report = wait()
    assert report is not None and inputs is not None and inputs.outputs()._ahead is None  # (nothing to stat)
    _edit_entry(project)
    (pages / "LIT-1.md").write_text("changed by hand\n", encoding="utf-8")
    parent, real = os.getpid(), write.stat_all

    def stat_all(base: str, paths: list[str]) -> object:
        if how == "killed" and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(base, paths)

    monkeypatch.setattr(snapshot, "stat_all", stat_all)
    monkeypatch.setattr(write, "stat_all", stat_all)
    forked: list[object] = []

    def refused(*args: object, **kwargs: object) -> object:
        forked.append(args)
        raise OSError("no worker forked here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refused)
    monkeypatch.setattr(write, "AHEAD_MIN", 0)
    wait = _ahead(root)
    assert wait is not None
    inputs, report = wait()
    assert report is None and inputs is not None
    outputs = inputs.outputs()
    assert outputs is not None and outputs._ahead is not None
    outputs.stat_ahead(inputs.out, 2)
    assert forked == []  # (stat-ed by the worker already)
    assert outputs.spoiled(inputs.out) == {"LIT-1.md"}
    outputs._ahead = None
    outputs.stat_ahead(inputs.out, 2)  # (no worker given: it forks one, here refused)
    assert len(forked) == 1 and outputs._ahead is None


def test_whether_the_worker_has_answered_is_known_without_waiting(project: ProjectBuilder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``answered``: False while the worker is still taking the inputs, True once its answer can
    be read (and with no worker at all), so that the command reads kept files meanwhile only."""
    monkeypatch.setattr(snapshot, "AHEAD_MIN", 0)
    root = _rendered(project)
    _edit_entry(project)
    held = snapshot._take

    def slow_take(*args: Any, **kwargs: Any) -> snapshot.Inputs:
        time.sleep(0.5)
        return held(*args, **kwargs)

    monkeypatch.setattr(snapshot, "_take", slow_take)
    taking = snapshot.Taking(Path(root), None, 2, site.unchanged)
    assert taking.ahead and not taking.answered()
    deadline = time.monotonic() + 60
    while not taking.answered():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    inputs, judged = taking.result()
    assert inputs is not None and judged is None
    assert taking.answered()  # (no worker now)
    alone = snapshot.Taking(Path(root), None, 1, site.unchanged)
    assert not alone.ahead and alone.answered()
    alone.result()


def test_the_snapshot_worker_is_let_go_and_waited_for_at_the_interpreters_exit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker of ``Taking`` whose answers were never read is let go and waited for when its
    object goes, also at the interpreter's exit, when the module's globals may be gone before
    it (``os`` then None): no error is printed, its pipe is closed and it is reaped."""
    held = [snapshot._Worker.fork(lambda send: send(b"an answer nobody reads"))]  # (its only reference)
    assert held[0] is not None
    fd, pid = held[0].fd, held[0].pid
    assert fd is not None
    assert dropped_at_exit(monkeypatch, snapshot, held) == []
    with pytest.raises(OSError):
        os.fstat(fd)  # closed
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # reaped
