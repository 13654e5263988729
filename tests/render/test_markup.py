"""Nothing an entry or a verdict holds becomes markup on a page, or on the site made of the
pages: whole pages of random entries and verdicts, read by markdown-it (GitHub, Obsidian) and
by Python-Markdown with the site's extensions (MkDocs). What it holds to is shared by
``render.escape``, ``render.prose``, ``render.page``, ``render.evidence`` and the index pages:
no one module's tests can say it."""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordtool.record.mentions import markdown
from recordtool.record.project import open_project
from recordtool.render.frontmatter import blanked
from recordtool.render.plan import context, plan_site
from recordtool.verify.verdict import ClaimStatus, ExpectationResult
from tests.conftest import ProjectBuilder
from tests.render_record import site_markdown, statuses, verdict

# Markdown, HTML, references, ids, unicode spaces: what each text field is made of.
PIECES = ["a", " ", "!", "[", "]", "(", ")", "<b>", "<script>x</script>", "`", "```", "~~~", "*", "_", "|", "\n",
          "\n\n", "#", "- ", "1. ", "> ", "    ", "&amp;", "&", "&#", "\\", "LIT-1", "NOTE-2", "THEORY-3",
          "THEORY-99", "<https://x.org/i.png>", "[a](b)", "{", "}", ":", '"', "'", "=", "---", "é", "\u00a0",
          "$x_1$", "<!--", "-->", "1)", "+", "-     "]
text = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
OURS = re.compile(r'<details markdown="1">\n<summary>[^<>]*</summary>\n|</details>\n')  # recordtool's own HTML
OURS_INLINE = {"<details>", "<summary>", "</summary>", "</details>", "<br>"}  # (a control's measurements folded)
SITE_TAGS = {"p", "a", "ul", "ol", "li", "code", "pre", "div", "span", "em", "strong", "h1", "h2", "h3", "h4",
             "table", "thead", "tbody", "tr", "th", "td", "blockquote", "hr", "br", "details", "summary", "img"}


def _entries(root: Path, fields: list[str]) -> None:
    def q(value: str, default: str) -> str:
        return json.dumps(value or default)

    project = ProjectBuilder(root)
    project.add("LIT-1", f"title: {q(fields[0], 'x')}\nstatus_note: {q(fields[1], 'x')}\n"
                         f"reference: {{authors: [{q(fields[2], 'A')}], year: 2020, title: {q(fields[3], 't')}}}\n"
                         f"body: {q(fields[4], '')}\n")
    project.add("NOTE-2", f"title: {q(fields[5], 'x')}\ncites: [{{id: LIT-1, as: paper, note: {q(fields[6], 'n')}}}]\n"
                          f"body: {q(fields[7], '')}\n")
    project.add("THEORY-3", f"title: {q(fields[8], 'x')}\nstatement: {q(fields[9], 's')}\n"
                            f"cites: [{{id: LIT-1, as: source}}]\nbody: {q(fields[10], '')}\n")


def _status(fields: list[str], state: str) -> ClaimStatus:
    shown = verdict("THEORY-3", "pass" if state == "verified" else "fail", error=fields[11] or None)
    check = dataclasses.replace(
        shown.checks[0], name=fields[12] or "n", message=fields[13], params={fields[14] or "p": fields[15]},
        runs=[dataclasses.replace(run, metrics={fields[16] or "m": 1.0},
                                  expectations=[ExpectationResult(fields[17] or "m", "< 1", 0.5, False)])
              for run in shown.checks[0].runs])
    return ClaimStatus("THEORY-3", state, dataclasses.replace(shown, checks=[check]),  # type: ignore[arg-type]
                       [fields[18] or "r"] if state == "stale" else [])


def _images(text: str) -> int:
    return sum(c.type == "image" for t in markdown().parse(text) if t.children for c in t.children)


@given(st.lists(text, min_size=19, max_size=19), st.sampled_from(["verified", "contradicted", "stale", "error"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_field_of_an_entry_or_a_verdict_becomes_markup_on_a_page_or_the_site(fields: list[str], state: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _entries(root, fields)
        record = open_project(root=root)
        if any(p.severity == "error" for p in record.problems):
            return
        ctx = context(record, statuses(record, THEORY_3=_status(fields, state)))
        plan = plan_site(ctx)
        allowed = {f"{entry_id}.md": sum(_images(prose) for _name, prose in entry.prose())
                   for entry_id, entry in record.record.entries.items()}  # the images an entry's own prose holds
        site = site_markdown(record.config)
        for page in plan.pages:
            written = blanked(plan.compose(page))
            tokens = markdown().parse(written)
            children = [c for t in tokens if t.children for c in t.children]
            assert not [t.content for t in tokens if t.type == "html_block" and not OURS.fullmatch(t.content)], page
            assert not [c for c in children if c.type == "html_inline" and c.content not in OURS_INLINE], page
            assert sum(c.type == "image" for c in children) <= allowed.get(page, 0), page
            if site is not None:
                html = site.reset().convert(written)
                assert set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html)) <= SITE_TAGS, (page, html)
                assert html.count("<img") <= allowed.get(page, 0), page
