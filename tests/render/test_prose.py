"""Prose on a page: ids linked outside code, raw HTML neutralised, text kept literal."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordtool.record.mentions import markdown
from recordtool.render import escape
from recordtool.render.prose import Style, block, inline

PATTERN = re.compile(r"\b(?:LIT|NOTE|THEORY)-\d+\b")


def style() -> Style:
    return Style(PATTERN, lambda i: (f"{i}.md", None) if i != "THEORY-9" else ("wanted.md", "not in the record"))


def _text(md: str) -> str:
    return "".join(c.content for t in markdown().parse(md) if t.children for c in t.children if c.type == "text")


def test_ids_are_linked_but_not_in_code_or_links() -> None:
    src = "See LIT-1, `NOTE-1` and [the THEORY-2 link](https://x.org).\n\n```\nTHEORY-3\n```\n\n    THEORY-4\n"
    assert block(src, style()) == (
        "See [LIT-1](LIT-1.md), `NOTE-1` and [the THEORY-2 link](https://x.org).\n\n```\nTHEORY-3\n```\n\n```\nTHEORY-4\n```")


def test_dangling_ids_and_id_links_go_to_their_page() -> None:
    assert block("THEORY-9 and [it](THEORY-2)", style()) == (
        '[THEORY-9](wanted.md "not in the record") and [it](THEORY-2.md)')


def test_html_is_shown_as_text_never_passed_through() -> None:
    out = block("<script>alert(1)</script>\n\nan <b>inline</b> tag & &amp;", style())
    tokens = markdown().parse(out)
    assert not [t for t in tokens if t.type == "html_block"]
    assert not [c for t in tokens if t.children for c in t.children if c.type == "html_inline"]
    assert "<script>alert(1)</script>" in _text(out) and "an <b>inline</b> tag & &" in _text(out)


def test_structure_is_kept() -> None:
    src = "# Top\n\n- a\n- b\n  1. c\n\n> q\n\n| x | y |\n|---|--:|\n| `a\\|b` | 2 |\n\n***\n"
    assert block(src, style()) == "## Top\n\n-   a\n-   b\n    1.  c\n\n> q\n\n| x | y |\n| --- | ---: |\n| `a\\|b` | 2 |\n\n***"


@pytest.mark.parametrize("src", [
    "-\n\n\n- b",  # two blank lines after an empty item end its list
    "- a\n-\n\n\n- c",
    "1. a\n-\n\n\n\n1. b",
    "* a\n-\n\n\n- b\n-\n\n\n- c",  # a third list: not the second's marker either
    "> - a\n> -\n>\n>\n> - b",
    "- a\n\n\u00a0\n\n- b",  # a paragraph of a no-break space between them
    "a\n\n\u00a0\n\nb",
    "* ---\n* b",  # a rule first in an item of a '*' list
])
def test_lists_and_paragraphs_stay_as_many_as_they_were(src: str) -> None:
    """CommonMark reads two lists of one marker with nothing but blank lines between them as one:
    a list right after a list takes another marker. A paragraph of white space alone (not a space
    or a tab: a no-break space) stays a paragraph."""
    from markdown_it import MarkdownIt

    commonmark = MarkdownIt("commonmark")
    assert commonmark.render(block(src, style())) == commonmark.render(src)


def test_an_ordered_list_is_written_with_a_dot() -> None:
    assert block("Two parts:\n\n1) one\n2) two", style()) == "Two parts:\n\n1.  one\n2.  two"  # (the site reads no ')')


def test_inline_flattens_to_one_line_for_a_cell() -> None:
    assert inline("one | LIT-1\n\n- two", style()) == "one \\| [LIT-1](LIT-1.md) two"


def test_escaped_text_reads_as_itself() -> None:
    for raw in ["a | b", "*x* _y_ __z__", "[l](u) ![i](j)", "<script>", "# h", "1. item", "- item", "&amp;", "a\\b", "~~s~~"]:
        assert _text(escape.text(raw)) == raw, raw
        assert not [t for t in markdown().parse(escape.text(raw)) if t.type not in ("paragraph_open", "inline", "paragraph_close")]


def test_mermaid_labels_cannot_end_their_node() -> None:
    assert escape.mermaid('a "b" [c] <d> `e` #f') == "a #quot;b#quot; #91;c#93; #lt;d#gt; #96;e#96; #35;f"


# Markdown made of pieces that meet at every kind of markup.
_PIECES = ["THEORY-1", "NOTE-22", "LIT-3", "THEORY-9", "word", "x", " ", "\n", "\n\n", "  \n", "\t", "_", "__", "*",
           "**", "`", "[", "]", "(", ")", "](THEORY-2)", "](LIT-4.md)", "](NOTE-5 \"own title\")", "](THEORY-9)",
           "[it](THEORY-9 \"own\")", "[it](THEORY-9)", "[it *LIT-3*](NOTE-5 \"t\")", "[r](rel.md)", "[a](#b)",
           "]()", "](THEORY-1 \"\")", "[](THEORY-2)", "[](https://x.org)", "](rel/file.md)", "](#anchor)",
           "](https://x.org/THEORY-6)", "![a](THEORY-7)", "![b](fig.png)", "![c](https://x.org/i.png \"t\")",
           "<b>", "<https://x.org/THEORY-6>", "&#45;", "&amp;", "\\", "\\-", "    ", "> ", "- ", "1. ", "# ",
           "| a | THEORY-1 |\n| - | - |\n| [x](NOTE-5) | y |\n", "```\n", "~~~py\n", "[r]: THEORY-5\n", "[r]",
           "\"", "%", "e.g. ", ". ", "Then ", "\x00", "\r\n"]


# Pieces that make markup next to what the page writes otherwise than the body: a '!' before an
# id or a link, indented code after a list whose items are indented further than a page writes them.
_MARKUP = ["!", "THEORY-1", "<https://x.org/i.png>", "[a](b)", "![i](j)", " ", "\n", "\n\n", "1.    ", "-    ", "10.  ",
           "- ", "    ", "<script>x</script>", "<b>", "\\", "`c`", "*", "> ", "word"]


def _markup(md: str) -> tuple[int, int]:
    """The images and the raw HTML that ``md`` holds."""
    tokens = markdown().parse(md)
    children = [c for t in tokens if t.children for c in t.children]
    return (sum(c.type == "image" for c in children),
            sum(t.type == "html_block" for t in tokens) + sum(c.type == "html_inline" for c in children))


@given(st.lists(st.sampled_from(_MARKUP), max_size=25))
@settings(max_examples=1_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_page_holds_no_image_the_body_does_not_and_no_raw_html(pieces: list[str]) -> None:
    text = "".join(pieces)
    images, _html = _markup(text)
    assert _markup(block(text, style())) == (images, 0), text


def test_a_bang_before_a_link_stays_text_and_code_stays_code_wherever_the_page_puts_it() -> None:
    assert block("Wow!THEORY-1 and see!<https://x.org>", style()) == (
        "Wow\\![THEORY-1](THEORY-1.md) and see\\![https://x.org](https://x.org)")
    assert block("a\\\\!THEORY-1 b\\!THEORY-1", style()) == (  # an escaped backslash before it; an escaped '!'
        "a\\\\\\![THEORY-1](THEORY-1.md) b\\![THEORY-1](THEORY-1.md)")
    assert block("Great! And ![i](j)", style()) == "Great! And ![i](j)"  # a '!' before no link, and an image, as they were
    # Code blocks are fenced: indented code is read by where it starts, which the page moves
    assert block("1.    x\n\n    <b>code</b>", style()) == "1.  x\n\n```\n<b>code</b>\n```"  # (after the list)
    assert block("- x\n\n      code in the item\n\n    <b>c</b>", style()) == (
        "-   x\n\n    ```\n    code in the item\n    ```\n\n    &lt;b\\>c&lt;/b\\>")  # code in an item, prose after it
    assert block("    <b>c</b>", style()) == "```\n<b>c</b>\n```"  # (a page may put a text after a list of its own)
    assert block("-     <b>c</b>\n- ```\n  d\n  ```", style()) == (  # code never on an item's marker line
        "+ \n    ```\n    <b>c</b>\n    ```\n\n+ \n    ```\n    d\n    ```")


@given(st.lists(st.sampled_from(_PIECES), max_size=30))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_frozen_writers_tree_is_markdown_its(pieces: list[str]) -> None:
    """The oracle the writer is held to (``frozen_prose``) wrote markdown-it's syntax tree."""
    from markdown_it.tree import SyntaxTreeNode

    from tests.render.frozen_prose import Item, tree

    def same(ours: Sequence[Item], theirs: list[SyntaxTreeNode]) -> None:
        assert [n.type for n in ours] == [n.type for n in theirs]
        for a, b in zip(ours, theirs, strict=True):
            assert (a.tag, a.markup, a.info, a.content, a.attrs, a.hidden) == (
                b.tag, b.markup, b.info, b.content, b.attrs, b.hidden)
            same(a.children or [], b.children)

    tokens = markdown().parse("".join(pieces))
    same(tree(tokens), SyntaxTreeNode(tokens).children)
