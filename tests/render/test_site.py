"""The whole site: byte-identical across runs, incremental, atomic, inside its folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from recordtool.record.project import open_project
from recordtool.render.manifest import MANIFEST
from recordtool.render.site import render
from recordtool.render.write import RenderError
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import (
    EveryWorker,
    ProjectBuilder,
    count_pools,
    no_children_left,
    share_with_a_pool,
)
from tests.render.composed import render_site
from tests.render_record import small_record, statuses, verdict


def test_site_layout_and_every_link_resolves(project: ProjectBuilder) -> None:
    record = small_record(project)
    site = render_site(record, statuses(record))
    assert sorted(site) == [
        "LIT-1.md", "NOTE-1.md", "THEORY-1.md", "THEORY-2.md", "graph.md", "index.md",
        "kinds/literature.md", "kinds/note.md", "kinds/theory.md",
        "tags/alpha.md", "tags/beta.md", "wanted.md"]
    assert render(record, statuses=statuses(record), check=True).broken == []


def test_output_is_byte_identical_across_runs(project: ProjectBuilder) -> None:
    status = ClaimStatus("THEORY-1", "verified", verdict())
    first = render_site(small_record(project), statuses(small_record(project), THEORY_1=status))
    record = open_project(root=project.root)
    second = render_site(record, statuses(record, THEORY_1=status))
    assert first == second


def test_only_changed_pages_are_rewritten_and_deleted_ones_removed(project: ProjectBuilder) -> None:
    record = small_record(project)
    out = project.root / "record" / "pages"
    (out).mkdir(parents=True)
    (out / "README.md").write_text("mine\n", encoding="utf-8")
    first = render(record, statuses=statuses(record))
    assert len(first.written) == 12 and first.removed == []
    again = render(open_project(root=project.root), statuses=statuses(record))
    assert (again.written, again.unchanged, again.removed) == ([], 12, [])
    # a changed title changes its own page and the pages that show it
    path = project.path("NOTE-1")
    path.write_text(path.read_text(encoding="utf-8").replace("Notes on the paper", "Notes, revised"), encoding="utf-8")
    record = open_project(root=project.root)
    changed = render(record, statuses=statuses(record))
    assert changed.written == ["LIT-1.md", "NOTE-1.md", "THEORY-1.md", "kinds/note.md", "tags/alpha.md", "tags/beta.md"]
    # a deleted entry's page goes, and so does a tag page nobody uses any more
    path.unlink()
    record = open_project(root=project.root)
    gone = render(record, statuses=statuses(record))
    assert gone.removed == ["NOTE-1.md", "tags/beta.md"]
    assert not (out / "NOTE-1.md").exists() and (out / "README.md").read_text(encoding="utf-8") == "mine\n"
    # a page edited by hand is put back
    (out / "LIT-1.md").write_text("edited\n", encoding="utf-8")
    fixed = render(record, statuses=statuses(record))
    assert fixed.written == ["LIT-1.md"]
    assert not [p for p in out.rglob("*.tmp")]


def test_an_incremental_render_is_the_same_as_a_fresh_one_after_each_edit(project: ProjectBuilder) -> None:
    """Page keys are right: whatever changes, a page whose key did not change needs no
    recomposing, so rendering over the last output gives what rendering afresh gives."""
    small_record(project)
    out = project.root / "record" / "pages"
    verified = ClaimStatus("THEORY-1", "verified", verdict())

    def edit(entry_id: str, old: str, new: str) -> None:
        path = project.path(entry_id)
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new), encoding="utf-8")

    edits = [
        lambda: None,
        lambda: project.add("THEORY-99", "statement: Now in the record."),  # a dangling mention resolves
        lambda: edit("NOTE-1", "Its claim is THEORY-1.", "Its claim, THEORY-1, is bold."),  # a quoted sentence
        lambda: edit("LIT-1", "See NOTE-1.", "See NOTE-1. THEORY-1 with THEORY-98 extends it."),
        lambda: project.add("THEORY-98", "statement: The extension."),  # an id in a quoted sentence resolves
        lambda: edit("THEORY-1", "title: The claim", "title: The claim | renamed"),  # a neighbour's title
        lambda: project.path("THEORY-2").unlink(),  # a backlink goes
        lambda: None,  # the claim is verified now (below)
    ]
    for step, change in enumerate(edits):
        change()
        record = open_project(root=project.root)
        states = statuses(record, THEORY_1=verified) if step == len(edits) - 1 else statuses(record)
        render(record, statuses=states)
        fresh = render_site(record, states, out)
        written = {rel: data for rel, data in _files(out).items() if rel != MANIFEST}
        assert written == fresh, f"after edit {step}"


def test_figures_are_copied_into_the_output_folder(project: ProjectBuilder) -> None:
    record = small_record(project)
    figure = project.root / "record" / "verdicts" / "figures" / "THEORY-1" / "exact" / "loss.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"\x89PNG\r\n\x1a\n fake")
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=["record/verdicts/figures/THEORY-1/exact/loss.png",
                                                                   "../../etc/passwd"]))
    out = project.root / "site"
    report = render(record, out, statuses=statuses(record, THEORY_1=status), check=True)
    assert (out / "figures" / "THEORY-1" / "exact" / "loss.png").read_bytes() == b"\x89PNG\r\n\x1a\n fake"
    assert report.broken == []
    manifest = (out / MANIFEST).read_text(encoding="utf-8")
    assert '\n  "figures/THEORY-1/exact/loss.png",\n' in manifest  # one line per file
    assert len(manifest.splitlines()) == len(json.loads(manifest)["files"]) + 5


@pytest.mark.parametrize("where", [".", "record", "record/theory", "record/verdicts", "checks", ".."])
def test_refuses_output_folders_that_hold_the_record(project: ProjectBuilder, where: str) -> None:
    record = small_record(project)
    with pytest.raises(RenderError):
        render(record, project.root / where, statuses=statuses(record))


def test_damaged_manifest_never_deletes_outside_the_folder(project: ProjectBuilder, tmp_path: Path) -> None:
    record = small_record(project)
    out = project.root / "pages"
    out.mkdir()
    victim = project.root / "keep.txt"
    victim.write_text("keep", encoding="utf-8")
    (out / MANIFEST).write_text('{"files": {"../keep.txt": {"key": "x"}, "/etc/hostname": {}}}', encoding="utf-8")
    render(record, out, statuses=statuses(record))
    assert victim.read_text(encoding="utf-8") == "keep"


def test_files_recordtool_did_not_write_are_never_written_over(project: ProjectBuilder, tmp_path: Path) -> None:
    """A folder given to render may hold files of its own: those in the way of a page are
    named and nothing is written; those beside the pages stay as they are, through later
    renders (an entry deleted removes only its page), and a file placed where a new entry's
    page will go is never written over."""
    record = small_record(project)
    out = tmp_path / "docs"
    (out / "kinds").mkdir(parents=True)
    mine = {"index.md": b"my own index", "NOTE-1.md": b"mine", "kinds/note.md": b"k", "README.md": b"readme",
            ".git/config": b"[core]"}
    for rel, data in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    with pytest.raises(RenderError) as refused:
        render(record, out, statuses=statuses(record))
    assert str(refused.value).startswith(f"{out} holds 3 files that recordtool did not write and would write over: "
                                         "NOTE-1.md, index.md, kinds/note.md; move them away, or render into a folder")
    assert _files(out) == mine  # nothing written, not even a manifest
    for rel in ("index.md", "NOTE-1.md", "kinds/note.md"):
        (out / rel).unlink()
    render(record, out, statuses=statuses(record))
    assert {rel: _files(out)[rel] for rel in ("README.md", ".git/config")} == {"README.md": b"readme",
                                                                            ".git/config": b"[core]"}
    (out / "NOTE-7.md").write_bytes(b"my note on NOTE-7")  # where NOTE-7's page will go
    project.add("NOTE-7", "title: Seventh\n")
    project.path("NOTE-1").unlink()
    record = open_project(root=project.root)
    with pytest.raises(RenderError, match=r"holds 1 file that recordtool did not write and would write over: NOTE-7\.md;"):
        render(record, out, statuses=statuses(record))
    (out / "NOTE-7.md").unlink()
    render(record, out, statuses=statuses(record))
    files = _files(out)
    assert "NOTE-1.md" not in files and files["README.md"] == b"readme" and files[".git/config"] == b"[core]"


def test_a_render_stopped_half_way_is_finished_by_the_next(project: ProjectBuilder, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages a render writes for the first time are listed in the manifest before any is
    written: stopped half-way (Ctrl-C) they are the next render's own, which finishes the job
    (and refuses a folder whose manifest is gone)."""
    import recordtool.render.write as write

    record = small_record(project)
    out = tmp_path / "pages"
    real, calls = write.replace_file, []

    def stop_after_three(path: str, data: bytes) -> list[int]:
        calls.append(path)
        if len(calls) > 3:
            raise KeyboardInterrupt
        return real(path, data)

    monkeypatch.setattr(write, "replace_file", stop_after_three)
    with pytest.raises(KeyboardInterrupt):
        render(record, out, statuses=statuses(record), jobs=1)
    monkeypatch.setattr(write, "replace_file", real)
    assert len([rel for rel in _files(out) if rel != MANIFEST]) == 3
    render(record, out, statuses=statuses(record), jobs=1)
    cold = tmp_path / "cold"
    render(record, cold, statuses=statuses(record), jobs=1)
    pages = {rel: data for rel, data in _files(out).items() if rel != MANIFEST}
    assert pages == {rel: data for rel, data in _files(cold).items() if rel != MANIFEST}
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert sorted(listed) == sorted(pages)
    (out / MANIFEST).unlink()
    with pytest.raises(RenderError, match=r"holds 12 files that .* and 7 more; .* is gone: delete them, and render again"):
        render(record, out, statuses=statuses(record), jobs=1)


def test_class_6_a_figure_named_but_missing_is_neither_linked_nor_listed(project: ProjectBuilder,
                                                                          tmp_path: Path) -> None:
    """A figure a verdict names is listed ahead as to be written; missing, it is not written,
    the claim's page does not link it, and the manifest on disk is the one that lists what was
    written (with no line for it)."""
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=["record/verdicts/figures/THEORY-1/exact/gone.png"]))
    out = tmp_path / "pages"
    for _ in range(3):
        report = render(record, out, statuses=statuses(record, THEORY_1=status))
        assert report.missing == ["record/verdicts/figures/THEORY-1/exact/gone.png"]
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
        assert "figures/THEORY-1/exact/gone.png" not in listed
        page = (out / "THEORY-1.md").read_text(encoding="utf-8")
        assert "](figures/THEORY-1/exact/gone.png)" not in page
        assert ("Figure `record/verdicts/figures/THEORY-1/exact/gone.png` is named by the verdict but is not a "
                "file there; it is not shown.") in page


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("jobs", [2, 3])
def test_pages_written_by_a_pool_are_the_same(project: ProjectBuilder, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """Pages composed by workers forked from this process: the same pages and manifest as one
    process writes."""
    import recordtool.render.write as write

    record = small_record(project)
    out = tmp_path / "pages"
    serial = render(record, out, statuses=statuses(record), jobs=1)
    expected = _files(out)
    shutil.rmtree(out)
    share_with_a_pool(monkeypatch, write, forked=True)
    writer = EveryWorker(write._put, jobs, tmp_path / "calls")
    monkeypatch.setattr(write, "_put", writer)
    pools = count_pools(monkeypatch)
    shared = render(record, out, statuses=statuses(record), jobs=jobs)
    assert pools == [1]
    assert len(writer.pids()) == jobs + 1  # every process wrote pages: the workers and this one (the index pages)
    assert shared.written == serial.written and len(shared.written) == 12
    assert _files(out) == expected  # pages and manifest alike
    assert no_children_left()
    again = render(record, out, statuses=statuses(record), jobs=jobs)
    assert (again.written, again.unchanged) == ([], 12)


def test_a_failing_worker_costs_nothing(project: ProjectBuilder, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import recordtool.parallel as parallel
    import recordtool.render.write as write

    record = small_record(project)
    out = tmp_path / "pages"
    render(record, out, statuses=statuses(record))
    expected = _files(out)
    shutil.rmtree(out)
    parent = os.getpid()
    real_put = write._put

    def put_failing_in_child(*args: object, **kwargs: object) -> write.Put:
        if os.getpid() != parent:
            raise OSError("disk full")
        return real_put(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    writer = EveryWorker(put_failing_in_child, 2, tmp_path / "calls")
    monkeypatch.setattr(write, "_put", writer)
    result = render(record, out, statuses=statuses(record), jobs=2)
    assert len(writer.pids()) >= 2  # a worker tried to write pages, and failed; this process did
    assert len(result.written) == 12
    assert _files(out) == expected


def _composing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries whose page each later render composes, in the order it composes them."""
    import recordtool.render.page as page

    composed: list[str] = []
    real = page.render_entry
    monkeypatch.setattr(page, "render_entry", lambda ctx, entry_id: composed.append(entry_id) or real(ctx, entry_id))
    return composed


def test_a_new_version_of_a_page_shaping_package_recomposes_pages(project: ProjectBuilder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version of recordtool or of a package that shapes pages: every entry's page is
    composed again (and only those whose bytes changed are written); the committed manifest
    does not name the version, so it is the same bytes."""
    from recordtool import store as snapshot

    record = small_record(project)
    render(record, statuses=statuses(record))
    manifest = project.root / "record" / "pages" / MANIFEST
    before = manifest.read_bytes()
    composed = _composing(monkeypatch)
    render(open_project(root=project.root), statuses=statuses(record))
    assert composed == []  # the same code: the keys hold
    newer = project.root / "site-packages" / "markdown_it_py-99.0.dist-info"  # found first on the path
    newer.mkdir(parents=True)
    (newer / "METADATA").write_text("Metadata-Version: 2.1\nName: markdown-it-py\nVersion: 99.0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(newer.parent))
    snapshot.code_version.cache_clear()
    try:
        again = render(open_project(root=project.root), statuses=statuses(record))
    finally:
        snapshot.code_version.cache_clear()
    assert (again.written, again.unchanged) == ([], 12)
    assert len(composed) == 4  # every entry's page
    assert manifest.read_bytes() == before


def test_a_fresh_clone_composes_every_page_and_changes_no_file(project: ProjectBuilder,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages and manifest committed, the local cache folder not: no key is kept, so every
    page is composed, and none is written."""
    record = small_record(project)
    render(record, statuses=statuses(record))
    pages = project.root / "record" / "pages"
    before = _files(pages)
    shutil.rmtree(project.root / ".recordtool-cache")
    composed = _composing(monkeypatch)
    again = render(open_project(root=project.root), statuses=statuses(record))
    assert (again.written, again.removed, len(composed)) == ([], [], 4)
    assert _files(pages) == before


def test_output_is_byte_identical_across_processes(project: ProjectBuilder,
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """Two renders in fresh processes with different hash seeds (so a set's order, say,
    cannot leak into a page) write the same bytes."""
    import subprocess
    import sys

    small_record(project)
    outs = []
    for seed in ("1", "2"):
        out = tmp_path_factory.mktemp("pages") / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "recordtool", "render", "--root", str(project.root), "-o", str(out)],
                       env=env, check=True, capture_output=True)
        outs.append({k: v for k, v in _files(out).items() if not k.endswith("snapshot.json")})
    assert "THEORY-1.md" in outs[0] and outs[0] == outs[1]


def test_output_inside_the_project_is_byte_identical_across_processes(project: ProjectBuilder, tmp_path: Path) -> None:
    """As above, into a folder inside the project (whose path the pages' keys name): the
    manifest too is the same from one render to the next, and into a second folder of the
    same depth the pages are the same bytes (their keys differ: they name the folder)."""
    import subprocess
    import sys

    small_record(project)
    runs = []
    for seed, name in (("1", "site"), ("2", "site"), ("3", "other")):
        out = project.root / name
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "recordtool", "render", "--root", str(project.root), "-o", name],
                       env=env, check=True, capture_output=True, cwd=project.root)
        runs.append({k: v for k, v in _files(out).items() if not k.endswith("snapshot.json")})
    assert "THEORY-1.md" in runs[0] and MANIFEST in runs[0] and runs[0] == runs[1]
    pages = [{k: v for k, v in run.items() if k != MANIFEST} for run in runs]
    assert pages[2] == pages[0]


def test_a_small_edit_starts_no_pool(project: ProjectBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which pages changed is decided in this process: a pool is started for many pages to
    compose, not for the few a small edit changes."""
    import recordtool.parallel as parallel

    record = small_record(project)
    monkeypatch.setattr(parallel, "MIN_ITEMS", 3)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    pools = count_pools(monkeypatch)
    out = tmp_path / "pages"
    assert len(render(record, out, statuses=statuses(record), jobs=2).written) == 12
    assert pools == [1]  # every page to compose: a pool
    path = project.path("THEORY-2")
    path.write_text(path.read_text(encoding="utf-8") + "body: A new body.\n", encoding="utf-8")
    record = open_project(root=project.root)
    pools.clear()  # (reading the record may start one)
    assert render(record, out, statuses=statuses(record), jobs=2).written == ["THEORY-2.md"]
    assert pools == []  # one page to compose: none
    assert no_children_left()


def test_a_figure_is_written_again_only_when_its_source_changed(project: ProjectBuilder) -> None:
    """An unchanged figure is left as it is; a figure rewritten is copied again."""
    record = small_record(project)
    figure = project.root / "record" / "verdicts" / "figures" / "THEORY-1" / "exact" / "loss.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"\x89PNG\r\n\x1a\n before")
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=["record/verdicts/figures/THEORY-1/exact/loss.png"]))
    out = project.root / "record" / "pages"
    first = render(record, statuses=statuses(record, THEORY_1=status))
    assert "figures/THEORY-1/exact/loss.png" in first.written
    again = render(record, statuses=statuses(record, THEORY_1=status))
    assert again.written == []
    figure.write_bytes(b"\x89PNG\r\n\x1a\n after!")
    third = render(record, statuses=statuses(record, THEORY_1=status))
    assert third.written == ["figures/THEORY-1/exact/loss.png"]
    assert (out / "figures" / "THEORY-1" / "exact" / "loss.png").read_bytes() == b"\x89PNG\r\n\x1a\n after!"
