"""Inline runs of Markdown made into markdown-it's tokens (``recordtool.record.token``: its
fields, the same values) without its inline parser, where the run's markup is simple.

markdown-it-py parses an inline run (the text of a paragraph, a heading or a table cell) by
trying its inline rules in turn at each character where one can fire, then pairing the
emphasis delimiters it found and joining the text between them. In a research body about one
run in three holds markup, and such a run took about 31 us in its parser here, mostly
the rules' calls. Most of those runs hold only simple markup, which ``tokens`` makes into the same
tokens directly, in one pass:

- emphasis and strong emphasis (``*a*``, ``**a**``, ``_a_``, ``__a__``, nested or not): each
  closer pairs with the nearest opener of its character still open, those opened after that
  one staying text, which is how CommonMark pairs them while no delimiter run can both open
  and close and the two runs are of one length; a run that can neither open nor close
  (``W_O``, ``a * b``), or is left unpaired, stays text;
- code spans, of any number of backticks (an unmatched run of backticks stays text);
- links ``[text](destination)`` whose text holds no bracket, backtick, backslash, ``<``, ``!`` or
  ``&``, and whose destination follows the parenthesis at once, with no space, title, angle
  bracket, backslash or ``&``;
- backslash escapes, line breaks (soft and hard), and text.

For anything else (an image, an autolink, raw HTML, an entity, a link with a title or through
a reference, a delimiter run that can both open and close, one of three or more that can open
or close, a closer whose opener is of another length) it gives None, and markdown-it parses
the run. The tokens are those of markdown-it's inline parser
with its text fragments joined, before its core rule ``text_join`` (which the caller runs);
``tests/record/test_inline.py`` compares the two on random runs and on realistic bodies.

Written here rather than taken from a library: the tokens must be markdown-it-py's (the same
fields and values), and it has no faster mode for them.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace

from recordtool.record.token import Token

# markdown-it's text rule takes the characters up to the next of its terminators, and each
# terminator is tried against every inline rule: by default also characters that only rules
# of extensions use ('-', ':', '#', '~', ...), which an id holds. With the inline rules of
# ``recordtool.record.mentions.markdown()`` a rule can fire only at a line break, '!' (image),
# '&' (entity), '*' or '_' (emphasis), '<' (autolink, HTML), '[' (link), '\\' (escape) or '`'
# (code); and a link's text ends at ']', which its parse finds by skipping tokens. The text
# between them is the same, and ``tokens`` stops at the same characters.
TERMINATORS = re.compile(r"[\n!&*<\[\]\\_`]")
MAX_OPENERS = 32  # emphasis openers open at once in a run made here (a research run has a few)
_ESCAPED = frozenset(string.punctuation)  # what a backslash escapes: CommonMark's ASCII punctuation
_LABEL_UNKNOWN = re.compile(r"[\[`\\<!&]")  # a link text holding one of these: not made here
_DESTINATION = re.compile(r"[^\s()<>\\&\x00-\x1f\x7f]+")  # a destination as it is (no unescaping)


class _Unknown(Exception):
    """The run holds markup ``tokens`` does not make: markdown-it parses it."""


def tokens(src: str, md: MarkdownIt) -> list[Token] | None:
    """The tokens markdown-it's inline parser makes of the inline run ``src`` with ``md``'s
    rules (``recordtool.record.mentions.markdown()``), text fragments joined; None when the run
    holds markup made only by markdown-it (see above)."""
    out: list[Token] = []
    try:
        fragments = _scope(src, 0, len(src), md, out, 0)
    except _Unknown:
        return None
    return _joined(out) if fragments else out


def _joined(out: list[Token]) -> list[Token]:
    """``out`` with each token's level worked out from the nesting before it and adjacent text
    tokens joined (markdown-it's ``fragments_join``, after emphasis was paired)."""
    joined: list[Token] = []
    level = 0
    for token in out:
        if token.nesting < 0:
            level -= 1
        token.level = level
        if token.nesting > 0:
            level += 1
        if token.type == "text" and joined and joined[-1].type == "text":
            joined[-1].content += token.content
        else:
            joined.append(token)
    return joined


def _pair(out: list[Token], opener: int, closer: int, run: str) -> None:
    """The delimiter runs ``run`` at ``opener`` and ``closer`` in ``out`` (a text token per
    character) made emphasis; of a run of two (strong), the outer characters stay empty texts."""
    tag = "strong" if len(run) == 2 else "em"
    if len(run) == 2:
        out[opener].content = ""
        out[closer + 1].content = ""
        opener += 1
    opening, closing = out[opener], out[closer]
    opening.type, opening.nesting = tag + "_open", 1
    closing.type, closing.nesting = tag + "_close", -1
    for token in (opening, closing):
        token.tag, token.markup, token.content = tag, run, ""


def _flush(pending: str, out: list[Token], level: int) -> str:
    """``pending`` text made a token of ``out`` (none when empty); gives what is pending then."""
    if pending:
        out.append(_text(pending, level))
    return ""


def _text(content: str, level: int) -> Token:
    return Token("text", "", 0, level, content)


def _token(kind: str, tag: str, nesting: Literal[-1, 0, 1], level: int, markup: str = "") -> Token:
    return Token(kind, tag, nesting, level, "", markup)


def _scope(src: str, pos: int, end: int, md: MarkdownIt, out: list[Token], level: int) -> bool:
    """Appends to ``out`` the tokens of ``src[pos:end]``, a scope of its own for emphasis (the
    whole run, or a link's text), at nesting ``level``; gives whether a delimiter run that may
    open or close emphasis was met, which leaves text fragments (``out`` is then to be ``_joined``)."""
    fragments = False
    pending = ""  # text not yet a token (markdown-it's "pending")
    openers: list[tuple[int, str]] = []  # the delimiter runs that may open emphasis: where in ``out``, which
    while True:
        found = TERMINATORS.search(src, pos, end)
        at = found.start() if found is not None else end
        if at > pos:
            pending += src[pos:at]
        if found is None:
            break
        char = src[at]
        pos = at + 1
        if char == "\n":  # markdown-it's newline rule: spaces before it dropped, two or more a hard break
            kind = "softbreak"
            if pending and pending[-1] == " ":
                if len(pending) > 1 and pending[-2] == " ":
                    kind, pending = "hardbreak", pending.rstrip(" ")
                else:
                    pending = pending[:-1]
            pending = _flush(pending, out, level)
            out.append(_token(kind, "br", 0, level))
            while pos < end and src[pos] in " \t":
                pos += 1
        elif char == "\\":
            if pos >= end:  # a backslash last: text
                pending += "\\"
                continue
            escaped = src[pos]
            pending = _flush(pending, out, level)
            if escaped == "\n":  # a hard break, the next line's leading spaces dropped
                out.append(_token("hardbreak", "br", 0, level))
                pos += 1
                while pos < end and src[pos] in " \t":
                    pos += 1
                continue
            # (half of a surrogate pair: markdown-it takes both; by code point, as mypyc compiles no
            # surrogate written in a literal)
            if 0xD800 <= ord(escaped) <= 0xDBFF:
                raise _Unknown
            token = _token("text_special", "", 0, level, "\\" + escaped)
            token.content = escaped if escaped in _ESCAPED else "\\" + escaped
            token.info = "escape"
            out.append(token)
            pos += 1
        elif char == "`":
            ticks = pos
            while ticks < end and src[ticks] == "`":
                ticks += 1
            marker = src[at:ticks]
            closing = _closing_ticks(src, ticks, end, len(marker))
            if closing < 0:  # no closing run of as many backticks: text
                pending += marker
                pos = ticks
                continue
            content = src[ticks:closing].replace("\n", " ")
            if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                content = content[1:-1]
            pending = _flush(pending, out, level)
            token = _token("code_inline", "code", 0, level, marker)
            token.content = content
            out.append(token)
            pos = closing + len(marker)
        elif char in "*_":
            stop = pos
            while stop < end and src[stop] == char:
                stop += 1
            run = src[at:stop]
            pos = stop
            can_open, can_close = _flanks(src, at, stop, end, char == "*")
            if not can_open and not can_close:  # text
                pending += run
                continue
            if (can_open and can_close) or len(run) > 2:
                raise _Unknown
            pending = _flush(pending, out, level)
            fragments = True
            index = len(out)
            out.extend(_text(c, level) for c in run)  # text until paired, as markdown-it has it
            if can_open:
                if len(openers) == MAX_OPENERS:  # (each closer looks through them: markdown-it bounds that)
                    raise _Unknown
                openers.append((index, run))
                continue
            # A closer pairs with the nearest opener of its character still open; those opened
            # after that one stay text. With none, it stays text itself.
            for n in range(len(openers) - 1, -1, -1):
                opener, opening = openers[n]
                if opening[0] == char:
                    if opening != run:  # of another length: part of a run would pair
                        raise _Unknown
                    del openers[n:]
                    _pair(out, opener, index, run)
                    break
        elif char == "[":
            pending = _flush(pending, out, level)
            pos, inner = _link(src, at, end, md, out, level)
            fragments = fragments or inner
        elif char in "<&" or (char == "!" and pos < end and src[pos] == "["):  # autolink, HTML, entity; image
            raise _Unknown
        else:  # '!' or ']': text
            pending += char
    _flush(pending, out, level)
    return fragments


def _closing_ticks(src: str, pos: int, end: int, length: int) -> int:
    """Where the first run of exactly ``length`` backticks after ``pos`` starts (ending by
    ``end``), or -1."""
    while True:
        start = src.find("`", pos, end)
        if start < 0:
            return -1
        pos = start + 1
        while pos < len(src) and src[pos] == "`":
            pos += 1
        if pos > end:
            return -1
        if pos - start == length:
            return start


def _flanks(src: str, start: int, stop: int, end: int, within_words: bool) -> tuple[bool, bool]:
    """Whether the delimiter run ``src[start:stop]`` can open and whether it can close
    emphasis (CommonMark's left- and right-flanking runs; ``within_words``: '*', which may
    split a word, unlike '_')."""
    before_space, before_punct = _class(src[start - 1]) if start > 0 else _SPACE
    after_space, after_punct = _class(src[stop]) if stop < end else _SPACE
    left = not (after_space or (after_punct and not (before_space or before_punct)))
    right = not (before_space or (before_punct and not (after_space or after_punct)))
    return (left and (within_words or not right or before_punct),
            right and (within_words or not left or after_punct))


_SPACE = (True, False)


@lru_cache(maxsize=1024)
def _class(char: str) -> tuple[bool, bool]:
    """Whether ``char`` is white space, and whether it is punctuation, to CommonMark's emphasis
    (markdown-it's ``isWhiteSpace``, and ``isMdAsciiPunct`` or ``isPunctChar``)."""
    return isWhiteSpace(ord(char)), isMdAsciiPunct(ord(char)) or isPunctChar(char)


def _link(src: str, at: int, end: int, md: MarkdownIt, out: list[Token], level: int) -> tuple[int, bool]:
    """Appends the link ``[text](destination)`` that starts at ``at``; gives where it ends, and
    whether its text met a delimiter run (``_scope``)."""
    close = src.find("]", at + 1, end)
    if close < 0 or _LABEL_UNKNOWN.search(src, at + 1, close):
        raise _Unknown
    if close + 1 >= end or src[close + 1] != "(":
        raise _Unknown  # a reference, or text
    found = _DESTINATION.match(src, close + 2, end)
    if found is None or found.end() >= end or src[found.end()] != ")":
        raise _Unknown
    href = md.normalizeLink(found.group(0))
    if not md.validateLink(href):
        raise _Unknown
    token = _token("link_open", "a", 1, level)
    token.attrs = {"href": href}
    out.append(token)
    fragments = _scope(src, at + 1, close, md, out, level + 1)
    out.append(_token("link_close", "a", -1, level))
    return found.end() + 1, fragments
