"""Mentions: ids written in Markdown prose, found by parsing it (never inside code).

The prose is parsed with markdown-it-py; ids are looked for in text and link targets only,
so ``THEORY-988`` inside backticks or a fenced block is not a mention. Each mention keeps its
line (counted from the start of the prose) and the sentence around it, for backlinks.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z(\"'“‘])")  # the gap is match.start() + 1 .. end()
# A full stop that ends an abbreviation does not end the sentence ("et al. (2023)", "N. Elhage"):
# where one does, the quote is a sentence longer, which reads better than a name cut in two.
ABBREVIATIONS = frozenset((
    "al", "cf", "vs", "etc", "viz", "resp", "approx", "ca", "esp", "incl", "fig", "figs", "eq", "eqs",
    "sec", "secs", "ch", "chap", "vol", "vols", "pp", "p", "ref", "refs", "thm", "dr", "mr", "mrs", "ms",
    "prof", "st", "jr", "sr", "univ", "dept", "ed", "eds"))
_LAST_WORD = re.compile(r"(?<![\w.])[\w.]+$")
_LETTERS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # e.g, i.e, U.S, a.k.a (before their last stop)
_WORD_BEFORE = 12  # characters before a full stop that can hold an abbreviation ("a.k.a", "approx")
MAX_SENTENCE = 280


def sentence_gaps(text: str) -> list[tuple[int, int]]:
    """The gaps between the sentences of ``text`` (start, end), in order: after ``.``, ``!`` or
    ``?`` and before a capital, a parenthesis or a quote, except after an abbreviation."""
    gaps = []
    for match in _SENTENCE_END.finditer(text):
        at = match.start()
        if text[at] == "." and _is_abbreviation(text[max(0, at - _WORD_BEFORE):at]):
            continue
        gaps.append((at + 1, match.end()))
    return gaps


def _is_abbreviation(before: str) -> bool:
    """Whether the word that ends ``before`` (the text up to a full stop) is an abbreviation:
    one of ``ABBREVIATIONS``, letters with stops between them, or a capital's initial."""
    found = _LAST_WORD.search(before)
    if found is None:
        return False
    word = found.group(0)
    if len(word) == 1:
        return word.isupper()
    return word.lower() in ABBREVIATIONS or _LETTERS.fullmatch(word) is not None


@dataclass(frozen=True, slots=True)
class Found:
    """An id found in a piece of prose: which, on which line (0-based), in which sentence."""

    id: str
    line: int
    sentence: str


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """The Markdown parser for rendering: markdown-it-py's CommonMark, plus tables."""
    return MarkdownIt("commonmark").enable("table")


@lru_cache(maxsize=1)
def scanner() -> MarkdownIt:
    """The parser mentions are found with: ``markdown()`` without images, so that
    ``![text](THEORY-1)`` reads as a '!' and a link to THEORY-1, a mention (as it always has)."""
    return MarkdownIt("commonmark").enable("table").disable("image")


def find_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """Every id matching ``pattern`` in the prose ``text``, in order of appearance: ids in
    code, raw HTML or link text are not mentions; link targets that are ids are."""
    return mentions_in(scanner().parse(text), pattern)


SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # a link to elsewhere: https:, mailto:, ...


def link_target_id(href: str, pattern: re.Pattern[str]) -> str | None:
    """The id a link points to (``THEORY-988``, ``THEORY-988.md``, ``../x/THEORY-988.md``),
    or None: a link to another site is never to an entry, whatever its last part."""
    if SCHEME.match(href):
        return None
    target = href.rsplit("/", 1)[-1].removesuffix(".md")
    return target if pattern.fullmatch(target) else None


def mentions_in(tokens: list[Token], pattern: re.Pattern[str]) -> list[Found]:
    """The mentions in ``tokens`` (a parse by ``scanner()``, or by ``markdown()`` of prose
    without images), in order."""
    found: list[Found] = []
    for token in tokens:
        if token.type == "inline" and token.children:
            line = token.map[0] if token.map else 0
            found.extend(_in_inline(token.children, line, pattern))
    return found


def _in_inline(children: list[Token], first_line: int, pattern: re.Pattern[str]) -> list[Found]:
    # Plain text of the inline run, with the spans that are prose (not code) and their lines.
    plain: list[str] = []
    spans: list[tuple[int, int, int]] = []  # (start, end, line) of prose text in the joined string
    hits: list[tuple[int, str, int]] = []  # (offset, id, line): link targets first, then ids in the text
    offset, line = 0, first_line
    in_link = 0
    for child in children:
        if child.type == "link_close":
            in_link -= 1
        elif child.type in ("text", "code_inline"):
            if child.type == "text" and not in_link:  # (a link's text: the link is what counts)
                spans.append((offset, offset + len(child.content), line))
            plain.append(child.content)
            offset += len(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            plain.append(" ")
            offset += 1
            line += 1
        elif child.type == "link_open":
            in_link += 1
            target = link_target_id(str(child.attrs.get("href", "")), pattern)
            if target is not None:
                hits.append((offset, target, line))
    joined = "".join(plain)
    for start, end, span_line in spans:
        # each text on its own, as the page links it (``recordtool.render.prose``): what is
        # next to it beyond markup (``THEORY-1*THEORY-2*``) does not join it into one word
        for match in pattern.finditer(joined[start:end]):
            hits.append((start + match.start(), match.group(0), span_line))
    if not hits:
        return []
    hits.sort()
    bounds = sentence_gaps(joined)
    return [Found(entry_id, line, _sentence(joined, at, bounds)) for at, entry_id, line in hits]


def _sentence(text: str, at: int, bounds: list[tuple[int, int]]) -> str:
    """The sentence of ``text`` that holds position ``at`` (``bounds``: the gaps between
    sentences), shortened if very long."""
    i = bisect.bisect_right(bounds, (at, at))
    start = bounds[i - 1][1] if i > 0 else 0
    end = bounds[i][0] if i < len(bounds) else len(text)
    sentence = " ".join(text[start:end].split())
    if len(sentence) > MAX_SENTENCE:  # a window around the id, cut between words
        lo = max(0, min(at - start - MAX_SENTENCE // 2, len(sentence) - MAX_SENTENCE))
        hi = lo + MAX_SENTENCE
        if lo > 0:
            space = sentence.find(" ", lo, at - start)
            lo = space + 1 if space >= 0 else lo
        if hi < len(sentence):
            space = sentence.rfind(" ", max(lo, at - start), hi)
            hi = space if space >= 0 else hi
        sentence = ("…" if lo > 0 else "") + sentence[lo:hi].strip() + ("…" if hi < len(sentence) else "")
    return sentence
