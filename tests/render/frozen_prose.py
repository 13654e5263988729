"""A frozen copy of the prose writer as it was before it wrote from markdown-it's token stream
(``recordtool/render/prose.py`` at 418c600): it builds a syntax tree of the tokens and writes
each node back. The tests hold today's writer to it byte for byte (``test_prose_stream.py``).
Do not change it to follow the writer: it is the oracle. What it shares with the writer
(``escape``, the parse, ``Style``) is not frozen. Changed since on purpose, as the writer was:
a code block is fenced (indented, it went on a list's last item as prose, raw HTML and all,
where the page indented the list less than its source, or put a claim's body after its
statement's list), a fence never starts on a list item's marker line (``_list``; a static
site's Markdown reads it as prose there), a '!' right before a link is escaped
(``_inline``, ``_linked``; with the link's '[' it made an image), and a list item's content
starts four columns in at least (``_list``; the site's Markdown made one flat list of a list
and the list nested in it two spaces in), a list right after a list of the same marker takes
another (``_blocks``, ``_list``: CommonMark read the two as one), an ordered list's numbers
are followed by '.' unless the list before has it (the site's Markdown reads no ')'), each
list's marker and each item are written by the writer's own ``list_marker``, ``marker_alone``
and ``list_item`` (a marker alone on its line is followed by a space and is not '-', a rule
first in an item is '___'), and a paragraph of white space alone (a no-break space) is written
as a no-break space (it was dropped). Its shortcut for plain paragraphs, which skipped the
parser and was held to give the parser's bytes, went with the writer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it.token import Token

from recordtool.record.mentions import SCHEME, link_target_id, markdown
from recordtool.render import escape
from recordtool.render.prose import Style, list_item, list_marker, marker_alone


def block(source: str, style: Style, tokens: list[Token] | None = None) -> str:
    """``source`` (Markdown) written back as Markdown blocks, ids linked; ``tokens``: what
    ``markdown().parse(source)`` gives, when it was parsed already."""
    if not source.strip():
        return ""
    return "\n".join(_blocks(tree(tokens if tokens is not None else markdown().parse(source)), style)).rstrip("\n")


class Node:
    """A node of the syntax tree: the nodes ``markdown_it.tree.SyntaxTreeNode`` makes of the
    same tokens, with the attributes prose reads (of the token, or of the opening token of a
    pair, whose ``type`` loses its ``_open``), made several times faster and without links to
    parents (no cycles: a tree is freed as soon as it is dropped, also while the cyclic
    collector is paused by ``no_gc_pauses``). A token without children (text, a line break,
    code: most of a tree) is its own node: it has the same attributes, ``children`` aside
    (``_children``)."""

    __slots__ = ("attrs", "children", "content", "hidden", "info", "markup", "tag", "type")

    def __init__(self, token: Token, kind: str, children: list[Item]) -> None:
        self.type = kind
        self.tag = token.tag
        self.markup = token.markup
        self.info = token.info
        self.content = token.content
        self.attrs = token.attrs
        self.hidden = token.hidden
        self.children = children


Item = Node | Token
"""A node of the tree: a ``Node``, or a token without children."""


def _children(node: Item) -> Sequence[Item]:
    return node.children or ()


def tree(tokens: list[Token]) -> list[Item]:
    """The top nodes of ``tokens`` (what ``SyntaxTreeNode(tokens).children`` holds)."""
    top: list[Item] = []
    levels = [top]
    for token in tokens:
        nesting = token.nesting
        if nesting == 1:
            children: list[Item] = []
            levels[-1].append(Node(token, token.type.removesuffix("_open"), children))
            levels.append(children)
        elif nesting == -1:
            if len(levels) == 1:
                raise ValueError("Invalid token nesting")
            levels.pop()
        else:
            levels[-1].append(Node(token, token.type, tree(token.children)) if token.children else token)
    if len(levels) != 1:
        raise ValueError("unclosed tokens")
    return top


def inline(source: str, style: Style) -> str:
    """``source`` (Markdown) on one line, for a table cell: its text, ids linked, ``|`` escaped;
    block structure (paragraphs, list items) is flattened into one line."""
    if not source.strip():
        return ""
    parts = [_inline(_children(node), style, cell=True) for top in tree(markdown().parse(source))
             for node in _inlines(top)]
    return " ".join(p for p in parts if p)


def _inlines(node: Item) -> list[Item]:
    if node.type == "inline":
        return [node]
    if node.type in ("fence", "code_block", "html_block"):
        return []
    out: list[Item] = []
    for child in _children(node):
        out.extend(_inlines(child))
    return out


# Blocks -------------------------------------------------------------------------------------


def _blocks(nodes: Sequence[Item], style: Style, tight: bool = False) -> list[str]:
    out: list[str] = []
    last = None  # (changed on purpose: see the docstring) the marker of a list right before
    for node in nodes:
        if node.type in ("bullet_list", "ordered_list"):
            lines, last = _list(_children(node), node.type == "ordered_list", node.attrs, style, last)
        else:
            lines = _block(node, style)
            if any(lines):
                last = None
        if not lines:
            continue
        if out and not tight:
            out.append("")
        out.extend(lines)
    return out


def _block(node: Item, style: Style) -> list[str]:
    kind = node.type
    if kind == "paragraph":
        lines = _inline(_children(node.children[0]), style).split("\n") if node.children else []
        return ["\u00a0"] if lines == [""] else lines  # (changed on purpose: see the docstring)
    if kind == "heading":
        level = max(int(node.tag[1:]), style.min_heading)
        text = _inline(_children(node.children[0]), style, one_line=True) if node.children else ""
        return ["#" * level + (" " + text if text else "")]
    if kind in ("bullet_list", "ordered_list"):
        return _list(_children(node), kind == "ordered_list", node.attrs, style)[0]
    if kind == "blockquote":
        inner = _blocks(_children(node), style)
        return [("> " + line) if line else ">" for line in inner] or [">"]
    if kind == "fence":
        info = node.info.strip()
        return escape.fence(node.content, info if "`" not in info else "").split("\n")
    if kind == "code_block":  # (changed on purpose: see the docstring)
        return escape.fence(node.content).split("\n")
    if kind == "hr":
        return ["***"]
    if kind == "html_block":
        return _html_block(node.content)
    if kind == "table":
        return _table(_children(node), style)
    return _html_block(node.content) if node.content else []


def _list(items: Sequence[Item], ordered: bool, attrs: dict[str, str | int | float], style: Style,
          before: str | None = None) -> tuple[list[str], str]:
    tight = any(
        child.type == "paragraph" and child.hidden for item in items for child in _children(item)
    )
    number = int(attrs.get("start", 1)) if ordered else 0
    written = [_blocks(_children(item), style, tight=tight) for item in items]
    # (changed on purpose: see the docstring) the marker, and each item, as the writer writes them
    char = list_marker(ordered, items[0].markup if items else "", before, any(map(marker_alone, written)))
    out: list[str] = []
    for lines in written:
        marker = f"{number}{char}" if ordered else char
        number += 1
        if out and not tight:
            out.append("")
        out.extend(list_item(marker, lines))
    return out, char


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


def _table(sections: Sequence[Item], style: Style) -> list[str]:
    rows: list[list[str]] = []
    aligns: list[str] = []
    for section in sections:
        for row in _children(section):
            cells = []
            for cell in _children(row):
                text = _inline(_children(cell.children[0]), style, cell=True) if cell.children else ""
                cells.append(text)
                if section.type == "thead":
                    aligns.append(str(cell.attrs.get("style", "")).removeprefix("text-align:"))
            rows.append(cells)
    if not rows:
        return []
    width = len(aligns) or len(rows[0])
    delimiter = [{"left": ":---", "right": "---:", "center": ":---:"}.get(a, "---") for a in aligns] or ["---"] * width
    out = [_row(rows[0], width), _row(delimiter, width)]
    out.extend(_row(r, width) for r in rows[1:])
    return out


def _row(cells: list[str], width: int) -> str:
    cells = (cells + [""] * width)[:width]
    return "| " + " | ".join(cells) + " |"


# Inline -------------------------------------------------------------------------------------


@dataclass
class _State:
    at_line_start: bool = True


def _inline(nodes: Sequence[Item], style: Style, *, one_line: bool = False, cell: bool = False,
            in_link: bool = False, state: _State | None = None) -> str:
    state = state or _State()
    one_line = one_line or cell
    out: list[str] = []
    for node in nodes:
        kind = node.type
        if kind == "text":
            out.append(_text(node.content, style, in_link, state.at_line_start, cell))
        elif kind == "softbreak":
            out.append(" " if one_line else "\n")
            state.at_line_start = not one_line
            continue
        elif kind == "hardbreak":
            out.append(" " if one_line else "\\\n")
            state.at_line_start = not one_line
            continue
        elif kind == "code_inline":
            span = escape.code(node.content)
            out.append(span.replace("|", "\\|") if cell else span)
        elif kind in ("em", "strong"):
            inner = _inline(_children(node), style, one_line=one_line, cell=cell, in_link=in_link, state=state)
            out.append(f"{node.markup}{inner}{node.markup}")
        elif kind == "link":
            if out:  # (changed on purpose: see the docstring)
                out[-1] = escape.before_link(out[-1])
            out.append(_link(node, style, one_line, cell, state))
        elif kind == "image":
            src = _destination(str(node.attrs.get("src", "")), style)
            title = node.attrs.get("title")
            alt = escape.line(node.content)
            suffix = f' "{escape.title(str(title))}"' if title else ""
            out.append(f"![{alt}]({escape.href(src)}{suffix})")
        else:  # html_inline and anything unknown: shown as text, never as markup
            out.append(escape.text(node.content, line_start=state.at_line_start))
            if cell:
                out[-1] = out[-1].replace("\n", " ")
        state.at_line_start = False
    return "".join(out)


def _text(content: str, style: Style, in_link: bool, line_start: bool, cell: bool) -> str:
    if cell:
        content = content.replace("\n", " ")
    if in_link or not style.pattern.search(content):
        return escape.text(content, line_start=line_start)
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


def _link(node: Item, style: Style, one_line: bool, cell: bool, state: _State) -> str:
    href = str(node.attrs.get("href", ""))
    title = node.attrs.get("title")
    inner = _inline(_children(node), style, one_line=one_line, cell=cell, in_link=True, state=state)
    target = link_target_id(href, style.pattern)
    if target is not None:
        linked = style.link(target)
        if linked is not None:
            href, id_title = linked
            title = title or id_title
    else:
        href = _destination(href, style)
    suffix = f' "{escape.title(str(title))}"' if title else ""
    return f"[{inner or escape.text(href, line_start=False)}]({escape.href(href)}{suffix})"


def _destination(href: str, style: Style) -> str:
    """A relative destination (not a URL, not an anchor) rewritten for the page."""
    if not href or href.startswith(("#", "/")) or SCHEME.match(href) or style.rewrite is None:
        return href
    return style.rewrite(href)
