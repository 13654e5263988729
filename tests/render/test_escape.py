"""Escaping plain text for Markdown: the same bytes as its definition, whatever the text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from recordtool.render import escape

# ``escape.text`` as first written, one regular expression per rule: the definition that the
# faster code must keep to, byte for byte.
_ALWAYS = re.compile(r"([\\`*\[\]>|~$])")
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_NAMED = re.compile(r"&(?=[A-Za-z0-9]+;)")  # '&amp;': '\&amp;'
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # '<b', '</', '<!--', '<?': a reference (a site's HTML parser); other '<': '\<'


def _defined(value: str, line_start: bool) -> str:
    out = _ALWAYS.sub(r"\\\1", value)
    out = _UNDERSCORE.sub(r"\\_", out)
    out = _NAMED.sub(r"\\&", out).replace("&#", "&amp;#")  # '&#45;', '&#': '&amp;#' (the same site)
    out = _TAG_START.sub("&lt;", out).replace("<", "\\<")
    out = escape._IMAGE.sub(r"\\!", out)
    if line_start:
        out = escape._LINE_START.sub(escape._escape_line_start, out, count=1)
    if "\n" in out:
        head, rest = out.split("\n", 1)
        out = head + "\n" + escape._LINE_START.sub(escape._escape_line_start, rest)
    return out


_PIECES = ["a", "word", " ", "  ", "\t", "\n", "\\", "\\\\", "`", "*", "[", "]", "<", ">", "|", "~", "$", "_",
           "x_y", "_x", "&", "&amp;", "&#45;", "!", "![", "#", "# ", "-", "- ", "+ ", "=", "==", "---", "1.", "1. ",
           "12) ", "0", "é", "é_", "_é", "9_", "_9", "Z", "{", "\u00a0", "$W_O W_V$", "\\$", "\\\\_"]


@given(st.lists(st.sampled_from(_PIECES), max_size=16), st.booleans())
@settings(max_examples=2_000, deadline=None)
def test_text_escapes_as_defined(pieces: list[str], line_start: bool) -> None:
    value = "".join(pieces)
    assert escape.text(value, line_start=line_start) == _defined(value, line_start), repr(value)


@given(st.text(max_size=40), st.booleans())
@settings(max_examples=1_000, deadline=None)
def test_any_text_escapes_as_defined(value: str, line_start: bool) -> None:
    assert escape.text(value, line_start=line_start) == _defined(value, line_start), repr(value)


def test_a_fence_keeps_of_its_info_string_a_language_name_only() -> None:
    """A static site's Markdown reads a fence whose info string is not a language as prose,
    its code and raw HTML and all: only a language name (its first word) is kept."""
    assert escape.fence("x", "python") == "```python\nx\n```"
    assert escape.fence("x", "c++ title='a b'") == "```c++\nx\n```"
    for info in (")    THEORY-99=<script>x</script>", "~~~<b>", "{.py}", "&amp;http://x.y![i](j)"):
        assert escape.fence("<b>x</b>", info) == "```\n<b>x</b>\n```", info
