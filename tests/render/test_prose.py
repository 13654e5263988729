"""Prose on a page: ids linked outside code, raw HTML neutralised, text kept literal."""

from __future__ import annotations

import re

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
        "See [LIT-1](LIT-1.md), `NOTE-1` and [the THEORY-2 link](https://x.org).\n\n```\nTHEORY-3\n```\n\n    THEORY-4")


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
    assert block(src, style()) == "## Top\n\n- a\n- b\n  1. c\n\n> q\n\n| x | y |\n| --- | ---: |\n| `a\\|b` | 2 |\n\n***"


def test_inline_flattens_to_one_line_for_a_cell() -> None:
    assert inline("one | LIT-1\n\n- two", style()) == "one \\| [LIT-1](LIT-1.md) two"


def test_escaped_text_reads_as_itself() -> None:
    for raw in ["a | b", "*x* _y_ __z__", "[l](u) ![i](j)", "<script>", "# h", "1. item", "- item", "&amp;", "a\\b", "~~s~~"]:
        assert _text(escape.text(raw)) == raw, raw
        assert not [t for t in markdown().parse(escape.text(raw)) if t.type not in ("paragraph_open", "inline", "paragraph_close")]


def test_mermaid_labels_cannot_end_their_node() -> None:
    assert escape.mermaid('a "b" [c] <d> `e` #f') == "a #quot;b#quot; #91;c#93; #lt;d#gt; #96;e#96; #35;f"


def test_plain_paragraphs_come_out_as_through_the_parser() -> None:
    """``block`` skips the parser for plain paragraphs: the same Markdown either way."""
    import random

    from markdown_it.tree import SyntaxTreeNode

    from recordtool.render.prose import _blocks, plain_paragraphs

    def parsed(source: str) -> str:
        root = SyntaxTreeNode(markdown().parse(source))
        return "\n".join(_blocks(root.children, style())).rstrip("\n")

    pieces = ["LIT-1", "THEORY-9", "word", "two words", " ", "  ", "\n", "\n\n", "\n \n", ".", "1.", "#", "-", "+",
              "=", "~", "$", "!", "]", "(", ")", "{", ":", "'", '"', "é", "\u00a0", "\u2028", "x_y", "*", "&", "<",
              "`", "|", "\\", "[", "\t", "\r", "    ", "   ", "a.\n2) b", "NOTE-12a", "%", "^", "@",
              "`code`", "`LIT-1`", "` a `", "`  `", "`#`", "``x``", "`a\nb`"]
    rng = random.Random(7)
    plain = code = 0
    for _ in range(20_000):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if not source.strip():
            continue
        plain += plain_paragraphs(source) is not None
        code += plain_paragraphs(source) is not None and "`" in source
        assert block(source, style()) == parsed(source), repr(source)
    assert plain > 2_000  # the fast path was taken, and often
    assert code > 300  # with code spans too
