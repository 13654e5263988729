"""What the index pages and the summarised graph show of each entry: its ``Row``.

The dashboard, the kinds' and the tags' pages list every entry with its kind, status, tags and
title (``recordtool.render.index``); ``graph.md`` summarised by tag groups the claims by their
first tag (``recordtool.render.mermaid``). A row is worked out from its entry's file alone:
with a store (``Context.store``), each is kept there under the file's path and hash, so that a
render after an edit makes only the entries whose file changed (making every entry of a large
record from the entry cache costs most of a second).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple

from recordtool.record.schema import Theory
from recordtool.render import escape
from recordtool.render.sitemap import code_version

if TYPE_CHECKING:
    from recordtool.render.sitemap import Context

TITLE_WIDTH = 160  # characters of a title in a listing's cell
ROWS = "rows"  # the store's table: an entry's id -> its row, under its file's path and hash


class Row(NamedTuple):
    """An entry as a listing shows it: its kind, status, whether it is a claim, its tags, and
    its title as a listing's cell shows it (a claim without a title: its statement). A
    NamedTuple: read back from the store ten times faster than a dataclass."""

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
        found = memo[""] = _rows(ctx)
    return found


def _rows(ctx: Context) -> dict[str, Row]:
    record, store = ctx.project.record, ctx.store
    if store is None:
        return {entry_id: _row(ctx, entry_id) for entry_id in record.entries}
    config = ctx.project.config
    shared = f"{code_version()} {[(k.prefix, k.name, k.folder) for k in config.kinds.values()]}"
    places = record.places
    digests = {entry_id: f"{places[entry_id].path} {places[entry_id].digest} {shared}" for entry_id in record.entries}
    kept = store.get_many(ROWS, digests)
    made = {entry_id: _row(ctx, entry_id) for entry_id in record.entries if entry_id not in kept}
    if made:
        store.put_many(ROWS, [(entry_id, digests[entry_id], row) for entry_id, row in made.items()])
    return {entry_id: kept[entry_id] if entry_id in kept else made[entry_id] for entry_id in record.entries}


def _row(ctx: Context, entry_id: str) -> Row:
    entry = ctx.project.record.entries[entry_id]
    intern = sys.intern  # a kind, a status or a tag is shared by many rows: one string each
    return Row(intern(entry.kind), intern(entry.status), isinstance(entry, Theory),
               tuple(intern(t) for t in entry.tags), escape.cell(escape.short(ctx.title(entry_id), TITLE_WIDTH)))


def tags_in_use(ctx: Context) -> list[str]:
    """Every tag in use, sorted."""
    return sorted({tag for row in rows(ctx).values() for tag in row.tags})
