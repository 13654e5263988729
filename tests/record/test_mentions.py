from __future__ import annotations

import re

import pytest

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


def test_what_commonmark_normalises_is_read_as_it_does() -> None:
    """A carriage return ends a line and NUL reads as U+FFFD."""
    for text, expected in [("a\rTHEORY-1", ("THEORY-1", 1, "a THEORY-1")), ("THEORY-1\x00", ("THEORY-1", 0, "THEORY-1\ufffd")),
                           ("a\r\nb THEORY-1", ("THEORY-1", 1, "a b THEORY-1")),
                           ("one\rtwo\r\rNOTE-2 here.", ("NOTE-2", 3, "NOTE-2 here."))]:
        assert [(f.id, f.line, f.sentence) for f in find_mentions(text, IDS)] == [expected], text


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\u2028", "\x85"])
def test_white_space_that_is_not_a_blank_to_commonmark_does_not_end_a_paragraph(space: str) -> None:
    """A line of such white space is blank to Python's ``strip`` and text to CommonMark: the
    paragraph goes on over it, and so does the sentence quoted."""
    found = find_mentions(f"x {space}\nNOTE-2{space}end. THEORY-3", IDS)
    assert [(f.id, f.line, f.sentence) for f in found] == [("NOTE-2", 1, "x NOTE-2 end."), ("THEORY-3", 1, "THEORY-3")]
    assert [(f.id, f.line) for f in find_mentions(f"a.\n{space}\nTHEORY-1 b.", IDS)] == [("THEORY-1", 2)]


def test_an_images_destination_reads_as_a_link_to_it() -> None:
    assert ids("![a figure of LIT-1](THEORY-1) and THEORY-2") == ["THEORY-1", "THEORY-2"]


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


def test_ids_written_in_bold_or_encoded_are_mentions() -> None:
    assert ids("__LIT-3__ is bold") == ["LIT-3"]
    assert ids("THEORY&#45;1 and THEORY\\-2") == ["THEORY-1", "THEORY-2"]


def test_an_id_next_to_emphasis_is_a_mention_as_the_page_links_it() -> None:
    from recordtool.render.prose import Style, block

    text = "See THEORY-1*THEORY-9* and **NOTE-2**LIT-3."
    expected = ["THEORY-1", "THEORY-9", "NOTE-2", "LIT-3"]
    assert [f.id for f in find_mentions(text, IDS)] == expected
    assert [f.id for f in find_mentions(text + "\n\n`code`", IDS)] == expected
    page = block(text + "\n\n`code`", Style(IDS, lambda i: (f"{i}.md", None)))
    assert [i for i in expected if f"[{i}]({i}.md)" in page] == expected


