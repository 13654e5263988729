from __future__ import annotations

import datetime

import pytest
import yaml

from recordtool.record.source import SourceError, parse_source


def test_marks_are_one_based_line_and_column() -> None:
    source = parse_source(b"id: NOTE-1\ncites:\n  - {id: LIT-1, as: paper}\n")
    assert source.data == {"id": "NOTE-1", "cites": [{"id": "LIT-1", "as": "paper"}]}
    assert source.mark(("id",)) == (1, 5)
    assert source.mark(("cites", 0, "as")) == (3, 21)
    assert source.mark(("cites",), key=True) == (2, 1)
    assert source.mark(("missing", "deeper")) == (1, 1)


def test_scalars_resolve_like_yaml_but_dates_stay_text() -> None:
    source = parse_source(b"a: 1\nb: 1.5\nc: true\nd: null\ne: 2026-10-26\nf: word\ng: '3'\nh: 0x10\n")
    assert source.data == {"a": 1, "b": 1.5, "c": True, "d": None, "e": "2026-10-26", "f": "word", "g": "3", "h": 16}


@pytest.mark.parametrize("word", [
    "yes", "Yes", "YES", "yEs", "no", "NO", "nO", "true", "True", "TRUE", "tRUE", "false", "FALSE", "on", "On", "ON",
    "oN", "off", "Off", "OFF", "null", "Null", "NULL", "nULL", "~", "y", "n", "note", "topic-18", "theory", "Yesterday",
    "offset", "nothing", "0", "-1", "+1", "1.5", ".5", ".inf", "-.inf", ".nan", "1_000", "0o17", "0b101", "1:30",
    "2026-10-26", "o", "t", "F"])
def test_plain_words_resolve_as_safe_yaml_resolves_them(word: str) -> None:
    expected = yaml.safe_load(f"v: {word}")["v"]
    if isinstance(expected, datetime.date):
        expected = word  # dates stay text; the schema parses them
    got = parse_source(f"v: {word}\n".encode()).data["v"]
    assert got == expected or (got != got and expected != expected)  # NaN is NaN
    assert type(got) is type(expected)


def test_byte_order_mark_is_accepted() -> None:
    assert parse_source("\ufeffid: NOTE-1\n".encode()).data == {"id": "NOTE-1"}


def test_aliases_are_followed_within_bounds() -> None:
    source = parse_source(b"a: &x [1, 2]\nb: *x\n")
    assert source.data == {"a": [1, 2], "b": [1, 2]}


def test_merge_keys_are_refused() -> None:
    with pytest.raises(SourceError) as info:
        parse_source(b"a: &x {k: 1}\nb:\n  <<: *x\n")
    assert (info.value.line, info.value.col) == (3, 3)


class _RefusesDeepNesting(yaml.CSafeLoader):  # type: ignore[misc]
    """libyaml as PyYAML 6.0.4's wheels have it: a thousand levels of nesting refused before
    the events of the first hundred are given."""

    def get_event(self) -> yaml.Event:
        raise yaml.MarkedYAMLError("while increasing flow level", None, "exceeded maximum nesting depth",
                                   yaml.Mark("<unicode string>", 0, 2, 1005, None, None))

    get_single_node = get_event


@pytest.mark.parametrize("text", ["title: T\ntags: " + "[" * 1200 + "]" * 1200 + "\n",
                                  "title: T\ntags:\n" + "- " * 1200 + "x\n"], ids=["flow", "block"])
def test_nesting_a_libyaml_refuses_is_found_where_it_first_goes_too_deep(
        monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    import recordtool.record.source as source_module

    monkeypatch.setattr(source_module, "_BaseLoader", _RefusesDeepNesting)
    monkeypatch.setattr(source_module, "_Loader", _RefusesDeepNesting)
    with pytest.raises(SourceError) as raised:
        parse_source(text.encode())
    where = (2, 107) if "[" in text else (3, 201)  # the first value nested deeper than 100 levels
    assert (raised.value.line, raised.value.col, raised.value.code) == (*where, "too-deep")


def test_a_libyaml_that_refuses_nesting_that_is_not_too_deep_for_us_is_reported_as_it_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import recordtool.record.source as source_module

    monkeypatch.setattr(source_module, "_Loader", _RefusesDeepNesting)
    with pytest.raises(SourceError) as raised:
        parse_source(b"title: T\ntags: [[a]]\n")
    assert (raised.value.line, raised.value.col) == (3, 1006)
    assert raised.value.message == "invalid YAML: exceeded maximum nesting depth (while increasing flow level)"
