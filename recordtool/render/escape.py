"""Escaping: plain text made safe inside Markdown text, table cells, link parts and Mermaid.

Titles, statements and sentences are plain text that may hold ``|``, ``*``, ``[`` or
``<script>``. Written into a page they must read as themselves: never open emphasis or a link,
never split a table row, never pass through as HTML. Every function here is pure.
"""

from __future__ import annotations

import re

# ASCII punctuation that is Markdown (CommonMark, GFM, Obsidian) syntax anywhere in a line.
# Each with the backslash that escapes it; the backslash first, so that no other's is escaped
# again. ('<' and '&' too, below.)
_ALWAYS = tuple((char, "\\" + char) for char in "\\`*[]>|~$")
# An underscore not inside a word (``x_y`` opens no emphasis): not followed, or not preceded,
# by a letter or digit.
_UNDERSCORE = re.compile(r"_(?:(?![A-Za-z0-9])|(?<![A-Za-z0-9]_))")
# A static site's Markdown (Python-Markdown) finds raw HTML before it reads any Markdown, and a
# backslash hides nothing from it: a '<' that may open a tag or a comment (before a letter, '/',
# '!' or '?') is written as a reference, as is the '&' of '&#' (an unfinished character
# reference); other '<' (a threshold's ``< 0.5``) keep the backslash, which reads better.
_NAMED = re.compile(r"&(?=[A-Za-z0-9]+;)")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_IMAGE = re.compile(r"!(?=\\\[)")
# What starts a block when it opens a line: headings, lists, quotes, setext and breaks.
_LINE_START = re.compile(r"^([ \t]*)(#{1,6}(?=[ \t]|$)|[-+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)|=+(?=[ \t]*$)|-+(?=[ \t]*$))",
                         re.MULTILINE)
_SPACES = re.compile(r"\s+")
_STARTERS = frozenset("#-+=0123456789 \t")


def text(value: str, *, line_start: bool = True) -> str:
    """``value`` as literal text in Markdown prose: every syntax character backslash-escaped.

    Newlines are kept. With ``line_start`` (the default) ``value`` begins a line, so a
    leading ``#``, ``-``, ``+``, ``=`` or ``1.`` is escaped too (it would open a block).
    """
    out = value
    for char, escaped in _ALWAYS:
        out = out.replace(char, escaped)
    if "_" in out:
        out = _UNDERSCORE.sub(r"\\_", out)
    if "&" in out:
        out = _NAMED.sub(r"\\&", out)
        if "&#" in out:
            out = out.replace("&#", "&amp;#")
    if "<" in out:  # (after '&': the reference written here is not escaped again)
        out = _TAG_START.sub("&lt;", out).replace("<", "\\<")
    if "!" in out:
        out = _IMAGE.sub(r"\\!", out)
    if line_start and out[:1] in _STARTERS:
        out = _LINE_START.sub(_escape_line_start, out, count=1)
    if "\n" in out:
        head, rest = out.split("\n", 1)
        out = head + "\n" + _LINE_START.sub(_escape_line_start, rest)
    return out


def before_link(written: str) -> str:
    """``written`` (Markdown) with a link to follow it: a ``!`` at its end escaped, which the
    link's ``[`` would make an image (``see!`` then ``[THEORY-1](THEORY-1.md)``: the page would
    embed the page, or a URL, as an image). ``text`` cannot see it: its text ends there."""
    if written[-1:] != "!" or (len(written) - 1 - len(written[:-1].rstrip("\\"))) % 2:
        return written  # no '!' at its end, or an escaped one
    return written[:-1] + "\\!"


def _escape_line_start(match: re.Match[str]) -> str:
    lead, mark = match.group(1), match.group(2)
    if mark[0].isdigit():
        return lead + mark[:-1] + "\\" + mark[-1]
    return lead + "\\" + mark


def line(value: str) -> str:
    """``value`` on one line (runs of whitespace made one space), escaped as ``text``; also
    what goes in a table cell (``|`` is escaped)."""
    return text(" ".join(value.split()))


_BARE_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")


def in_row(value: str) -> str:
    """``value`` (Markdown already: a code span, a link) made safe as one cell of a table row:
    on one line, and every ``|`` not yet escaped written ``\\|`` (GFM splits a row at a bare
    ``|`` even inside a code span)."""
    if "|" not in value and "\n" not in value:
        return value
    return _BARE_PIPE.sub(r"\1\\|", value.replace("\r", " ").replace("\n", " "))


def short(value: str, width: int) -> str:
    """``value`` on one line, cut to ``width`` characters with an ellipsis."""
    collapsed = " ".join(value.split())
    return collapsed if len(collapsed) <= width else collapsed[: width - 1].rstrip() + "…"


def href(value: str) -> str:
    """A link destination that cannot end the link early: spaces, parentheses and angle
    brackets percent-encoded."""
    return (value.replace("%", "%25") if "%" in value and not re.search(r"%[0-9A-Fa-f]{2}", value) else value
            ).replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def title(value: str) -> str:
    """A link title, to go inside double quotes."""
    return _SPACES.sub(" ", value).strip().replace("\\", "\\\\").replace('"', '\\"')


def code(value: str) -> str:
    """``value`` as an inline code span, whatever backticks it holds."""
    value = _SPACES.sub(" ", value)
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith(("`", " ")) or value.endswith(("`", " ")) else ""
    return f"{fence}{pad}{value}{pad}{fence}"


_LANGUAGE = re.compile(r"[A-Za-z0-9_.+#-]+")


def fence(body: str, info: str = "") -> str:
    """``body`` as a fenced code block, with a fence longer than any backtick run inside.
    Of ``info`` only its first word, and only when it names a language (letters, digits and
    ``_.+#-``): a static site's Markdown (Python-Markdown's fences) reads a fence with any other
    info string as prose, its code and raw HTML and all (CommonMark shows neither)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=0)
    marker = "`" * max(3, longest + 1)
    words = info.split(maxsplit=1)
    language = words[0] if words and _LANGUAGE.fullmatch(words[0]) else ""
    return f"{marker}{language}\n{body.rstrip(chr(10))}\n{marker}"


_MERMAID = str.maketrans({'"': "#quot;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "#": "#35;", "`": "#96;",
                          "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;", "|": "#124;", ";": "#59;"})


def mermaid(value: str) -> str:
    """A Mermaid node label (to go inside ``["..."]``): one line, quotes and brackets as
    Mermaid entity codes, so no label can end its node or start markup."""
    return " ".join(value.split()).translate(_MERMAID)
