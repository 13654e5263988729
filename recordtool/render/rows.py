"""What the index pages and the summarised graph show of each entry: its ``Row``.

The dashboard, the kinds' and the tags' pages list every entry with its kind, status, tags and
title (``recordtool.render.index``); ``graph.md`` summarised by tag groups the claims by their
first tag (``recordtool.render.mermaid``).
"""

from __future__ import annotations

from typing import NamedTuple

from recordtool.record.schema import Theory
from recordtool.render import escape
from recordtool.render.sitemap import Context

TITLE_WIDTH = 160  # characters of a title in a listing's cell


class Row(NamedTuple):
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
    if "" not in memo:
        entries = ctx.project.record.entries
        memo[""] = {entry_id: Row(entry.kind, entry.status, isinstance(entry, Theory), tuple(entry.tags),
                                  escape.cell(escape.short(ctx.title(entry_id), TITLE_WIDTH)))
                    for entry_id, entry in entries.items()}
    return memo[""]


def tags_in_use(ctx: Context) -> list[str]:
    """Every tag in use, sorted."""
    return sorted({tag for row in rows(ctx).values() for tag in row.tags})
