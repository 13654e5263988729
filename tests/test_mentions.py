from __future__ import annotations

import re

from recordtool.mentions import find_mentions

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


def test_ids_inside_words_are_not_mentions() -> None:
    assert ids("XTHEORY-1 and THEORY-12a") == []


def test_lines_and_sentences() -> None:
    found = find_mentions("First line.\nSecond has THEORY-1. Third\n\nNew paragraph with NOTE-2!", IDS)
    assert [(f.id, f.line, f.sentence) for f in found] == [
        ("THEORY-1", 1, "Second has THEORY-1."),
        ("NOTE-2", 3, "New paragraph with NOTE-2!"),
    ]


def test_lists_and_emphasis_keep_mentions() -> None:
    assert ids("- item *THEORY-1*\n- **NOTE-2**\n\n> quoted LIT-3") == ["THEORY-1", "NOTE-2", "LIT-3"]
