"""What the index pages and the summarised graph show of each entry: its ``Row``.

The dashboard, the kinds' and the tags' pages list every entry with its kind, status, tags and
title (``recordtool.render.index``); ``graph.md`` summarised by tag groups the claims by their
first tag (``recordtool.render.mermaid``). Each row is worked out once per render, from the
entry alone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recordtool.record.schema import Theory
from recordtool.render import escape

if TYPE_CHECKING:
    from recordtool.render.sitemap import Context

TITLE_WIDTH = 160  # characters of a title in a listing's cell


@dataclass(frozen=True, slots=True)
class Row:
    """An entry as a listing shows it: its kind, status, whether it is a claim, its tags, and
    its title as a listing's cell shows it (a claim without a title: its statement)."""

    kind: str
    status: str
    claim: bool
    tags: tuple[str, ...]
    title: str


def rows(ctx: Context) -> dict[str, Row]:
    """Every entry's row, by id, in the record's order (worked out once per context)."""
    memo: dict[str, dict[str, Row]] = ctx.memo("rows")
    found = memo.get("")
    if found is None:
        found = memo[""] = {entry_id: _row(ctx, entry_id) for entry_id in ctx.project.record.entries}
    return found


def _row(ctx: Context, entry_id: str) -> Row:
    entry = ctx.project.record.entries[entry_id]
    intern = sys.intern  # a kind, a status or a tag is shared by many rows: one string each
    return Row(intern(entry.kind), intern(entry.status), isinstance(entry, Theory),
               tuple(intern(t) for t in entry.tags), escape.cell(escape.short(ctx.title(entry_id), TITLE_WIDTH)))


def tags_in_use(ctx: Context) -> list[str]:
    """Every tag in use, sorted."""
    return sorted({tag for row in rows(ctx).values() for tag in row.tags})
