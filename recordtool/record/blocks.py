"""The block tokens of a Markdown document made without markdown-it's block parser, where its
blocks are simple.

markdown-it-py finds a document's blocks by trying its block rules in turn at the first line
of each block, and at each further line of a paragraph, list or quote to see whether another
block starts there: in a body of research Markdown that took about half of its parse here
(0.25 ms a body), mostly the rules' calls. Most bodies are made of a few simple kinds of
block, separated by blank lines, which ``tokens`` makes into the same tokens directly, line by
line:

- paragraphs, of lines that start no other block (a paragraph's next line may start a
  heading, a fence, a quote or a list, which then begins there, as CommonMark has it);
- ATX headings (``## Title``, closing ``#`` run and all);
- fenced code (backticks or tildes, closed or running to the end);
- lists, bullet or ordered, whose items are one paragraph each (a first line and lines
  continuing it, indented to the item's text or not at all): tight, or loose when a blank line
  comes between items;
- block quotes of one paragraph, each line starting ``>``;
- tables whose lines start with ``|``, with no backslash in them.

A block of any other kind (an indented line outside a list item or a fence, raw HTML, a
reference definition, a thematic break, a setext heading, a nested block, a blank line inside
a quote, a line that may be a table's delimiter row outside a table) is made by markdown-it's
own block rules, tried at its first line as its block parser tries them there, and the blocks
after it are made here again: at the top level a block starts afresh, whatever came before it.
A document with a tab is left to markdown-it whole. The tokens are those markdown-it's block
parser pushes, inline tokens with their content and no children yet (the caller runs the
inline rules); ``tests/record/test_blocks.py`` compares the two on random documents and on
realistic bodies.

Written here rather than taken from a library: the tokens must be markdown-it-py's (the same
fields and values: ``recordtool.record.token``; those its rules make here are made ours as they
come), and it has no faster mode for them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal, cast

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token as MarkdownItToken
from markdown_it.utils import EnvType

from recordtool.record.token import Token, ours

# The block rules of ``recordtool.record.mentions.markdown()`` and ``scanner()``, in markdown-it's order.
RULES = ["table", "code", "fence", "blockquote", "hr", "list", "reference", "html_block", "heading",
         "lheading", "paragraph"]
MAX_LEVEL = 4  # the deepest level a token made here has (an inline run in a list item: 3)
MAX_AUTOCOMPLETED_CELLS = 0x10000  # markdown-it's limit on a table's missing cells


class _Unknown(Exception):
    """A block not made here (markdown-it's rules make it)."""


@lru_cache(maxsize=4)
def known(md: MarkdownIt) -> bool:
    """Whether ``md`` parses blocks as ``tokens`` makes them: CommonMark's block rules and the
    table, no task lists, nesting deep enough."""
    options = md.options
    return (md.block.ruler.get_active_rules() == RULES and options.get("maxNesting", 0) > MAX_LEVEL
            and not options.get("tasklists", False))


_HEADING = re.compile(r"(#{1,6})(?: |$)")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_BREAK = re.compile(r"([-*_])(?: *\1){2,} *")  # a thematic break, when it is the whole line
_BULLET = re.compile(r"([-*+])( {1,4})(?=[^ ])")
_ORDERED = re.compile(r"([0-9]{1,9})([.)])( {1,4})(?=[^ ])")
_MARKER = re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?: |$)")  # any list item's start, empty or not
_DELIMITER_ROW = re.compile(r"[-|:][-|: ]+")  # what markdown-it's table rule first takes for a delimiter row


def tokens(src: str, md: MarkdownIt, env: EnvType) -> list[Token]:
    """The tokens of markdown-it's block parse of ``src`` (normalised, as its core rule
    ``normalize`` leaves it) with ``md``, a parser that ``known`` accepts: each simple block made
    here, any other by markdown-it's own rules (module docstring)."""
    return parse(src, md, env)[0]


def parse(src: str, md: MarkdownIt, env: EnvType) -> tuple[list[Token], bool]:
    """``tokens(src, md, env)``, and whether every block was made here."""
    if "\t" in src:  # (tabs widen indents in ways not followed here)
        theirs: list[MarkdownItToken] = []
        md.block.parse(src, md, env, theirs)
        return ours(theirs), False
    lines = src.split("\n")
    # markdown-it gives a last line of spaces only, with no line end after it, no line
    last_line_end = not lines[-1].strip(" ")
    if last_line_end:
        lines.pop()
    made = _Blocks(src, lines, last_line_end, md, env)
    return made.parse(), made.whole


class _Blocks:
    """One document's blocks, made into tokens line by line (``tokens``)."""

    def __init__(self, src: str, lines: list[str], last_line_end: bool, md: MarkdownIt, env: EnvType) -> None:
        self.src, self.md, self.env = src, md, env
        self.lines = lines
        self.last_line_end = last_line_end  # whether the last line has a line end after it
        self.out: list[Token] = []
        self.level = 0
        self.state: StateBlock | None = None  # markdown-it's, for the blocks left to it
        self.whole = True  # every block made here

    def push(self, kind: str, tag: str, nesting: Literal[-1, 0, 1], lines: list[int] | None = None,
             markup: str = "", hidden: bool = False) -> Token:
        """A token, as markdown-it's ``StateBlock.push`` makes it, with its map ``lines``."""
        if nesting < 0:
            self.level -= 1
        token = Token(kind, tag, nesting, self.level, "", markup, block=True, map=lines, hidden=hidden)
        if nesting > 0:
            self.level += 1
        self.out.append(token)
        return token

    def parse(self) -> list[Token]:
        lines, at = self.lines, 0
        while at < len(lines):
            if not lines[at].strip(" "):
                at += 1
                continue
            mark = len(self.out)
            try:
                at = self.block(at)
            except _Unknown:  # a block not made here: markdown-it makes it, from its first line
                del self.out[mark:]
                self.level = 0
                at = self.left_to_markdown_it(at)
        return self.out

    def block(self, at: int) -> int:
        """The block that starts at line ``at`` (at the top level), made; the line after it."""
        lines = self.lines
        line = lines[at]
        first = line[0]
        if first == " ":
            raise _Unknown
        if first != "|" and "|" in line and at + 1 < len(lines) and _delimiter_row(lines[at + 1].lstrip(" ")):
            raise _Unknown  # the header of a table, as markdown-it tries a table first (its delimiter row indented or not)
        if first == "#" and (heading := _HEADING.match(line)):
            self.heading(at, heading)
            return at + 1
        if first in "`~" and (fence := _FENCE.fullmatch(line)) and not (first == "`" and "`" in fence[2]):
            return self.fence(at, fence[1], fence[2])
        if first == "|":
            return self.table(at)
        if first == ">":
            return self.quote(at)
        if _MARKER.match(line):
            return self.list_block(at)
        return self.paragraph(at)

    def left_to_markdown_it(self, at: int) -> int:
        """The block that starts at line ``at`` (at the top level), made by markdown-it's block
        rules as its block parser tries them there (its tokens made ours: ``token.ours``); the
        line after it."""
        state = self.state
        if state is None:  # its tokens are these: markdown-it's rules push theirs after those made here
            state = self.state = StateBlock(self.src, self.md, self.env, cast("list[MarkdownItToken]", self.out))
        self.whole = False
        state.line = at  # (as its block parser sets it: a rule may read it)
        mark = len(self.out)
        for rule in self.md.block.ruler.getRules(""):
            if rule(state, at, state.lineMax, False):
                self.out[mark:] = ours(self.out[mark:])
                return state.line
        raise RuntimeError("none of the block rules matched")  # (the paragraph rule always does)

    def inline(self, content: str, start: int, end: int) -> None:
        token = self.push("inline", "", 0, [start, end])
        token.content, token.children = content, []

    def heading(self, at: int, heading: re.Match[str]) -> None:
        line, markup = self.lines[at], heading[1]
        text = line[len(markup):].rstrip(" ")
        kept = text.rstrip("#")
        if len(kept) < len(text) and kept[-1:] == " ":  # a closing run of '#'
            text = kept
        self.push("heading_open", f"h{len(markup)}", 1, [at, at + 1], markup)
        self.inline(mdTrim(text), at, at + 1)
        self.push("heading_close", f"h{len(markup)}", -1, None, markup)

    def fence(self, at: int, markup: str, info: str) -> int:
        lines = self.lines
        end = at + 1
        closed = False
        while end < len(lines):
            line = lines[end]
            body = line.lstrip(" ")
            if len(line) - len(body) < 4 and body.startswith(markup) and not body.strip(" ").strip(markup[0]):
                closed = True
                break
            end += 1
        content = "".join(line + "\n" for line in lines[at + 1:end])
        if end == len(lines) and content and not self.last_line_end:
            content = content[:-1]
        token = self.push("fence", "code", 0, [at, end + closed], markup)
        token.info, token.content = info, content
        return end + closed

    def paragraph(self, at: int) -> int:
        """A paragraph from line ``at``, at the top level."""
        lines = self.lines
        _starts_paragraph(lines[at])
        end = at + 1
        while end < len(lines) and lines[end].strip(" "):
            if _continues(lines[end], ordered_from_one=True):
                end += 1
            else:
                break  # a block begins on the next line
        self._paragraph(mdTrim("\n".join(lines[at:end])), at, end, hidden=False)
        return end

    def _paragraph(self, content: str, start: int, end: int, hidden: bool) -> None:
        self.push("paragraph_open", "p", 1, [start, end], hidden=hidden)
        self.inline(content, start, end)
        self.push("paragraph_close", "p", -1, hidden=hidden)

    def quote(self, at: int) -> int:
        """A block quote of one paragraph from line ``at``: '>' and its text on every line."""
        lines = self.lines
        texts = [_quoted(lines[at])]
        _starts_paragraph(texts[0])
        end = at + 1
        while end < len(lines) and lines[end].strip(" "):
            if lines[end][0] != ">":  # a lazy line, or a block after the quote
                raise _Unknown
            text = _quoted(lines[end])
            if not _continues(text, ordered_from_one=True):
                raise _Unknown  # a block inside the quote
            texts.append(text)
            end += 1
        self.push("blockquote_open", "blockquote", 1, [at, end], ">")
        self._paragraph(mdTrim("\n".join(texts)), at, end, hidden=False)
        self.push("blockquote_close", "blockquote", -1, None, ">")
        return end

    def list_block(self, at: int) -> int:
        """A list from line ``at``: items of one paragraph each, tight (no blank line between
        them) or loose."""
        lines, begin = self.lines, at
        first = _item(lines[at])
        ordered, marker = first[0] is not None, first[1]
        opening = self.push("ordered_list_open" if ordered else "bullet_list_open", "ol" if ordered else "ul", 1,
                            None, marker)
        if first[0] is not None and int(first[0]) != 1:
            opening.attrs = {"start": int(first[0])}
        paragraphs: list[Token] = []
        tight = True
        item: tuple[str | None, str, int] | None = first
        while item is not None:
            number, _marker, width = item
            token = self.push("list_item_open", "li", 1, None, marker)
            if number is not None:
                token.info = number
            texts = [lines[at][width:]]
            _starts_paragraph(texts[0])
            start, end = at, at + 1
            item = None
            while end < len(lines) and lines[end].strip(" "):
                line = lines[end]
                if line[0] != " ":  # a lazy line, the next item, or a block after the list
                    if _MARKER.match(line):
                        item = _same_list(line, number, marker)
                        break
                    if not _continues(line, ordered_from_one=False):
                        break
                    texts.append(line)
                elif line[:width].strip(" ") or line[width] == " " or not _continues(line[width:], True, True):
                    raise _Unknown  # indented otherwise than the item's text, or a block inside it
                else:
                    texts.append(line[width:])
                end += 1
            after = end
            if item is None:
                while after < len(lines) and not lines[after].strip(" "):
                    after += 1
                if after > end and after < len(lines):  # a blank line, then what?
                    line = lines[after]
                    if line[0] == " ":
                        raise _Unknown  # more of the item, or code
                    if _MARKER.match(line):
                        item = _same_list(line, number, marker)
                        tight = tight and item is None  # an item after a blank line: a loose list
            self._paragraph(mdTrim("\n".join(texts)), start, end, hidden=False)
            paragraphs += self.out[-3::2]  # (its opening and closing tokens)
            token.map = [start, after]
            self.push("list_item_close", "li", -1, None, marker)
            at = after
        opening.map = [begin, at]
        self.push("ordered_list_close" if ordered else "bullet_list_close", "ol" if ordered else "ul", -1, None, marker)
        if tight:  # markdown-it hides the paragraphs of a tight list
            for paragraph in paragraphs:
                paragraph.hidden = True
        return at

    def table(self, at: int) -> int:
        """A table from line ``at``: its header, delimiter row and body rows all start with '|'."""
        lines = self.lines
        if at + 1 >= len(lines):
            raise _Unknown
        header, delimiter = lines[at], lines[at + 1]
        if "\\" in header or _delimiter_row(header):  # (a header that is a delimiter row: a table above it?)
            raise _Unknown
        if delimiter[:1] != "|" or not _delimiter_row(delimiter):
            raise _Unknown
        aligns: list[str] = []
        columns = delimiter.split("|")
        for i, column in enumerate(columns):
            cell = mdTrim(column)
            if not cell:
                if i == 0 or i == len(columns) - 1:
                    continue
                raise _Unknown
            if not _ALIGN.fullmatch(cell):
                raise _Unknown
            aligns.append(("center" if cell[0] == ":" else "right") if cell[-1] == ":" else "left" if cell[0] == ":" else "")
        heads = _cells(header)
        if not heads or len(heads) != len(aligns):  # (no column: a paragraph, as markdown-it has it)
            raise _Unknown
        table = self.push("table_open", "table", 1)
        self.push("thead_open", "thead", 1, [at, at + 1])
        self.push("tr_open", "tr", 1, [at, at + 1])
        self._cells("th", heads, aligns, at)
        self.push("tr_close", "tr", -1)
        self.push("thead_close", "thead", -1)
        end = at + 2
        missing = 0
        tbody = None
        while end < len(lines) and lines[end].strip(" "):
            line = lines[end]
            if line[0] != "|" or "\\" in line:
                raise _Unknown
            cells = _cells(line)
            missing += len(aligns) - len(cells)
            if missing > MAX_AUTOCOMPLETED_CELLS:
                raise _Unknown
            if tbody is None:
                tbody = self.push("tbody_open", "tbody", 1)
            self.push("tr_open", "tr", 1, [end, end + 1])
            self._cells("td", cells + [""] * (len(aligns) - len(cells)), aligns, end)
            self.push("tr_close", "tr", -1)
            end += 1
        if tbody is not None:
            tbody.map = [at + 2, end]
            self.push("tbody_close", "tbody", -1)
        self.push("table_close", "table", -1)
        table.map = [at, end]
        return end

    def _cells(self, tag: str, cells: list[str], aligns: list[str], line: int) -> None:
        for cell, align in zip(cells, aligns, strict=False):  # a row's cells past the header's are left out
            token = self.push(f"{tag}_open", tag, 1)
            if align:
                token.attrs = {"style": "text-align:" + align}
            self.inline(mdTrim(cell), line, line + 1)
            self.push(f"{tag}_close", tag, -1)


_ALIGN = re.compile(r":?-+:?")


def _delimiter_row(line: str) -> bool:
    """Whether ``line`` may be a table's delimiter row, as markdown-it's table rule first looks."""
    return _DELIMITER_ROW.fullmatch(line) is not None


def _cells(line: str) -> list[str]:
    """A table row's cells, as markdown-it splits them (the row holds no backslash)."""
    cells = mdTrim(line).split("|")
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return cells


def _same_list(line: str, number: str | None, marker: str) -> tuple[str | None, str, int] | None:
    """The item ``line`` starts when it continues a list of ``marker`` (ordered when ``number``
    is not None), else None: another list."""
    following = _item(line)
    return following if (following[0] is None) == (number is None) and following[1] == marker else None


def _quoted(line: str) -> str:
    """A quote's line without its '>' and the space after it."""
    text = line[2:] if line[1:2] == " " else line[1:]
    if not text.strip(" ") or text[0] == " ":
        raise _Unknown  # a blank line in the quote, or an indented one
    return text


def _item(line: str) -> tuple[str | None, str, int]:
    """A list item's number (None for a bullet), marker character and the column its text
    starts at."""
    if bullet := _BULLET.match(line):
        if _BREAK.fullmatch(line):
            raise _Unknown
        return None, bullet[1], bullet.end()
    if ordered := _ORDERED.match(line):
        return ordered[1], ordered[2], ordered.end()
    raise _Unknown  # an empty item, or one whose text is code


def _starts_paragraph(text: str) -> None:
    """Raises _Unknown unless ``text`` (a block's first line, after any indent that belongs
    to its container) starts a paragraph."""
    first = text[0]
    if first in _PLAIN_START:
        return
    if first in " <|:=>-+" or _HEADING.match(text) or _BREAK.fullmatch(text):
        raise _Unknown
    if first in "`~" and text.startswith(first * 3):
        raise _Unknown  # a fence
    if (first == "*" or first.isdigit()) and _MARKER.match(text):
        raise _Unknown
    if first == "[" and _may_define(text):
        raise _Unknown


def _may_define(text: str) -> bool:
    """Whether a paragraph starting with ``text`` may be a reference definition (``[a]: b``)."""
    close = text.find("]")
    return close < 0 or "\\" in text[:close] or text[close + 1:close + 2] == ":"


def _continues(line: str, ordered_from_one: bool, inside: bool = False) -> bool:
    """Whether ``line`` continues a paragraph (True), or begins a block that ends it (False);
    _Unknown for a line made no faster here. ``ordered_from_one``: only an ordered item from
    1 ends it (as at the top level); ``inside``: the line is indented to an item's text, where
    a block would be nested in the item."""
    first = line[0]
    if first in _PLAIN_START:
        return True
    if first in " <|:=" or _BREAK.fullmatch(line):
        raise _Unknown
    if first == "#":
        ends = _HEADING.match(line) is not None
    elif first == ">":
        ends = True
    elif first in "`~":
        ends = _FENCE.fullmatch(line) is not None and not (first == "`" and "`" in line.lstrip("`"))
    elif (first in "-*+" or first.isdigit()) and _MARKER.match(line):
        bullet, ordered = _BULLET.match(line), _ORDERED.match(line)
        if ordered is not None:
            ends = not ordered_from_one or int(ordered[1]) == 1
        elif bullet is not None:
            ends = True
        else:
            raise _Unknown  # an empty item, or one whose text is code
    elif first == "-":
        raise _Unknown  # a setext heading's underline or a table's delimiter row, maybe
    else:
        ends = False
    if ends and inside:
        raise _Unknown
    return not ends


# Characters no block can start with: a line starting with one is a paragraph's.
_PLAIN_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$(),.;?'\"!/@%^&{}\\")
