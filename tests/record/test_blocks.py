"""``blocks.tokens``: markdown-it's block tokens for a document, made without its block parser."""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.rules_core import StateCore, normalize
from markdown_it.token import Token

from recordtool.record import blocks
from recordtool.record.mentions import markdown, scanner

_LIBRARY = MarkdownIt("commonmark").enable("table")  # markdown-it-py as it comes, the reference

# Lines of documents: each kind of block made here, at the top level, in list items and in
# quotes, and lines next to them that make markdown-it read them otherwise (a setext underline,
# a lazy line, a delimiter row under a fence, an indented line, a loose list, a reference
# definition, a thematic break, an empty item, alone or as the text of an item or a quote, a
# tab, a line of spaces, a line of U+3000, rows of no cell, a delimiter row indented).
_LINES = ["a", "b *c*", "", "", " ", "   ", "\u3000", "\t", "a\tb", "# h", "### h ##", "## #", "#x", "####### h",
          "```", "```py", "```a|b", "~~~", "````", "``` `", "  ```", "    code", "  x", "   y", "  - n", "  # h",
          "- a", "- b", "* b", "+ c", "-  x", "-     x", "- *e*", "- [l](u) x", "- [l]: x", "-", "- ", "*", "+1",
          "1. a", "2. b", "1) c", "3) d", "01. z", "1.", "1234567890. x", "2024 was", "> q", "> r", ">s", ">", "> - x",
          "> # h", "| a | b |", "|---|---|", "| :-: | --: |", "|:--|", "| x |", "| x", "| x | y | z |", "|-|", "|", "| a \\| b |",
          "a | b", "--- | ---", ":--", "x|y", "[a](b)", "[a]: b", "**s**", "__u__", "`c`", "- # h", "1. # h", "#",
          "---", "***", "* * *", "___", "===", "--", "<div>", "- a\n  b", "1. a\n   b", "- a\nb", "- *", "* * ", ">*", "> +",
          "1. -", "- 2)", "> 1.  ", "| ", "||", "| |", " |-|", "   --- | ---"]
_ENDINGS = ["", "\n", "\n\n", "\n  "]
# Documents whose blocks are made here, with what the random ones seldom meet together.
_MADE = ["| a | b |\n| :- | -: |\n| x\n| 1 | 2 | 3 |\n\nafter", "- a\n\n- b\n  more\nlazy\n\n\nc", "3) x\n4) y\n1. z",
         "## h ##\n```py\nx\n\n  ```  \n~~~\nrest", ">so\n> t\n\n> u", "para\n1. one\n- two", "a\n2. b\n# h"]


def _normalised(src: str) -> str:
    state = StateCore(src, _LIBRARY, {})
    normalize(state)
    return state.src


def _reference(src: str) -> list[Token]:
    out: list[Token] = []
    _LIBRARY.block.parse(src, _LIBRARY, {}, out)
    return out


def _same(src: str) -> bool:
    src = _normalised(src)
    return blocks.tokens(src, markdown(), {}) == _reference(src)


def _whole(src: str) -> bool:
    """Whether every block of ``src`` is made here."""
    return blocks.parse(_normalised(src), markdown(), {})[1]


@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=10), st.sampled_from(_ENDINGS))
@settings(max_examples=3_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_tokens_are_markdown_its(lines: list[str], ending: str) -> None:
    src = "\n".join(lines) + ending
    assert _same(src), repr(src)


def _realistic_bodies() -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import _markdown

    rng = random.Random(7)
    return [_markdown(rng, [f"THEORY-{rng.randint(1, 99)}" for _ in range(3)], None) for _ in range(200)]


def _documents() -> list[str]:
    """Documents: realistic bodies, and made of random lines."""
    rng = random.Random(7)
    return _realistic_bodies() + _MADE + ["\n".join(rng.choice(_LINES) for _ in range(rng.randint(1, 10))) + rng.choice(_ENDINGS)
                                  for _ in range(5_000)]


def test_most_bodies_of_research_markdown_are_made_here() -> None:
    realistic = _realistic_bodies()
    made = [body for body in realistic if _whole(body)]
    assert all(_whole(document) for document in _MADE)
    assert len(made) > 0.9 * len(realistic)
    assert all(_same(document) for document in _documents())


def _kinds(src: str) -> list[str]:
    return [token.type for token in blocks.tokens(src, markdown(), {})]


def test_what_is_made_and_what_is_left_to_markdown_it() -> None:
    assert _kinds("## A\n\ntext\n- one\n- two\n\n> q\n\n```\ncode\n```\n\n| a |\n| - |\n| 1 |") == [
        "heading_open", "inline", "heading_close", "paragraph_open", "inline", "paragraph_close",
        "bullet_list_open", "list_item_open", "paragraph_open", "inline", "paragraph_close", "list_item_close",
        "list_item_open", "paragraph_open", "inline", "paragraph_close", "list_item_close", "bullet_list_close",
        "blockquote_open", "paragraph_open", "inline", "paragraph_close", "blockquote_close", "fence",
        "table_open", "thead_open", "tr_open", "th_open", "inline", "th_close", "tr_close", "thead_close",
        "tbody_open", "tr_open", "td_open", "inline", "td_close", "tr_close", "tbody_close", "table_close"]
    tight, loose = blocks.tokens("- a\n- b", markdown(), {}), blocks.tokens("- a\n\n- b", markdown(), {})
    assert [t.hidden for t in tight if t.type.startswith("paragraph")] == [True] * 4
    assert [t.hidden for t in loose if t.type.startswith("paragraph")] == [False] * 4
    for left in ("    code", "a\n===", "a\n---", "<div>", "[a]: b", "***", "- a\n  - b", "> a\nlazy", ">\n> a",
                 "-", "a\tb", "text | x\n| - | - |", "```a|b\n|-|-|", "|\n| ", "| |\n||", "~~~|\n |-", "a | b\n   --- | ---"):
        assert not _whole(left) and _same(left), left


@pytest.mark.parametrize("marker", ["*", "-", "+", "1.", "2)"])
@pytest.mark.parametrize("container", ["- ", "* ", "1. ", "> ", ">"])
@pytest.mark.parametrize("after", ["", " ", "   "])
def test_an_item_or_a_quote_whose_text_is_an_empty_item_holds_a_list(container: str, marker: str, after: str) -> None:
    """``- *`` is an item holding an empty list, as markdown-it has it, not a paragraph '*'."""
    src = f"{container}{marker}{after}\nnext"
    assert _same(src), repr(src)
    assert "bullet_list_open" in _kinds(src)[1:] or "ordered_list_open" in _kinds(src)[1:], repr(src)


def test_the_blocks_after_one_left_to_markdown_it_are_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    left: list[int] = []
    real = blocks._Blocks.left_to_markdown_it

    def counted(self: blocks._Blocks, at: int) -> int:
        left.append(at)
        return real(self, at)

    monkeypatch.setattr(blocks._Blocks, "left_to_markdown_it", counted)
    src = "para\n\n- a\n  - b\n\nafter *x*\n\n***\n\n# h\n- c\n  - d\n\n| t |\n| - |"
    assert _same(src)
    assert left == [2, 7, 10]  # the nested lists and the thematic break; the rest made here


def test_parsers_it_does_not_know() -> None:
    assert blocks.known(markdown()) and blocks.known(scanner())
    assert not blocks.known(MarkdownIt("commonmark"))  # no table
    assert not blocks.known(MarkdownIt("commonmark", {"tasklists": True}).enable("table"))
    assert not blocks.known(MarkdownIt("commonmark", {"maxNesting": 3}).enable("table"))


def _variants() -> Iterator[tuple[str, object]]:
    real_continues, real_quoted = blocks._continues, blocks._quoted

    def continues_always(line: str, ordered_from_one: bool, inside: bool = False) -> bool:
        real_continues(line, ordered_from_one, inside)  # (what it leaves to markdown-it, still left)
        return True  # a paragraph swallows the heading, fence, quote or list after it

    def outer_cells_dropped(line: str) -> list[str]:  # a row's first and last cells dropped, empty or not
        return mdTrim(line).split("|")[1:-1]

    def two_dropped(line: str) -> str:  # '>' and the next character dropped, a space or not
        return line[2:] or real_quoted(line)

    yield "_continues", continues_always
    yield "_same_list", lambda line, number, marker: None  # a loose list made two
    yield "_cells", outer_cells_dropped
    yield "_HEADING", re.compile(r"(#{1,6})")  # '#x' a heading
    yield "_quoted", two_dropped


def test_a_wrong_block_parser_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: each part of ``tokens`` got wrong is caught."""
    documents = _documents()
    for name, wrong in _variants():
        with monkeypatch.context() as patch:
            patch.setattr(blocks, name, wrong)
            assert not all(_same(document) for document in documents), name
