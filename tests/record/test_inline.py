"""``inline.tokens``: markdown-it's tokens for an inline run, made without its inline parser."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore, block, normalize
from markdown_it.token import Token

from recordtool.record import inline
from recordtool.record.mentions import markdown

_LIBRARY = MarkdownIt("commonmark").enable("table")  # markdown-it-py as it comes, the reference

# Pieces of inline runs: emphasis of every length and flank (between words, before and after
# punctuation and spaces, Unicode ones too), code spans, links that can and cannot be made
# here, escapes, line breaks with the spaces around them, and text.
_PIECES = ["a", "b", "é", "1", " ", "  ", "\t", "\n", "\n  ", "  \n", "\u00a0", "\u3000", ".", ",", "(", ")", '"',
           "-", "$", "{", "}", "|", "“", "”", "(*", "*)", ".*", "*.", " _", "_ ", "*", "**", "***", "_", "__", "___", "*a*", "**b**", "_c_", "__d__", "x*y", "x_y",
           "W_O", "$W_{QK}$", "`", "``", "`c`", "`` a`b ``", "` `", "`  `", "[", "]", "[t](u)", "[t](https://x.org/a)",
           "[*t*](u)", "[t](u v)", "[t](<u>)", "[t](javascript:x)", "[t](u \"x\")", "[t]", "[t][r]", "](u)", "(u)",
           "\\", "\\*", "\\_", "\\a", "\\\n", "\\`", "!", "![i](u)", "<", "<b>", "&", "&amp;", "~", "THEORY-1"]


def _reference(src: str) -> list[Token]:
    out: list[Token] = []
    _LIBRARY.inline.parse(src, _LIBRARY, {}, out)
    return out


def _same(src: str) -> bool:
    made = inline.tokens(src, markdown())
    return made is None or made == _reference(src)


@given(st.lists(st.sampled_from(_PIECES), max_size=30))
@settings(max_examples=3_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_tokens_are_markdown_its(pieces: list[str]) -> None:
    src = "".join(pieces)
    assert _same(src), repr(src)


def _inline_runs(text: str) -> Iterator[str]:
    state = StateCore(text, markdown(), {})
    normalize(state)
    block(state)
    yield from (token.content for token in state.tokens if token.type == "inline")


def _realistic_runs() -> list[str]:
    """The inline runs with markup of realistic bodies."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import _markdown

    rng = random.Random(7)
    return [run for _ in range(200) for run in _inline_runs(_markdown(rng, [f"THEORY-{rng.randint(1, 99)}"], None))
            if any(c in run for c in "\\`*_[]!<&")]


def _runs() -> list[str]:
    """Inline runs with markup: of realistic bodies, and made of random pieces."""
    rng = random.Random(7)
    return _realistic_runs() + ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 20))) for _ in range(3_000)]


def test_most_runs_of_research_markdown_are_made_here() -> None:
    realistic = _realistic_runs()
    made = [run for run in realistic if inline.tokens(run, markdown()) is not None]
    assert len(made) > 0.9 * len(realistic)
    assert all(_same(run) for run in _runs())


def test_what_is_made_and_what_is_left_to_markdown_it() -> None:
    md = markdown()
    kinds = [t.type for t in inline.tokens("a **b** [*c*](u) `d`\\*", md) or []]
    assert kinds == ["text", "strong_open", "text", "strong_close", "text", "link_open", "em_open", "text",
                     "em_close", "link_close", "text", "code_inline", "text_special"]
    # unpaired emphasis and delimiters inside words are text
    assert [t.content for t in inline.tokens("*a W_O b", md) or []] == ["*a W_O b"]
    for left in ("![i](u)", "<b>", "&amp;", "[t][r]", "[t](u \"title\")", "***a***", "**a*", "a*b*c"):
        assert inline.tokens(left, md) is None, left


def test_a_run_of_many_openers_is_left_to_markdown_it() -> None:
    md = markdown()
    few, many = " ".join(["*a"] * inline.MAX_OPENERS), " ".join(["*a"] * (inline.MAX_OPENERS + 1))
    assert inline.tokens(few + " b_", md) is not None and _same(few + " b_")
    assert inline.tokens(many + " b_", md) is None


def _variants() -> Iterator[tuple[str, object]]:
    real_flanks, real_pair, real_joined = inline._flanks, inline._pair, inline._joined

    def flanks_swapped(src: str, start: int, stop: int, end: int, within_words: bool) -> tuple[bool, bool]:
        can_open, can_close = real_flanks(src, start, stop, end, within_words)  # left and right confused
        return can_close, can_open

    def pair_keeping_stars(out: list[Token], opener: int, closer: int, run: str) -> None:
        real_pair(out, opener, closer, run)
        if len(run) == 2:  # the outer character of strong emphasis left as text
            out[opener].content = run[0]

    def ticks_at_least(src: str, pos: int, end: int, length: int) -> int:  # a longer run closes too
        return src.find("`" * length, pos, end)

    def not_joined(out: list[Token]) -> list[Token]:
        real_joined(out)
        return out

    yield "_flanks", flanks_swapped
    yield "_pair", pair_keeping_stars
    yield "_closing_ticks", ticks_at_least
    yield "_joined", not_joined
    yield "_ESCAPED", frozenset()


def test_a_wrong_inline_parser_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: each part of ``tokens`` got wrong is caught."""
    runs = _runs()
    for name, wrong in _variants():
        with monkeypatch.context() as patch:
            patch.setattr(inline, name, wrong)
            assert not all(_same(run) for run in runs), name
