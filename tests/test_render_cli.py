"""`recordtool render`: exit codes and exact messages."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from tests.conftest import ProjectBuilder
from tests.render_record import small_record


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_render_writes_then_reports_unchanged(project: ProjectBuilder) -> None:
    small_record(project)
    root = str(project.root)
    assert run("render", "--root", root) == (
        0, "rendered 4 entries into record/pages: 12 written, 0 unchanged, 0 removed\n", "")
    assert run("render", "--root", root, "--check") == (
        0, "rendered 4 entries into record/pages: 0 written, 12 unchanged, 0 removed\n", "")
    assert (project.root / "record" / "pages" / "LIT-1.md").is_file()


def test_render_into_another_folder(project: ProjectBuilder) -> None:
    small_record(project)
    code, out, _err = run("render", "--root", str(project.root), "-o", str(project.root / "site"))
    assert (code, out) == (0, "rendered 4 entries into site: 12 written, 0 unchanged, 0 removed\n")


def test_check_exits_1_with_each_broken_link(project: ProjectBuilder) -> None:
    small_record(project)
    project.add("NOTE-2", "title: T\nbody: 'A [missing file](nothere.csv).'\n")
    code, out, err = run("render", "--root", str(project.root), "--check")
    assert code == 1
    assert out == "rendered 5 entries into record/pages: 13 written, 0 unchanged, 0 removed\n"
    written = (project.root / "record" / "pages" / "NOTE-2.md").read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(written, 1) if "nothere.csv" in text)
    assert err == (f"record/pages/NOTE-2.md:{line}: broken link '../notes/nothere.csv': ../notes/nothere.csv does not "
                   "exist\n1 broken link\n")


def test_refused_output_folder_is_a_usage_error(project: ProjectBuilder) -> None:
    small_record(project)
    code, _out, err = run("render", "--root", str(project.root), "-o", str(project.root / "record" / "theory"))
    assert code == 2
    assert "holds the record's own files" in err


def test_a_file_recordtool_did_not_write_in_the_way_is_a_usage_error(project: ProjectBuilder) -> None:
    small_record(project)
    docs = project.root / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("my own", encoding="utf-8")
    code, out, err = run("render", "--root", str(project.root), "-o", str(docs))
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"Error: {docs.resolve()} holds 1 file that recordtool did not write and would write over: index.md; move it "
        "away, or render into a folder of its own with -o (pages of an earlier render whose .recordtool-manifest.json "
        "is gone: delete them, and render again)")
    assert sorted(p.name for p in docs.iterdir()) == ["index.md"]


def test_ctrl_c_exits_130_and_says_what_is_left(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    import recordtool.render.site as site

    small_record(project)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "render", interrupted)
    assert run("render", "--root", str(project.root)) == (
        130, "", "interrupted: the pages written so far are whole, the others as they were; render again to finish\n")


def test_help_is_the_docstring() -> None:
    code, out, _err = run("render", "--help")
    assert code == 0
    assert "Write the record as backlinked Markdown pages" in out and "--check" in out and "-o, --output DIR" in out


def test_jobs_reach_reading_scanning_writing_and_checking(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    import recordtool.record.project
    from recordtool import parallel

    small_record(project)
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)  # (even these few pages composed by a pool)
    seen: list[tuple[str, int | None]] = []
    real_open = recordtool.record.project.open_project

    def open_project(*args: object, jobs: int | None = None, **kwargs: object) -> object:
        seen.append(("open", jobs))
        return real_open(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    real_items = parallel.map_items

    def map_items(*args: object, jobs: int | None, **kwargs: object) -> object:  # reading and scanning the record
        seen.append(("pool", jobs))
        return real_items(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recordtool.record.project, "open_project", open_project)
    monkeypatch.setattr(parallel, "map_items", map_items)
    assert run("render", "--root", str(project.root), "-j", "3", "--check")[0] == 0
    assert run("render", "--root", str(project.root), "--check", "--no-cache")[0] == 0  # (every page composed)
    # opening (then scanning mentions), writing pages and checking their links: None is every core
    assert seen == [("open", 3), ("pool", 3), ("pool", 3), ("pool", 3),
                    ("open", None), ("pool", None), ("pool", None), ("pool", None)]


def test_jobs_must_be_positive(project: ProjectBuilder) -> None:
    small_record(project)
    code, _out, err = run("render", "--root", str(project.root), "-j", "0")
    assert code == 2
    assert "Invalid value for '-j' / '--jobs': 0 is not in the range x>=1." in err


def test_on_a_terminal_a_progress_line_says_each_stage_and_is_erased(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    from recordtool import meter

    small_record(project)
    project.add("NOTE-2", "title: T\nbody: 'A [missing file](nothere.csv).'\n")
    said = ("record/pages/NOTE-2.md:35: broken link '../notes/nothere.csv': ../notes/nothere.csv does not exist\n"
            "1 broken link\n")
    root = str(project.root)
    assert run("render", "--root", root, "--check")[2] == said  # off a terminal: not a character more
    monkeypatch.setattr(meter, "_is_terminal", lambda _stream: True)
    monkeypatch.setattr(meter, "DELAY_S", 0.0)  # (drawn at once, at every count)
    monkeypatch.setattr(meter, "EVERY_S", 0.0)
    (project.root / "record" / "pages" / "LIT-1.md").unlink()  # (one page to write again)
    code, out, err = run("render", "--root", root, "--check", "--no-cache")  # (every entry file read)
    assert (code, out) == (1, "rendered 5 entries into record/pages: 1 written, 12 unchanged, 0 removed\n")
    *drawn, left = err.split(meter.ERASE)
    assert left == said  # what is printed comes after the line is erased, and nothing is left of it
    assert [line for line in drawn if line] == [
        "reading the entry files: 0 of 5", "reading the entry files: 5 of 5", "linking the record…",
        "planning the pages…", "composing the pages: 0 of 13", "composing the pages: 13 of 13",
        "checking the links: 0 of 13", "checking the links: 13 of 13"]


def test_class_1_a_broken_entry_keeps_its_page(project: ProjectBuilder) -> None:
    """Issue 66, class 1: an entry whose file is there but does not load keeps its last good
    page (and the page of a tag only it had), marked stale on the index page; render exits 1
    with the file's error. Mended, it is rendered as before; only an entry whose file is gone
    loses its page."""
    small_record(project)
    root, pages = str(project.root), project.root / "record" / "pages"
    path = project.path("THEORY-1")
    good = path.read_text(encoding="utf-8").replace("title: The claim\n", "title: The claim\ntags: [gamma]\n")
    path.write_text(good, encoding="utf-8")
    assert run("render", "--root", root)[0] == 0
    before = {rel: (pages / rel).read_bytes() for rel in ("THEORY-1.md", "tags/gamma.md")}
    path.write_text(good.replace("    expect:", "     expect:"), encoding="utf-8")  # one space too many
    code, out, err = run("render", "--root", root, "--check")
    assert code == 1
    assert out == "rendered 3 entries into record/pages: 7 written, 4 unchanged, 0 removed\n"
    lines = err.splitlines()
    assert lines[0].startswith("record/theory/THEORY-1.yaml:") and ": error: " in lines[0]
    assert lines[-1] == ("error: 1 entry file does not load (THEORY-1); its page is kept as the last render wrote it, "
                         "marked stale on the index page; fix it and render again")
    assert {rel: (pages / rel).read_bytes() for rel in before} == before
    index = (pages / "index.md").read_text(encoding="utf-8")
    assert "## Stale pages" in index and "- [THEORY-1](THEORY-1.md) ⚠️ stale: record/theory/THEORY-1.yaml:" in index
    assert run("render", "--root", root)[:2] == (1, "rendered 3 entries into record/pages: 0 written, 11 unchanged, "
                                                 "0 removed\n")  # (nothing changed: the same)
    path.write_text(good, encoding="utf-8")
    code, out, err = run("render", "--root", root)
    assert (code, err) == (0, "") and "## Stale pages" not in (pages / "index.md").read_text(encoding="utf-8")
    assert {rel: (pages / rel).read_bytes() for rel in before} == before
    path.unlink()  # gone: its page goes, and its tag's
    code, out, _err = run("render", "--root", root)
    assert code == 0 and out.endswith(" 2 removed\n") and not (pages / "THEORY-1.md").exists()
    assert not (pages / "tags" / "gamma.md").exists()


def test_class_8_names_fit_a_file_system_from_validate_to_render(project: ProjectBuilder) -> None:
    """Issue 66, what validate accepts render can write: an id near the file-name limit is an
    error of validate at its file:line; one at the limit validates and renders."""
    small_record(project)
    long_id = "NOTE-" + "1" * 60  # 65 characters
    project.add(long_id, "kind: note\ntitle: Long\n")
    code, _out, err = run("validate", "--root", str(project.root))
    assert code == 1 and f"record/notes/{long_id}.yaml:1:5: error: id: {long_id[:20]}... is 65 characters long; an id names its page and figure files, so it holds at most 64" in err, err
    project.path(long_id).unlink()
    limit_id = "NOTE-" + "1" * 59  # 64 characters
    project.add(limit_id, "kind: note\ntitle: At the limit\ntags: [" + "t" * 100 + "]\n")
    assert run("validate", "--root", str(project.root))[0] == 0
    assert run("render", "--root", str(project.root), "--check")[0] == 0
    assert (project.root / "record" / "pages" / f"{limit_id}.md").is_file()


def test_pages_of_an_earlier_version_are_rendered_over(project: ProjectBuilder) -> None:
    """A pages folder whose manifest an earlier version wrote (its first format: each path with
    its key, size and hash) is recordtool's own: rendered over, not refused."""
    import json

    small_record(project)
    pages = project.root / "record" / "pages"
    assert run("render", "--root", str(project.root))[0] == 0
    manifest = pages / ".recordtool-manifest.json"
    files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
    manifest.write_text(json.dumps({"format": 1, "files": {path: {"hash": "0" * 32, "key": "1" * 32, "size": 1}
                                                          for path in files}}), encoding="utf-8")
    (pages / files[0]).write_text("an old page\n", encoding="utf-8")
    code, out, err = run("render", "--root", str(project.root))
    assert code == 0 and "1 written" in out, out + err
    assert json.loads(manifest.read_text(encoding="utf-8")) == {"format": 2, "files": files}
