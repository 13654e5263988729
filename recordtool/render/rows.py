"""What the index pages show of each entry (its ``Row``), kept between renders.

The index pages (``recordtool.render.index``) list every entry with its kind, status, tags and
title. Making every entry (loading it from the entry cache) to list it costs more than composing
the lists; after an edit of one entry's title, that was most of a render. So what the lists show
of each entry is kept in the cache folder (``<cache>/pages/rows.bin``) with the file it came
from (its path and hash, as ``plan.listed_file`` names it), and only the entries whose file
changed, or that are new, are made again; an entry gone is dropped. A row is worked out from its
entry's file alone (the same bytes, the same row), so a row kept by any earlier render is the
one a cold render works out. The file is read with the entry cache's key (recordtool's code,
the parsing packages' versions, the configuration): any other code works every row out afresh.

What a page shows of a claim's verdict (its badge) is not kept: it comes from the statuses, as
in a cold render, as do the links (from the page's folder).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

from recordtool.record.schema import Theory
from recordtool.render import escape

if TYPE_CHECKING:
    from recordtool.render.sitemap import Context

# An entry's row: its file (path and hash), kind, status, whether it is a claim, its tags, and
# its title as a listing's cell shows it (a claim without a title: its statement).
Row = tuple[str, str, str, bool, tuple[str, ...], str]
# a row's fields (a plain tuple: the kept file holds plain data only, read without making objects)
FILE: Final = 0
KIND: Final = 1
STATUS: Final = 2
CLAIM: Final = 3
TAGS: Final = 4
TITLE: Final = 5

ROWS_FILE = "pages/rows.bin"  # under the cache folder
ROWS_FORM = b"recordtool-index-rows 1\n"
TITLE_WIDTH = 160  # characters of a title in a listing's cell


def rows(ctx: Context) -> dict[str, Row]:
    """Every entry's row, in the record's order: the row kept by the last render while the
    entry's file is the same, else worked out from the entry (then the rows are kept again,
    when the project was opened with the cache). Worked out once per context."""
    found: dict[str, Row] = ctx.memo("index.rows")
    entries = ctx.project.record.entries
    if len(found) == len(entries):
        return found
    from recordtool.render.plan import listed_file

    project = ctx.project
    kept = _read(ctx) if project.cached else {}
    places = project.record.places
    made = 0
    for entry_id in entries:
        file = listed_file(places[entry_id])
        row = kept.get(entry_id)
        if not (type(row) is tuple and len(row) == TITLE + 1 and row[FILE] == file):
            row = _row(ctx, entry_id, file)
            made += 1
        found[entry_id] = row
    if project.cached and (made or len(kept) != len(found)):
        _write(ctx, found)
    return found


def _row(ctx: Context, entry_id: str, file: str) -> Row:
    entry = ctx.project.record.entries[entry_id]
    intern = sys.intern  # a kind, a status or a tag is shared by many rows: one string each
    return (file, intern(entry.kind), intern(entry.status), isinstance(entry, Theory),
            tuple(intern(t) for t in entry.tags), escape.cell(escape.short(ctx.title(entry_id), TITLE_WIDTH)))


def _read(ctx: Context) -> dict[str, Row]:
    from recordtool.record.cache import cache_key, read_plain

    config = ctx.project.config
    kept = read_plain(config.cache / ROWS_FILE, cache_key(config), ROWS_FORM)
    return kept if isinstance(kept, dict) else {}


def _write(ctx: Context, found: dict[str, Row]) -> None:
    from recordtool.record.cache import cache_key, write_plain

    config = ctx.project.config
    write_plain(config.cache / ROWS_FILE, cache_key(config), ROWS_FORM, found)


__all__ = ["CLAIM", "FILE", "KIND", "ROWS_FILE", "STATUS", "TAGS", "TITLE", "Row", "rows"]
