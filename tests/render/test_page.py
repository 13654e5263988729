"""An entry's page: the seed page's elements, typed citations both ways, backlinks, verdicts."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from recordtool.record.mentions import markdown
from recordtool.record.project import Project, open_project
from recordtool.render.frontmatter import blanked
from recordtool.render.page import render_entry
from recordtool.render.plan import context
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses, verdict


def _section(page: str, heading: str) -> str:
    start = page.index(f"\n## {heading}\n")
    end = page.find("\n## ", start + 1)
    return page[start:end if end != -1 else None].strip()


def seed_record(project: ProjectBuilder) -> Project:
    """A paper with every element of the seed page: a status note, a version, tags, a full
    reference, a reading note, three claims drawn from it, a heading and a missing id."""
    project.add("LIT-7", """
        title: A Framework for Circuits
        status: active
        status_note: read 2026-10-26 (NOTE-3) in full; worth reading for THEORY-12.
        version: 2
        tags: [representation-learning, compositionality]
        reference:
          authors: ["Doe, J.", "Roe, R."]
          et_al: true
          year: 2021
          title: A framework for circuits
          venue: Circuits Thread
          date: 2021-12-22
          url: https://example.org/framework
        body: |
          Read in full on 2026-10-26 (NOTE-3). Claims drawn from it: THEORY-12 and THEORY-100.

          ## Why this is here

          LIT-8 builds on it, and THEORY-404 would use it.
    """)
    project.add("LIT-8", """
        title: A later paper
        reference: {authors: ["Poe, E."], year: 2022, title: A later paper}
        body: Takes its mechanism from LIT-7.
    """)
    project.add("NOTE-3", """
        title: Doe, Roe et al. — A framework for circuits
        cites: [{id: LIT-7, as: paper}]
        body: Reading note on LIT-7.
    """)
    for n in (100, 9, 12):
        project.add(f"THEORY-{n}", f"statement: Claim {n}, drawn from LIT-7.\ncites: [{{id: LIT-7, as: source}}]\n")
    return open_project(root=project.root)


def test_a_paper_page_carries_every_element_of_the_seed_page(project: ProjectBuilder) -> None:
    record = seed_record(project)
    page = render_entry(context(record, statuses(record)), "LIT-7")
    assert page.startswith('---\nid: "LIT-7"\n')
    lines = page.split("\n")
    top = lines.index("---", 1) + 2
    assert lines[top] == "# LIT-7: A Framework for Circuits"
    assert lines[top + 2] == "[The record](index.md) · 1 min read"
    assert ("| Status | Active — read 2026-10-26 ([NOTE-3](NOTE-3.md)) in full; worth reading for "
            "[THEORY-12](THEORY-12.md). |") in page
    assert "| Version |" not in page and "| Kind |" not in page  # the front matter's (GitHub shows it as a table)
    assert ("| Tags | [representation-learning](tags/representation-learning.md), "
            "[compositionality](tags/compositionality.md) |") in page
    assert "| Cited as 'paper' by | [NOTE-3](NOTE-3.md) — Doe, Roe et al. — A framework for circuits |" in page
    cited = next(line for line in lines if line.startswith("| Cited as 'source' by |"))
    assert re.findall(r"\[(THEORY-\d+)\]", cited) == ["THEORY-9", "THEORY-12", "THEORY-100"]
    assert "## Graph view\n\n```mermaid\ngraph LR\n" in page
    assert ("Doe, J., Roe, R., et al. (2021). A framework for circuits. *Circuits Thread*, "
            "22 December 2021. <https://example.org/framework>") in page
    assert "Read in full on 2026-10-26 ([NOTE-3](NOTE-3.md)). Claims drawn from it" in page
    assert "## Why this is here" in page
    assert '[THEORY-404](wanted.md#theory-404 "not in the record")' in page
    backlinks = _section(page, "Backlinks")
    assert re.findall(r"^- \[([A-Z]+-\d+)\]", backlinks, re.MULTILINE) == [
        "LIT-8", "NOTE-3", "THEORY-9", "THEORY-12", "THEORY-100"]
    # the parser sees the properties table, one graph view and no raw HTML from the record
    tokens = markdown().parse(blanked(page))
    assert sum(t.type == "table_open" for t in tokens) == 1
    assert [t.info for t in tokens if t.type == "fence"] == ["mermaid"]


def test_typed_citations_both_ways_mentions_and_backlinks(project: ProjectBuilder) -> None:
    record = small_record(project)
    ctx = context(record, statuses(record))
    lit = render_entry(ctx, "LIT-1")
    assert "\n---\n\n# LIT-1: A paper\n\n[The record](index.md) · 1 min read\n" in lit
    rows = [line for line in lit.split("\n") if line.startswith("| ")]
    assert rows == [
        "| Property | Value |",
        "| --- | --- |",
        "| Status | Active |",
        "| Tags | [alpha](tags/alpha.md) |",
        "| Cited as 'paper' by | [NOTE-1](NOTE-1.md) — Notes on the paper |",
        "| Cited as 'source' by | [THEORY-1](THEORY-1.md) — The claim |",
    ]
    assert _section(lit, "Backlinks") == "\n".join([
        "## Backlinks",
        "",
        "- [NOTE-1](NOTE-1.md) — Notes on the paper (cites it as paper, mentions it)",
        "    - body: “Read [LIT-1](LIT-1.md) in full.”",
        "- [THEORY-1](THEORY-1.md) — The claim (cites it as source, mentions it)",
        "    - statement: “The paper's claim, drawn from [LIT-1](LIT-1.md).”",
    ])
    # the quotes are a list inside each backlink's item (four spaces: Python-Markdown, as MkDocs
    # reads the pages, needs them; CommonMark takes two or more)
    levels = [t.level for t in markdown().parse(_section(lit, "Backlinks")) if t.type == "bullet_list_open"]
    assert levels == [0, 2, 2]
    note = render_entry(ctx, "NOTE-1")
    assert "| Cites | [LIT-1](LIT-1.md) as paper — A paper |" in note
    assert "Read [LIT-1](LIT-1.md) in full. Its claim is [THEORY-1](THEORY-1.md)." in note
    assert "Not a mention: `THEORY-2` in code." in note
    assert _section(note, "Backlinks") == "\n".join([
        "## Backlinks",
        "",
        "- [LIT-1](LIT-1.md) — A paper (mentions it)",
        "    - body: “See [NOTE-1](NOTE-1.md).”",
        "- [THEORY-1](THEORY-1.md) — The claim (mentions it)",
        "    - body: “Checked as [NOTE-1](NOTE-1.md) suggests; [THEORY-99](wanted.md#theory-99 \"not in the record\") would extend it.”",
    ])
    claim = render_entry(ctx, "THEORY-1")
    assert "| Used by | [THEORY-2](THEORY-2.md) — A second claim that uses the first. |" in claim
    assert 'Checked as [NOTE-1](NOTE-1.md) suggests; [THEORY-99](wanted.md#theory-99 "not in the record") would extend it.' in claim
    assert claim.rstrip().endswith('Mentioned here but not in the record: [THEORY-99](wanted.md#theory-99 "not in the record").')
    second = render_entry(ctx, "THEORY-2")
    assert "\n---\n\n# THEORY-2: A second claim that uses the first.\n" in second


def test_a_declared_tolerance_is_said_beside_the_seeds(project: ProjectBuilder) -> None:
    """A check that declares how close reruns' numbers must be (on the same kernels:
    docs/verdicts.md) has it said beside its seeds and threads."""
    record = small_record(project, check_more="    tolerance: {rel: 0.02, abs: 1.0e-4}")
    status = ClaimStatus("THEORY-1", "verified", verdict())
    page = render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1")
    assert ("Runs `checks.demo:measure` with `n=2`; seed 0; 1 thread per run; reruns agree within rel 0.02, "
            "abs 0.0001; 2.5 s.") in _section(page, "Verdict")


def test_unchecked_claim_shows_its_checks_as_not_run(project: ProjectBuilder) -> None:
    record = small_record(project)
    page = render_entry(context(record, statuses(record)), "THEORY-1")
    verdict_md = _section(page, "Verdict")
    assert verdict_md.startswith("## Verdict\n\n**⚪ unchecked** — never checked")
    assert "| — | `error` | \\< 1e-9 | 1e-9 | — | ⚪ not run |" in verdict_md
    assert "Controls: `control` (`noise=true`)." in verdict_md


def test_verified_claim_shows_evidence_and_provenance(project: ProjectBuilder) -> None:
    record = small_record(project)
    figure = project.root / "record/verdicts/figures/THEORY-1/exact/loss.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"\x89PNG\r\n\x1a\n")  # a figure is linked only where its file is
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=["record/verdicts/figures/THEORY-1/exact/loss.png"]))
    page = render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1")
    assert "\n# THEORY-1: The claim\n\n**✅ verified**\n\n[The record](index.md) · 1 min read\n" in page
    shown = status.verdict
    assert shown is not None
    setting = dataclasses.replace(shown, checks=[dataclasses.replace(shown.checks[0], setting="a <2-layer> toy")])
    ctx = context(record, statuses(record, THEORY_1=ClaimStatus("THEORY-1", "verified", setting)))
    assert "\n**✅ verified** — setting: a \\<2-layer\\> toy\n" in render_entry(ctx, "THEORY-1")
    assert "| Verdict | ✅ verified |" in page
    v = _section(page, "Verdict")
    assert "**✅ verified** since 2026-11-28T10:00:00Z, last verified 2026-11-29T14:03:00Z." in v
    assert "### Check `exact`: ✅ pass" in v
    assert "Runs `checks.demo:measure` with `n=2`; seed 0; 1 thread per run; 2.5 s." in v
    assert "| 0 | `error` | \\< 1e-9 | 1e-9 | 2.3e-15 | ✅ holds |" in v
    assert "| 0 | `terms` | == 5 | 5 | 5 | ✅ holds |" in v
    # the judged expectations first; what was only observed in a collapsed block after them
    assert "`loss`" not in v[:v.index("<details")]
    assert ('<details markdown="1">\n<summary>1 observed metric, judged by no expectation</summary>\n\n'
            "| Seed | Metric | Measured |\n| --- | --- | --- |\n| 0 | `loss` | 5 values, 0.1 … 0.5 |\n\n</details>") in v
    # what the control decides first (here, giving no power: what it fails), the rest folded away
    assert ("| `control` | `noise=true` | fails an expectation on every seed | none | seed 0: error = 0.31 (fails) "
            "<details><summary>1 more</summary>seed 0: terms = 5 (holds)</details> |") in v
    assert "#### Figures: main run\n\n![Figure 1. loss.png](figures/THEORY-1/exact/loss.png)\n\n*Figure 1.* loss.png" in v
    assert "| Commit | 0123456789ab |" in v
    assert "| Versions | python 3.11.7, torch 2.4.0 |" in v
    # THEORY-2 uses THEORY-1: its page colours THEORY-1 as verified in the graph view
    other = render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-2")
    assert "class THEORY_1 verified" in other


def test_every_table_has_a_real_header(project: ProjectBuilder) -> None:
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "verified", verdict())
    ctx = context(record, statuses(record, THEORY_1=status))
    for entry_id in record.record.entries:
        tokens = markdown().parse(blanked(render_entry(ctx, entry_id)))
        heads = [tokens[i + 1] for i, t in enumerate(tokens) if t.type == "th_open"]
        assert heads and all(h.content.strip() for h in heads), entry_id


def test_stale_claim_says_why(project: ProjectBuilder) -> None:
    record = small_record(project)
    status = ClaimStatus("THEORY-1", "stale", verdict(), ["statement changed", "checks/demo.py changed"])
    v = _section(render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1"), "Verdict")
    assert v.startswith("## Verdict\n\n**⚠️ stale** — the last verdict, ✅ verified on 2026-11-29T14:03:00Z, no longer applies")
    assert "Why it is stale:\n\n- statement changed\n- checks/demo.py changed" in v


def test_a_claim_whose_verdict_file_is_not_used_says_why_not_never_checked(project: ProjectBuilder) -> None:
    record = small_record(project)
    why = "verdict file record/verdicts/THEORY-1.json does not follow from its own numbers (...)"
    status = ClaimStatus("THEORY-1", "unchecked", None, [why])
    v = _section(render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1"), "Verdict")
    assert v.startswith("## Verdict\n\n**⚪ unchecked** — its verdict file is not used (see the note); run "
                        "`recordtool verify` to check it.\n\nNote:\n\n- verdict file record/verdicts/THEORY-1.json")
    never = _section(render_entry(context(record, statuses(record)), "THEORY-1"), "Verdict")
    assert never.startswith("## Verdict\n\n**⚪ unchecked** — never checked; run `recordtool verify` to check it.")


def test_error_shows_the_end_of_the_traceback(project: ProjectBuilder) -> None:
    record = small_record(project)
    tb = "\n".join(f"  line {i}" for i in range(40)) + "\nValueError: ```bad``` <script>"
    status = ClaimStatus("THEORY-1", "error", verdict(outcome="error", error=tb))
    v = _section(render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1"), "Verdict")
    assert "### Check `exact`: 💥 error" in v
    assert "Seed 0: error; the end of its traceback:\n\n````text\n  line 26\n" in v
    assert "ValueError: ```bad``` <script>\n````" in v
    assert "line 25\n" not in v


@pytest.mark.parametrize("title", ["A | pipe *star* [link](x.md)", "<script>alert(1)</script>", "# not a heading"])
def test_special_characters_in_titles_cannot_break_tables_or_inject_html(project: ProjectBuilder, title: str) -> None:
    project.add("LIT-1", f"""
        title: {title!r}
        reference: {{authors: ["A"], year: 2020, title: {title!r}}}
        body: "<script>alert(1)</script> and *x* | y"
    """)
    project.add("NOTE-1", f"""
        title: {title!r}
        cites: [{{id: LIT-1, as: paper}}]
    """)
    record = open_project(root=project.root)
    for entry_id in ("LIT-1", "NOTE-1"):
        page = render_entry(context(record, statuses(record)), entry_id)
        tokens = markdown().parse(blanked(page))
        assert not [t for t in tokens if t.type == "html_block"]
        inline_html = [c.content for t in tokens if t.children for c in t.children if c.type == "html_inline"]
        assert set(inline_html) <= {"<br>"}
        heading = tokens[1]
        assert heading.content.endswith(title.lstrip("# ")) or title in heading.children[0].content
        rows = [t for t in tokens if t.type == "tr_open"]
        cells = [t for t in tokens if t.type in ("td_open", "th_open")]
        assert len(cells) == 2 * len(rows)  # every row still has exactly two cells
        texts = "".join(c.content for t in tokens if t.children for c in t.children if c.type == "text")
        assert title.lstrip("# ") in texts


def test_a_body_puts_no_image_or_raw_html_on_its_page_or_on_the_pages_quoting_it(project: ProjectBuilder) -> None:
    """A '!' right before an id or an autolink, an indented code block right after a list whose
    items the page writes less indented, and one starting a claim's body after its statement's
    list, stay what they were: text and code."""
    project.add("LIT-1", 'title: A paper\nreference: {authors: ["A"], year: 2020, title: A paper}\n')
    project.add("NOTE-1", r"""
        title: A note
        body: "Wow!LIT-1 is it; see!<https://x.org/p.png>.\n\n1.    item\n\n    <script>alert(1)</script>\n"
    """)
    project.add("THEORY-1", r"""
        statement: "It has two parts:\n\n- one\n- two"
        body: "    <script>alert(2)</script>\n"
    """)  # the body's code after the statement's list, on the page
    record = open_project(root=project.root)
    ctx = context(record, statuses(record))
    for entry_id in ("NOTE-1", "LIT-1", "THEORY-1"):  # (LIT-1's backlinks quote the sentence)
        tokens = markdown().parse(blanked(render_entry(ctx, entry_id)))
        children = [c for t in tokens if t.children for c in t.children]
        assert not [c for c in children if c.type == "image"], entry_id
        assert not [t for t in tokens if t.type == "html_block"] and not [c for c in children if c.type == "html_inline"]
        texts = "".join(c.content for c in children if c.type == "text")
        assert ("Wow!" in texts and "see!" in texts) == (entry_id != "THEORY-1"), entry_id
    for entry_id, script in (("NOTE-1", "<script>alert(1)</script>\n"), ("THEORY-1", "<script>alert(2)</script>\n")):
        code = [t.content for t in markdown().parse(blanked(render_entry(ctx, entry_id))) if t.type in ("fence", "code_block")]
        assert script in code, entry_id


@pytest.mark.parametrize("marker", ["-", "*", "+", "1.", "1)"])
def test_a_claims_body_adds_no_item_to_its_statements_list(project: ProjectBuilder, marker: str) -> None:
    """CommonMark reads two lists of one marker with nothing but blank lines between them as one
    list: a body that begins with a list, after a statement that ends with one, put the body's
    items in the statement on the page. The body has a heading of its own."""
    project.add("THEORY-1", f"""
        statement: "It has two parts:\\n\\n{marker} one\\n{marker} two"
        body: "{marker} a remark on it\\n{marker} another\\n\\nMore."
    """)
    record = open_project(root=project.root)
    page = blanked(render_entry(context(record, statuses(record)), "THEORY-1"))
    tokens = markdown().parse(page[page.index("## Statement"):page.index("## Verdict")])
    lists = [t for t in tokens if t.type in ("bullet_list_open", "ordered_list_open") and t.level == 0]
    items = [t for t in tokens if t.type == "list_item_open"]
    texts = [t.content for t in tokens if t.type == "inline"]
    assert len(lists) == 2 and len(items) == 4, page
    assert texts == ["Statement", "It has two parts:", "one", "two", "Discussion", "a remark on it", "another",
                     "More."]


def test_relative_links_in_prose_point_at_the_same_file(project: ProjectBuilder, tmp_path: Path) -> None:
    project.add("NOTE-1", """
        title: T
        body: "See [the data](../../data/x.csv) and [a claim](THEORY-5)."
    """)
    record = open_project(root=project.root)
    page = render_entry(context(record, statuses(record), project.root / "record" / "pages"), "NOTE-1")
    assert 'See [the data](../../data/x.csv) and [a claim](wanted.md#theory-5 "not in the record").' in page
    page = render_entry(context(record, statuses(record), project.root / "site"), "NOTE-1")
    assert "[the data](../data/x.csv)" in page


def test_the_clause_table_comes_first_with_what_decides_each_clause(project: ProjectBuilder) -> None:
    from recordtool.verify.rules import (
        claim_result,
        judge_check,
        judge_clauses,
        judge_control,
        judge_run,
    )
    from recordtool.verify.verdict import ClaimVerdict

    project.add("THEORY-5", """
        statement: A, B and C.
        clauses: {a: "A holds.", b: "B | holds.", c: "C holds."}
        checks:
          - name: lab
            run: checks.demo:measure
            seeds: 2
            expect:
              err: {is: "< 0.5", clause: a}
              n: {is: ">= 2", clause: b}
            degenerate: {loss_drop: "< 0.1"}
            controls: [{name: untrained, params: {train: false}}, {name: shuffled, params: {shuffle: true}}]
    """)
    record = open_project(root=project.root)
    claim = record.record.entries["THEORY-5"]
    spec = claim.checks[0]  # type: ignore[attr-defined]
    runs = [judge_run(spec, s, "ok", {"err": e, "n": 5.0, "loss_drop": 1.0}, 1.0) for s, e in [(0, 0.1), (1, 0.3)]]
    control = judge_control("untrained", {"train": False},
                            [judge_run(spec, s, "ok", {"err": 0.9, "n": 5.0, "loss_drop": 0.0}, 1.0, main=False)
                             for s in (0, 1)])
    shuffled = judge_control("shuffled", {"shuffle": True},
                             [judge_run(spec, s, "ok", {"err": 0.8, "n": 5.0, "loss_drop": 1.0}, 1.0, main=False)
                              for s in (0, 1)])
    check = judge_check(spec, runs, [control, shuffled], timeout=5, figures=[], duration_s=4.0, clause_ids=claim.clause_ids)  # type: ignore[attr-defined]
    clauses = judge_clauses(claim, [check])  # type: ignore[arg-type]
    result = claim_result(clauses, [check])
    claim_verdict = ClaimVerdict("THEORY-5", check.outcome, "A, B and C.", [check], {}, "2026-11-29T14:03:00Z",
                                 "2026-11-29T14:03:00Z", 4.0, [0, 1], None, None, {}, "cpu", result, clauses)
    status = ClaimStatus("THEORY-5", result, claim_verdict)
    page = render_entry(context(record, statuses(record, THEORY_5=status)), "THEORY-5")
    # the verdict at a glance, first: the clauses that keep it from verified named, linked to the table
    assert "\n# THEORY-5: A, B and C.\n\n**🟡 partly verified: 1 of 3 clauses untested ([`c`](#clauses)) · " \
           "1 verified · 1 observed only**\n\n[The record]" in page
    v = _section(page, "Verdict")
    assert v.split("\n\n")[:4] == [
        "## Verdict",
        "**🟡 partly verified: 1 of 3 clauses** since 2026-11-29T14:03:00Z, last verified 2026-11-29T14:03:00Z.",
        "### Clauses",
        "| Clause | Verdict | Decided by |\n| --- | --- | --- |\n"
        "| `a`: A holds. | ✅ verified | `lab`: `err` \\< 0.5: ✅ holds on 2 of 2 seeds, measured 0.1 / 0.2 / 0.3; "
        "power: control 'shuffled' |\n"
        "| `b`: B \\| holds. | 👁️ observed only | `lab`: `n` \\>= 2: ➖ no power, decides nothing; holds on 2 of 2 "
        "seeds, measured 5 |\n"
        "| `c`: C holds. | ⚪ untested | nothing: no expectation or observation names this clause |",
    ]
    # a degenerate control gives no power, and the page says so next to the power it does have
    assert ("| `err` | \\< 0.5 | `a` | 2 of 2 | 0.1 / 0.2 / 0.3 | control 'shuffled' (control 'untrained': "
            "degenerate, no power) | none | ✅ holds |") in v
    assert ("| `n` | \\>= 2 | `b` | 2 of 2 | 5 | none | none | ➖ no power (decides nothing) |") in v
    assert "| 1 | `n` | \\>= 2 | 2 | 5 | ✅ holds (no power) |" in v
    assert ("| `shuffled` | `shuffle=true` | fails an expectation on every seed | `err` | seed 0: err = 0.8 (fails); "
            "seed 1: err = 0.8 (fails) <details><summary>2 more</summary>seed 0: n = 5 (holds); seed 1: n = 5 (holds)"
            "</details> |") in v  # the metric it gives power to first
    assert ("| `untrained` | `train=false` | fails an expectation on every seed; ⚠️ degenerate on seeds 0, 1 "
            "(loss_drop \\< 0.1): it learned nothing | none |") in v


def test_a_failing_expectation_says_on_how_many_seeds_it_holds(project: ProjectBuilder) -> None:
    from recordtool.verify.rules import (
        claim_result,
        judge_check,
        judge_clauses,
        judge_control,
        judge_run,
    )
    from recordtool.verify.verdict import ClaimVerdict, ControlResult

    project.add("THEORY-6", """
        statement: A.
        checks:
          - name: lab
            run: checks.demo:measure
            seeds: 2
            expect: {err: "< 0.5"}
            setting: a toy, trained on random tokens
            controls: [{name: untrained, params: {train: false}}]
            positives: [{name: planted, params: {plant: true}}]
    """)
    record = open_project(root=project.root)
    claim = record.record.entries["THEORY-6"]
    spec = claim.checks[0]  # type: ignore[attr-defined]
    runs = [judge_run(spec, s, "ok", {"err": e}, 1.0) for s, e in [(0, 0.7), (1, 0.3)]]
    control = judge_control("untrained", {"train": False},
                            [judge_run(spec, s, "ok", {"err": 0.9}, 1.0, main=False) for s in (0, 1)])
    planted = judge_control("planted", {"plant": True},
                            [judge_run(spec, s, "ok", {"err": 0.1}, 1.0, main=False) for s in (0, 1)], positive=True)

    def page(positives: list[ControlResult]) -> str:
        check = judge_check(spec, runs, [control], timeout=5, figures=[], duration_s=4.0, clause_ids=claim.clause_ids,  # type: ignore[attr-defined]
                            positives=positives)
        clauses = judge_clauses(claim, [check])  # type: ignore[arg-type]
        result = claim_result(clauses, [check])
        verdict = ClaimVerdict("THEORY-6", check.outcome, "A.", [check], {}, "2026-11-29T14:03:00Z",
                               "2026-11-29T14:03:00Z", 4.0, [0, 1], None, None, {}, "cpu", result, clauses)
        return _section(render_entry(context(record, statuses(record, THEORY_6=ClaimStatus("THEORY-6", result,
                                                                                           verdict))),
                                     "THEORY-6"), "Verdict")

    v = page([planted])
    assert "`lab`: `err` \\< 0.5: ❌ fails: holds on 1 of 2 seeds, measured 0.3 / 0.5 / 0.7" in v
    assert "power: control 'untrained'; sensitivity: positive 'planted'" in v
    assert "Setting: a toy, trained on random tokens." in v
    assert ("| `planted` | `plant=true` | meets every expectation on every seed | `err` | seed 0: err = 0.1 "
            "(holds); seed 1: err = 0.1 (holds) |") in v
    # without a positive control that passes it, the test was never shown able to pass
    v = page([])
    assert v.split("\n\n")[1].startswith("**❔ not reproduced**")
    assert "(not run)" not in v and "Positive controls" not in v  # its controls ran; it has no positive
    assert ("`lab`: `err` \\< 0.5: ❔ not reproduced (never shown able to pass): holds on 1 of 2 seeds, measured "
            "0.3 / 0.5 / 0.7; power: control 'untrained'") in v
