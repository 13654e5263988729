"""Planning the site: every page with the key of its inputs and a way to compose it.

``plan_site`` gathers what each page depends on into a key (a hash) and a way to compose it;
``render_site`` composes them all into ``{path: bytes}`` (pure: the same project and statuses
give the same bytes, no clock, no disk). ``code_version`` is not part of a key, so that the
manifest, which is committed with the pages, is the same whatever recordtool's version: a
render trusts the keys of the last one only when that was made by the same ``code_version``
(kept locally, in the cache folder: ``recordtool.render.site``), and composes every page
otherwise (and rewrites only those whose bytes changed).

Working out every page's key is a pass over the whole graph; after an edit of one entry few
keys change. So, with the entry cache, the keys are kept between renders (``KeptKeys``, in
``<cache>/pages/keys-<hash of the output folder>.bin``: each folder its own, for the last
``KEPT_FOLDERS`` folders rendered) with what each one depends on, and only those that may have
changed are worked out again, the same way as the first time. What a render changes of them is
kept as changes beside the whole file (``keys-<hash>-changes.bin``), which is written whole
again only once the changes grow large: at 100,000 entries writing them all took most of a second.
"""

from __future__ import annotations

import contextlib
import hashlib
import operator
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool import parallel, snapshot

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.load import Places
    from recordtool.record.project import Project
    from recordtool.render.sitemap import Context
    from recordtool.verify.verdict import ClaimStatus

# The modules that compose pages (escape, page, prose, ...) import pydantic and markdown-it:
# they are imported where pages are composed, so that deciding "nothing changed" stays cheap.

# Distributions whose version can change what a page says (parsing YAML and Markdown).
RENDER_DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")  # they shape pages too


def code_version() -> str:
    """A hash of recordtool's own code (every module: loading and linking shape pages too),
    its version, Python's and those of the packages that parse and load the record: pages are
    composed again when any of them changes."""
    return snapshot.code_version(RENDER_DEPENDENCIES)


@dataclass
class Plan:
    """Every file of the site: pages with the key of their inputs, and figures to copy."""

    pages: list[str]  # every page, sorted
    key: Callable[[str], str | None]  # page -> the key of its inputs (None: compose every time)
    compose: Callable[[str], str]
    assets: dict[str, str] = field(default_factory=dict)  # output path -> source, relative to the root
    indexes: list[str] = field(default_factory=list)  # the index pages (composed together, on first need)
    # The entry pages' owners and the context they are composed in: for workers that compose
    # them from a slice of the project (``recordtool.render.slices``); None: only ``compose``.
    owners: dict[str, str] = field(default_factory=dict)  # entry page -> its entry's id
    context: Context | None = None
    # What the first ``key`` asked for does (every page's key), in steps, for work meanwhile:
    # ``key`` finishes what is left of it (``plan_site``).
    work_out_keys: Callable[[], Iterator[None]] = field(default=lambda: iter(()))
    # An index page made from the page as the last render wrote it, with the key it had then
    # (``index.spliced``); None: compose it. (None here: every page composed.)
    splice: Callable[[str, str, str], str | None] | None = None


@dataclass(frozen=True)
class Site:
    """The composed site: pages by path, and figures to copy (output path -> source path)."""

    pages: dict[str, bytes]
    assets: dict[str, str]


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    from recordtool.render.sitemap import Context

    config = project.config
    return Context(project, statuses, out=out_name(config, out), verdicts=config.relative(config.verdicts))


def out_name(config: Config, out: Path | None) -> str | None:
    """The output folder ``out`` (None: the pages folder) as a page names it (``Context.out``):
    relative to the project's root; None when it is outside the project."""
    rel = config.relative((out if out is not None else config.pages).resolve())
    return None if Path(rel).is_absolute() else rel


def plan_site(ctx: Context) -> Plan:
    """Every page of the site with the key of its inputs; figures to copy."""
    from recordtool.render import index, page
    from recordtool.render.sitemap import entry_page, figure_file

    project = ctx.project
    # recordtool's code is not in the keys, which the committed manifest keeps (a new version
    # would otherwise change every line of it): a render trusts the keys only when the last
    # one was made by the same code (``site.keys_code``), and composes every page otherwise.
    shared = repr((ctx.out, ctx.verdicts, sorted(project.config.relations.items()),
                   [(k.prefix, k.name) for k in project.config.kinds.values()]))
    owners: dict[str, str] = {entry_page(entry_id): entry_id for entry_id in project.record.entries}
    keys: dict[str, str | None] = {}  # worked out for every page, on first need or in steps
    worked_out = False
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts, status.verdict.claim)
            if target is not None:
                assets[target] = figure
    kept = read_kept_keys(ctx)  # what the last render kept
    paths = index.index_paths(ctx)

    def work_out() -> Generator[None, None, None]:
        nonlocal worked_out
        made = yield from entry_keys_in_steps(ctx, shared, kept)
        keys.update((entry_page(entry_id), k) for entry_id, k in made.items())
        keys.update((yield from index.index_keys_in_steps(ctx, shared, paths)))
        if kept is not None:  # for the next render (keys depend on the inputs, not on what is written)
            write_kept_keys(ctx, kept)
        worked_out = True

    # One generator, begun by whichever asks first (nothing runs until then), in steps of about
    # ``parallel.STEP_SECONDS``: a step is work this process does between handing chunks of pages to
    # workers, and the workers wait for chunks while it lasts (all at once, the keys of 10,000
    # entries took 0.8 s, for which a worker stood idle).
    working = work_out()

    def work_out_keys() -> Iterator[None]:
        yield from working

    def key(path: str) -> str | None:
        if not worked_out:
            for _step in work_out_keys():
                pass
        return keys.get(path)

    def compose(path: str) -> str:
        owner = owners.get(path)
        return page.render_entry(ctx, owner) if owner is not None else index.index_page(ctx, path)

    def splice(path: str, written: str, was: str) -> str | None:
        return index.spliced(ctx, shared, path, written, was)

    return Plan(sorted([*owners, *paths]), key, compose, dict(sorted(assets.items())), sorted(paths), owners, ctx,
                work_out_keys, splice)


def listed_file(where: Places) -> str:
    """An entry's file as a listing kept for it names it (``Listing``): the same file, the
    same listing."""
    return f"{where.path} {where.digest}"


def listed_files(places: Mapping[str, Places], ids: list[str]) -> list[str]:
    """``listed_file`` of each entry of ``ids``, in order, made without a call per entry
    (at 100,000 entries 0.06 s against 0.13 s)."""
    where = list(map(places.__getitem__, ids))
    return list(map(" ".join, zip(map(_PATH, where), map(_DIGEST, where), strict=True)))


def _hash(parts: list[str]) -> str:
    """The hash of ``parts`` joined by NULs, without joining them (at 100,000 entries the index
    pages' parts are 25 MB: their join and its bytes would be 50 MB more at once)."""
    hasher = hashlib.blake2b(digest_size=16)
    for n, part in enumerate(parts):
        hasher.update(part.encode("utf-8") if n == 0 else b"\0" + part.encode("utf-8"))
    return hasher.hexdigest()


def status_reprs(ctx: Context) -> dict[str, str]:
    """What the page keys hash of each claim's status besides its state: its ``repr``, for a
    claim with a verdict, reasons or dependencies. Nothing for the others (most claims): their
    page shows their state alone, and the state is in the entry's face already. At 100,000
    entries the ``repr`` of 40,000 plain statuses, kept and compared, cost about a tenth of a
    second for nothing."""
    return {claim: repr(status) for claim, status in ctx.statuses.items()
            if status.verdict is not None or status.reasons or status.depends}


def entry_keys(ctx: Context, shared: str, kept: KeptKeys | None = None) -> dict[str, str]:
    """``entry_keys_in_steps``, all at once."""
    return parallel.finished(entry_keys_in_steps(ctx, shared, kept))


def entry_keys_in_steps(ctx: Context, shared: str,
                        kept: KeptKeys | None = None) -> Generator[None, None, dict[str, str]]:
    """The key of every entry's page, given when this generator is done, worked out in steps
    of about ``parallel.STEP_SECONDS`` (``entry_keys``: all at once). A key is a hash of everything
    the page shows. That is the entry, its status (and the titles and captions of its figures,
    kept beside them), what the page shows of each neighbour (an entry it cites or mentions, or
    that cites or mentions it), and whether each id of a sentence quoted from a backlink is in
    the record (a link, or "not in the record").

    An entry is known on its own page by its "face": its id, the bytes of its file (and the
    file's path) and its state; the same bytes give the same entry. On its neighbours' pages it
    is known by what they show of it (``shown_of``: its title, state, citations and mentions),
    so that an edit of its prose that leaves those as they were recomposes its own page only.
    Whether an id the entry cites or mentions is in the record needs no more: it is exactly
    whether that id is among the neighbours.

    ``kept``: the faces, statuses and keys the last render worked out (``KeptKeys``); then
    only the keys that may have changed are worked out again (``KeptKeys.stale``), and
    ``kept`` is brought up to date. Each key is worked out the same way either way."""
    from recordtool.render.figures import caption

    clock = time.perf_counter
    due = clock() + parallel.STEP_SECONDS
    record = ctx.project.record
    entries = record.entries
    faces = face_of_each(record.places, ctx.states)
    said = {}  # what a page shows of its entry's status besides its state (``status_reprs``)
    for entry_id, status in status_reprs(ctx).items():
        if entry_id in entries:
            verdict = ctx.statuses[entry_id].verdict
            said[entry_id] = status if verdict is None else (  # and the titles and captions of its figures
                f"{status}\0{[caption(ctx, figure) for figure in verdict.figures]!r}")
    todo: set[str] | dict[str, Face] = faces
    if kept is None:
        kept = KeptKeys(shared, watching=False)
    elif kept.shared != shared:  # other code, configuration or output folder: every key afresh
        kept.clear(shared)
    else:
        todo = kept.stale(ctx, faces, said)
    # What the page shows of its neighbours enters its key as the sum of their hashes (a set
    # has no order to keep, and a sum of 128-bit hashes changes with any one of them): no
    # sorting, no joining. Each is kept from the last render while the neighbour's face is
    # the same (``KeptKeys.stale`` works out again those of the faces that changed).
    shown = kept.shown
    learnt: list[str] = []
    findall = ctx.pattern.findall
    for entry_id in todo:
        if clock() >= due:
            yield
            due = clock() + parallel.STEP_SECONDS
        near, watch = _neighbourhood(ctx, entry_id)
        quoted: list[str] = []  # the ids of its quoted sentences, each marked when not in the record
        # (found again for each quote: keeping them for every sentence held 90 MB at 100,000 entries)
        for mention in ctx.project.graph.mentions_in.get(entry_id, ()):
            quoted += [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
        watch.update(i.lstrip("!") for i in quoted)
        total = 0
        for i in near:
            face_sum = shown.get(i)
            if face_sum is None:
                face_sum = shown[i] = shown_of(ctx, i)
                learnt.append(i)
            total += face_sum
        parts = [shared, face_text(entry_id, faces[entry_id]), said.get(entry_id, "None")]
        parts.append(f"{len(near)} {total % (1 << 128):x}")
        parts += quoted
        kept.learn(entry_id, _hash(parts), watch)
    kept.faces, kept.said = faces, said
    if learnt and not kept.fresh:
        kept.touch("shown", learnt)
    return {entry_id: kept.keys[entry_id] for entry_id in entries}


Face = tuple[str, str, "str | None"]  # an entry's file (path and hash) and its state


def face_of_each(places: Mapping[str, Places], states: dict[str, str | None]) -> dict[str, Face]:
    """Each entry's face (``entry_keys``) as a tuple: its file's path and hash, and its state;
    made, and compared with those kept (``differ``), without a line of Python per entry. A
    tuple reads back from the kept file slower than a string, but on a 100,000-entry record,
    reading the kept keys back, making the faces and comparing them took 0.49 s against 0.62 s
    for an f-string per entry compared one by one (medians, turn about in one process, a slow day)."""
    ids = places.keys()
    files = places.values()
    return dict(zip(ids, zip(map(_PATH, files), map(_DIGEST, files), map(states.get, ids), strict=True), strict=True))


_PATH, _DIGEST = operator.itemgetter(0), operator.itemgetter(4)  # of ``Places``


def face_text(entry_id: str, face: Face) -> str:
    """The face of ``entry_id`` as the page keys hash it."""
    return f"{entry_id} {face[0]} {face[1]} {face[2]}"


def shown_of(ctx: Context, entry_id: str) -> int:
    """A hash of what the pages of an entry's neighbours show of it (or may: a little more is
    hashed than is shown, never less): its id, its title (a claim without one: its statement), its
    state, each of its citations (the id, the relation, the note), and each of its mentions
    (the id, the field, the sentence quoted), in order. Its file's path is hashed too. Not its
    prose as such: a neighbour's page shows its sentences that mention ids, not the others
    (``recordtool.render.slices.flat_face`` packs the same for a worker, less the mentions,
    which the slice of the page's own entry holds). The line of a mention is left out: no page
    shows it."""
    record = ctx.project.record
    entry = record.entries[entry_id]
    mentions = ctx.project.graph.mentions_out.get(entry_id, ())
    shown = repr((entry_id, record.places[entry_id].path, entry.display_title, ctx.state(entry_id),
                  [(c.id, c.as_, c.note) for c in entry.cites], [(m.target, m.field, m.sentence) for m in mentions]))
    return int.from_bytes(hashlib.blake2b(shown.encode("utf-8"), digest_size=16).digest(), "big")


def differ(now: dict[str, Any], then: dict[str, Any]) -> set[str] | None:
    """The keys whose value differs between ``now`` and ``then`` (or that only one holds), by
    the set of their items (C, not a line of Python per key); None when a value kept cannot be
    hashed (a damaged file: treat everything as changed)."""
    try:
        return {key for key, _value in now.items() ^ then.items()}
    except TypeError:
        return None


def _neighbourhood(ctx: Context, entry_id: str) -> tuple[set[str], set[str]]:
    """The neighbours of ``entry_id`` in the record (what it cites or mentions, and what cites
    or mentions it), and every id its own links name, in the record or not (whether each one
    is in the record shows on its page)."""
    record, graph = ctx.project.record, ctx.project.graph
    entries = record.entries
    named = {cited for cited, _relation in record.cites(entry_id)}
    named.update(m.target for m in graph.mentions_out.get(entry_id, ()))
    near = {i for i in named if i in entries}
    for sources in graph.cited_by.get(entry_id, {}).values():
        near.update(sources)
    near.update(m.source for m in graph.mentions_in.get(entry_id, ()))
    near.discard(entry_id)
    named |= near
    named.discard(entry_id)
    return near, named


KEPT_FORM = b"recordtool-page-keys 7\n"  # (generation, ``KeptKeys.plain``)
Listing = tuple[str, str, tuple[str, ...]]  # an entry's file (path and hash), what the lists show of it, its tags
WATCH_SEP = "\0"


@dataclass
class KeptKeys:
    """What the last render worked out for the entries' pages, kept for the next one
    (``kept_files``): each entry's face, what its neighbours' pages show of it
    (``shown``: a hash, ``shown_of``), a claim's status as its page shows it
    (``status_reprs``: only when it shows more than the state), its page's key, and
    for each id the entries whose key depends on it (``watchers``: the entries it is a
    neighbour of, and those that name it in a citation, a mention or a quoted sentence).

    The key of an entry's page depends on its face, its status, what it shows of its
    neighbours and whether each id its page names is in the record. So after an edit, the
    keys that may have changed are those of the entries whose face or status changed, of the
    entries that watch an id whose ``shown`` changed (or that came or went), and of the
    entries that such an entry now names (``stale``). Every other key is the one kept. A
    watcher kept that no longer watches costs a key worked out again, never a wrong one."""

    shared: str
    faces: dict[str, Face] = field(default_factory=dict)
    said: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    # id -> the entries watching it: a set, or as kept, the ids joined by NULs (``WATCH_SEP``):
    # one string per id reads back ten times faster than a set, and is split only for the ids
    # that changed (at 10,000 entries, 0.024 s of the 0.033 s that reading the file took)
    watchers: dict[str, set[str] | str] = field(default_factory=dict)
    listings: dict[str, Listing] = field(default_factory=dict)  # id -> its file, a hash of what the lists show of it, its tags
    shown: dict[str, int] = field(default_factory=dict)  # id -> what its neighbours' pages show of it (``shown_of``)
    changed: bool = True  # since read: to be written again
    watching: bool = True  # False: nothing is kept for a next render, so no watchers are worked out
    # Nothing kept from before (a first render, or keys cleared): each entry is learned once,
    # so ``learn`` joins its id to the strings of the ids it watches, as they are kept, instead
    # of making a set per id (at 100,000 entries, about 100 MB of sets at once, held at the
    # main process's peak while the pages are planned).
    fresh: bool = True
    moved: set[str] = field(default_factory=set)  # after ``stale``: the ids whose face changed, came or went
    # What the whole file kept holds (``kept_files``): its generation, and its parts as read
    # (``PARTS``), which the parts above start as copies of; None: nothing to write changes against.
    base: tuple[str, dict[str, dict[str, Any]]] | None = field(default=None, repr=False, compare=False)
    # The ids whose value may differ from ``base``, by part (``PARTS``): those the changes file
    # named and those this render changed, so that writing the changes looks at them only, not
    # at every entry. The listings, when ``index_keys`` replaced them (they are not ``listed``,
    # as read), are compared whole.
    touched: dict[str, set[str]] = field(default_factory=dict, repr=False, compare=False)
    listed: dict[str, Listing] | None = field(default=None, repr=False, compare=False)

    def clear(self, shared: str) -> None:
        self.shared, self.faces, self.said, self.keys, self.watchers, self.listings = shared, {}, {}, {}, {}, {}
        self.shown = {}
        self.changed = self.fresh = True
        self.base = None
        self.touched = {}

    def touch(self, part: str, ids: Iterable[str]) -> None:
        """Note that the values of ``ids`` in ``part`` may have changed (``changes``)."""
        touched = self.touched.get(part)
        if touched is None:
            touched = self.touched[part] = set()
        touched.update(ids)

    def stale(self, ctx: Context, faces: dict[str, Face], said: dict[str, str]) -> set[str]:
        """The entries whose key may differ from the one kept (every entry, when what was kept
        cannot be compared: a damaged file)."""
        entries = ctx.project.record.entries
        graph = ctx.project.graph
        changed = differ(faces, self.faces)
        restated = differ(said, self.said)
        if changed is None or restated is None:
            changed = set(faces.keys() | self.faces.keys())
            restated = set(said.keys() | self.said.keys())
        self.moved = changed
        self.touch("faces", changed)
        todo = {i for i in changed if i in entries}
        self.touch("said", restated)
        todo.update(restated)
        # An entry whose face changed but not what its neighbours' pages show of it (an edit of
        # its prose that leaves its mentions as they were) changes its own page's key only.
        shown = self.shown
        reshown: list[str] = []
        for entry_id in changed:
            before = shown.pop(entry_id, None)
            if entry_id in entries:
                now = shown[entry_id] = shown_of(ctx, entry_id)
                if now == before:
                    continue
            reshown.append(entry_id)
        self.touch("shown", changed)
        for entry_id in reshown:
            todo.update(self.watching_of(entry_id))
            if entry_id in entries:  # what it names now (what it named before watches it)
                todo.update(cited for cited, _relation in ctx.project.record.cites(entry_id))
                todo.update(m.target for m in graph.mentions_out.get(entry_id, ()))
        todo = {i for i in todo if i in entries}
        self.changed = bool(todo) or bool(changed)
        return todo

    def watching_of(self, entry_id: str) -> set[str]:
        """The entries watching ``entry_id`` (a set of its own, to change)."""
        watching = self.watchers.get(entry_id)
        if watching is None:
            return set()
        if isinstance(watching, str):
            watching = self.watchers[entry_id] = set(watching.split(WATCH_SEP))
        return watching

    def watched_by(self, entry_id: str) -> Iterable[str]:
        """The entries watching ``entry_id``, read as kept (``watching_of`` without making a set)."""
        watching = self.watchers.get(entry_id, ())
        return watching.split(WATCH_SEP) if isinstance(watching, str) else watching

    def learn(self, entry_id: str, key: str, watch: set[str]) -> None:
        self.keys[entry_id] = key
        if not self.watching:
            return
        if not self.fresh:  # (nothing kept from before: written whole)
            self.touch("keys", (entry_id,))
            self.touch("watchers", watch)
        if self.fresh and WATCH_SEP not in entry_id:
            watchers = self.watchers
            for i in watch:
                watching = watchers.get(i)
                if watching is None:
                    watchers[i] = entry_id
                elif isinstance(watching, str):
                    watchers[i] = watching + WATCH_SEP + entry_id
                else:
                    watching.add(entry_id)
            return
        for i in watch:
            watching = self.watchers.get(i)
            if watching is None:
                self.watchers[i] = {entry_id}
            elif isinstance(watching, str):
                self.watching_of(i).add(entry_id)
            else:
                watching.add(entry_id)

    def plain(self) -> tuple[str, dict[str, Face], dict[str, str], dict[str, str], dict[str, set[str] | str],
                             dict[str, Listing], dict[str, int]]:
        """Plain data, for ``recordtool.record.cache.write_plain``; entries gone are left out.
        The watchers of an id are joined into one string (a set is kept as a set when one of
        its ids holds the separator, which no valid id does)."""
        faces = self.faces
        keys = {i: k for i, k in self.keys.items() if i in faces}
        watchers = {i: _joined(watching) for i, watching in self.watchers.items()}
        shown = self.shown if self.shown.keys() <= faces.keys() else {i: s for i, s in self.shown.items() if i in faces}
        return (self.shared, faces, self.said, keys, watchers, self.listings, shown)

    def _now(self, part: str, entry_id: str, missing: object) -> Any:
        """The value of ``entry_id`` in ``part`` as ``plain`` gives it (``missing``: none)."""
        value = getattr(self, part).get(entry_id, missing)
        return _joined(value) if part == "watchers" and value is not missing else value

    def apply(self, changes: object) -> None:
        """Bring the parts up to date with ``changes`` (as ``changes`` gives them); changes not
        in that form are not used."""
        if not (isinstance(changes, dict) and all(
                isinstance(changes.get(part), tuple) and len(changes[part]) == 2 and isinstance(changes[part][0], dict)
                and isinstance(changes[part][1], list) for part in PARTS)):
            return
        checked = KeptKeys.from_plain((self.shared, *(changes[part][0] for part in PARTS)))
        if checked is None:
            return
        for part in PARTS:
            now = getattr(self, part)
            now.update(getattr(checked, part))
            for gone in changes[part][1]:
                now.pop(gone, None)
            self.touch(part, getattr(checked, part))  # what differs from the whole file still does
            self.touch(part, changes[part][1])

    def changes(self) -> Changes | None:
        """What differs in ``plain()`` from the whole file read (``base``), by part, looking
        only at the ids ``touched`` (the listings, replaced whole, compared whole); None when
        there is no whole file to build on, or the changes have grown large (then the whole
        file is written again)."""
        if self.base is None or self.fresh:
            return None
        base = self.base[1]
        out: Changes = {}
        size = 0
        missing = object()
        for part in PARTS:
            before = base[part]
            changed: dict[str, Any] = {}
            gone: list[str] = []
            if part == "listings" and self.listings is not self.listed:
                now = self.listings
                changed = {i: v for i, v in now.items() if (old := before.get(i, missing)) is not v and old != v}
                gone = list(before.keys() - now.keys())
            else:
                for i in self.touched.get(part, ()):
                    value = self._now(part, i, missing)
                    if value is missing:
                        if i in before:
                            gone.append(i)
                    # (a set may be the one read, added to since: it counts as changed)
                    elif ((old := before.get(i, missing)) is not value and old != value) or isinstance(value, set):
                        changed[i] = value
            size += len(changed) + len(gone)
            out[part] = (changed, gone)
        return out if size <= max(CHANGES_MIN, len(self.faces) // 4) else None

    @classmethod
    def from_plain(cls, value: object) -> KeptKeys | None:
        if not (isinstance(value, tuple) and len(value) == 7 and isinstance(value[0], str)
                and all(isinstance(v, dict) for v in value[1:])):
            return None
        shared, faces, said, keys, watchers, listings, shown = value
        if not (all(isinstance(w, (set, str)) for w in watchers.values())
                and all(isinstance(v, tuple) and len(v) == 3 and isinstance(v[2], tuple) for v in listings.values())
                and all(type(s) is int for s in shown.values())):
            return None
        return cls(shared, faces, said, keys, watchers, listings, shown, changed=False, fresh=False)


PARTS = ("faces", "said", "keys", "watchers", "listings", "shown")  # ``KeptKeys.plain`` after ``shared``


def _joined(watching: set[str] | str) -> set[str] | str:
    """An id's watchers as kept: joined into one string (a set when one of its ids holds the
    separator, which no valid id does)."""
    if isinstance(watching, set) and watching:
        joined = WATCH_SEP.join(watching)
        return joined if joined.count(WATCH_SEP) == len(watching) - 1 else watching
    return watching
KEPT_CHANGES_FORM = b"recordtool-page-key-changes 4\n"
Changes = dict[str, tuple[dict[str, Any], list[str]]]  # part -> (id -> its value now, ids gone)


def read_kept_keys(ctx: Context) -> KeptKeys | None:
    """The keys the last render into the same folder kept, when the project was opened with the
    cache: the whole file, and the changes written since against it (``kept_files``: they are
    used only when made against the same generation of the whole file)."""
    from recordtool.record.cache import cache_key, read_plain

    project = ctx.project
    if not project.cached:
        return None
    config = project.config
    key = cache_key(config)
    whole_file, changes_file = kept_files(config, ctx.out)
    whole = read_plain(whole_file, key, KEPT_FORM)
    kept = (KeptKeys.from_plain(whole[1]) if isinstance(whole, tuple) and len(whole) == 2
            and isinstance(whole[0], str) else None)
    if kept is None:
        return KeptKeys("")
    kept.base = (whole[0], {part: getattr(kept, part) for part in PARTS})
    for part in PARTS:  # changed in place by the render: the parts as read stay as they were
        setattr(kept, part, dict(getattr(kept, part)))
    changes = read_plain(changes_file, key, KEPT_CHANGES_FORM)
    if isinstance(changes, tuple) and len(changes) == 3 and changes[0] == whole[0] and changes[1] == kept.shared:
        kept.apply(changes[2])
    kept.listed = kept.listings
    return kept


def write_kept_keys(ctx: Context, kept: KeptKeys) -> None:
    """Keep ``kept`` for the next render: as its changes against the whole file read, or,
    with nothing to build on or once the changes have grown large, whole."""
    from recordtool.record.cache import cache_key, write_plain

    if not kept.changed:
        return
    config = ctx.project.config
    key = cache_key(config)
    whole_file, changes_file = kept_files(config, ctx.out)
    changes = kept.changes()
    if changes is not None and kept.base is not None:
        write_plain(changes_file, key, KEPT_CHANGES_FORM, (kept.base[0], kept.shared, changes))
        return
    generation = os.urandom(16).hex()
    write_plain(whole_file, key, KEPT_FORM, (generation, kept.plain()))
    with contextlib.suppress(OSError):  # changes made against another generation are not used; gone, not even read
        os.unlink(changes_file)
    _forget_other_folders(whole_file)


def kept_reads(config: Config, out: str | None) -> list[tuple[Path, bytes]]:
    """The files the page keys of the output folder ``out`` (``Context.out``) are kept in, with
    their formats, for ``cache.read_ahead``."""
    whole_file, changes_file = kept_files(config, out)
    return [(whole_file, KEPT_FORM), (changes_file, KEPT_CHANGES_FORM)]


def kept_files(config: Config, out: str | None) -> tuple[Path, Path]:
    """The files that keep the page keys of the output folder ``out`` (``Context.out``): the
    whole file and the changes beside it. Each folder has its own, since every key holds its
    folder: a render into another folder (``render -o``) leaves those of the usual one as they
    were, instead of working out every key again twice (at 10,000 entries about 3 s, each).
    The graph page's key is kept per folder too (``graph_key_file``)."""
    name = _folder_name(out)
    folder = config.cache / KEPT_FOLDER
    return folder / f"keys-{name}.bin", folder / f"keys-{name}-changes.bin"


def graph_key_file(config: Config, out: str | None) -> Path:
    """The file that keeps the graph page's key for the output folder ``out`` (``index.graph_key``)."""
    return config.cache / KEPT_FOLDER / f"graph-key-{_folder_name(out)}.bin"


def _folder_name(out: str | None) -> str:
    return hashlib.blake2b(repr(out).encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def _forget_other_folders(whole_file: Path) -> None:
    """Keep the page keys of the ``KEPT_FOLDERS`` output folders rendered into last, removing
    the others' (each is as large as the record's keys) and their graph page's key. When a
    folder was last rendered into is the latest time any of its files was written: after its
    first render, a folder's renders mostly write its changes file only."""
    last: dict[str, int] = {}  # folder (the hash in its files' names) -> when one of its files was last written
    with contextlib.suppress(OSError), os.scandir(whole_file.parent) as scan:
        for item in scan:
            folder = _folder_of(item.name)
            if folder is not None:
                with contextlib.suppress(OSError):
                    last[folder] = max(last.get(folder, 0), item.stat().st_mtime_ns)
    mine = _folder_of(whole_file.name)
    gone = [folder for _when, folder in sorted(((when, folder) for folder, when in last.items()), reverse=True)
            [KEPT_FOLDERS:] if folder != mine]
    for name in [*(name for folder in gone for name in (f"keys-{folder}.bin", f"keys-{folder}-changes.bin",
                                                         f"graph-key-{folder}.bin")), *BEFORE_FOLDERS]:
        with contextlib.suppress(OSError):
            os.unlink(whole_file.parent / name)


def _folder_of(name: str) -> str | None:
    """The output folder's hash in the name of one of its kept files (``kept_files``,
    ``graph_key_file``); None for any other file."""
    for prefix, suffix in (("keys-", "-changes.bin"), ("keys-", ".bin"), ("graph-key-", ".bin")):
        if name.startswith(prefix) and name.endswith(suffix):
            folder = name[len(prefix):-len(suffix)]
            return folder if len(folder) == 16 and all(c in "0123456789abcdef" for c in folder) else None
    return None


KEPT_FOLDER = "pages"  # under the cache folder: each output folder's ``keys-<hash>.bin`` and its changes
KEPT_FOLDERS = 3  # output folders whose page keys are kept
BEFORE_FOLDERS = ("keys.bin", "keys-changes.bin", "graph-key.bin")  # kept once for all folders, before
CHANGES_MIN = 1_000  # changes kept beside the whole file: at least this many, or a quarter of the entries


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)
