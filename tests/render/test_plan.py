"""Page keys: a page is composed again exactly when what it shows may have changed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import recordtool.render.index as index
from recordtool import parallel
from recordtool.record.project import open_project
from recordtool.render import plan
from recordtool.render.site import render
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses

if TYPE_CHECKING:
    from recordtool.render.sitemap import Context

INDEX_PAGES = ["graph.md", "index.md", "kinds/literature.md", "kinds/note.md", "kinds/theory.md", "tags/alpha.md",
               "tags/beta.md", "wanted.md"]


def _edit(project: ProjectBuilder, entry_id: str, old: str, new: str) -> list[str]:
    """Replace ``old`` with ``new`` in an entry, render, and give the pages composed again."""
    path = project.path(entry_id)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    record = open_project(root=project.root)
    report = render(record, statuses=statuses(record))
    return sorted(report.written)


def test_a_body_edit_recomposes_no_index_page(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    record = small_record(project)
    render(record, statuses=statuses(record))
    composed: list[int] = []
    real = index.index_pages
    monkeypatch.setattr(index, "index_pages", lambda ctx: composed.append(1) or real(ctx))
    written = _edit(project, "LIT-1", "The paper. See NOTE-1.", "The paper. See NOTE-1 first.")
    assert composed == []
    assert written == ["LIT-1.md", "NOTE-1.md"]  # NOTE-1 quotes the sentence that mentions it


def test_an_edit_of_prose_that_mentions_nothing_composes_the_entrys_own_page_only(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A neighbour's page shows of an entry its title, state, citations and mentions
    (``plan.shown_of``), not the rest of its prose: an edit there composes the entry's own
    page, not its neighbours'; an edit of a sentence that mentions an id composes them all
    (the entry's mentions are part of what they are known by), and the one that quotes it changes."""
    from recordtool.render import page

    small_record(project)

    def render_composing(entry_id: str = "", old: str = "", new: str = "") -> tuple[list[str], list[str]]:
        if entry_id:
            path = project.path(entry_id)
            path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        record = open_project(root=project.root, cache=True)
        composed.clear()
        report = render(record, statuses=statuses(record))
        return sorted(composed), sorted(report.written)

    composed: list[str] = []
    real = page.render_entry
    monkeypatch.setattr(page, "render_entry", lambda ctx, entry_id: composed.append(entry_id) or real(ctx, entry_id))
    render_composing()
    assert render_composing("NOTE-1", "`THEORY-2` in code.", "`THEORY-2` in a code span.") == (["NOTE-1"], ["NOTE-1.md"])
    # LIT-1 and THEORY-1 are its neighbours; THEORY-1's page quotes the sentence
    assert render_composing("NOTE-1", "Its claim is THEORY-1.", "Its main claim is THEORY-1.") == (
        ["LIT-1", "NOTE-1", "THEORY-1"], ["NOTE-1.md", "THEORY-1.md"])
    assert render_composing() == ([], [])


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


def test_each_index_page_is_composed_when_its_own_key_changes(project: ProjectBuilder,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kind's and tag's page has a key of its own (``index.index_keys``); ``graph.md`` is
    summarised by tag here (``WHOLE_MAX`` lowered): it shows no title."""
    from recordtool.render import mermaid

    monkeypatch.setattr(mermaid, "WHOLE_MAX", 2)
    record = small_record(project)
    render(record, statuses=statuses(record))
    composed: list[str] = []
    for name in ("dashboard", "wanted", "graph_page", "_kind_page", "_tag_page"):
        real = getattr(index, name)
        monkeypatch.setattr(index, name, lambda ctx, *args, name=name, real=real: composed.append(
            " ".join([name, *args])) or real(ctx, *args))
    # the sentence the wanted page quotes: that page alone
    written = _edit(project, "THEORY-1", "THEORY-99 would extend it", "THEORY-99 would surely extend it")
    assert composed == ["wanted"] and "wanted.md" in written
    composed.clear()
    # a new id mentioned but not in the record: the dashboard counts them too
    _edit(project, "THEORY-1", "THEORY-99 would surely", "THEORY-98 and THEORY-99 would surely")
    assert sorted(composed) == ["dashboard", "wanted"]
    composed.clear()
    # a paper's title: the pages that list it (its kind's and its tag's); not the dashboard (it
    # lists claims)
    _edit(project, "LIT-1", "title: A paper\n", "title: A paper, renamed\n")
    assert sorted(composed) == ["_kind_page literature", "_tag_page alpha"]
    composed.clear()
    # a claim's title: the dashboard lists it too; its first tag: the graph
    _edit(project, "THEORY-1", "title: The claim", "title: The claim, renamed\ntags: [beta]")
    assert sorted(composed) == ["_kind_page theory", "_tag_page beta", "dashboard", "graph_page"]
    composed.clear()
    # a note's status: its listings
    _edit(project, "NOTE-1", "title: Notes on the paper", "title: Notes on the paper\nstatus: draft")
    assert sorted(composed) == ["_kind_page note", "_tag_page alpha", "_tag_page beta"]
    composed.clear()
    # a body: none
    _edit(project, "NOTE-1", "Read LIT-1 in full.", "Read LIT-1 in full, twice.")
    assert composed == []


def test_a_graph_drawn_node_by_node_is_composed_again_when_a_node_changes(project: ProjectBuilder,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to ``WHOLE_MAX`` nodes ``graph.md`` shows each node's title: its key follows each
    node's file (a body edit of a node composes it again), not the files of other entries."""
    record = small_record(project)
    render(record, statuses=statuses(record))
    composed: list[str] = []
    real = index.graph_page
    monkeypatch.setattr(index, "graph_page", lambda ctx: composed.append("graph") or real(ctx))
    assert "graph.md" in _edit(project, "LIT-1", "title: A paper\n", "title: A paper, renamed\n")
    assert composed == ["graph"]
    composed.clear()
    _edit(project, "NOTE-1", "Read LIT-1 in full.", "Read LIT-1 in full, twice.")  # cited by no claim
    assert composed == []
    _edit(project, "LIT-1", "The paper. See NOTE-1.", "The paper. See NOTE-1 first.")  # a node
    assert composed == ["graph"]


def test_a_summarised_graph_is_composed_again_only_when_what_it_draws_changes(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``WHOLE_MAX`` nodes ``graph.md`` counts claims under their first tag and shows no
    title (``index.graph_key``): a title or a statement leaves it as it is; a claim's first tag
    or a citation (to another tag's claim, or to another kind of entry) changes it."""
    from recordtool.render import mermaid

    monkeypatch.setattr(mermaid, "WHOLE_MAX", 2)
    record = small_record(project)
    render(record, statuses=statuses(record))
    composed: list[str] = []
    real = index.graph_page
    monkeypatch.setattr(index, "graph_page", lambda ctx: composed.append("graph") or real(ctx))
    assert "graph.md" not in _edit(project, "THEORY-1", "title: The claim", "title: The claim, renamed")
    assert "graph.md" not in _edit(project, "THEORY-2", "statement: A second", "statement: Another")
    assert composed == []
    steps = [("THEORY-1", "title: The claim, renamed", "title: The claim\ntags: [gamma, alpha]"),
             ("THEORY-1", "tags: [gamma, alpha]", "tags: [alpha, gamma]"),  # the first tag counts
             ("THEORY-2", "cites: [{id: THEORY-1, as: uses}]", "cites: [{id: LIT-1, as: uses}]"),
             ("THEORY-2", "cites: [{id: LIT-1, as: uses}]", "cites: [{id: LIT-1, as: uses}, {id: NOTE-1, as: uses}]")]
    for entry_id, old, new in steps:
        composed.clear()
        assert "graph.md" in _edit(project, entry_id, old, new), new
        assert composed == ["graph"]


def test_kept_keys_keep_watchers_as_strings_and_read_them_back_as_sets() -> None:
    kept = plan.KeptKeys("shared", faces={"A-1": "face", "B-2": "face", "odd\0id": "face"},
                         keys={"A-1": "k", "B-2": "k", "C-3": "k"}, fresh=False)
    kept.learn("A-1", "k1", {"B-2", "X-9"})
    kept.learn("B-2", "k2", {"X-9"})
    kept.learn("odd\0id", "k3", {"Y-9"})
    shared, faces, said, keys, watchers, listings, shown = kept.plain()
    assert keys == {"A-1": "k1", "B-2": "k2", "odd\0id": "k3"}  # C-3 is gone
    assert watchers["B-2"] == "A-1" and isinstance(watchers["X-9"], str)
    assert watchers["Y-9"] == {"odd\0id"}  # an id holding the separator stays in a set
    back = plan.KeptKeys.from_plain((shared, faces, said, keys, watchers, listings, shown))
    assert back is not None and not back.changed
    assert back.watching_of("X-9") == {"A-1", "B-2"} and back.watching_of("Y-9") == {"odd\0id"}
    assert back.watching_of("B-2") == {"A-1"} and back.watching_of("nobody") == set()
    back.learn("C-3", "k3", {"B-2"})  # added to what was kept as a string
    assert back.watching_of("B-2") == {"A-1", "C-3"}
    assert plan.KeptKeys.from_plain((shared, faces, said, keys, {"B-2": ["A-1"]}, listings, shown)) is None
    assert plan.KeptKeys.from_plain((shared, faces, said, keys, watchers, listings, {"A-1": "not a hash"})) is None


def test_a_first_render_learns_watchers_as_the_strings_kept_without_a_set_per_id(project: ProjectBuilder) -> None:
    """Nothing kept from before: every entry is learned once, and each id's watchers are built
    as the string they are kept as (a set per id was the largest part of a cold render's peak);
    they name the same entries as learning them into sets does."""
    small_record(project)
    record = open_project(root=project.root)
    ctx = plan.context(record, statuses(record))
    shared = "shared"
    fresh = plan.KeptKeys(shared)
    keys = plan.entry_keys(ctx, shared, fresh)
    assert fresh.watchers and all(isinstance(w, str) for w in fresh.watchers.values())
    sets = plan.KeptKeys(shared, fresh=False)
    assert plan.entry_keys(ctx, shared, sets) == keys
    assert all(isinstance(w, set) for w in sets.watchers.values())
    assert {i: set(w.split(plan.WATCH_SEP)) for i, w in fresh.watchers.items()} == sets.watchers
    assert fresh.plain()[4] == {i: w for i, w in fresh.watchers.items()}  # kept as built
    back = plan.KeptKeys.from_plain(fresh.plain())
    assert back is not None and not back.fresh
    some = next(iter(sets.watchers))
    back.learn("NEW-1", "k", {some})  # after a render, learned into a set: an entry learned again is not repeated
    back.learn("NEW-1", "k", {some})
    assert back.watching_of(some) == sets.watchers[some] | {"NEW-1"}
    fresh.clear("other")
    assert fresh.fresh and not fresh.watchers


def _as_sets(plain: tuple[object, ...]) -> tuple[object, ...]:
    """``KeptKeys.plain`` with each id's watchers as a set (a string keeps them in any order)."""
    watchers = plain[4]
    assert isinstance(watchers, dict)
    return (*plain[:4], {i: set(w.split(plan.WATCH_SEP)) if isinstance(w, str) else w for i, w in watchers.items()},
            *plain[5:])


def test_kept_keys_are_kept_as_changes_beside_the_whole_file_and_read_back_as_they_were(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit only what changed is written (``keys-changes.bin``, against the generation
    of ``keys.bin``); read back, whole file and changes give what the render held. Once the
    changes grow large, the whole file is written again; changes made against another
    generation of it are not used."""
    record = small_record(project)
    whole, changes = plan.kept_files(record.config, plan.context(record, statuses(record)).out)
    held: list[tuple[object, ...]] = []
    real = plan.write_kept_keys

    def spy(ctx: Context, kept: plan.KeptKeys) -> None:
        held.append(_as_sets(kept.plain()))
        real(ctx, kept)

    monkeypatch.setattr(plan, "write_kept_keys", spy)

    def edit_and_read_back(entry_id: str, old: str, new: str) -> None:
        if entry_id:
            path = project.path(entry_id)
            path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        record = open_project(root=project.root, cache=True)
        render(record, statuses=statuses(record))
        back = plan.read_kept_keys(plan.context(record, statuses(record)))
        assert back is not None and _as_sets(back.plain()) == held[-1]

    edit_and_read_back("", "", "")
    first = whole.read_bytes()
    assert not changes.exists()
    edits = [("NOTE-1", "Notes on the paper", "Notes, revised"), ("LIT-1", "See NOTE-1.", "See NOTE-1 and THEORY-2."),
             ("THEORY-2", "A second claim", "The second claim")]
    for entry_id, old, new in edits:
        edit_and_read_back(entry_id, old, new)
        assert whole.read_bytes() == first and changes.is_file(), entry_id
    project.path("THEORY-1").unlink()  # ids gone
    edit_and_read_back("", "", "")
    assert whole.read_bytes() == first
    stale = changes.read_bytes()
    monkeypatch.setattr(plan, "CHANGES_MIN", 0)
    edit_and_read_back("NOTE-1", "Notes, revised", "Notes, revised twice")
    assert whole.read_bytes() != first and not changes.exists()
    changes.write_bytes(stale)  # made against the generation before: not used
    record = open_project(root=project.root, cache=True)
    back = plan.read_kept_keys(plan.context(record, statuses(record)))
    assert back is not None and _as_sets(back.plain()) == held[-1]


def test_a_claims_key_follows_what_its_page_shows_of_its_status(project: ProjectBuilder) -> None:
    """The key of a claim's page changes with its state (which its face holds), its reasons and
    its dependencies; an equal status gives the same key. Only a status that shows more than
    its state is hashed as its ``repr`` (``status_reprs``)."""
    from recordtool.verify.verdict import ClaimStatus

    small_record(project)
    record = open_project(root=project.root)
    claim = "THEORY-1"

    def key(status: ClaimStatus) -> str:
        return plan.entry_keys(plan.context(record, statuses(record, THEORY_1=status)), "shared")[claim]

    shown = [ClaimStatus(claim, "unchecked", None), ClaimStatus(claim, "stale", None),
             ClaimStatus(claim, "stale", None, reasons=["statement changed"]),
             ClaimStatus(claim, "stale", None, reasons=["checks/a.py changed"]),
             ClaimStatus(claim, "unchecked", None, depends=[("THEORY-2", "unchecked")]),
             ClaimStatus(claim, "unchecked", None, depends=[("THEORY-2", "error")])]
    keys = [key(status) for status in shown]
    assert len(set(keys)) == len(shown)
    assert key(ClaimStatus(claim, "stale", None, reasons=["statement changed"])) == keys[2]
    reprs = plan.status_reprs(plan.context(record, statuses(record, THEORY_1=shown[2])))
    assert reprs == {claim: repr(shown[2])}


def test_faces_are_hashed_as_before_and_compared_whole(project: ProjectBuilder) -> None:
    """A face (an entry's file, its hash and its state) enters the page keys as the text it
    always did; ``differ`` gives the ids whose value changed, came or went, and None when a
    value cannot be compared."""
    small_record(project)
    record = open_project(root=project.root)
    ctx = plan.context(record, statuses(record))
    faces = plan.face_of_each(record.record.places, ctx.states)
    assert list(faces) == list(record.record.places)
    for i, places in record.record.places.items():
        assert plan.face_text(i, faces[i]) == f"{i} {places.path} {places.digest} {ctx.states.get(i)}"
    assert plan.differ({"A": ("x", None), "B": 1, "C": 2}, {"A": ("x", None), "B": 3, "D": 4}) == {"B", "C", "D"}
    assert plan.differ({"A": 1}, {"A": 1}) == set()
    assert plan.differ({"A": ("x",)}, {"A": ["x"]}) is None


def test_the_files_the_rows_list_are_named_as_each_one_alone(project: ProjectBuilder) -> None:
    """``listed_files`` names each entry's file as ``listed_file`` does, in the order asked for."""
    small_record(project)
    places = open_project(root=project.root).record.places
    ids = sorted(places, reverse=True)
    assert plan.listed_files(places, ids) == [plan.listed_file(places[i]) for i in ids]
    assert plan.listed_files(places, ids)[0] == f"{places[ids[0]].path} {places[ids[0]].digest}"


def test_each_output_folder_keeps_its_own_page_keys(project: ProjectBuilder, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A render into another folder (``render -o``) keeps its page keys apart: back in the
    usual folder, an edit works out the keys that may have changed only, not every key. The
    keys of the last ``KEPT_FOLDERS`` folders rendered into are kept (with the graph page's),
    the older ones removed: a folder's last render is its latest file written, which after the
    first is mostly its changes file."""
    small_record(project)
    worked: list[str] = []
    real = plan._neighbourhood

    def counted(ctx: Context, entry_id: str) -> tuple[set[str], set[str]]:
        worked.append(entry_id)
        return real(ctx, entry_id)

    monkeypatch.setattr(plan, "_neighbourhood", counted)

    def render_into(out: Path | None) -> list[str]:
        worked.clear()
        record = open_project(root=project.root, cache=True)
        render(record, out, statuses=statuses(record))
        return sorted(worked)

    folder = project.root / ".recordtool-cache" / plan.KEPT_FOLDER
    folder.mkdir(parents=True)
    for name in plan.BEFORE_FOLDERS:  # (left by a version that kept one set for every folder: removed)
        (folder / name).write_bytes(b"old keys")
    everything = render_into(None)
    assert len(everything) == 4
    assert not any((folder / name).exists() for name in plan.BEFORE_FOLDERS)
    others = [tmp_path / f"other-{n}" for n in range(3)]
    assert render_into(others[0]) == everything  # (a folder of its own: every key the first time)
    _edit(project, "THEORY-2", "A second claim", "The second claim")
    assert render_into(others[0]) == ["THEORY-1", "THEORY-2"]  # (THEORY-2 and the claim it uses: not every key)
    assert render_into(None) == ["THEORY-1", "THEORY-2"]  # (its whole file older than others[0]'s, its changes newer)

    def whole_files() -> list[Path]:
        return sorted(p for p in folder.glob("keys-*.bin") if not p.name.endswith("-changes.bin"))

    assert len(whole_files()) == 2
    render_into(others[1])
    render_into(others[2])  # a fourth folder: the keys of the one rendered into longest ago (others[0]) go
    record = open_project(root=project.root)
    usual, first = (plan.context(record, {}, out).out for out in (None, others[0]))
    kept = whole_files()
    assert len(kept) == plan.KEPT_FOLDERS
    assert plan.kept_files(record.config, usual)[0] in kept and plan.kept_files(record.config, first)[0] not in kept
    assert not plan.kept_files(record.config, first)[1].exists()
    graph_keys = sorted(folder.glob("graph-key-*.bin"))
    assert len(graph_keys) == plan.KEPT_FOLDERS and plan.graph_key_file(record.config, first) not in graph_keys
    _edit(project, "THEORY-2", "The second claim", "The 2nd claim")
    assert render_into(None) == ["THEORY-1", "THEORY-2"]  # (its keys kept)
    assert render_into(others[0]) == everything  # (its keys were removed: every key again)


def test_the_keys_are_worked_out_in_steps_and_a_key_asked_for_midway_finishes_them(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers composing pages, the keys are worked out between handing chunks to them, in
    steps of about ``parallel.STEP_SECONDS`` (all at once, the keys of 10,000 entries left a
    worker waiting 0.5 s). A key asked for midway finishes the work, once: the same keys, and
    the same kept for the next render, as all at once."""
    small_record(project)
    record = open_project(root=project.root, cache=True)
    monkeypatch.setattr(parallel, "STEP_SECONDS", 0.0)  # a step for each entry and index page

    def planned() -> tuple[plan.Plan, Context]:
        ctx = plan.context(record, statuses(record))
        for path in plan.kept_files(record.config, ctx.out):  # each plan starts from nothing kept
            path.unlink(missing_ok=True)
        return plan.plan_site(ctx), ctx

    whole, ctx = planned()
    keys = {page: whole.key(page) for page in whole.pages}
    assert sum(1 for _step in whole.work_out_keys()) == 0  # done: nothing left
    kept = plan.read_kept_keys(ctx)
    assert kept is not None and kept.keys
    assert len(record.record.entries) >= 2
    stepped, ctx = planned()
    assert sum(1 for _step in stepped.work_out_keys()) == len(record.record.entries) + len(stepped.indexes)
    assert {page: stepped.key(page) for page in stepped.pages} == keys
    midway, ctx = planned()
    steps = midway.work_out_keys()
    next(steps)
    assert {page: midway.key(page) for page in midway.pages} == keys
    assert list(steps) == []  # finished by the key asked for
    again = plan.read_kept_keys(ctx)
    assert again is not None and again.plain() == kept.plain()
