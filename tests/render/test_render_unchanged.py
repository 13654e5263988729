"""`recordtool render` with nothing changed: decided from a snapshot, without opening the
project; and every kind of change falls through to a real render."""

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
from recordtool.record.graph import Compose
from recordtool.render import plan, site, snapshot
from recordtool.snapshot import Stats
from tests.conftest import ProjectBuilder
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

    def spy(start: Path | None = None, *, root: Path | None = None, jobs: int | None = None,
            cache: bool = False, compose: Compose | None = None,
            stats: Stats | None = None) -> recordtool.record.project.Project:
        calls.append(root or Path("."))
        return real(start, root=root, jobs=jobs, cache=cache, compose=compose, stats=stats)

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
