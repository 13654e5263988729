"""Index pages: the dashboard, kinds, tags and the wanted entries."""

from __future__ import annotations

import shutil
from pathlib import Path

from recordtool.record.config import load_config
from recordtool.record.project import open_project
from recordtool.render.index import dashboard, index_page, index_paths, wanted
from recordtool.render.plan import context
from recordtool.verify.store import write_verdict
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.corpus import invoke
from tests.render_record import small_record, statuses, verdict


def test_dashboard_counts_per_verdict_with_denominators(project: ProjectBuilder) -> None:
    record = small_record(project)
    ctx = context(record, statuses(record, THEORY_1=ClaimStatus("THEORY-1", "verified", verdict())))
    page = dashboard(ctx)
    assert page.startswith("# The record\n\n4 entries: 1 literature, 1 note, 2 theory.\n")
    assert "| ✅ verified | 1 of 2 | 50% |\n| ⚪ unchecked | 1 of 2 | 50% |" in page
    assert "| [THEORY-1](THEORY-1.md) | active | ✅ verified | 2026-11-28 | 2026-11-29 | The claim |" in page
    assert "| [THEORY-2](THEORY-2.md) | active | ⚪ unchecked | — | — | A second claim that uses the first. |" in page
    assert "Of these" not in page  # every claim is active
    assert "[alpha](tags/alpha.md) (2), [beta](tags/beta.md) (1)" in page
    assert "[1 ids](wanted.md) are mentioned but not in the record." in page


def test_a_claims_row_counts_its_clauses_and_names_those_that_decide(project: ProjectBuilder) -> None:
    import dataclasses

    from recordtool.verify.verdict import ClauseVerdict

    record = small_record(project)
    clauses = [ClauseVerdict(name, "", state, []) for name, state in
               [("a", "verified"), ("recent-tokens", "contradicted"), ("c", "observed"), ("d", "verified")]]
    shown = dataclasses.replace(verdict(), result="contradicted", clauses=clauses)
    page = dashboard(context(record, statuses(record, THEORY_1=ClaimStatus("THEORY-1", "contradicted", shown))))
    assert ("| [THEORY-1](THEORY-1.md) | active | ❌ contradicted: 1 of 4 clauses ([`recent-tokens`]"
            "(THEORY-1.md#clauses)) · 2 verified · 1 observed only | 2026-11-28 | 2026-11-29 | The claim |") in page
    assert "| Claim | Status | Verdict | Since | Last verified | Title |" in page


def test_dashboard_says_which_claims_are_drafts(project: ProjectBuilder) -> None:
    small_record(project)
    project.add("THEORY-3", "statement: A draft, cut off …\nstatus: draft\n")
    project.add("THEORY-4", "statement: Replaced.\nstatus: superseded\n")
    record = open_project(root=project.root)
    states = {"THEORY_3": ClaimStatus("THEORY-3", "verified", verdict("THEORY-3"))}
    page = dashboard(context(record, statuses(record, **states)))
    assert "| [THEORY-3](THEORY-3.md) | **draft** | ✅ verified | 2026-11-28 | 2026-11-29 | A draft, cut off … |" in page
    assert "| [THEORY-4](THEORY-4.md) | **superseded** | ⚪ unchecked |" in page
    assert ("Of these, 1 is a draft and 1 is superseded: their verdicts are on the statements as they stand."
            in page)


def test_kind_and_tag_pages_link_back_up(project: ProjectBuilder) -> None:
    record = small_record(project)
    ctx = context(record, statuses(record))
    assert [p for p in index_paths(ctx) if p.startswith("kinds/")] == ["kinds/literature.md", "kinds/note.md",
                                                                        "kinds/theory.md"]
    assert "| [THEORY-2](../THEORY-2.md) | active | ⚪ unchecked | A second claim that uses the first. |" in index_page(
        ctx, "kinds/theory.md")
    assert index_page(ctx, "tags/beta.md") == (
        "# Tag: beta\n\n[Back to the record](../index.md) · 1 entry\n\n"
        "| Entry | Status | Title |\n| --- | --- | --- |\n| [NOTE-1](../NOTE-1.md) | active | Notes on the paper |\n")


def test_wanted_lists_dangling_mentions_with_who_mentions_them(project: ProjectBuilder) -> None:
    record = small_record(project)
    page = wanted(context(record, statuses(record)))
    assert "## THEORY-99\n\nMentioned by 1 entry:\n\n" in page
    assert ("- [THEORY-1](THEORY-1.md) (body): “Checked as [NOTE-1](NOTE-1.md) suggests; "
            "[THEORY-99](wanted.md#theory-99 \"not in the record\") would extend it.”") in page


def test_index_paths_are_the_dashboard_wanted_graph_kinds_and_tags(project: ProjectBuilder) -> None:
    small_record(project)
    project.add("NOTE-2", "title: Tagged\ntags: [gamma/deep]\n")
    record = open_project(root=project.root)
    ctx = context(record, statuses(record))
    assert index_paths(ctx) == ["index.md", "wanted.md", "graph.md", "kinds/literature.md", "kinds/note.md",
                                "kinds/theory.md", *(f"tags/{t}.md" for t in ctx.tags_in_use())]
    assert "tags/gamma/deep.md" in index_paths(ctx)
    assert index_page(ctx, "tags/gamma/deep.md").startswith("# Tag: gamma/deep\n")


def _pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".recordtool-snapshot.json"}


def _render_and_compare(root: Path, tmp_path: Path) -> dict[str, bytes]:
    """Render ``root`` (keeping what it kept), and a copy without cache or pages: the same pages."""
    assert invoke("render", "--root", str(root)).code == 0
    cold = tmp_path / "cold"
    shutil.rmtree(cold, ignore_errors=True)
    shutil.copytree(root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    pages = _pages(root / "record" / "pages")
    assert pages == _pages(cold / "record" / "pages")
    return pages


def test_the_dashboard_follows_a_verdicts_dates_when_the_state_stays(project: ProjectBuilder, tmp_path: Path) -> None:
    """A claim verified again keeps its state; the dashboard shows the new date."""
    small_record(project)
    config = load_config(project.root)
    write_verdict(config, verdict())
    first = _render_and_compare(project.root, tmp_path)["index.md"].decode()
    again = verdict()
    again.verified_at = "2026-11-30T09:00:00Z"
    write_verdict(config, again)
    dashboard = _render_and_compare(project.root, tmp_path)["index.md"].decode()
    assert "2026-11-29" in first and "2026-11-30" in dashboard and "2026-11-29" not in dashboard


def test_the_wanted_page_follows_the_ids_its_sentences_name(project: ProjectBuilder, tmp_path: Path) -> None:
    """An id in a quoted sentence that is not a mention (in code) is linked when it is in the
    record."""
    small_record(project)
    path = project.path("THEORY-1")
    path.write_text(path.read_text(encoding="utf-8").replace("would extend it.", "would extend `LIT-7`."),
                    encoding="utf-8")
    before = _render_and_compare(project.root, tmp_path)["wanted.md"].decode()
    project.add("LIT-7", 'title: Another paper\nreference: {authors: ["Doe, J."], year: 2021, title: P}\n')
    after = _render_and_compare(project.root, tmp_path)["wanted.md"].decode()
    assert '[LIT-7](wanted.md#lit-7 "not in the record")' in before and "[LIT-7](LIT-7.md)" in after
