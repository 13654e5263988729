"""Slices of a project: what composing some entry pages needs, for a worker that does not hold the project.

Why. With ``-j 2`` or more, a large record's pages are composed by this process and by
workers (``recordtool.parallel``). A worker forked from this process shares its memory only
until it touches it, and reading a Python object writes its reference count: a forked worker
composing half the pages of 10,000 entries copied 89 MiB of the 142 MiB this process held (the
entries it composed, 29 MiB, their mentions both ways, 31 MiB, the prose composed for them,
13 MiB, its neighbours' entries, 8 MiB, and so on), so at 100,000 entries ``render -j 2`` held
2.5 GB between its processes, a worker of 1.25 GB beside a main process of 1.25 GB
(docs/performance.md). Keeping the texts compact or
dropping what this process no longer needs would shave a part of that copy, not the copy:
what a worker reads, it copies. So the workers that compose pages hold nothing of this
process: they are started from the standard library's fork server
(``parallel.map_shipped``), and each gets, pickled, the slice of the project its chunk of
pages needs, and lets it go when the chunk is done.

What a slice holds, for the entries ``own`` whose pages are composed:

- once per worker (``Shared``): the configuration, every id of the record in record order
  (so "is it in the record?" and the order of backlinks and neighbours are those of the whole
  record), each entry's state, the entries that failed to load, and where the pages go;
- per chunk (``pack``): the entries ``own`` and their neighbours (what they cite or mention,
  what cites or mentions them), with where each came from and each claim's status; the
  citations and mentions of ``own`` both ways and the prose composed for them.

A page that reads anything else (a neighbour's backlinks, the list of every entry) gets
``Missing`` instead of a wrong answer: the mappings of a slice know which keys they stand for,
and the page is then composed by the process that holds the project. Either way the bytes of
every page are those ``-j 1`` writes (tests/render/test_slices.py composes every page of a
record from slices and compares).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.graph import Mention
    from recordtool.record.load import Places
    from recordtool.record.schema import Entry
    from recordtool.render.sitemap import Context
    from recordtool.verify.verdict import ClaimStatus

V = TypeVar("V")


class Missing(LookupError):
    """A page asked for what its slice does not hold: the process holding the project composes it."""


_ABSENT: Any = object()


class Part(Mapping[str, V]):
    """The values of the keys ``covered`` of a larger mapping (each key covered that is not
    here has no value there either); asking about any other key, or for the whole mapping,
    raises ``Missing``. A mapping holding a dict, not a subclass of ``dict``: code compiled
    with mypyc reads a ``dict`` subclass with the dict's own functions, which never call its
    methods (``recordtool/compiled.py``), and would answer for keys not covered."""

    covered: frozenset[str]

    def __init__(self, values: dict[str, V], covered: frozenset[str]) -> None:
        self._data = dict(values)
        self.covered = covered

    def __getitem__(self, key: str) -> V:
        value = self._data.get(key, _ABSENT)
        if value is _ABSENT:
            if key in self.covered:
                raise KeyError(key)
            raise Missing(key)
        return value  # type: ignore[no-any-return]

    def get(self, key: str, default: Any = None) -> Any:
        value = self._data.get(key, _ABSENT)
        if value is _ABSENT:
            if key in self.covered:
                return default
            raise Missing(key)
        return value

    def __contains__(self, key: object) -> bool:
        if key in self._data:
            return True
        if key in self.covered:
            return False
        raise Missing(key)

    def __iter__(self) -> Iterator[str]:
        raise Missing("the whole mapping")

    def __len__(self) -> int:
        raise Missing("the whole mapping")

    def keys(self) -> KeysView[str]:
        raise Missing("the whole mapping")

    def values(self) -> ValuesView[V]:
        raise Missing("the whole mapping")

    def items(self) -> ItemsView[str, V]:
        raise Missing("the whole mapping")


class Entries(Part[V]):
    """A record's entries, of which only some are here: every id of the record is known (in
    record order: ``in``, iterating, ``len`` and ``keys`` are those of the whole record), the
    values of the others are ``Missing``."""

    ids: dict[str, int]  # every id of the record -> its place in it
    faces: dict[str, tuple[str, ...]]  # entries here only as their face (``flat_face``)

    def __init__(self, values: dict[str, V], faces: dict[str, tuple[str, ...]], ids: dict[str, int]) -> None:
        super().__init__(values, frozenset())
        self.faces = faces
        self.ids = ids

    def __getitem__(self, key: str) -> V:
        value: Any = self._data.get(key, _ABSENT)
        if value is _ABSENT:
            flat = self.faces.get(key)
            if flat is not None:
                value = face(key, flat)
                self._data[key] = value
            elif key in self.ids:
                raise Missing(key)
            else:
                raise KeyError(key)
        return value  # type: ignore[no-any-return]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self.ids else default

    def __contains__(self, key: object) -> bool:
        return key in self.ids

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def keys(self) -> KeysView[str]:
        return self.ids.keys()


class Cite(NamedTuple):
    """A neighbour's citation, as a page shows it: the id and the relation (the rest: ``Missing``)."""

    id: str
    as_: str

    def __getattr__(self, name: str) -> Any:
        raise Missing(name)


class Face(NamedTuple):
    """A neighbour of the entries whose pages are composed, as their pages show it: its id,
    title and citations (anything else: ``Missing``). A third of what the whole entry costs
    to pickle and to read back."""

    id: str
    display_title: str
    cites: tuple[Cite, ...]

    def __getattr__(self, name: str) -> Any:
        raise Missing(name)


def flat_face(entry: Entry) -> tuple[str, ...]:
    """An entry's face as a flat tuple of strings (quick to pickle): its title, then the id and
    relation of each citation."""
    return (entry.display_title, *(part for c in entry.cites for part in (c.id, c.as_)))


def face(entry_id: str, flat: tuple[str, ...]) -> Face:
    """The face ``flat_face`` gave."""
    return Face(entry_id, flat[0], tuple(Cite(flat[i], flat[i + 1]) for i in range(1, len(flat), 2)))


@dataclass(frozen=True)
class Shared:
    """What every slice of a project shares, sent once to each worker."""

    config: Config
    ids: dict[str, int]  # every id of the record, in record order -> its place
    states: dict[str, str | None]  # every entry's state (``Context.states``)
    failed: dict[str, str]  # ids of entries that could not be loaded -> their file
    out: str | None
    verdicts: str


@dataclass(frozen=True)
class Packed:
    """What one chunk of entry pages needs beyond ``Shared`` (``pack``)."""

    own: list[str]  # the entries whose pages are composed
    entries: dict[str, Entry]  # of ``own``
    faces: dict[str, tuple[str, ...]]  # of their neighbours (``flat_face``)
    places: dict[str, Places]  # of ``own``, as are the others
    statuses: dict[str, ClaimStatus]
    cited_by: dict[str, dict[str, list[str]]]
    mentions_out: dict[str, list[Mention]]
    mentions_in: dict[str, list[Mention]]
    composed: dict[str, bytes]  # packed (``prose.pack``)


def shared(ctx: Context) -> Shared:
    """What every slice of ``ctx``'s project shares."""
    record = ctx.project.record
    return Shared(record.config, {entry_id: n for n, entry_id in enumerate(record.entries)}, dict(ctx.states),
                  dict(record.failed), ctx.out, ctx.verdicts)


def pack(ctx: Context, own: list[str]) -> Packed:
    """The slice of ``ctx``'s project that composing the pages of the entries ``own`` needs."""
    project = ctx.project
    record, graph = project.record, project.graph
    near: dict[str, None] = dict.fromkeys(own)
    for entry_id in own:
        near.update(dict.fromkeys(graph.neighbours(entry_id)))
    entries = record.entries
    faces = ctx.memo("slices.face")
    for entry_id in own:
        del near[entry_id]
    for entry_id in near:
        if entry_id not in faces:
            faces[entry_id] = flat_face(entries[entry_id])
    pick = _picker(own)
    return Packed(list(own), pick(entries), {i: faces[i] for i in near}, pick(record.places), pick(ctx.statuses),
                  pick(graph.cited_by), pick(graph.mentions_out), pick(graph.mentions_in), pick(graph.composed))


def _picker(ids: list[str]) -> Any:
    def pick(mapping: Mapping[str, V]) -> dict[str, V]:
        return {i: mapping[i] for i in ids if i in mapping}
    return pick


class Memos(NamedTuple):
    """What a context works out once per id (``Context``'s titles, title lines, links and
    modules' memos)."""

    titles: dict[str, str]
    lines: dict[str, str]
    links: dict[str, str]
    memos: dict[str, dict[str, Any]]


def memos(ctx: Context) -> Memos:
    """``ctx``'s memos, to be kept by the context of the next chunk (``context``)."""
    return Memos(ctx._titles, ctx._lines, ctx._links, ctx._memos)


def context(common: Shared, packed: Packed, kept: Memos | None = None) -> Context:
    """A context to compose the pages of ``packed.own`` in, from their slice alone.

    ``kept``: the memos of the context of an earlier chunk of the same ``common`` (what a
    page shows of each neighbour: its title, label and link, the ids it cites; a figure's
    caption): each is worked out from what every slice holds alike (an entry's face, every
    id and state), never from the part of a slice that a page may not read (that raises
    ``Missing``), so it holds for every chunk. A worker that keeps them works each out once,
    as the caller does, instead of once per chunk (a third more time to compose a page)."""
    from recordtool.record.graph import Graph
    from recordtool.record.load import Record
    from recordtool.record.project import Project
    from recordtool.render.sitemap import Context

    own = frozenset(packed.own)
    entries: Entries[Any] = Entries(packed.entries, packed.faces, common.ids)
    record = Record(common.config, entries, Part(packed.places, own),
                    dict(common.failed))
    graph = Graph(record, Part(packed.cited_by, own), Part(packed.mentions_out, own), Part(packed.mentions_in, own),
                  Part({}, frozenset()), Part(packed.composed, own))
    graph._order = common.ids  # the order of the whole record (the slice's entries know every id)
    project = Project(common.config, record, graph, [])
    if kept is None:
        kept = Memos({}, {}, {}, {})
    return Context(project, Part(packed.statuses, own), out=common.out, verdicts=common.verdicts,
                   _titles=kept.titles, _lines=kept.lines, _states=common.states, _links=kept.links,
                   _memos=kept.memos)
