from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from recordtool.record.mentions import find_mentions

IDS = re.compile(r"\b(?:THEORY|NOTE|LIT)-\d+\b")


def ids(text: str) -> list[str]:
    return [f.id for f in find_mentions(text, IDS)]


def test_ids_in_prose_are_mentions() -> None:
    assert ids("See THEORY-988 and LIT-1534.") == ["THEORY-988", "LIT-1534"]


def test_ids_in_code_are_not_mentions() -> None:
    text = "Prose THEORY-1.\n\n`THEORY-2` inline\n\n```\nTHEORY-3\n```\n\n    THEORY-4 indented\n"
    assert ids(text) == ["THEORY-1"]


def test_raw_html_is_not_prose() -> None:
    assert ids("<div>THEORY-5</div>\n\nText THEORY-6 <span title='THEORY-7'>x</span>") == ["THEORY-6"]


def test_link_targets_to_ids_are_mentions() -> None:
    assert ids("The [induction paper](LIT-1538.md) says so.") == ["LIT-1538"]


def test_ids_in_emphasis_are_mentions_as_the_page_links_them() -> None:
    assert ids("_THEORY-1_ and *NOTE-2* and __LIT-3__") == ["THEORY-1", "NOTE-2", "LIT-3"]
    assert ids("snake_THEORY-4 is one word") == []


def test_ids_inside_words_are_not_mentions() -> None:
    assert ids("XTHEORY-1 and THEORY-12a") == []


def test_lines_and_sentences() -> None:
    found = find_mentions("First line.\nSecond has THEORY-1. Third\n\nNew paragraph with NOTE-2!", IDS)
    assert [(f.id, f.line, f.sentence) for f in found] == [
        ("THEORY-1", 1, "Second has THEORY-1."),
        ("NOTE-2", 3, "New paragraph with NOTE-2!"),
    ]


ABBREVIATED = [
    "Musat et al. (2023)", "Musat et al. Their", "e.g. GPT-2", "i.e. The", "Fig. (3)", "fig. A", "Figs. A", "Eq. (2)",
    "Eqs. (2)", "vs. GPT", "etc. And", "cf. The", "approx. The", "Sec. (4)", "resp. The", "N. Elhage", "U.S. The",
    "a.k.a. The", "Prof. Olah", "Dr. Who", "pp. (4)", "viz. The",
]


@pytest.mark.parametrize("abbreviated", ABBREVIATED)
@pytest.mark.parametrize("plain", [True, False])
def test_sentences_do_not_end_at_abbreviations(abbreviated: str, plain: bool) -> None:
    # the second form goes through the Markdown parser (a link makes the prose not plain)
    text = f"Before. See THEORY-1 and {abbreviated} more here. After."
    if not plain:
        text = text.replace("THEORY-1", "[THEORY-1](THEORY-1.md)")
    (found,) = find_mentions(text, IDS)
    quoted = found.sentence.replace("[THEORY-1](THEORY-1.md)", "THEORY-1")
    assert quoted == f"See THEORY-1 and {abbreviated} more here."


@pytest.mark.parametrize("ending", ["in 2021. The", "the end. (Then", "a word. “Quoted", "why? The", "so! The",
                                    "fig.5. The", "as usual. The", "a vital. The", "of Table 2. The"])
def test_sentences_still_end_at_ordinary_words(ending: str) -> None:
    text = f"See THEORY-1 {ending} next."
    (found,) = find_mentions(text, IDS)
    assert found.sentence == f"See THEORY-1 {ending.rsplit(' ', 1)[0]}"


def test_lists_and_emphasis_keep_mentions() -> None:
    assert ids("- item *THEORY-1*\n- **NOTE-2**\n\n> quoted LIT-3") == ["THEORY-1", "NOTE-2", "LIT-3"]


def test_plain_paragraphs_take_a_shortcut_with_the_same_result() -> None:
    import random

    from recordtool.record.mentions import is_plain, markdown_mentions, plain_mentions

    rng = random.Random(0)
    pieces = ["word", "the", "THEORY-1", "NOTE-22", "LIT-3.", "Then", "(see", "LIT-4)", "end.", "Next!", "q?",
              "\n", "\n", "\n\n", "\n  \n", "  ", "“Quoted", "X."]
    compared = 0
    for _ in range(600):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        if not is_plain(text):
            continue
        compared += 1
        assert plain_mentions(text, IDS) == markdown_mentions(text, IDS), text
    assert compared > 300


def test_what_commonmark_normalises_takes_the_parser() -> None:
    """A carriage return ends a line and NUL reads as U+FFFD: the lines and sentences are the
    parser's (the shortcut gave line 0 and kept the NUL)."""
    from recordtool.record.mentions import reference_mentions

    for text in ["a\rTHEORY-1", "THEORY-1\x00", "a\r\nb THEORY-1", "one\rtwo\r\rNOTE-2 here."]:
        assert find_mentions(text, IDS) == reference_mentions(text, IDS), text


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\u2028", "\x85"])
def test_white_space_that_is_not_a_blank_to_commonmark_takes_the_parser(space: str) -> None:
    """A line of such white space is blank to Python's ``strip`` (which the shortcut for plain
    paragraphs uses) and text to CommonMark: the lines and sentences are the parser's (the
    shortcut split the paragraph there, and gave other lines)."""
    from recordtool.record.mentions import is_plain, reference_mentions

    for text in [f"a.\n{space}\nTHEORY-1 b.", f"{space}\nTHEORY-1", f"x {space}\nNOTE-2{space}end. THEORY-3"]:
        assert not is_plain(text)
        assert find_mentions(text, IDS) == reference_mentions(text, IDS), text


def test_markdown_constructs_take_the_parser() -> None:
    from recordtool.record.mentions import is_plain

    for text in ["a `b`", "<b>", "_em_", "*em*", "THEORY-1*THEORY-2*", "[x](y)", "a \\ b", "&amp;", "| a |", "\tx",
                 "# h", "> q", "- i", "1. i", "    code", "~~~", "===", "* i", "+ i", "_ _ _"]:
        assert not is_plain(text), text
        assert not is_plain("Plain words.\n" + text), text
    assert is_plain("Plain words, THEORY-1 (and NOTE-2).\n\nMore: LIT-3!")


def test_links_to_other_sites_and_link_text_are_not_mentions() -> None:
    assert ids("[x](https://example.org/NOTE-9) and <https://example.org/THEORY-7>") == []
    assert ids("[the paper LIT-1](LIT-2.md) says") == ["LIT-2"]


def test_a_long_sentence_is_cut_between_words_around_the_id() -> None:
    from recordtool.record.mentions import MAX_SENTENCE

    words = [f"word{i}" for i in range(120)]
    words[60] = "THEORY-1"
    (found,) = find_mentions(" ".join(words) + ".", IDS)
    assert "THEORY-1" in found.sentence and len(found.sentence) <= MAX_SENTENCE + 2
    inner = found.sentence.strip("…")
    assert found.sentence.startswith("…") and found.sentence.endswith("…")
    assert all(w in words for w in inner.split())  # whole words only


# Pieces of Markdown that decide where prose is, where its words end and what a link points
# at, each of them next to ids: the shortcut of ``markdown_mentions`` (the inline parse of
# only the lines that may hold a mention) must find what parsing everything finds.
_PIECES = ["THEORY-1", "NOTE-22", "LIT-3", "THEORY", "-", "7", "\u0663", "word", "x", " ", "  ", "\t", "\n", "\n\n",
           "\u00a0", "\u2028", "\u3000\n",
           "_", "__", "*", "**", "`", "``", "[", "]", "(", ")", "](THEORY-2)", "](LIT-4.md)", "](NOTE-5 \"t\")",
           "<", ">", "<b>", "</b>", "<!-- ", " -->", "<https://x.org/THEORY-6>", "!", "![", "&#45;", "&#84;", "&amp;",
           "&", ";", "\\", "\\-", "\\_", "    ", "> ", "- ", "1. ", "# ", "=== ", "---", "| a | b |\n| - | - |\n",
           "```\n", "~~~\n", "[r]: THEORY-5\n", "[r]", "[r][]", "e.g. ", ". ", "Then ",
           # whole constructs where the raw text and the parsed text differ around an id
           "__THEORY-8__", "*THEORY-9*", "_NOTE-10_", "THEORY-11_", "THEORY&#45;12", "&#84;HEORY-13", "THEORY\\-14",
           "`THEORY-15`", "[x][s]\n\n[s]: THEORY-16\n", "\n\n[t]\n\n[t]: LIT-17\n", "![a](THEORY-18)",
           "[a](<THEORY-19>)", "<THEORY-20>", "[a](THEORY&#45;21)", "[a](THEORY\\-22)"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_markdown_mentions_find_what_a_full_parse_finds(pieces: list[str]) -> None:
    from recordtool.record.config import id_regex
    from recordtool.record.mentions import markdown_mentions, reference_mentions

    text = "".join(pieces)
    for pattern in (IDS, id_regex(["THEORY", "NOTE", "LIT"])):
        assert markdown_mentions(text, pattern) == reference_mentions(text, pattern), text


def test_the_shortcut_is_taken_and_compared_on_real_bodies() -> None:
    import random

    from recordtool.record.mentions import (
        markdown_mentions,
        mentions_and_tokens,
        reference_mentions,
    )

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import _markdown  # type: ignore[import-not-found]

    rng = random.Random(1)
    for _ in range(200):
        body = _markdown(rng, [f"THEORY-{rng.randint(1, 99)}" for _ in range(rng.randint(0, 8))],
                         rng.choice([None, "NOTE-3"]))
        expected = reference_mentions(body, IDS)
        assert markdown_mentions(body, IDS) == expected, body
        assert mentions_and_tokens(body, IDS)[0] == expected, body


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mentions_found_with_shortcuts_are_what_a_full_parse_finds(pieces: list[str]) -> None:
    """``find_mentions`` and ``mentions_and_tokens`` parse nothing when no id can be there
    (``__THEORY-1__`` and ``THEORY&#45;1`` can be), and plain paragraphs take a shortcut of
    their own (``plain_mentions``: no emphasis either, ``THEORY-1*THEORY-2*``)."""
    from recordtool.record.mentions import mentions_and_tokens, reference_mentions

    text = "".join(pieces)
    expected = reference_mentions(text, IDS)
    assert find_mentions(text, IDS) == expected, text
    assert mentions_and_tokens(text, IDS)[0] == expected, text


def test_ids_written_in_bold_or_encoded_are_mentions() -> None:
    assert ids("__LIT-3__ is bold") == ["LIT-3"]
    assert ids("THEORY&#45;1 and THEORY\\-2") == ["THEORY-1", "THEORY-2"]


# ``parse`` makes the inline runs without inline markup itself (``_plain_inline``): every
# token must be markdown-it's, line breaks and the spaces around them above all.
_LINES = ["word", "THEORY-1", "x y", " ", "  ", "   ", "\t", " \t", "\t ", "\n", "\n\n", " \n", "  \n", "   \n",
          "\t\n", "\n ", "\n  ", "\n\t", "\n\n  ", "\r\n", "\r", "\x00", "é", "\u00a0", "\u2028", ".", ":", "-", "+", "#",
          "=", "$", "%", "@", "^", "{", "}", "(", ")", "|", "'", '"', "1. ", "- ", "> ", "# ", "    ", "---",
          "| a | b |\n| - | - |\n", "| c |  d  |\n", "```\n", "[r]: THEORY-5\n", "<div>\n",
          "\\", "`", "*", "_", "[", "]", "!", "<", "&", "~", "&amp;", "[a](b)", "*e*", "`c`", "<b>", "[a", "b]",
          "](u)", "[x [y] z](u)", "[x-y:z]", "](THEORY-1)", "[r]", "[r]: THEORY-2\n", "<https://x.org/a-b>",
          "<a-b>", "THEORY-1-2", "a:b", "#x", "~~s~~", "x_y", "*a-b*", "`a-b`", "&#45;", "\\-"]


_LIBRARY = MarkdownIt("commonmark").enable("table")  # markdown-it-py as it comes, the reference


def _same_parse(text: str) -> bool:
    from recordtool.record.mentions import markdown, parse

    env: dict[str, object] = {}
    tokens = _LIBRARY.parse(text, env)
    return parse(text) == (tokens, env) and markdown().parse(text) == tokens


@given(st.lists(st.sampled_from(_LINES), max_size=40))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_parse_gives_markdown_its_tokens(pieces: list[str]) -> None:
    assert _same_parse("".join(pieces)), repr("".join(pieces))


def _texts() -> list[str]:
    import random

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import _markdown

    rng = random.Random(3)
    texts = [_markdown(rng, [f"THEORY-{rng.randint(1, 99)}"], None) for _ in range(100)]
    texts += ["".join(rng.choice(_LINES) for _ in range(rng.randint(1, 30))) for _ in range(3_000)]
    return texts


def test_parse_takes_its_shortcut_and_a_broken_shortcut_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: each way of getting line breaks wrong is caught."""
    from markdown_it.token import Token

    from recordtool.record import mentions

    texts = _texts()
    real = mentions._plain_inline
    taken = 0

    def counting(content: str) -> list[Token]:
        nonlocal taken
        taken += 1
        return real(content)

    monkeypatch.setattr(mentions, "_plain_inline", counting)
    assert all(_same_parse(text) for text in texts)
    assert taken > 1_000  # the shortcut was taken, and often

    def soft_only(content: str) -> list[Token]:  # no hard breaks
        for token in (tokens := real(content)):
            token.type = "softbreak" if token.type == "hardbreak" else token.type
        return tokens

    def spaces_kept(content: str) -> list[Token]:  # the next line's leading spaces kept
        return real(content.replace("\n", "\n\x01")) if "\n " in content or "\n\t" in content else real(content)

    def one_text(content: str) -> list[Token]:  # the line breaks left in the text
        return [mentions._text_token(content)] if content else []

    for broken in (soft_only, spaces_kept, one_text):
        monkeypatch.setattr(mentions, "_plain_inline", broken)
        assert not all(_same_parse(text) for text in texts), broken.__name__


def test_the_text_rule_stops_where_an_inline_rule_can_fire(monkeypatch: pytest.MonkeyPatch) -> None:
    """``markdown()``'s terminators give markdown-it's tokens (above); without one of them
    (']', which ends a link's text, or '&', where an entity starts) the comparison fails."""
    import random

    from recordtool.record.mentions import TERMINATORS, markdown

    assert markdown().inline.terminator_re is TERMINATORS
    rng = random.Random(5)
    texts = ["".join(rng.choice(_LINES) for _ in range(rng.randint(1, 30))) for _ in range(3_000)]
    for dropped in ("\\]", "&"):
        monkeypatch.setattr(markdown().inline, "terminator_re", re.compile(TERMINATORS.pattern.replace(dropped, "")))
        assert not all(_same_parse(text) for text in texts), dropped


def test_block_rules_stop_logging_only_where_debug_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging
    import types

    from recordtool.record.mentions import _quiet_block_rules

    quiet, loud = logging.getLogger("recordtool-test.quiet"), logging.getLogger("recordtool-test.loud")
    loud.setLevel(logging.DEBUG)
    for name, logger in (("quiet", quiet), ("loud", loud)):
        module = types.ModuleType(f"markdown_it.rules_block.{name}")
        module.LOGGER = logger  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    try:
        _quiet_block_rules.__wrapped__()
        assert "debug" in vars(quiet) and "debug" not in vars(loud)
    finally:
        vars(quiet).pop("debug", None)


_PLAIN_PIECES = ["THEORY-1", "NOTE-22", "LIT-3", "THEORY", "-", "7", "word", "x", " ", "  ", "\n", "\n\n", "*", "**",
                 "~", "!", ".", "(", ")", "e.g. ", ". ", "*THEORY-9*", "**NOTE-2**", "THEORY-4*", "*LIT-5"]


@given(st.lists(st.sampled_from(_PLAIN_PIECES), max_size=40))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plain_paragraphs_with_emphasis_mention_what_a_parse_finds(pieces: list[str]) -> None:
    """Plain paragraphs may hold emphasis (``*``): the shortcut, which reads the raw text, and
    the parse, which reads the text between the markup, find the same ids on the same lines
    (``THEORY-1*THEORY-9*`` mentions both, as the page links both). The sentences quoted
    differ by the markup, which only the raw text holds."""
    from recordtool.record.mentions import is_plain, markdown_mentions, plain_mentions

    text = "".join(pieces)
    assume(is_plain(text))
    assert ([(f.id, f.line) for f in plain_mentions(text, IDS)]
            == [(f.id, f.line) for f in markdown_mentions(text, IDS)]), text


def test_an_id_next_to_emphasis_is_a_mention_as_the_page_links_it() -> None:
    from recordtool.record.mentions import markdown_mentions, plain_mentions
    from recordtool.render.prose import Style, block

    text = "See THEORY-1*THEORY-9* and **NOTE-2**LIT-3."
    expected = ["THEORY-1", "THEORY-9", "NOTE-2", "LIT-3"]
    assert [f.id for f in plain_mentions(text, IDS)] == expected
    assert [f.id for f in markdown_mentions(text, IDS)] == expected
    assert [f.id for f in markdown_mentions(text + "\n\n`code`", IDS)] == expected  # not plain: parsed
    page = block(text + "\n\n`code`", Style(IDS, lambda i: (f"{i}.md", None)))
    assert [i for i in expected if f"[{i}]({i}.md)" in page] == expected


# Pieces of link destinations around what markdown-it's ``normalizeLink`` changes: schemes, user
# names, ports and IPv6 hosts, punycode, percent-escapes, spaces, non-ASCII, backslashes.
_URL_PIECES = ["http", "https", "HTTP", "http://", "https://", "mailto:", "ftp:", "javascript:", ":", "//", "/",
               "\\", "?", "#", "@", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", "-", ".", "_", "~", "a",
               "Z", "9", "0", "xn--", "XN--", "xn--bcher-kva", "example", "org", "..", "localhost", "[", "]", "::1",
               "%", "%41", "%zz", " ", "é", "\u00a0", "www.", "user:pw@", "THEORY-1", ".md", ":80"]


@given(st.lists(st.sampled_from(_URL_PIECES), max_size=14))
@settings(max_examples=2000, deadline=None)
def test_link_destinations_are_normalised_as_markdown_it_does(pieces: list[str]) -> None:
    from markdown_it.common.normalize_url import normalizeLink

    from recordtool.record.mentions import normalize_link

    url = "".join(pieces)
    assert normalize_link(url) == normalizeLink(url), repr(url)


def test_most_link_destinations_take_the_shortcut() -> None:
    """The comparison above can fail: destinations that markdown-it changes are not passed
    through, and common ones are (so the shortcut is taken)."""
    from recordtool.record.mentions import _AS_IT_IS, normalize_link

    for url in ["THEORY-1", "../notes/NOTE-2.md#x", "https://arxiv.org/abs/2301.1", "http://Example.ORG"]:
        assert _AS_IT_IS.fullmatch(url), url
    for url, normal in [("a b", "a%20b"), ("//@host", "//host"), ("//::1", "//:1:"), ("é", "%C3%A9"),
                        ("x%zz", "x%25zz"), ("https://xn--bcher-kva.ch", "https://xn--bcher-kva.ch")]:
        assert normalize_link(url) == normal, url


# Lines that start (or almost start) every kind of block, at several indents, inside quotes and
# lists and as a paragraph's next line: each block rule is tried only at the lines whose first
# character can start its block (``BLOCK_MARKERS``), which must give markdown-it's tokens.
_BLOCK_LINES = ["word", "THEORY-1", "\n", "\n\n", " ", "  ", "    ", "\t", "> ", ">", "- ", "-", "* ", "+ ", "1. ",
                "2) ", "10. ", "0.", "# ", "#", "###### ", "####### ", "## x #", "---", "***", "___", "- - -", "_ _",
                "===", "```", "~~~", "```py", "``", "~~", "[r]: THEORY-5", "[r]: <x> 't'", "[r]", "[x](y)", "<div>",
                "<!-- c -->", "<?p?>", "<b>", "</b>", "<x", "| a | b |", "| - | - |", "|-|", ":-:|", "a|b", "-|-", ":--- | ---:", ":-|-:", "x | y",
                "\u0663. ", "\u00a0", "\x00", "\r\n", "&#35; ", "\\# ", "\\- "] + [f"{d}{'.)'[int(d) % 2]} " for d in "3456789"]


def _block_texts(seed: int, count: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return ["\n".join("".join(rng.choice(_BLOCK_LINES) for _ in range(rng.randint(1, 3)))
                      for _ in range(rng.randint(1, 12))) for _ in range(count)]


def _scanner_library() -> MarkdownIt:
    from recordtool.record.mentions import scanner

    reference = MarkdownIt("zero", {"html": True})
    reference.block.ruler.enableOnly([r.name for r in scanner().block.ruler.__rules__ if r.enabled])
    reference.inline.ruler.enableOnly([r.name for r in scanner().inline.ruler.__rules__ if r.enabled])
    reference.inline.ruler2.enableOnly([r.name for r in scanner().inline.ruler2.__rules__ if r.enabled])
    reference.core.ruler.enableOnly([r.name for r in scanner().core.ruler.__rules__ if r.enabled])
    return reference


@given(st.lists(st.lists(st.sampled_from(_BLOCK_LINES), min_size=1, max_size=3), max_size=14))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_block_rules_tried_by_first_character_give_markdown_its_tokens(lines: list[list[str]]) -> None:
    from recordtool.record.mentions import markdown, scanner

    text = "\n".join("".join(line) for line in lines)
    assert markdown().parse(text) == _LIBRARY.parse(text), repr(text)
    assert scanner().parse(text) == _SCANNER_LIBRARY.parse(text), repr(text)


_SCANNER_LIBRARY = _scanner_library()


def test_a_block_rule_left_out_at_its_marker_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: leaving out any rule at any of its markers changes the
    tokens of some of these texts."""
    from recordtool.record import mentions

    texts = _block_texts(5, 1_500)
    md = MarkdownIt("commonmark").enable("table")
    mentions._dispatch_block_rules(md)
    assert all(md.parse(text) == _LIBRARY.parse(text) for text in texts)
    for name, chars in mentions.BLOCK_MARKERS.items():
        for char in chars:
            monkeypatch.setitem(mentions.BLOCK_MARKERS, name, chars.replace(char, ""))
            broken = MarkdownIt("commonmark").enable("table")
            mentions._dispatch_block_rules(broken)
            assert any(broken.parse(text) != _LIBRARY.parse(text) for text in texts), (name, char)
            monkeypatch.setitem(mentions.BLOCK_MARKERS, name, chars)
