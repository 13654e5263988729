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

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'“‘])")
MAX_SENTENCE = 280


@dataclass(frozen=True, slots=True)
class Found:
    """An id found in a piece of prose: which, on which line (0-based), in which sentence."""

    id: str
    line: int
    sentence: str


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """The Markdown parser for rendering (CommonMark, plus tables)."""
    return MarkdownIt("commonmark").enable("table")


@lru_cache(maxsize=1)
def scanner() -> MarkdownIt:
    """A CommonMark parser that keeps only what decides where prose is: code (indented,
    fenced, inline), raw HTML, links and the block structure. Emphasis and the like are left
    as text, which changes no mention and makes scanning about twice as fast."""
    rules = ["code", "fence", "blockquote", "hr", "list", "reference", "html_block", "heading",
             "lheading", "paragraph", "table", "backticks", "link", "autolink", "html_inline",
             "entity", "escape", "newline", "text"]
    return MarkdownIt("zero", {"html": True}).enable(rules)


def find_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """Every id matching ``pattern`` in the prose ``text``, in order of appearance."""
    if not pattern.search(text):  # cheap: no candidate, nothing to parse
        return []
    found: list[Found] = []
    for token in scanner().parse(text):
        if token.type == "inline" and token.children:
            line = token.map[0] if token.map else 0
            found.extend(_in_inline(token.children, line, pattern))
    return found


def _in_inline(children: list[Token], first_line: int, pattern: re.Pattern[str]) -> list[Found]:
    # Plain text of the inline run, with the spans that are prose (not code) and their lines.
    plain: list[str] = []
    spans: list[tuple[int, int, int]] = []  # (start, end, line) of prose text in the joined string
    extra: list[tuple[str, int, int]] = []  # (id, offset, line) from link targets
    offset, line = 0, first_line
    for child in children:
        if child.type == "text":
            spans.append((offset, offset + len(child.content), line))
            plain.append(child.content)
            offset += len(child.content)
        elif child.type == "code_inline":
            plain.append(child.content)
            offset += len(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            plain.append(" ")
            offset += 1
            line += 1
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            target = href.rsplit("/", 1)[-1].removesuffix(".md")
            if pattern.fullmatch(target):
                extra.append((target, offset, line))
    joined = "".join(plain)
    hits: list[tuple[int, str, int]] = []
    for start, end, span_line in spans:
        for match in pattern.finditer(joined, start, end):
            hits.append((match.start(), match.group(0), span_line))
    hits.extend((at, entry_id, link_line) for entry_id, at, link_line in extra)
    if not hits:
        return []
    hits.sort()
    bounds = [(b.start(), b.end()) for b in _SENTENCE_END.finditer(joined)]
    return [Found(entry_id, line, _sentence(joined, at, bounds)) for at, entry_id, line in hits]


def _sentence(text: str, at: int, bounds: list[tuple[int, int]]) -> str:
    """The sentence of ``text`` that holds position ``at`` (``bounds``: the gaps between
    sentences), shortened if very long."""
    i = bisect.bisect_right(bounds, (at, at))
    start = bounds[i - 1][1] if i > 0 else 0
    end = bounds[i][0] if i < len(bounds) else len(text)
    sentence = " ".join(text[start:end].split())
    if len(sentence) > MAX_SENTENCE:
        rel = at - start
        lo = max(0, rel - MAX_SENTENCE // 2)
        sentence = ("…" if lo else "") + sentence[lo:lo + MAX_SENTENCE].strip() + "…"
    return sentence
