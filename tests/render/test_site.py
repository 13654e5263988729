"""The whole site: byte-identical across runs, incremental, atomic, inside its folder."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recordtool.record.project import open_project
from recordtool.render.linkcheck import check_pages
from recordtool.render.manifest import MANIFEST
from recordtool.render.plan import render_site
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
from tests.render_record import small_record, statuses, verdict


def test_site_layout_and_every_link_resolves(project: ProjectBuilder) -> None:
    record = small_record(project)
    site = render_site(record, statuses(record))
    assert sorted(site.pages) == [
        "LIT-1.md", "NOTE-1.md", "THEORY-1.md", "THEORY-2.md", "graph.md", "index.md",
        "kinds/literature.md", "kinds/note.md", "kinds/theory.md",
        "tags/alpha.md", "tags/beta.md", "wanted.md"]
    assert check_pages(site.pages, lambda path: False) == []


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
        assert written == fresh.pages, f"after edit {step}"


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
    assert '\n "figures/THEORY-1/exact/loss.png": {"hash": ' in manifest  # one line per file
    assert len(manifest.splitlines()) == len(json.loads(manifest)["files"]) + 2


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
    assert sorted(listed) == sorted(pages) and all(written["hash"] for written in listed.values())
    (out / MANIFEST).unlink()
    with pytest.raises(RenderError, match=r"holds 12 files that .* and 7 more; .* is gone: delete them, and render again"):
        render(record, out, statuses=statuses(record), jobs=1)


def test_a_figure_named_but_missing_leaves_no_pending_line(project: ProjectBuilder, tmp_path: Path) -> None:
    """A figure a verdict names is listed ahead as to be written; missing, it is not written,
    and the manifest on disk is the one that lists what was written (with no line for it)."""
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=["record/verdicts/figures/THEORY-1/exact/gone.png"]))
    out = tmp_path / "pages"
    for _ in range(3):
        report = render(record, out, statuses=statuses(record, THEORY_1=status))
        assert report.missing == ["record/verdicts/figures/THEORY-1/exact/gone.png"]
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
        assert "figures/THEORY-1/exact/gone.png" not in listed and all(w["hash"] for w in listed.values())


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("forked", [False, True], ids=["slices", "forked"])
@pytest.mark.parametrize("jobs", [2, 3])
def test_pages_written_by_a_pool_are_the_same(project: ProjectBuilder, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, jobs: int, forked: bool) -> None:
    """Pages composed by workers given slices of the project (``parallel.map_shipped``) or
    forked from this process, holding all of it (``parallel.map_chunks``): the same pages and
    manifest as one process writes."""
    import recordtool.parallel as parallel
    import recordtool.render.write as write

    record = small_record(project)
    out = tmp_path / "pages"
    serial = render(record, out, statuses=statuses(record), jobs=1)
    expected = _files(out)
    shutil.rmtree(out)
    share_with_a_pool(monkeypatch, write, forked=forked)
    monkeypatch.setattr(parallel, "WINDOW", 1)  # a few pages: leave some for this process too
    # Workers forked, not fresh interpreters, so that they see the counting ``_put``; without
    # ``forked`` they still get their pages' slice of the project pickled and compose from it alone.
    monkeypatch.setattr(parallel, "SHIPPED", "fork")
    writer = EveryWorker(write._put, jobs, tmp_path / "calls")
    monkeypatch.setattr(write, "_put", writer)
    ways = {"shipped": 0, "forked": 0}
    real_shipped, real_forked = parallel.map_shipped, parallel.map_chunks

    def shipped(*args: Any, **kwargs: Any) -> Any:
        ways["shipped"] += 1
        return real_shipped(*args, **kwargs)

    def by_fork(*args: Any, **kwargs: Any) -> Any:
        ways["forked"] += 1
        return real_forked(*args, **kwargs)

    monkeypatch.setattr(parallel, "map_shipped", shipped)
    monkeypatch.setattr(parallel, "map_chunks", by_fork)
    shared = render(record, out, statuses=statuses(record), jobs=jobs)
    assert ways == ({"shipped": 0, "forked": 1} if forked else {"shipped": 1, "forked": 0})
    assert len(writer.pids()) == jobs  # every process wrote pages: jobs - 1 workers and this one
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

    def put_failing_in_child(*args: object, **kwargs: object) -> tuple[list[int], bool]:
        if os.getpid() != parent:
            raise OSError("disk full")
        return real_put(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write, "PARALLEL_MIN", 1)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    monkeypatch.setattr(parallel, "SHIPPED", "fork")  # workers that see the failing ``_put``
    writer = EveryWorker(put_failing_in_child, 2, tmp_path / "calls")
    monkeypatch.setattr(write, "_put", writer)
    result = render(record, out, statuses=statuses(record), jobs=2)
    assert len(writer.pids()) == 2  # a worker tried to write pages, and failed; this process did
    assert len(result.written) == 12
    assert _files(out) == expected


def _composing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages each later render composes, in the order it composes them."""
    import recordtool.render.plan as plan

    composed: list[str] = []
    real = plan.plan_site

    def counting(ctx):  # type: ignore[no-untyped-def]
        made = real(ctx)
        compose = made.compose
        made.compose = lambda path: composed.append(path) or compose(path)
        return made

    monkeypatch.setattr("recordtool.render.site.plan_site", counting)
    return composed


@pytest.mark.parametrize("jobs", [2, 3])
def test_pages_composed_by_fresh_interpreters_are_the_same(project: ProjectBuilder, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """The workers that compose pages are fresh interpreters (``parallel.SHIPPED``) given their
    pages' slice of the project: the same pages and manifest as one process writes."""
    import recordtool.render.write as write

    record = small_record(project)
    out = tmp_path / "pages"
    states = statuses(record, THEORY_1=ClaimStatus("THEORY-1", "verified", verdict()))
    serial = render(record, out, statuses=states, jobs=1)
    expected = _files(out)
    shutil.rmtree(out)
    share_with_a_pool(monkeypatch, write)
    pools = count_pools(monkeypatch)
    shared = render(record, out, statuses=states, jobs=jobs)
    assert pools == [1]
    assert shared.written == serial.written and len(shared.written) == 12
    assert _files(out) == expected
    assert no_children_left()


def test_a_new_version_of_a_page_shaping_package_recomposes_pages(project: ProjectBuilder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version of recordtool or of a package that shapes pages: every page is composed
    again (and only those whose bytes changed are written); the committed manifest's keys do
    not name the version, so the manifest is the same bytes."""
    from recordtool import snapshot

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
    assert len(composed) == 12  # every page with a key: entry and index pages alike
    assert manifest.read_bytes() == before


def test_a_fresh_clone_composes_every_page_and_changes_no_file(project: ProjectBuilder,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages and manifest committed, the local cache folder not: the keys are not trusted
    (nothing says which code made them), so every page is composed, and none is written."""
    record = small_record(project)
    render(record, statuses=statuses(record))
    pages = project.root / "record" / "pages"
    before = _files(pages)
    shutil.rmtree(project.root / ".recordtool-cache")
    composed = _composing(monkeypatch)
    again = render(open_project(root=project.root), statuses=statuses(record))
    assert (again.written, again.removed, len(composed)) == ([], [], 12)
    assert _files(pages) == before


def test_an_interrupted_render_leaves_its_keys_untrusted(project: ProjectBuilder,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A render stopped half-way (Ctrl-C) may have written pages its manifest does not list
    yet: the next render composes every page instead of trusting the keys."""
    import recordtool.render.site as site

    record = small_record(project)
    render(record, statuses=statuses(record))

    def stop(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(site, "write_site", stop)
        with pytest.raises(KeyboardInterrupt):
            render(open_project(root=project.root), statuses=statuses(record))
    composed = _composing(monkeypatch)
    again = render(open_project(root=project.root), statuses=statuses(record))
    assert (again.written, len(composed)) == ([], 12)
    composed.clear()
    render(open_project(root=project.root), statuses=statuses(record))
    assert composed == []  # finished, so trusted again


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
    import recordtool.render.write as write

    record = small_record(project)
    monkeypatch.setattr(write, "PARALLEL_MIN", 5)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    pools = count_pools(monkeypatch)
    out = tmp_path / "pages"
    assert len(render(record, out, statuses=statuses(record), jobs=2).written) == 12
    assert pools == [1]  # every page to compose: a pool
    path = project.path("THEORY-2")
    path.write_text(path.read_text(encoding="utf-8") + "body: A new body.\n", encoding="utf-8")
    record = open_project(root=project.root)
    assert render(record, out, statuses=statuses(record), jobs=2).written == ["THEORY-2.md"]
    assert pools == [1]  # one page to compose: none
    assert no_children_left()


def test_pages_are_planned_with_the_collector_paused(project: ProjectBuilder, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The statuses and, when the last render's keys are trusted, every page's key are worked
    out with the cyclic collector paused (they are small objects for every entry, which it
    would go over again and again); it is on again to write the pages, and after."""
    import gc

    import recordtool.render.plan as plan_module
    import recordtool.render.site as site_module
    import recordtool.verify.status as status_module

    seen: list[tuple[str, bool]] = []

    def spy(name: str, real: Any) -> Any:
        def called(*args: Any, **kwargs: Any) -> Any:
            seen.append((name, gc.isenabled()))
            return real(*args, **kwargs)
        return called

    monkeypatch.setattr(plan_module, "entry_keys_in_steps", spy("keys", plan_module.entry_keys_in_steps))
    monkeypatch.setattr(site_module, "write_site", spy("write", site_module.write_site))
    monkeypatch.setattr(status_module, "assess", spy("assess", status_module.assess))
    assert gc.isenabled()
    record = small_record(project)
    out = tmp_path / "pages"
    render(record, out)  # the first: no keys to trust, each worked out as the pages are written
    assert seen[0] == ("assess", False) and ("write", True) in seen
    path = project.path("THEORY-2")
    path.write_text(path.read_text(encoding="utf-8") + "body: A new body.\n", encoding="utf-8")
    seen.clear()
    record = open_project(root=project.root)
    assert render(record, out).written == ["THEORY-2.md"]
    assert seen == [("assess", False), ("keys", False), ("write", True)]
    assert gc.isenabled()


def test_with_workers_the_index_pages_are_the_last_chunk(project: ProjectBuilder, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The index pages (composed together, from the whole project: a worker holding slices
    cannot) are one chunk, the last: ``parallel.map_shipped``'s caller does chunks from the
    back while the workers start from the front, so it composes them while the workers compose
    entry pages, not after them while the workers wait."""
    import recordtool.parallel as parallel
    import recordtool.render.write as write

    record = small_record(project)
    share_with_a_pool(monkeypatch, write)
    given: list[list[list[str]]] = []
    real = parallel.map_shipped

    def map_shipped(*args: object, **kwargs: object) -> object:
        given.append([list(chunk) for chunk in args[4]])  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write.parallel, "map_shipped", map_shipped)
    out = tmp_path / "pages"
    render(record, out, statuses=statuses(record), jobs=2)
    [chunks] = given
    indexes = sorted(p for p in _files(out) if not p.startswith(("THEORY-", "NOTE-", "LIT-")) and p != MANIFEST)
    assert indexes and sorted(chunks[-1]) == indexes
    assert all(not set(chunk) & set(indexes) for chunk in chunks[:-1])


@pytest.mark.parametrize(("jobs", "fails"), [(1, False), (2, False), (2, True)])
def test_the_entry_cache_left_to_render_is_written_while_it_composes_pages(
        project: ProjectBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, fails: bool) -> None:
    """A project opened with ``keep_later`` leaves writing the entry cache to render, which
    does it a shard at a time as its own work while fresh interpreters compose pages (first,
    without them), and in any case before it returns or raises (here: an output folder refused
    before any page): the next opening reads no entry file."""
    import recordtool.record.cache as cache
    import recordtool.record.load as load
    import recordtool.render.write as write

    small_record(project)
    root = project.root
    opened = open_project(root=root, cache=True, keep_later=True, jobs=jobs)
    shards = root / ".recordtool-cache" / cache.FOLDER
    assert not list(shards.glob("shard-*.bin"))  # not written yet
    share_with_a_pool(monkeypatch, write)
    steps: list[int] = []
    real = write.parallel.map_shipped

    def map_shipped(*args: Any, meanwhile: Iterable[object] = (), **kwargs: Any) -> list[Any]:
        def counted() -> Iterator[object]:
            for step in meanwhile:
                steps.append(len(list(shards.glob("shard-*.bin"))))
                yield step
        return real(*args, meanwhile=counted(), **kwargs)

    monkeypatch.setattr(write.parallel, "map_shipped", map_shipped)
    if fails:  # refused before any page: no step was taken
        with pytest.raises(RenderError):
            render(opened, root / "record", statuses=statuses(opened), jobs=jobs)
        assert steps == []
    else:
        render(opened, tmp_path / "pages", statuses=statuses(opened), jobs=jobs)
    written = len(list(shards.glob("shard-*.bin")))
    assert written == len({cache._shard(places.path) for places in opened.record.places.values()})
    assert fails or steps[:written] == list(range(1, written + 1))  # a shard written at each step
    read: list[str] = []
    monkeypatch.setattr(load, "_read_sources", lambda paths, *args: read.extend(paths) or [])
    again = open_project(root=root, cache=True)
    assert read == [] and again.record.entries == opened.record.entries
    assert no_children_left()


@pytest.mark.parametrize("forked", [True, False])
def test_figures_are_copied_as_this_processs_own_work_while_workers_compose_pages(
        project: ProjectBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    """The figures are copied a few at a time, between the pages this process hands out (not
    after every page is composed: a cold render of a verified record copies thousands), and
    what is written and reported is what one process writes and reports."""
    import recordtool.render.write as write

    record = small_record(project)
    folder = project.root / "record" / "verdicts" / "figures" / "THEORY-1" / "exact"
    folder.mkdir(parents=True)
    names = [f"f{n:02d}.png" for n in range(2 * write.FIGURES_STEP + 3)]
    for name in names:
        (folder / name).write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
    figures = [f"record/verdicts/figures/THEORY-1/exact/{name}" for name in names]
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=[*figures, "record/verdicts/figures/THEORY-1/gone.png"]))
    out = tmp_path / "pages"  # (a page's key holds its folder: both renders into the same one)
    alone = render(record, out, statuses=statuses(record, THEORY_1=status), jobs=1)
    (tmp_path / "pages").rename(tmp_path / "alone")
    share_with_a_pool(monkeypatch, write, forked=forked)
    read: list[str] = []
    real = write.read_figure
    monkeypatch.setattr(write, "read_figure", lambda root, source, rel: read.append(source) or real(root, source, rel))
    steps: list[int] = []  # the figures read by the end of each step of this process's own work
    name = "map_chunks" if forked else "map_shipped"
    pooled = getattr(write.parallel, name)

    def counted(*args: Any, meanwhile: Iterable[object] = (), **kwargs: Any) -> list[Any]:
        def each() -> Iterator[object]:
            for step in meanwhile:
                yield step
                steps.append(len(read))
        results = pooled(*args, meanwhile=each(), **kwargs)
        assert len(read) == len(figures) + 1  # all of them read before the pages' results are taken
        return results

    monkeypatch.setattr(write.parallel, name, counted)
    shared = render(record, out, statuses=statuses(record, THEORY_1=status), jobs=2)
    assert [n for n in steps if n] == [write.FIGURES_STEP, 2 * write.FIGURES_STEP]  # a step each (the rest: after)
    assert _files(out) == _files(tmp_path / "alone")
    assert (shared.written, shared.unchanged, shared.missing, shared.refused) == (
        alone.written, alone.unchanged, alone.missing, alone.refused)
    assert alone.missing == ["record/verdicts/figures/THEORY-1/gone.png"]
    assert no_children_left()


LONG_AGO = 1_600_000_000_000_000_000  # a file time far in the past: not "racy" (changed just before it was read)


def test_a_figure_as_the_last_render_found_it_is_not_read_again(project: ProjectBuilder, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A render reads a figure (checks it and hashes it) or its sidecar (its title and caption)
    only when its file is not as the last render found it (its size and time), or its copy not
    as written, or its time so recent that it may have changed unseen, or the last render's
    code was other; the other copies are kept as they are, the other titles and captions as the
    last render read them. The pages are then what a render from scratch writes."""
    import recordtool.render.figures as figures
    import recordtool.render.plan as plan
    import recordtool.render.write as write
    import recordtool.snapshot as snapshot
    from recordtool.record.config import load_config
    from recordtool.snapshot import RACY_NS
    from recordtool.verify.store import write_verdict
    from tests.corpus import invoke

    small_record(project)
    config = load_config(project.root)
    folder = config.verdicts / "figures" / "THEORY-1" / "exact"
    folder.mkdir(parents=True)
    loss, trace = folder / "loss.png", folder / "trace.png"
    step = [0]

    def put(path: Path, data: bytes | None = None, *, now: bool = False) -> None:
        if data is not None:
            path.write_bytes(data)
        if not now:  # a time of its own, long past
            step[0] += 1
            os.utime(path, ns=(LONG_AGO + step[0] * 1_000_000_000,) * 2)

    put(loss, b"\x89PNG\r\n\x1a\n" + b"L" * 40)
    put(trace, b"\x89PNG\r\n\x1a\n" + b"T" * 40)
    put(folder / "loss.png.json", b'{"title": "The loss falls"}\n')  # (trace.png has no title yet)
    write_verdict(config, verdict(figures=[config.relative(loss), config.relative(trace)]))
    put(config.verdicts / "THEORY-1.json")
    read: list[str] = []  # the figures read, and the sidecars
    real, real_sidecar = write.read_figure, figures._read

    def counted(root: Path, source: str, rel: str) -> tuple[str | None, bytes | None]:
        read.append(source.rsplit("/", 1)[-1])
        return real(root, source, rel)

    def counted_sidecar(path: str, folder: str) -> tuple[str, str]:
        read.append(path.rsplit("/", 1)[-1])
        return real_sidecar(path, folder)

    monkeypatch.setattr(write, "read_figure", counted)
    monkeypatch.setattr(figures, "_read", counted_sidecar)
    note = project.path("NOTE-1")

    def render(*, edit: bool = True) -> list[str]:
        if edit:  # (else nothing changed, and nothing is read: the pages are as the last render left them)
            put(note, note.read_bytes() + f"# {step[0]}\n".encode())
        read.clear()
        assert invoke("render", "--root", str(project.root)).code == 0
        return sorted(read)

    pages = project.root / "record" / "pages"
    page = pages / "THEORY-1.md"
    copied = pages / "figures" / "THEORY-1" / "exact"
    every = ["loss.png", "loss.png.json", "trace.png", "trace.png.json"]
    assert render() == every
    assert "The loss falls" in page.read_text(encoding="utf-8")
    assert render() == ["trace.png.json"]  # nothing changed (a sidecar that is not there is looked for each time)
    put(loss, b"\x89PNG\r\n\x1a\n" + b"M" * 40)  # rewritten: the same size, another time
    assert render(edit=False) == ["loss.png", "trace.png.json"]
    assert (copied / "loss.png").read_bytes() == loss.read_bytes()
    put(folder / "loss.png.json", b'{"title": "The loss rises"}\n')  # the same size, another time
    assert render(edit=False) == ["loss.png.json", "trace.png.json"]
    assert "The loss rises" in page.read_text(encoding="utf-8")
    put(folder / "trace.png.json", b'{"title": "A trace"}\n')
    assert render(edit=False) == ["trace.png.json"]
    assert "A trace" in page.read_text(encoding="utf-8")
    assert render() == []
    (copied / "trace.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"X" * 40)  # its copy edited by hand, the same size
    assert render(edit=False) == ["trace.png"]
    assert (copied / "trace.png").read_bytes() == trace.read_bytes()
    put(trace, b"\x89PNG\r\n\x1a\n" + b"U" * 40, now=True)  # changed just now: racy, then and the next time
    assert render(edit=False) == ["trace.png"]
    assert render() == ["trace.png"]
    put(trace)
    assert render() == ["trace.png"]  # (its time is not the one the last render saw)
    assert render() == []
    put(loss, b"\x89PNG\r\n\x1a\n" + b"N" * 40)
    monkeypatch.setattr(snapshot, "RACY_NS", 10**30)  # a render that finds every file changed just before it
    assert render(edit=False) == every
    monkeypatch.setattr(snapshot, "RACY_NS", RACY_NS)
    assert render() == every  # each racy then: it may have changed since, its time the same
    assert render() == []
    (folder / "trace.png.json").unlink()
    assert render(edit=False) == ["trace.png.json"]
    assert "A trace" not in page.read_text(encoding="utf-8")
    kept = pages / ".recordtool-snapshot.json"  # the titles and captions it keeps, damaged: read again
    data = json.loads(kept.read_text(encoding="utf-8"))
    data["captions"] = {figure: [words[0]] for figure, words in data["captions"].items()}
    kept.write_text(json.dumps(data), encoding="utf-8")
    assert render() == ["loss.png.json", "trace.png.json"]
    assert "The loss rises" in page.read_text(encoding="utf-8")
    monkeypatch.setattr(plan, "code_version", lambda: "other code")  # what the last render made, other code may not
    assert render() == every
    monkeypatch.undo()
    cold = tmp_path / "cold"
    shutil.copytree(project.root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert {rel: data for rel, data in _files(pages).items() if not rel.startswith(".recordtool-snapshot")} == \
        {rel: data for rel, data in _files(cold / "record" / "pages").items() if not rel.startswith(".recordtool-snapshot")}


def test_a_body_is_composed_from_the_parse_kept_with_its_mentions(project: ProjectBuilder, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The page of an entry whose file is as it was is composed from its body as the parse
    that found its mentions wrote it, kept in the entry cache beside them: after a title edit,
    the neighbours' pages are composed again without parsing their bodies. Another command that
    reads a few files after an edit composes their bodies too (``validate`` here); one that
    reads many does not, and a damaged scans file keeps none: those bodies are parsed for their
    pages. The pages are what a render from scratch writes."""
    import recordtool.record.load as load
    import recordtool.render.page as page
    from recordtool.record.cache import FOLDER
    from recordtool.record.config import load_config
    from tests.corpus import invoke

    small_record(project)
    config = load_config(project.root)
    bodies = {entry.body: entry_id for entry_id, entry in open_project(root=project.root).record.entries.items()
              if entry.body}
    parsed: list[str] = []  # the entries whose body a page parsed again
    real = page.block

    def counted(source: str, style: Any, tokens: Any = None, **given: Any) -> str:
        if source in bodies:
            parsed.append(bodies[source])
        return real(source, style, tokens, **given)

    monkeypatch.setattr(page, "block", counted)
    lit = project.path("LIT-1")

    def retitle(n: int) -> None:
        text = lit.read_text(encoding="utf-8")
        lit.write_text(text.replace("title: A paper", f"title: A paper, revised {n}", 1) if n == 1
                       else text.replace(f"revised {n - 1}", f"revised {n}"), encoding="utf-8")

    def render() -> list[str]:
        parsed.clear()
        done = invoke("render", "--root", str(project.root))
        assert done.code == 0, done.stderr
        return sorted(parsed)

    assert render() == []  # each body composed by the parse that found its mentions
    written = project.root / "record" / "pages" / "NOTE-1.md"
    retitle(1)
    assert render() == []  # LIT-1 read again; NOTE-1 and THEORY-1 (which cite it) from what was kept
    assert "revised 1" in written.read_text(encoding="utf-8")
    retitle(2)
    assert invoke("validate", "--root", str(project.root)).code == 0  # LIT-1 read again, its body composed
    assert render() == []
    assert "revised 2" in written.read_text(encoding="utf-8")
    retitle(3)
    few = load.EACH_FEW
    monkeypatch.setattr(load, "EACH_FEW", 0)  # as if validate read many files: no body composed
    assert invoke("validate", "--root", str(project.root)).code == 0
    assert render() == ["LIT-1"]
    monkeypatch.setattr(load, "EACH_FEW", few)
    for scans in (config.cache / FOLDER).glob("*.scans"):  # damaged: the mentions found again, no body composed
        data = bytearray(scans.read_bytes())
        data[-1] ^= 0xFF
        scans.write_bytes(bytes(data))
    retitle(4)
    assert render() == ["NOTE-1", "THEORY-1"]
    assert render() == []  # (nothing changed)
    retitle(5)
    assert render() == []  # what was found again is kept again, composed
    cold = tmp_path / "cold"
    shutil.copytree(project.root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert {rel: data for rel, data in _files(project.root / "record" / "pages").items()
            if not rel.startswith(".recordtool-snapshot")} == \
        {rel: data for rel, data in _files(cold / "record" / "pages").items() if not rel.startswith(".recordtool-snapshot")}
