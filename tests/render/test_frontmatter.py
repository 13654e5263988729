"""Front matter: strict YAML that reads back as the entry's properties (Obsidian, Dataview)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import yaml

from recordtool.record.mentions import markdown
from recordtool.record.project import open_project
from recordtool.render.frontmatter import blanked, obsidian_tag, quoted, timestamp
from recordtool.render.page import render_entry
from recordtool.render.plan import context
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses, verdict

HOSTILE = ["plain", "yes", "no", "null", "~", "1.5", "0x1F", "2026-01-01", "- a list?", "key: value", "# comment",
           "a 'quote' and \"double\"", "back\\slash", "tab\there", "new\nline", "---", "...", "&anchor *alias !tag",
           "{flow: map}", "[flow, seq]", "@at `tick` |pipe >fold %pct", "ünïcødé — QKᵀ/√d_k", "\x00\x07\x1b",
           "\x85 NEL \u2028 LS \u2029 PS \ufeff BOM", "\x7f\x9f", " leading and trailing ", ""]


@pytest.mark.parametrize("value", HOSTILE)
def test_a_quoted_string_reads_back_as_itself(value: str) -> None:
    assert yaml.safe_load(f"key: {quoted(value)}\n") == {"key": value}
    assert "\n" not in quoted(value)


def test_numeric_tags_get_a_letter_obsidian_takes() -> None:
    assert obsidian_tag("induction-heads") == "induction-heads"
    assert obsidian_tag("a/b-2") == "a/b-2"
    assert obsidian_tag("2021") == "_2021"


def _meta(page: str) -> dict[str, object]:
    assert page.startswith("---\n")
    end = page.index("\n---\n", 3)
    loaded = yaml.safe_load(page[4:end + 1])
    assert isinstance(loaded, dict)
    return loaded


def test_every_entry_page_starts_with_its_properties(project: ProjectBuilder) -> None:
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "verified", verdict())
    ctx = context(record, statuses(record, THEORY_1=status))
    lit = _meta(render_entry(ctx, "LIT-1"))
    assert lit == {"id": "LIT-1", "title": "A paper", "aliases": ["A paper"], "kind": "literature", "status": "active",
                   "version": 1, "tags": ["alpha"]}
    claim = _meta(render_entry(ctx, "THEORY-1"))
    assert claim["verdict"] == "verified" and claim["since"] == datetime(2026, 11, 28, 10, tzinfo=timezone.utc)
    assert claim["last_verified"] == datetime(2026, 11, 29, 14, 3, tzinfo=timezone.utc)
    assert claim["kind"] == "theory" and claim["title"] == "The claim"
    assert claim["cites"] == ["[[LIT-1]]"] and claim["used_by"] == ["[[THEORY-2]]"] and "uses" not in claim
    unchecked = _meta(render_entry(ctx, "THEORY-2"))
    assert unchecked["verdict"] == "unchecked" and "since" not in unchecked
    assert unchecked["title"] == "A second claim that uses the first."


def test_a_stale_verdict_has_no_since(project: ProjectBuilder) -> None:
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "stale", verdict(), reasons=["statement changed"])
    meta = _meta(render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1"))
    assert meta["verdict"] == "stale" and "since" not in meta and "last_verified" in meta


@pytest.mark.parametrize("value", ["2026-11-28T10:00:00Z", "2026-11-28T10:00:00.5+02:00"])
def test_a_verdicts_time_is_a_bare_timestamp(value: str) -> None:
    assert timestamp(value) == value


@pytest.mark.parametrize("value", ["2026-13-28T10:00:00Z", "2026-11-28", "2026-11-28T10:00:00Z\nx: y", "now", ""])
def test_anything_else_is_quoted(value: str) -> None:
    assert timestamp(value) == quoted(value)


def test_front_matter_reads_the_same_in_yaml_1_1_and_1_2(project: ProjectBuilder) -> None:
    """PyYAML (YAML 1.1) and ruamel.yaml (YAML 1.2) read the same properties: timestamps as
    timestamps, relations and aliases as lists, a hostile title as itself."""
    ruamel = pytest.importorskip("ruamel.yaml", reason="ruamel.yaml is not installed: pip install -e \".[test]\"")
    record = small_record(project)
    title = 'yes: "no" --- # x\n---\nkey: [value] !!python/object:os.system \'q\''
    path = project.path("THEORY-2")
    path.write_text(path.read_text(encoding="utf-8") + f"title: {json.dumps(title)}\n", encoding="utf-8")
    record = open_project(root=project.root)
    status = ClaimStatus("THEORY-2", "verified", verdict("THEORY-2"))
    page = render_entry(context(record, statuses(record, THEORY_2=status)), "THEORY-2")
    text = page[4:page.index("\n---\n", 3) + 1]
    pyyaml = yaml.safe_load(text)
    loader = ruamel.YAML(typ="safe", pure=True)
    loader.version = (1, 2)
    assert dict(loader.load(text)) == pyyaml
    assert pyyaml["title"] == " ".join(title.split()) and pyyaml["aliases"] == [pyyaml["title"]]
    assert pyyaml["cites"] == pyyaml["uses"] == ["[[THEORY-1]]"]
    assert isinstance(pyyaml["since"], datetime) and isinstance(pyyaml["last_verified"], datetime)


def test_hostile_titles_dates_and_drafts_read_back(project: ProjectBuilder) -> None:
    title = 'yes: "no" # [link](x.md) <script>alert(1)</script> ---'
    project.add("NOTE-1", f"""
        title: {title!r}
        status: draft
        version: 3
        tags: ["2021", a/b]
        created: 2026-01-02
        updated: 2026-02-03
    """)
    record = open_project(root=project.root)
    page = render_entry(context(record, statuses(record)), "NOTE-1")
    meta = _meta(page)
    assert meta["title"] == " ".join(title.split())  # titles are shown on one line
    assert meta["status"] == "draft" and meta["version"] == 3 and meta["tags"] == ["_2021", "a/b"]
    assert str(meta["created"]) == "2026-01-02" and str(meta["updated"]) == "2026-02-03"
    # the Markdown after it: what viewers render; the front matter is no link, HTML or heading
    tokens = markdown().parse(blanked(page))
    assert tokens[0].type == "heading_open"
    assert tokens[0].map is not None and tokens[0].map[0] == page[:page.index("\n# ")].count("\n") + 1
    assert not [t for t in tokens if t.type == "html_block"]
