"""Prose for pages: an entry's Markdown (body, statement, status note), parsed with the shared
markdown-it parser and written back as Markdown from its tokens, with every id in its text
linked (never in code or a link's text), links to ids sent to their pages, raw HTML shown as
text, and literal characters escaped, so that nothing in a body can open emphasis, break out
of a table cell or inject markup. Line breaks inside paragraphs are kept. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it.token import Token

from recordtool.record.mentions import SCHEME, link_target_id, markdown
from recordtool.render import escape

Link = Callable[[str], "tuple[str, str | None] | None"]
"""An id -> (href, title) for its link, or None to leave it as text."""

Rewrite = Callable[[str], str]
"""A link destination written in prose -> the destination on the page."""


@dataclass
class Style:
    """How to write prose on a page."""

    pattern: re.Pattern[str]  # what an id looks like
    link: Link  # where an id's link goes
    rewrite: Rewrite | None = None  # relative destinations (not ids) on the page
    min_heading: int = 2  # a body's '# Heading' must not compete with the page's title


def block(source: str, style: Style) -> str:
    """``source`` (Markdown) written back as Markdown blocks, ids linked."""
    if not source.strip():
        return ""
    lines, _end, _tail = _blocks(markdown().parse(source), 0, style)
    return "\n".join(lines).rstrip("\n")


def inline(source: str, style: Style) -> str:
    """``source`` (Markdown) on one line, for a table cell: its text, ids linked, ``|`` escaped;
    block structure (paragraphs, list items) is flattened into one line."""
    if not source.strip():
        return ""
    parts = [_inline(token, style, True, True) for token in markdown().parse(source) if token.type == "inline"]
    return " ".join(p for p in parts if p)


# Writing from the token stream ----------------------------------------------------------------
#
# Prose is written straight from markdown-it's tokens, in one pass, without building a tree:
# a block is an opening token, its children and the closing token that matches it, or one
# token; the inline Markdown of a paragraph, heading or table cell is the children of its one
# ``inline`` token. Each block function takes the index of the first token it writes and gives
# back what it wrote and the index it stopped at.


def _blocks(tokens: Sequence[Token], i: int, style: Style, tight: bool = False) -> tuple[list[str], int, str | None]:
    """The blocks from ``tokens[i]`` up to the closing token of their parent (or the end),
    written as lines, blank lines between them unless ``tight``; that closing token's index; and
    the marker of the list the lines end with (None: they end otherwise)."""
    out: list[str] = []
    end = len(tokens)
    tail: str | None = None  # the marker of the list last written, while nothing but blank lines follows it
    while i < end and tokens[i].nesting != -1:
        lines, i, listed = _block(tokens, i, style, tail)
        if not lines:
            continue
        if listed is not None:
            tail = listed
        elif any(lines):  # (an empty paragraph leaves a list before it next to one after it)
            tail = None
        if out and not tight:
            out.append("")
        out.extend(lines)
    return out, i, tail


def _block(tokens: Sequence[Token], i: int, style: Style, tail: str | None) -> tuple[list[str], int, str | None]:
    """The block that starts at ``tokens[i]``, written as lines; the index after it; and the
    marker of the list it is (None: it is none). ``tail``: the marker of a list written right
    before it. A paragraph, a heading and a table cell hold one inline token each."""
    token = tokens[i]
    kind = token.type
    if kind == "paragraph_open":
        lines = _inline(tokens[i + 1], style, False, False).split("\n")
        # of white space alone, but not of spaces or tabs (a no-break space): kept
        return ["\u00a0"] if lines == [""] else lines, i + 3, None
    if kind == "heading_open":
        level = max(int(token.tag[1:]), style.min_heading)
        text = _inline(tokens[i + 1], style, True, False)
        return ["#" * level + (" " + text if text else "")], i + 3, None
    if kind == "bullet_list_open" or kind == "ordered_list_open":
        return _list(tokens, i, style, tail)
    if kind == "blockquote_open":
        inner, i, _tail = _blocks(tokens, i + 1, style)
        return [("> " + line) if line else ">" for line in inner] or [">"], i + 1, None
    if kind == "fence":
        return escape.fence(token.content, token.info).split("\n"), i + 1, None  # (a language name kept, only)
    if kind == "code_block":  # fenced: indented, it would join a list written before it, as prose
        return escape.fence(token.content).split("\n"), i + 1, None
    if kind == "hr":
        return ["***"], i + 1, None
    if kind == "html_block":
        return _html_block(token.content), i + 1, None
    lines, i = _table(tokens, i, style)  # (the last kind of block CommonMark and tables make)
    return lines, i, None


# Where a list item's content starts, at least: the site's Markdown (Python-Markdown) reads a
# nested list or an item's later blocks only four spaces in.
ITEM_WIDTH = 4


def _list(tokens: Sequence[Token], i: int, style: Style, before: str | None = None) -> tuple[list[str], int, str]:
    """The list opened at ``tokens[i]``, written; the index after it; and its marker
    (``list_marker``). ``before``: the marker of a list written right before it."""
    token = tokens[i]
    ordered = token.type == "ordered_list_open"
    tight = _tight(tokens, i)
    number = int(token.attrs.get("start", 1)) if ordered else 0
    items: list[list[str]] = []
    i += 1
    source = tokens[i].markup  # (of its first item: a list has one at least)
    while tokens[i].nesting != -1:  # list_item_open ... list_item_close
        lines, i, _tail = _blocks(tokens, i + 1, style, tight)
        i += 1
        items.append(lines)
    char = list_marker(ordered, source, before, any(map(marker_alone, items)))
    out: list[str] = []
    for n, lines in enumerate(items, number):
        if out and not tight:
            out.append("")
        out.extend(list_item(f"{n}{char}" if ordered else char, lines))
    return out, i + 1, char


def list_marker(ordered: bool, source: str, before: str | None, bare: bool) -> str:
    """The marker a list is written with: '.' after an ordered list's numbers (the site's
    Markdown reads no ')'), a bullet the source's; never the marker of a list written right
    before it (``before``: CommonMark would read the two as one), nor '-' when a marker stands
    alone on its line (``bare``: the site's Markdown reads it as a heading's underline)."""
    if ordered:
        return ")" if before == "." else "."
    for char in (source, "-", "+", "*"):
        if char and char != before and not (bare and char == "-"):
            return char
    return "+"  # (before is '*' and an item is bare)


def marker_alone(lines: list[str]) -> bool:
    """Whether an item of these blocks (``lines``) has its marker alone on its line: it is empty,
    or its first block is code (``list_item``)."""
    return not lines or not lines[0] or lines[0].startswith("```")


def list_item(marker: str, lines: list[str]) -> list[str]:
    """One item of a list, its blocks written (``lines``) after ``marker``. A marker alone is
    followed by a space (the site's Markdown reads no item without it), code starts on the next
    line (the site reads a fence there as prose), and a rule first is '___' ('* ***' is a rule)."""
    width = max(ITEM_WIDTH, len(marker) + 1)
    if marker_alone(lines):
        out, rest = [marker + " "], lines[1:] if lines and not lines[0] else lines  # (code on the next line)
    else:
        out, rest = [marker + " " * (width - len(marker)) + ("___" if lines[0] == "***" else lines[0])], lines[1:]
    out.extend(" " * width + line if line else "" for line in rest)
    return out


def _tight(tokens: Sequence[Token], i: int) -> bool:
    """Whether the list opened at ``tokens[i]`` is tight: markdown-it hides its items'
    paragraphs, all of them, in a tight list only."""
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        token = tokens[j]
        if token.level == level:  # the list's closing token
            return False
        if token.level == level + 2 and token.type == "paragraph_open":
            return token.hidden
    return False


def _html_block(content: str) -> list[str]:
    """Raw HTML shown as text: each line escaped, blank lines kept as paragraph breaks."""
    out: list[str] = []
    for raw in content.rstrip("\n").split("\n"):
        stripped = raw.strip()
        if not stripped:
            if out and out[-1]:
                out.append("")
            continue
        out.append(escape.text(stripped))
    while out and not out[-1]:
        out.pop()
    return out


def _table(tokens: Sequence[Token], i: int, style: Style) -> tuple[list[str], int]:
    """The table opened at ``tokens[i]`` (sections of rows of cells), written; and the index
    after it. markdown-it gives it a header row, and every row a cell per column."""
    rows: list[list[str]] = []
    aligns: list[str] = []
    i += 1
    while tokens[i].nesting != -1:  # thead, tbody
        head = tokens[i].type == "thead_open"
        i += 1
        while tokens[i].nesting != -1:  # tr
            i += 1
            cells = []
            while tokens[i].nesting != -1:  # th, td: each an open, an inline and a close token
                cells.append(_inline(tokens[i + 1], style, True, True))
                if head:
                    aligns.append(str(tokens[i].attrs.get("style", "")).removeprefix("text-align:"))
                i += 3
            rows.append(cells)
            i += 1
        i += 1
    delimiter = [{"left": ":---", "right": "---:", "center": ":---:"}.get(a, "---") for a in aligns]
    return ["| " + " | ".join(row) + " |" for row in (rows[0], delimiter, *rows[1:])], i + 1


# Inline -------------------------------------------------------------------------------------


def _inline(inline: Token, style: Style, one_line: bool, cell: bool) -> str:
    """The inline Markdown of a paragraph, heading or cell (its ``inline`` token), written (on
    one line with ``one_line``, ``|`` escaped too with ``cell``). Emphasis and links are written
    as their closing token comes: what was written since the opening one is their text."""
    one_line = one_line or cell
    out: list[str] = []
    opened: list[tuple[Token, int, bool]] = []  # (opening token, len(out) then, in_link then)
    in_link = False
    at_line_start = True
    for token in inline.children or []:
        kind = token.type
        if kind == "softbreak" or kind == "hardbreak":
            out.append(" " if one_line else "\n" if kind == "softbreak" else "\\\n")
            at_line_start = not one_line
            continue
        if kind == "em_open" or kind == "strong_open" or kind == "link_open":
            opened.append((token, len(out) if kind == "link_open" else -1, in_link))
            if kind == "link_open":
                in_link = True
            else:
                out.append(token.markup)
            continue
        if token.nesting == -1:  # (markdown-it pairs every closing token with an opening one)
            opener, at, in_link = opened.pop()
            if at < 0:
                out.append(opener.markup)
            else:
                text = "".join(out[at:])
                del out[at:]
                if out:
                    out[-1] = escape.before_link(out[-1])
                out.append(_link(opener, text, style))
        else:
            out.append(_leaf(token, style, in_link, at_line_start, cell))
        at_line_start = False
    return "".join(out)


def _leaf(token: Token, style: Style, in_link: bool, line_start: bool, cell: bool) -> str:
    """A token that holds no others, written: text (ids linked unless ``in_link``), a code
    span, an image; raw HTML shown as text, never as markup."""
    kind = token.type
    if kind == "text":
        content = token.content.replace("\n", " ") if cell else token.content
        if in_link or not style.pattern.search(content):
            return escape.text(content, line_start=line_start)
        return linked(content, style, line_start)
    if kind == "code_inline":
        span = escape.code(token.content)
        return span.replace("|", "\\|") if cell else span
    if kind == "image":
        src = _destination(str(token.attrs.get("src", "")), style)
        title = token.attrs.get("title")
        suffix = f' "{escape.title(str(title))}"' if title else ""
        return f"![{escape.line(token.content)}]({escape.href(src)}{suffix})"
    written = escape.text(token.content, line_start=line_start)
    return written.replace("\n", " ") if cell else written


def linked(content: str, style: Style, line_start: bool) -> str:
    """``content``, text that holds an id, written with its ids linked."""
    out: list[str] = []
    last = 0
    for match in style.pattern.finditer(content):
        target = style.link(match.group(0))
        if target is None:
            continue
        before = content[last:match.start()]
        if before:
            out.append(escape.before_link(escape.text(before, line_start=line_start and last == 0)))
        href, title = target
        suffix = f' "{escape.title(title)}"' if title else ""
        out.append(f"[{match.group(0)}]({escape.href(href)}{suffix})")
        last = match.end()
    rest = content[last:]
    if rest:
        out.append(escape.text(rest, line_start=line_start and last == 0))
    return "".join(out)


def _link(token: Token, text: str, style: Style) -> str:
    """The link opened by ``token``, its text ``text`` written; to an id's page when its
    destination is an id."""
    href = str(token.attrs.get("href", ""))
    target = link_target_id(href, style.pattern)
    title = token.attrs.get("title")
    if target is not None:
        linked = style.link(target)
        if linked is not None:
            href, id_title = linked
            title = title or id_title
    else:
        href = _destination(href, style)
    suffix = f' "{escape.title(str(title))}"' if title else ""
    return f"[{text or escape.text(href, line_start=False)}]({escape.href(href)}{suffix})"


def _destination(href: str, style: Style) -> str:
    """A relative destination (not a URL, not an anchor) rewritten for the page."""
    if not href or href.startswith(("#", "/")) or SCHEME.match(href) or style.rewrite is None:
        return href
    return style.rewrite(href)
