"""A token of a Markdown parse: markdown-it-py's ``Token``, field for field, as this package's
parser makes and reads it.

The parse of a body (``recordtool.record.mentions.parse``: blocks by ``recordtool.record.blocks``,
inline runs by ``recordtool.record.inline``, the rest by markdown-it-py) gives the tokens
markdown-it-py gives, and the prose writer (``recordtool.render.prose``) and the mention finder
read them. At 10,000 bodies of research Markdown that is some 1.7 million tokens. markdown-it's
``Token`` is a dataclass with slots: made and read from compiled code, each of its thirteen
fields is set and read by name, through the class's descriptors, and each token holds two dicts
of its own (``attrs``, ``meta``), nearly always empty. Made and freed, the tokens were about a
third of the parse. This class has the same fields and is compiled with the parser (mypyc): a
field is set and read in place, and a token without attributes shares one empty, read-only
mapping (``NONE``) for ``attrs`` and ``meta`` (a token that has some is given a dict of its own:
nothing here or in markdown-it changes a token's attributes in place). The tokens markdown-it
makes, for what it parses here, are made ours as they come (``ours``). A token equals any token
with the same fields, markdown-it's included (the tests compare the two parses).

Written here rather than taken from a library: markdown-it-py has no lighter token, and the
tokens' fields are its own (``markdown_it.token.Token``).
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Any, Final

NONE: Final[Mapping[Any, Any]] = types.MappingProxyType({})  # the attributes and meta of a token that has none
FIELDS: Final = ("type", "tag", "nesting", "attrs", "map", "level", "children", "content", "markup", "info",
                 "meta", "block", "hidden")  # markdown-it's, in its order


class Token:
    """A token, with the fields of markdown-it-py's ``Token`` and their meaning: ``type``
    ("paragraph_open", "inline", "text"), ``tag`` ("p"), ``nesting`` (1 opens, 0 is whole, -1
    closes), ``attrs`` (an HTML attribute's name -> value), ``map`` ([first line, line after] of
    a block), ``level`` (the nesting depth), ``children`` (an inline token's: its inline
    tokens), ``content``, ``markup`` ("*", a fence's backticks), ``info`` (a fence's info string,
    an ordered item's number), ``meta``, ``block`` (a block token) and ``hidden`` (a tight list's
    paragraph)."""

    def __init__(self, type: str, tag: str, nesting: int, level: int = 0, content: str = "", markup: str = "",
                 *, block: bool = False, map: list[int] | None = None, hidden: bool = False, info: str = "",
                 attrs: Mapping[str, str | int | float] = NONE, children: list[Token] | None = None,
                 meta: Mapping[Any, Any] = NONE) -> None:
        self.type = type
        self.tag = tag
        self.nesting = nesting
        self.attrs = attrs
        self.map = map
        self.level = level
        self.children = children
        self.content = content
        self.markup = markup
        self.info = info
        self.meta = meta
        self.block = block
        self.hidden = hidden

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` (one of these or markdown-it's) has the same fields."""
        return self is other or _fields(self) == _fields(other)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in FIELDS)
        return f"Token({shown})"


def _fields(token: object) -> tuple[Any, ...] | None:
    try:
        return tuple(getattr(token, name) for name in FIELDS)
    except AttributeError:
        return None


def ours(tokens: Sequence[Any]) -> list[Token]:
    """``tokens`` made by markdown-it (``markdown_it.token.Token``, children and all) as
    tokens of this module, the same fields: what it made enters the parse here."""
    out = []
    for token in tokens:
        if isinstance(token, Token):
            out.append(token)
            continue
        children = token.children
        out.append(Token(token.type, token.tag, token.nesting, token.level, token.content, token.markup,
                         block=token.block, map=token.map, hidden=token.hidden, info=token.info,
                         attrs=dict(token.attrs) if token.attrs else NONE,
                         children=ours(children) if children is not None else None,
                         meta=dict(token.meta) if token.meta else NONE))
    return out
