"""The parse's tokens (``recordtool.record.token``): markdown-it's fields, and only ours come out."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from markdown_it.token import Token as MarkdownItToken

from recordtool.record import blocks, mentions
from recordtool.record.token import FIELDS, NONE, Token, ours

PATTERN = re.compile(r"\b(?:LIT|NOTE|THEORY)-\d+\b")

# Each of these has markdown-it make some of its tokens: a tab (the whole document), blocks
# not made here (indented code, raw HTML, a thematic break, a setext heading, a nested list, a
# reference definition), inline runs not made here (an image, an autolink, raw HTML, an
# entity, a link with a title), and a run with an escape (markdown-it's text_join).
LEFT_TO_MARKDOWN_IT = [
    "a\tb THEORY-1",
    "    code\n\npara THEORY-1",
    "<div>\nTHEORY-1\n</div>\n\nafter",
    "---\n\nTHEORY-1",
    "Title THEORY-1\n===",
    "- a\n  - nested THEORY-1",
    "[r]: THEORY-2\n\nsee [r] and THEORY-1",
    "an ![image](THEORY-3) of THEORY-1",
    "<https://x.org> and THEORY-1",
    "raw <b>THEORY-1</b>",
    "THEORY&#45;1 &amp; more",
    '[a](THEORY-1 "title")',
    "escaped \\*THEORY-1\\*",
    "| a | b |\n| - | - |\n| THEORY-1 | ![i](x.png) |",
]


def _every(tokens: Sequence[Any]) -> Iterator[Any]:
    for token in tokens:
        yield token
        yield from _every(token.children or ())


@pytest.mark.parametrize("text", LEFT_TO_MARKDOWN_IT)
def test_the_parse_gives_only_tokens_of_its_own_equal_to_markdown_its(text: str) -> None:
    tokens, _env = mentions.parse(text)
    assert all(type(token) is Token for token in _every(tokens))
    assert tokens == mentions.markdown().parse(text)
    assert blocks.known(mentions.markdown())
    assert all(type(token) is Token for token in _every(blocks.tokens(text, mentions.markdown(), {})))
    found, left = mentions.mentions_and_tokens(text, PATTERN)
    assert found == mentions.find_mentions(text, PATTERN)
    assert left is None or all(type(token) is Token for token in _every(left))


def test_a_token_equals_a_token_with_the_same_fields_markdown_its_included() -> None:
    theirs = MarkdownItToken("link_open", "a", 1, attrs={"href": "THEORY-1"}, map=[0, 1], level=1,
                             children=[MarkdownItToken("text", "", 0, content="x")], markup="*", info="i", block=True)
    mine = ours([theirs])[0]
    assert [getattr(mine, name) for name in FIELDS] == [getattr(theirs, name) for name in FIELDS]
    assert mine == theirs and theirs == mine and [mine] == [theirs]
    assert not mine != theirs  # noqa: SIM202 - the operator != is what is checked here
    for name, other in [("type", "link_close"), ("attrs", {"href": "THEORY-2"}), ("map", [0, 2]), ("level", 2),
                        ("content", "y"), ("markup", "_"), ("info", ""), ("block", False), ("hidden", True),
                        ("nesting", 0), ("tag", "b"), ("meta", {"k": 1})]:
        changed = ours([theirs])[0]
        setattr(changed, name, other)
        assert changed != mine and changed != theirs, name
    child = ours([theirs])[0]
    assert child.children is not None
    child.children[0].content = "y"  # (children compared too)
    assert child != theirs
    assert mine != object() and mine != None  # noqa: E711 - compared with what has no fields
    assert repr(mine).startswith("Token(type='link_open', tag='a', nesting=1, attrs={'href': 'THEORY-1'}")


def test_attributes_are_copied_and_an_empty_set_is_shared_read_only() -> None:
    theirs = MarkdownItToken("th_open", "th", 1, attrs={"style": "text-align:left"})
    mine = ours([theirs, MarkdownItToken("text", "", 0)])
    assert mine[0].attrs == {"style": "text-align:left"} and mine[0].attrs is not theirs.attrs
    assert mine[1].attrs is NONE and mine[1].meta is NONE and Token("text", "", 0).attrs is NONE
    with pytest.raises(TypeError):
        mine[1].attrs["href"] = "x"  # type: ignore[index]  # (no token's empty attributes change in place)
    assert ours(mine) == mine and all(a is b for a, b in zip(ours(mine), mine, strict=True))  # ours already: kept


@pytest.mark.parametrize("text", LEFT_TO_MARKDOWN_IT[:3] + LEFT_TO_MARKDOWN_IT[7:])
def test_with_another_version_of_markdown_it_its_whole_parse_is_made_ours(text: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Where markdown-it's rules are not those the fast paths know (another version of it),
    its own block parse (``blocks.known``) or its whole parse (``_fast_inline``) is taken: made
    ours all the same, as is the reference parse the mention finder is tested against."""
    monkeypatch.setattr(blocks, "known", lambda md: False)
    found = mentions.markdown_mentions(text, PATTERN)
    assert found == mentions.reference_mentions(text, PATTERN)
    monkeypatch.setattr(mentions, "_fast_inline", lambda: False)
    tokens, _env = mentions.parse(text)
    assert all(type(token) is Token for token in _every(tokens)) and tokens == mentions.markdown().parse(text)
    given: list[Any] = []
    real = mentions._mentions

    def spy(tokens: list[Token], pattern: re.Pattern[str]) -> list[mentions.Found]:
        given.extend(_every(tokens))
        return real(tokens, pattern)

    monkeypatch.setattr(mentions, "_mentions", spy)
    assert mentions.markdown_mentions(text, PATTERN) == found and mentions.reference_mentions(text, PATTERN) == found
    assert given and all(type(token) is Token for token in given)
