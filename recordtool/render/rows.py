"""What the index pages show of each entry (its ``Row``), and the tallies their keys are made
of, kept between renders.

The index pages (``recordtool.render.index``) list every entry with its kind, status, tags and
title, and a claim with its verdict. Making every entry (loading it from the entry cache) to list
it costs more than composing the lists, and working out the pages' keys over every entry took
most of a second at 100,000 entries, after any edit. So ``listed`` keeps, in the cache folder:

- each entry's row, with the file it came from (its path and hash, as ``plan.listed_file``
  names it) and what the pages show of its state (``look``): only the entries whose file or
  state changed, or that are new, are gone over again (an entry is made only when its file
  changed), and an entry gone is dropped. A row is worked out from its entry's file alone (the
  same bytes, the same row), so a row kept by any earlier render is the one a cold render
  works out;
- for each index page, a tally of the entries it lists (``Tally``: how many, how many are
  claims, and the sum of a hash of what the page shows of each), brought up to date from the
  entries gone over only. A listing shows its entries in the record's order, which is the
  order of their ids (``load_record``), so what a page shows is fixed by the entries it lists
  and what it shows of each: its tally stands for it, and its key is made from it
  (``index.index_keys``). The dashboard has a tally of the claims (with their verdicts'
  dates), ``graph.md`` one of what ``mermaid.whole_graph`` draws of each entry.

They are kept as a whole file (``ROWS_FILE``: each column one joined string, read without
making an object per entry until the rows are asked for) and, beside it, what renders changed
since (``CHANGES_FILE``), against the random generation the whole file was written with: the
whole file is written again only when ids come or go, or once the changes pass a quarter of the
entries. Each file is written atomically, checked by its checksum and the entry cache's key
(recordtool's code, the parsing packages' versions, the configuration) when read, and its
shape checked: anything else is not used (every row is worked out again), and a lost changes
file leaves the rows and tallies of an earlier render, which the next one brings up to date.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from recordtool import parallel
from recordtool.record.schema import Theory
from recordtool.render import escape
from recordtool.render.sitemap import GRAPH, INDEX, kind_page, tag_page

if TYPE_CHECKING:
    from pathlib import Path

    from recordtool.record.config import Config
    from recordtool.render.sitemap import Context

# An entry's row: its kind, status, whether it is a claim, its tags, and its title as a
# listing's cell shows it (a claim without a title: its statement). A plain tuple: the kept file
# holds plain data only, read without making objects.
Row = tuple[str, str, bool, tuple[str, ...], str]
KIND: Final = 0
STATUS: Final = 1
CLAIM: Final = 2
TAGS: Final = 3
TITLE: Final = 4

ROWS_FILE = "pages/rows.bin"  # under the cache folder
ROWS_FORM = b"recordtool-index-rows 2\n"  # (generation, ``Listed.columns``)
CHANGES_FILE = "pages/rows-changes.bin"  # what renders changed since, against the generation of ROWS_FILE
CHANGES_FORM = b"recordtool-index-row-changes 1\n"  # (generation, {position: ``Change``}, tallies)
CHANGES_MIN = 1_000  # changes kept beside the whole file: at least this many, or a quarter of the entries
TITLE_WIDTH = 160  # characters of a title in a listing's cell

SEP = "\0"  # between the entries of a column kept joined (no id, path, kind, status or tag holds it)
HASHES = 32  # bytes per entry in ``Listed.hashes``: its row's hash, then its graph hash (16 each)
MOD = 1 << 128
# An index page's tally (or the dashboard's, or the graph's): how many entries, how many of them
# claims, and the sum of their hashes modulo 2**128 (a sum has no order to keep, and changes
# with any one of them).
Tally = list[int]
# A position's change against the whole file: its file, look, row hash, graph hash and row
# (None: the whole file's row).
Change = tuple[str, "str | None", int, int, "Row | None"]


@dataclass
class Before:
    """The tallies and rows a render found kept, before it brought them up to date
    (``Listed.before``)."""

    tallies: dict[str, Tally]
    # id -> its position, and its row and look as kept: each entry whose row hash or dashboard
    # hash changed (what the index pages show of it)
    was: dict[str, tuple[int, Row, str | None]] = field(default_factory=dict)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big")


def row_hash(entry_id: str, row: Row, look: str | None) -> int:
    """A hash of what a listing shows of an entry (its row) and its state (the first part of
    its ``look``): its line on its kind's and tags' pages, and its claim's on the dashboard."""
    state = look.partition(SEP)[0] if look is not None else None
    return _hash(SEP.join((entry_id, row[KIND], row[STATUS], "1" if row[CLAIM] else "0", " ".join(row[TAGS]),
                           str(state), row[TITLE])))


def graph_hash(ctx: Context, entry_id: str, row: Row, look: str | None) -> int:
    """A hash of what ``mermaid.whole_graph`` summarised by tag draws of an entry: a claim's
    first tag, the ids it cites and its state; another entry's kind (and, for a claim's, every
    entry's id: whether a cited id is in the record)."""
    state = look.partition(SEP)[0] if look is not None else None
    if not row[CLAIM]:
        return _hash(SEP.join((entry_id, row[KIND], "0", str(state))))
    tags = row[TAGS]
    cites = [f"{cited} {relation}" for cited, relation in ctx.project.record.cites(entry_id)]
    return _hash(SEP.join((entry_id, row[KIND], "1", str(state), tags[0] if tags else "", *cites)))


def dashboard_hash(row_hashed: int, look: str | None) -> int:
    """A hash of a claim's line on the dashboard: its row and state (``row_hash``) and, when it
    has a verdict, the dates shown (in its ``look``)."""
    return row_hashed if look is None or SEP not in look else _hash(f"{row_hashed:x}{SEP}{look}")


def looks(ctx: Context, ids: list[str]) -> list[str | None]:
    """What the index pages show of each entry's state: its state (None for an entry that is
    not a claim), and for a claim with a verdict the dates the dashboard shows, joined by NULs."""
    states = ctx.states
    dated: dict[str, str] = {}
    for claim, status in ctx.statuses.items():
        verdict = status.verdict
        if verdict is not None:
            state = states.get(claim)
            since = escape.cell(verdict.since[:10]) if (state or "unchecked") != "stale" else "—"
            dated[claim] = f"{state}{SEP}{since}{SEP}{escape.cell(verdict.verified_at[:10])}"
    get = states.get
    if not dated:
        return [get(i) for i in ids]
    return [dated[i] if i in dated else get(i) for i in ids]


@dataclass
class Listed:
    """What the index pages show of every entry, in the record's order (``ids``), and the
    tallies of the index pages (``tallies``, by page; the dashboard's under ``INDEX``, the
    graph's under ``GRAPH``)."""

    ids: list[str]
    files: list[str]  # each entry's file, as ``plan.listed_file`` names it
    looks: list[str | None]  # ``looks``
    hashes: bytearray  # ``row_hash`` and ``graph_hash`` of each entry, 16 bytes each, big-endian
    tallies: dict[str, Tally]
    # The rows: a list, or as the whole file keeps them (kinds, statuses, tags, titles joined
    # by SEP, a byte per claim), made into a list on first need (``rows``)
    columns: tuple[str, str, bytes, str, str | list[str]] | None = None
    _rows: list[Row] | None = field(default=None, repr=False)
    changes: dict[int, Change] = field(default_factory=dict)  # positions changed since the whole file
    generation: str | None = None  # the whole file's; None: nothing to write changes against
    changed: bool = False  # since read: to be kept again
    # What the last render kept, as it was before this one brought it up to date: its tallies,
    # and the row and look of each entry whose line on an index page may have changed since,
    # by id (with its position). None when nothing was kept, or when ids came or went
    # (``index.spliced`` then composes every index page whose key changed).
    before: Before | None = field(default=None, repr=False)

    def rows(self) -> list[Row]:
        """Every entry's row, in the record's order."""
        if self._rows is None:
            assert self.columns is not None
            kinds, statuses, claims, tags, titles = self.columns
            # a kind, a status or a set of tags is shared by many rows: one object each
            words: dict[str, str] = {}
            word = words.setdefault
            tag_sets: dict[str, tuple[str, ...]] = {"": ()}
            tag_set = tag_sets.get
            count = len(claims)
            self._rows = [(word(k, k), word(s, s), c == 1,
                           tag_set(ts) or tag_sets.setdefault(ts, tuple(sys.intern(t) for t in ts.split(" "))), title)
                          for k, s, c, ts, title in zip(_split(kinds, count), _split(statuses, count), claims,
                                                        _split(tags, count), _split(titles, count)
                                                        if isinstance(titles, str) else titles, strict=True)]
            for n, change in self.changes.items():
                if change[4] is not None:
                    self._rows[n] = change[4]
            self.columns = None
        return self._rows

    def row(self, n: int) -> Row:
        """The row of the entry at ``n``; while the rows are kept as columns, made alone (an
        edit asks for the row it changes, as kept: at 100,000 entries, making every row back
        took 0.11 to 0.13 s)."""
        if self._rows is not None:
            return self._rows[n]
        change = self.changes.get(n)
        if change is not None and change[4] is not None:
            return change[4]
        assert self.columns is not None
        kinds, statuses, claims, tags, titles = self.columns
        joined = _nth(tags, n)
        return (sys.intern(_nth(kinds, n)), sys.intern(_nth(statuses, n)), claims[n] == 1,
                tuple(sys.intern(t) for t in joined.split(" ")) if joined else (),
                _nth(titles, n) if isinstance(titles, str) else titles[n])

    def hashed(self, n: int) -> tuple[int, int]:
        """The row hash and graph hash of the entry at ``n``."""
        at = n * HASHES
        return (int.from_bytes(self.hashes[at:at + 16], "big"), int.from_bytes(self.hashes[at + 16:at + HASHES], "big"))

    def by_id(self) -> dict[str, Row]:
        return dict(zip(self.ids, self.rows(), strict=True))

    def tags(self) -> set[str]:
        """Every tag in use."""
        prefix, suffix = tag_page(SEP).split(SEP)  # the tallies of the tags' pages are named by their paths
        return {page[len(prefix):-len(suffix)] for page in self.tallies if page.startswith(prefix)}

    def whole(self) -> tuple[Any, ...]:
        """The whole file's value (without its generation)."""
        rows = self.rows()
        titles: str | list[str] = SEP.join(r[TITLE] for r in rows)
        if titles.count(SEP) != max(0, len(rows) - 1):  # a title holds a NUL: kept as a list
            titles = [r[TITLE] for r in rows]
        return (SEP.join(self.ids), SEP.join(self.files), self.looks, bytes(self.hashes), self.tallies,
                SEP.join(r[KIND] for r in rows), SEP.join(r[STATUS] for r in rows), bytes(r[CLAIM] for r in rows),
                SEP.join(" ".join(r[TAGS]) for r in rows), titles)


LISTED = "rows.listed"  # the context's memo of ``listed``


def listed(ctx: Context) -> Listed:
    """What the index pages show of every entry now, and their tallies: brought up to date
    from what the last render kept (when the project was opened with the cache), going over
    only the entries whose file or state changed, came or went; then kept again. Worked out
    once per context (``listed_in_steps``, all at once)."""
    return parallel.finished(listed_in_steps(ctx))


def listed_in_steps(ctx: Context) -> Generator[None, None, Listed]:
    """``listed``, given when this generator is done, worked out in steps of about
    ``parallel.STEP_SECONDS``: with the index pages' keys, while a worker composes the entries'
    pages (``index.index_keys_in_steps``), where one step of 0.13 s at 10,000 entries left the
    worker without pages for a tenth of a second. One working out per context: whoever asks
    next (this generator again, or ``listed`` while it is part done) goes on with it."""
    memo: dict[str, Any] = ctx.memo(LISTED)
    if "" not in memo:
        steps = memo.get(_STEPS)
        if steps is None:
            steps = memo[_STEPS] = _listing(ctx, memo)
        yield from steps  # (done already by another asker: it stops at once)
    found: Listed = memo[""]
    return found


_STEPS = "steps"  # ``listed_in_steps``'s working out, in the memo of ``listed`` until it is done


def _listing(ctx: Context, memo: dict[str, Any]) -> Generator[None, None, None]:
    project = ctx.project
    kept = _read(ctx) if project.cached else None
    found = yield from _brought_up_to_date(ctx, kept)
    if project.cached and found.changed:
        yield
        _write(ctx, found)
    memo[""] = found
    del memo[_STEPS]


def tags_in_use(ctx: Context) -> set[str]:
    """Every tag in use: ``listed(ctx).tags()``, read off the entries instead when every one is
    made already and the rows are not worked out yet (a cold render: the rows, 0.12 s at
    10,000 entries, are then worked out with the index pages' keys, while workers compose the
    entries' pages, not before the pages begin, when one process works alone)."""
    found: Listed | None = ctx.memo(LISTED).get("")
    record = ctx.project.record
    if found is None:
        return {tag for entry in record.entries.values() for tag in entry.tags}
    return listed(ctx).tags()


def rows(ctx: Context) -> dict[str, Row]:
    """Every entry's row, by id, in the record's order (``listed``)."""
    memo: dict[str, dict[str, Row]] = ctx.memo("rows.by_id")
    found = memo.get("")
    if found is None:
        found = memo[""] = listed(ctx).by_id()
    return found


def _row(ctx: Context, entry_id: str) -> Row:
    """An entry's row, worked out from the entry (made from the entry cache if it was not)."""
    entry = ctx.project.record.entries[entry_id]
    intern = sys.intern  # a kind, a status or a tag is shared by many rows: one string each
    return (intern(entry.kind), intern(entry.status), isinstance(entry, Theory), tuple(intern(t) for t in entry.tags),
            escape.cell(escape.short(ctx.title(entry_id), TITLE_WIDTH)))


def _count(tallies: dict[str, Tally], entry_id: str, row: Row, hashed: tuple[int, int], look: str | None,
           sign: int) -> None:
    """Add (``sign`` 1) or take out (-1) an entry from the tallies of the pages that show it."""
    row_hashed, graph_hashed = hashed
    claim = row[CLAIM]
    for page in (kind_page(row[KIND]), *(tag_page(t) for t in row[TAGS])):
        _add(tallies, page, sign, claim, row_hashed)
    if claim:
        _add(tallies, INDEX, sign, claim, dashboard_hash(row_hashed, look))
    _add(tallies, GRAPH, sign, claim, graph_hashed)


def _add(tallies: dict[str, Tally], name: str, sign: int, claim: bool, value: int) -> None:
    tally = tallies.get(name)
    if tally is None:
        tally = tallies[name] = [0, 0, 0]
    tally[0] += sign
    tally[1] += sign if claim else 0
    tally[2] = (tally[2] + sign * value) % MOD
    if tally[0] == 0 and tally[1] == 0 and tally[2] == 0:
        del tallies[name]  # a page that lists nothing is as if never tallied


def _brought_up_to_date(ctx: Context, kept: Listed | None) -> Generator[None, None, Listed]:
    """``kept`` (None: nothing kept) brought up to date with the record and the statuses, in
    steps of about ``parallel.STEP_SECONDS``."""
    from recordtool.render.plan import listed_files

    clock = time.perf_counter
    due = clock() + parallel.STEP_SECONDS
    record = ctx.project.record
    places = record.places
    ids = list(record.entries)
    files = listed_files(places, ids)
    now = looks(ctx, ids)
    if kept is None:  # everything worked out afresh
        rows: list[Row] = []
        fresh = Listed(ids, files, now, bytearray(HASHES * len(ids)), {}, _rows=rows, changed=True)
        for n, entry_id in enumerate(ids):
            if clock() >= due:
                yield
                due = clock() + parallel.STEP_SECONDS
            row = _row(ctx, entry_id)
            rows.append(row)
            hashed = row_hash(entry_id, row, now[n]), graph_hash(ctx, entry_id, row, now[n])
            fresh.hashes[n * HASHES:(n + 1) * HASHES] = hashed[0].to_bytes(16, "big") + hashed[1].to_bytes(16, "big")
            _count(fresh.tallies, entry_id, row, hashed, now[n], 1)
        return fresh
    new: set[int] = set()
    if kept.ids != ids:  # ids came or went: what was kept, lined up with the record's ids
        kept, new = _lined_up(kept, ids)
    else:  # (the tallies are a few hundred small lists at most: one per index page)
        kept.before = Before({page: list(tally) for page, tally in kept.tallies.items()})
    if files == kept.files and now == kept.looks:
        return kept
    for n, (file, look, was_file, was_look) in enumerate(zip(files, now, kept.files, kept.looks, strict=True)):
        if file != was_file or look != was_look or n in new:
            if clock() >= due:
                yield
                due = clock() + parallel.STEP_SECONDS
            _update(ctx, kept, n, file, look, n in new)
    return kept


def _update(ctx: Context, listed: Listed, n: int, file: str, look: str | None, new: bool) -> None:
    """Bring the entry at ``n`` up to date: its file is ``file`` and its look ``look`` now
    (``new``: it was not in the record). Its entry is made only when its file changed."""
    entry_id = listed.ids[n]
    row = _row(ctx, entry_id) if new or file != listed.files[n] else listed.row(n)
    hashed = row_hash(entry_id, row, look), graph_hash(ctx, entry_id, row, look)
    was_look = listed.looks[n]
    if new:
        _count(listed.tallies, entry_id, row, hashed, look, 1)
    else:
        was = listed.hashed(n)
        if was != hashed or dashboard_hash(was[0], was_look) != dashboard_hash(hashed[0], look):
            # the same row hash: the same row (its pages the same), else the one kept
            was_row = row if was[0] == hashed[0] else listed.row(n)
            _count(listed.tallies, entry_id, was_row, was, was_look, -1)
            _count(listed.tallies, entry_id, row, hashed, look, 1)
            if listed.before is not None:
                listed.before.was[entry_id] = (n, was_row, was_look)
    listed.files[n], listed.looks[n] = file, look
    listed.hashes[n * HASHES:(n + 1) * HASHES] = hashed[0].to_bytes(16, "big") + hashed[1].to_bytes(16, "big")
    if listed._rows is not None:
        listed._rows[n] = row
    listed.changes[n] = (file, look, hashed[0], hashed[1], row)
    listed.changed = True


def _lined_up(kept: Listed, ids: list[str]) -> tuple[Listed, set[int]]:
    """``kept`` lined up with ``ids`` (the record's, now): the entries gone taken out of the
    tallies, those that came marked new (their positions, given back); written whole next."""
    rows = kept.rows()
    tallies = kept.tallies
    where = {entry_id: n for n, entry_id in enumerate(kept.ids)}
    now = set(ids)
    for n, entry_id in enumerate(kept.ids):
        if entry_id not in now:
            _count(tallies, entry_id, rows[n], kept.hashed(n), kept.looks[n], -1)
    files: list[str] = []
    looks_: list[str | None] = []
    hashes = bytearray()
    lined: list[Row] = []
    new: set[int] = set()
    for entry_id in ids:
        at = where.get(entry_id)
        if at is None:
            new.add(len(files))
            files.append("")
            looks_.append(None)
            hashes += bytes(HASHES)
            lined.append(("", "", False, (), ""))  # (worked out in ``_update``)
        else:
            files.append(kept.files[at])
            looks_.append(kept.looks[at])
            hashes += kept.hashes[at * HASHES:(at + 1) * HASHES]
            lined.append(rows[at])
    return Listed(ids, files, looks_, hashes, tallies, _rows=lined, changed=True), new


def kept_reads(config: Config) -> list[tuple[Path, bytes]]:
    """The files the rows are kept in, with their formats, for ``cache.read_ahead``."""
    return [(config.cache / ROWS_FILE, ROWS_FORM), (config.cache / CHANGES_FILE, CHANGES_FORM)]


def _read(ctx: Context) -> Listed | None:
    """What the last render kept: the whole file, and the changes made since against its
    generation; None when there is no whole file that holds what it should."""
    from recordtool.record.cache import cache_key, read_plain

    config = ctx.project.config
    key = cache_key(config)
    whole = read_plain(config.cache / ROWS_FILE, key, ROWS_FORM)
    if not (isinstance(whole, tuple) and len(whole) == 2 and isinstance(whole[0], str)):
        return None
    listed = _from_whole(whole[1])
    if listed is None:
        return None
    listed.generation = whole[0]
    changes = read_plain(config.cache / CHANGES_FILE, key, CHANGES_FORM)
    if (isinstance(changes, tuple) and len(changes) == 3 and changes[0] == whole[0] and isinstance(changes[1], dict)
            and _tallies(changes[2]) and all(_change(n, c, len(listed.ids)) for n, c in changes[1].items())):
        for n, change in changes[1].items():
            listed.files[n], listed.looks[n] = change[0], change[1]
            listed.hashes[n * HASHES:(n + 1) * HASHES] = change[2].to_bytes(16, "big") + change[3].to_bytes(16, "big")
            listed.changes[n] = change
        listed.tallies = changes[2]
    return listed


def _from_whole(value: object) -> Listed | None:
    """The whole file's value (``Listed.whole``) as a ``Listed``; None when it is not one."""
    if not (isinstance(value, tuple) and len(value) == 10 and all(isinstance(value[i], str) for i in (0, 1, 5, 6, 8))
            and isinstance(value[2], list) and isinstance(value[3], bytes) and isinstance(value[7], bytes)
            and isinstance(value[9], (str, list)) and _tallies(value[4])):
        return None
    joined_ids, joined_files, kept_looks, hashes, tallies, kinds, statuses, claims, tags, titles = value
    count = len(kept_looks)
    ids, files = _split(joined_ids, count), _split(joined_files, count)
    if not (len(ids) == len(files) == count == len(claims) and len(hashes) == HASHES * count
            and all(look is None or type(look) is str for look in kept_looks)
            and all(_joined(column, count) for column in (kinds, statuses, tags))
            and (len(titles) == count and all(type(t) is str for t in titles) if isinstance(titles, list)
                 else _joined(titles, count))):
        return None
    return Listed(ids, files, kept_looks, bytearray(hashes), tallies, (kinds, statuses, claims, tags, titles))


def _nth(column: str, n: int) -> str:
    """The entry at ``n`` of a column joined by SEP (``Listed.whole``), without the ones after it."""
    return column.split(SEP, n + 1)[n]


def _split(column: str, count: int) -> list[str]:
    """The ``count`` entries of a column joined by SEP (``Listed.whole``): none at all is the
    empty string, as one entry that is empty is."""
    return column.split(SEP) if count else []


def _joined(column: str, count: int) -> bool:
    """Whether ``column`` holds ``count`` entries joined by SEP."""
    return column.count(SEP) == count - 1 if count else column == ""


def _tallies(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str) and isinstance(tally, list) and len(tally) == 3 and all(type(v) is int for v in tally)
        and 0 <= tally[1] <= tally[0] and 0 <= tally[2] < MOD for name, tally in value.items())


def _change(n: object, change: object, count: int) -> bool:
    """Whether ``change`` is a ``Change`` of a position ``n`` of ``count`` entries."""
    return (type(n) is int and 0 <= n < count and isinstance(change, tuple) and len(change) == 5
            and type(change[0]) is str and (change[1] is None or type(change[1]) is str)
            and type(change[2]) is int and 0 <= change[2] < MOD and type(change[3]) is int and 0 <= change[3] < MOD
            and (change[4] is None or _is_row(change[4])))


def _is_row(row: object) -> bool:
    return (isinstance(row, tuple) and len(row) == 5 and type(row[KIND]) is str and type(row[STATUS]) is str
            and type(row[CLAIM]) is bool and isinstance(row[TAGS], tuple) and all(type(t) is str for t in row[TAGS])
            and type(row[TITLE]) is str)


def _write(ctx: Context, listed: Listed) -> None:
    """Keep ``listed`` for the next render: as its changes against the whole file read, or,
    with nothing to build on or once the changes have grown large, whole."""
    from recordtool.record.cache import cache_key, write_plain

    config = ctx.project.config
    key = cache_key(config)
    if listed.generation is not None and len(listed.changes) <= max(CHANGES_MIN, len(listed.ids) // 4):
        write_plain(config.cache / CHANGES_FILE, key, CHANGES_FORM, (listed.generation, listed.changes, listed.tallies))
        return
    generation = os.urandom(16).hex()
    write_plain(config.cache / ROWS_FILE, key, ROWS_FORM, (generation, listed.whole()))
    with contextlib.suppress(OSError):  # changes made against another generation are not used; gone, not even read
        os.unlink(config.cache / CHANGES_FILE)
    listed.generation, listed.changes = generation, {}


__all__ = ["CLAIM", "KIND", "ROWS_FILE", "STATUS", "TAGS", "TITLE", "Before", "Listed", "Row", "listed",
           "listed_in_steps", "rows", "tags_in_use"]
