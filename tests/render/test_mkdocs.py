"""`recordtool render --site`: mkdocs.yml beside the pages, and a site MkDocs builds in strict mode."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from recordtool.record.config import Config
from recordtool.render.mkdocs import MARK
from recordtool.render.mkdocs_plugin import site_links, site_nav, site_properties
from tests.conftest import ProjectBuilder
from tests.render_record import build_site, site_markdown, small_record


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_site_writes_mkdocs_yml_beside_the_pages(project: ProjectBuilder) -> None:
    small_record(project)
    assert run("render", "--root", str(project.root), "--site") == (
        0, "rendered 4 entries into record/pages: 12 written, 0 unchanged, 0 removed\n"
           "site: mkdocs build -f record/mkdocs.yml --strict\n", "")
    text = (project.root / "record" / "mkdocs.yml").read_text(encoding="utf-8")
    assert text.startswith(MARK)
    for line in ['docs_dir: "pages"', 'site_dir: "pages-site"', "  - search", "        - name: mermaid",
                 '  - "The record": "index.md"', '      - "theory": "kinds/theory.md"', "  - md_in_html  #",
                 "  anchors: warn  #", "  - assets/mermaid.min.js  #", "  - assets/site.css  #"]:
        assert f"\n{line}" in text
    # unchanged, the file is left as it is
    before = (project.root / "record" / "mkdocs.yml").stat().st_mtime_ns
    assert run("render", "--root", str(project.root), "--site")[0] == 0
    assert (project.root / "record" / "mkdocs.yml").stat().st_mtime_ns == before


def test_a_mkdocs_yml_recordtool_did_not_write_is_left_alone(project: ProjectBuilder) -> None:
    small_record(project)
    (project.root / "mkdocs.yml").write_text("site_name: Mine\n", encoding="utf-8")
    code, _out, err = run("render", "--root", str(project.root), "-o", str(project.root / "site"), "--site")
    assert code == 2
    assert "mkdocs.yml is not one recordtool wrote; move it away, or render the site's pages into a folder of " \
           "their own with -o" in err
    assert (project.root / "mkdocs.yml").read_text(encoding="utf-8") == "site_name: Mine\n"


def test_the_site_builds_in_strict_mode(project: ProjectBuilder) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e \".[site]\" to test the site")
    pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e \".[site]\"")
    small_record(project)
    assert run("render", "--root", str(project.root), "--site")[0] == 0
    built = build_site(project.root)
    assert built.returncode == 0, built.stderr
    site = project.root / "record" / "pages-site"
    assert 'class="mermaid"' in (site / "LIT-1.html").read_text(encoding="utf-8")
    # a missing id links to its heading on the wanted page (strict mode checks the anchors)
    assert 'href="wanted.html#theory-99"' in (site / "THEORY-1.html").read_text(encoding="utf-8")
    assert 'id="theory-99"' in (site / "wanted.html").read_text(encoding="utf-8")
    assert 'class="mermaid"' in (site / "graph.html").read_text(encoding="utf-8")
    # the graphs' node links lead to the site's pages, not to the Markdown sources
    drawn = (site / "LIT-1.html").read_text(encoding="utf-8")
    assert re.search(r"click \w+ (&quot;|\")THEORY-1\.html(&quot;|\")", drawn), drawn
    assert not re.search(r"click \w+ (&quot;|\")[^&\"]*\.md(&quot;|\")", drawn)
    search = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any(doc["location"].startswith("THEORY-1.html") for doc in search["docs"])
    assert not [doc["location"] for doc in search["docs"] if "classDef" in doc["text"]]  # no graph's source
    # Mermaid is the site's own; every entry and tag is in the nav, the page's own item marked
    assert (site / "assets" / "mermaid.min.js").stat().st_size > 1_000_000
    assert '<script src="assets/mermaid.min.js"></script>' in drawn and "unpkg.com" not in drawn
    # and its own CSS: code in a table cell (a check's params) wraps between words, never inside one
    assert '<link rel="stylesheet" href="assets/site.css">' in drawn
    css = (site / "assets" / "site.css").read_text(encoding="utf-8")
    assert re.search(r"\.md-typeset td code \{\s*word-break: normal;", css)
    assert re.search(r"\.md-typeset \.mermaid \{\s*overflow: auto;", css)  # graph.md, drawn at full size, scrolls
    nav = drawn[drawn.index('<nav class="md-nav md-nav--primary"'):]
    for page in ("NOTE-1.html", "THEORY-1.html", "THEORY-2.html", "tags/alpha.html", "tags/beta.html"):
        assert f'href="{page}"' in nav, page
    assert '<a href="LIT-1.html" class="md-nav__link md-nav__link--active">' in drawn
    assert "<title>LIT-1: A paper - The record</title>" in drawn and "md-status" not in drawn
    # the properties the page leaves to its front matter are rows of its table on the site
    assert re.search(r'<td>Kind</td>\s*<td><a href="kinds/literature.html">literature</a></td>', drawn)
    assert re.search(r"<td>Version</td>\s*<td>1</td>", drawn)
    # strict mode fails on what a reader would find broken: a link to a file not in the site
    project.add("NOTE-2", "title: T\nbody: 'A [missing file](nothere.csv).'\n")
    assert run("render", "--root", str(project.root), "--site")[0] == 0
    broken = build_site(project.root)
    assert broken.returncode != 0 and "nothere.csv" in broken.stderr


def test_the_nav_adds_every_entry_and_tag_in_the_records_order() -> None:
    named = [{"The record": "index.md"}, {"Kinds": [{"theory": "kinds/theory.md"}]}, {"Graph": "graph.md"}]
    pages = ["index.md", "graph.md", "THEORY-10.md", "LIT-2.md", "THEORY-9.md", "kinds/theory.md", "tags/b.md",
             "tags/a.md"]
    assert site_nav(named, pages) == [*named, {"Entries": ["LIT-2.md", "THEORY-9.md", "THEORY-10.md"]},
                                      {"Tags": ["tags/a.md", "tags/b.md"]}]


def test_the_plugin_rewrites_only_the_click_targets_of_mermaid_fences() -> None:
    page = ('See [LIT-1](LIT-1.md).\n\n```mermaid\nflowchart LR\n  A["LIT-1.md"] --> B\n'
            '  click A "LIT-1.md"\n  click B "../tags/x.md#top"\n  click C "https://example.org/a.md"\n```\n\n'
            '```text\nclick A "LIT-1.md"\n```\n')
    assert site_links(page) == (
        'See [LIT-1](LIT-1.md).\n\n```mermaid\nflowchart LR\n  A["LIT-1.md"] --> B\n'
        '  click A "LIT-1.html"\n  click B "../tags/x.html#top"\n  click C "https://example.org/a.md"\n```\n\n'
        '```text\nclick A "LIT-1.md"\n```\n')


def _site(config: Config) -> Any:
    """The site's Markdown (``render_record.site_markdown``), or the test skipped without it."""
    site = site_markdown(config)
    if site is None:
        pytest.skip("the site's Markdown is not installed: pip install -e \".[site]\"")
    return site


@pytest.mark.parametrize("body", ["-     <b>c</b>", "- ```\n  <b>c</b>\n  ```", "```)  <b>x</b>\n<b>c</b>\n```",
                                  "1.    x\n\n    <b>c</b>", "- a\n\n      <b>c</b>"])
def test_code_in_a_body_is_code_on_the_site(project: ProjectBuilder, body: str) -> None:
    """The site's Markdown (Python-Markdown, with MkDocs' extensions and those mkdocs.yml
    names) reads a body's code as code: no fence on an item's marker line, no indented code,
    no info string but a language name."""
    from recordtool.record.config import load_config
    from recordtool.render.prose import Style, block

    site = _site(load_config(project.root))
    written = block(body, Style(re.compile(r"THEORY-\d+"), lambda i: (f"{i}.md", None)))
    html = site.convert(written)
    assert "<b>" not in html and "&lt;b&gt;c&lt;/b&gt;" in html, (written, html)


class _Skeleton(HTMLParser):
    """The lists, items, quotes and code blocks of an HTML page, in order, as tags."""

    KEPT = ("ul", "ol", "li", "blockquote", "pre")

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.KEPT:
            self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.KEPT:
            self.tags.append("/" + tag)


def _skeleton(html: str) -> list[str]:
    parser = _Skeleton()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize("body", [
    "- a\n  - b\n  - c\n- d\n",  # a list nested two spaces in
    "1. one\n\n   second\n\n   ```\n   x\n   ```\n2. two\n   - nested\n     1. deeper\n",  # an item's later blocks
    "- a\n\n  > quote\n  > more\n- b\n",
    "10. ten\n    - nested\n11. eleven\n",  # a marker of three characters
    "1) one\n2) two\n   - nested\n",  # a number and ')', which the site's Markdown does not read
    "- a\n- ```\n  code\n  ```\n-\n- d\n",  # code first in an item, an empty item, after a line of text
    "1. a\n2. ```\n   code\n   ```\n3.\n",
    "> - a\n>   - b\n>\n>   c\n",
    "-\n  - under an empty line\n- b\n",
])
def test_lists_keep_their_structure_on_the_site(project: ProjectBuilder, body: str) -> None:
    """The site's Markdown reads a nested list, or an item's later blocks, only four spaces in
    (CommonMark: at the item's content, two in after '- '), reads no '1)' list, and takes a '-'
    alone under a line for a heading's underline: a body's lists, written on its page, nest on the
    site as they do in the body (the shapes the README says it reads otherwise aside)."""
    from markdown_it import MarkdownIt

    from recordtool.record.config import load_config
    from recordtool.render.prose import Style, block

    site = _site(load_config(project.root))
    written = block(body, Style(re.compile(r"THEORY-\d+"), lambda i: (f"{i}.md", None)))
    source = MarkdownIt("commonmark").render(body)
    assert _skeleton(site.convert(written)) == _skeleton(source), (written, site.convert(written))
    assert MarkdownIt("commonmark").render(written) == source  # (and CommonMark reads the page as the body)


def test_a_title_cannot_make_the_site_read_code_further_down_its_page_as_html(project: ProjectBuilder) -> None:
    """Python-Markdown finds raw HTML with an HTML parser before reading any Markdown, and a
    backslash hides nothing from it: an unfinished '&#' in a title, and a '<!--' in a statement,
    made it take the HTML in code spans further down the page (a check's parameters, a metric's
    name) for raw HTML. Text now writes them as references."""
    import dataclasses

    from recordtool.record.config import load_config
    from recordtool.record.project import open_project
    from recordtool.render.frontmatter import blanked
    from recordtool.render.page import render_entry
    from recordtool.render.plan import context
    from recordtool.verify.verdict import ClaimStatus
    from tests.render_record import statuses, verdict

    site = _site(load_config(project.root))
    project.add("THEORY-3", 'title: "a&#{"\nstatement: "~~~<!--]<!--"\n')
    shown = verdict("THEORY-3")
    check = dataclasses.replace(shown.checks[0], params={"p": "<script>x</script>--><b>!"},
                                runs=[dataclasses.replace(run, metrics={**run.metrics, "<b>:1)|-->": 1.0})
                                      for run in shown.checks[0].runs])
    record = open_project(root=project.root)
    ctx = context(record, statuses(record, THEORY_3=ClaimStatus("THEORY-3", "verified",
                                                                dataclasses.replace(shown, checks=[check]))))
    html = site.convert(blanked(render_entry(ctx, "THEORY-3")))
    assert not re.findall(r"<(?:script|b)>", html)
    assert "&lt;script&gt;x&lt;/script&gt;--&gt;&lt;b&gt;!" in html  # shown, as code


def test_the_site_adds_the_properties_left_to_the_front_matter() -> None:
    from datetime import date

    page = "# X\n\n| Property | Value |\n| --- | --- |\n| Status | Active |\n"
    meta = {"id": "LIT-1", "kind": "literature", "version": 2, "created": date(2026, 1, 2)}
    assert site_properties(page, meta) == (
        "# X\n\n| Property | Value |\n| --- | --- |\n| Kind | [literature](kinds/literature.md) |\n| Version | 2 |\n"
        "| Created | 2026-01-02 |\n| Status | Active |\n")
    assert site_properties("# Index\n", {}) == "# Index\n"
