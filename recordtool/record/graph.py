"""The link graph of a record: typed citations both ways, mentions, backlinks.

Built from a loaded record without touching the disk. Typed citations are declared once, on
the citing side; the graph gives every entry its inverses ("Cited as 'source' by"). Ids in
prose are mentions; an id mentioned but not in the record is a dangling mention (a warning,
and a "wanted" entry), never invented.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from recordtool import parallel
from recordtool.record.cache import KeptScans
from recordtool.record.lazy import Lazy
from recordtool.record.load import Places, Record, check_citations, id_sort_key
from recordtool.record.mentions import Found, find_mentions
from recordtool.record.problems import Problem

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.schema import Entry


class Mention(NamedTuple):
    """``source`` writes ``target`` in the prose of ``field``, on ``line`` of its file (a named
    tuple: a large record has hundreds of thousands, made afresh by every load)."""

    source: str
    target: str
    field: str
    line: int
    sentence: str


@dataclass(frozen=True, slots=True)
class Backlink:
    """Why ``source`` links to an entry: its typed relations and/or its mentions."""

    source: str
    relations: tuple[str, ...]
    mentions: tuple[Mention, ...]


RECENT = 256  # backlinks and neighbours kept for this many ids at most
T = TypeVar("T")

Compose = Callable[[str, "re.Pattern[str]"], "tuple[list[Found], bytes | None]"]
"""A body and the id pattern -> its mentions (exactly ``find_mentions``'s) and what a later
stage makes of the same parse (render: the body composed for its page, packed small), or None."""


class Composed(Lazy[bytes]):
    """``Graph.composed`` where some entries' mentions were kept (``KeptScans``): what this
    command composed of the bodies it scanned (``made``), and for an entry whose mentions are
    kept, the body composed when they were found, read with them when asked for (``get``,
    ``in``, ``[]``). Iterating it, or comparing it, gives what this command composed only
    (``recordtool.record.lazy``)."""

    def __init__(self, made: Mapping[str, bytes], kept: KeptScans) -> None:
        super().__init__()
        self._data.update(made)
        self.kept = kept

    @property
    def made(self) -> dict[str, bytes]:
        """What this command composed (the kept bodies left out)."""
        return self._data

    def get(self, key: str, default: Any = None) -> Any:
        found = self._data.get(key)
        if found is None:
            found = self.kept.composed_body(key)
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> bytes:
        found: bytes | None = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


@dataclass
class Graph:
    record: Record
    # (a dict each, but ``_ById`` after ``narrow``)
    cited_by: Mapping[str, dict[str, list[str]]] = field(default_factory=dict)  # target -> relation -> sources
    mentions_out: Mapping[str, list[Mention]] = field(default_factory=dict)  # source -> mentions, in order
    mentions_in: Mapping[str, list[Mention]] = field(default_factory=dict)  # target -> mentions
    dangling: Mapping[str, list[Mention]] = field(default_factory=dict)  # missing id -> mentions of it
    composed: Mapping[str, bytes] = field(default_factory=dict)  # id -> what ``compose`` made of its body
    # Backlinks and neighbours, kept for the last ids asked about (a page asks for its own
    # several times; keeping them for every id would hold a copy of the graph); a graph is
    # complete once ``build_graph`` returns. Ids of the record sort by their place in it.
    _backlinks: dict[str, tuple[Backlink, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _neighbours: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _order: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    # ``build_graph`` makes the indexes of citations and mentions (``INDEXES``) the first time
    # one is asked for, from the mentions found in each entry (``_scans``): validate asks for
    # none, and needs of them only what ``build_graph`` works out in one pass (the dangling
    # mentions, the entries that link or are linked to: ``_linked``).
    _scans: Mapping[str, Scan] | None = field(default=None, init=False, repr=False, compare=False)
    _linked: set[str] | None = field(default=None, init=False, repr=False, compare=False)
    # ``narrow``: for an id, the entries that may cite or mention it (a superset of those that do)
    _sources: Callable[[str], Iterable[str]] | None = field(default=None, init=False, repr=False, compare=False)
    _spent: int = field(default=0, init=False, repr=False, compare=False)  # sources indexed id by id since ``narrow``
    # ``build_graph(keep=True)``: what spans the record, to keep for the next run, and whether it changed
    kept: KeptLinks | None = field(default=None, init=False, repr=False, compare=False)
    kept_changed: bool = field(default=False, init=False, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        """An index (``INDEXES``) of a graph made by ``build_graph``, made now: called only when
        the graph does not hold it yet."""
        if name not in INDEXES or self.__dict__.get("_scans") is None:
            raise AttributeError(name)
        self._index()
        return self.__dict__[name]

    def _index(self) -> None:
        assert self._scans is not None
        self.cited_by, self.mentions_out, self.mentions_in = self._links(self.record.entries)
        self._scans = None

    def _links(self, sources: Iterable[str]) -> tuple[dict[str, dict[str, list[str]]], dict[str, list[Mention]],
                                                      dict[str, list[Mention]]]:
        """The indexes (``INDEXES``) of the citations and mentions written by ``sources``, in
        their order: of every entry for the whole indexes (``_index``), of a few for one id's
        (``_one``)."""
        scans, record = self._scans, self.record
        assert scans is not None
        cited_by: dict[str, dict[str, list[str]]] = {}
        mentions_out: dict[str, list[Mention]] = {}
        mentions_in: dict[str, list[Mention]] = {}
        entries, cites = record.entries, record.cites
        for entry_id in sources:
            for cited, relation in cites(entry_id):
                if cited in entries and cited != entry_id:
                    cited_by.setdefault(cited, {}).setdefault(relation, []).append(entry_id)
            found = scans[entry_id]
            if found:
                mentions_out[entry_id] = found  # (the scan's own list and mentions: nothing copied)
                for mention in found:
                    if mention[1] in entries:
                        mentions_in.setdefault(mention[1], []).append(mention)
        return cited_by, mentions_out, mentions_in

    def narrow(self, sources: Callable[[str], Iterable[str]]) -> None:
        """Answer each index (``INDEXES``) id by id from now on, for the ids asked about only,
        instead of making it whole: ``sources(i)`` gives every entry that may cite or mention
        ``i`` (more is fine, fewer is wrong). Render after an edit knows them from the last
        render (``recordtool.render.plan.KeptKeys``): the entries watching ``i`` and those
        whose file changed since. At 100,000 entries the whole indexes cost about 4 s of CPU,
        for the handful of pages an edit changes. Asking for an index whole (iterating it, its
        length, its items) makes it whole, the same as without ``narrow``; so does indexing
        more sources id by id than the record has entries (``NARROW_SHARE``, at least
        ``NARROW_MIN``): when many entries changed since the keys were kept (a checkout of
        another branch), every id asked about has most of them as sources, and indexing them
        again for each id made a render of 3,000 entries, half of them changed, take 283 s
        instead of 10. Nothing changes once the indexes are made, or for a graph
        ``build_graph`` did not make."""
        if self.__dict__.get("_scans") is None or any(name in self.__dict__ for name in INDEXES):
            return
        self._sources, self._spent = sources, 0
        for name in INDEXES:
            setattr(self, name, _ById(self, name))

    def whole(self) -> None:
        """Make the indexes whole now, if ``build_graph`` left them to be made (a later
        ``narrow`` then changes nothing) or ``narrow`` made them answer id by id: for when
        the pages of many ids are to be composed. Id by id, an id's sources are indexed again
        for each index asked about (about 250 µs an id at 10,000 entries), while the whole
        indexes take about 16 µs an id."""
        if self.__dict__.get("_scans") is not None:
            self._index()

    def _one(self, name: str, entry_id: str) -> Any:
        """What the index ``name`` holds for ``entry_id`` (None: nothing): the indexes of the
        entries ``_sources`` gives (of ``entry_id`` alone for what it mentions), in the
        record's order, each once, as ``_index`` meets them."""
        entries, sources = self.record.entries, self._sources
        assert sources is not None
        if entry_id not in entries:
            return None
        if name == "mentions_out":
            found = [entry_id]
        else:
            found = sorted({s for s in sources(entry_id) if s in entries}, key=self._place())
        self._spent += len(found)
        if self._spent > max(NARROW_MIN, len(entries) // NARROW_SHARE):
            # Many ids asked about, or many sources each (many entries changed since the keys
            # were kept: a checkout of another branch): id by id would index the same sources
            # again and again, so the whole indexes, once.
            self._index()
            return self.__dict__[name].get(entry_id)
        if name == "mentions_out":
            return self._links(found)[1].get(entry_id)
        cited_by, _out, mentions_in = self._links(found)
        # Who cites ``entry_id`` and who mentions it come from the same sources: the other of
        # the two is kept too, so that asking for both (as a page's key does) indexes them once.
        both = {"cited_by": cited_by.get(entry_id), "mentions_in": mentions_in.get(entry_id)}
        for other, value in both.items():
            index = self.__dict__.get(other)
            if other != name and isinstance(index, _ById) and entry_id not in index.asked:
                index.learn(entry_id, value)
        return both[name]

    def _whole(self, name: str) -> Any:
        """The index ``name``, made whole if it is not."""
        if isinstance(self.__dict__.get(name), _ById):
            self._index()
        return self.__dict__[name]

    def _place(self) -> Callable[[str], int]:
        """Each id's place in the record, as a sort key (the dict's own lookup: a page sorts its
        neighbours and its backlinks, a dozen ids each, on every page)."""
        if not self._order:
            self._order.update(zip(self.record.entries, itertools.count()))
        return self._order.__getitem__

    def inverse(self, entry_id: str) -> list[tuple[str, str, list[str]]]:
        """(relation, inverse label, citing ids) for ``entry_id``, in vocabulary order."""
        relations = self.record.config.relations
        by_relation = self.cited_by.get(entry_id, {})
        return [(rel, relations.get(rel, rel), by_relation[rel]) for rel in relations if rel in by_relation]

    def backlinks(self, entry_id: str) -> list[Backlink]:
        """Every entry that cites or mentions ``entry_id``, each once, in id order."""
        return list(_recent(self._backlinks, entry_id, self._compute_backlinks))

    def _compute_backlinks(self, entry_id: str) -> list[Backlink]:
        relations: dict[str, list[str]] = defaultdict(list)
        for rel, sources in self.cited_by.get(entry_id, {}).items():
            for source in sources:
                relations[source].append(rel)
        mentions: dict[str, list[Mention]] = defaultdict(list)
        for mention in self.mentions_in.get(entry_id, ()):
            mentions[mention.source].append(mention)
        sources = sorted(relations.keys() | mentions.keys(), key=self._place())
        return [Backlink(s, tuple(relations.get(s, ())), tuple(mentions.get(s, ()))) for s in sources]

    def neighbours(self, entry_id: str) -> list[str]:
        """Ids linked to ``entry_id`` either way (citations and mentions), in the record."""
        return list(_recent(self._neighbours, entry_id, self._compute_neighbours))

    def _compute_neighbours(self, entry_id: str) -> list[str]:
        entries = self.record.entries
        linked = {cited for cited, _relation in self.record.cites(entry_id)}
        linked.update(m.target for m in self.mentions_out.get(entry_id, ()))
        out = {i for i in linked if i in entries}  # (an id cited or mentioned that is not in the record: none)
        out.update(b.source for b in self.backlinks(entry_id))
        out.discard(entry_id)
        return sorted(out, key=self._place())

    def orphans(self) -> list[str]:
        """Entries that nothing links to and that link to nothing (in id order)."""
        entries = self.record.entries
        if self._linked is not None:
            linked = self._linked
            return [i for i in entries if i not in linked]
        linked = set(self.cited_by) | set(self.mentions_in)  # linked to
        for by_relation in self.cited_by.values():
            for sources in by_relation.values():
                linked.update(sources)  # linking to an entry of the record
        linked.update(map(_source, itertools.chain.from_iterable(self.mentions_in.values())))  # linking to one
        return [i for i in entries if i not in linked]


class _ById(Mapping[str, Any]):
    """One of a graph's indexes (``INDEXES``) after ``Graph.narrow``: each id's value worked
    out when it is first asked for, and kept. Asking for the mapping whole (iterating it, its
    length, keys, values, items, comparing or pickling it) makes the graph's index whole and
    answers from it; so does every question once the graph has made it. A mapping holding a
    dict, not a subclass of ``dict``, as ``recordtool.record.lazy`` says why."""

    def __init__(self, graph: Graph, name: str) -> None:
        self.graph, self.name = graph, name
        self.asked: set[str] = set()
        self._data: dict[str, Any] = {}

    def learn(self, key: str, value: Any) -> None:
        """Keep ``value`` as ``key``'s, worked out with another index's (``Graph._one``)."""
        self.asked.add(key)
        if value is not None:
            self._data[key] = value

    def _here(self, key: str) -> Mapping[str, Any] | None:
        """The whole index when the graph has made it (then it answers), else None, with
        ``key`` worked out."""
        whole: Mapping[str, Any] | None = self.graph.__dict__.get(self.name)
        if whole is not self:
            return whole
        if key not in self.asked:
            self.learn(key, self.graph._one(self.name, key))
        return None

    def get(self, key: str, default: Any = None) -> Any:
        whole = self._here(key)
        return whole.get(key, default) if whole is not None else self._data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        whole = self._here(key)
        return whole[key] if whole is not None else self._data[key]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        whole = self._here(key)
        return key in whole if whole is not None else key in self._data

    def _whole(self) -> dict[str, Any]:
        return self.graph._whole(self.name)  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    def keys(self) -> Any:
        return self._whole().keys()

    def values(self) -> Any:
        return self._whole().values()

    def items(self) -> Any:
        return self._whole().items()

    def __eq__(self, other: object) -> bool:
        return self._whole() == (dict(other.items()) if isinstance(other, Mapping) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return repr(self._whole())

    def copy(self) -> dict[str, Any]:
        return dict(self._whole())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self._whole()),))


_source = operator.itemgetter(0)  # a Mention's source
# ``narrow``: id by id while the sources indexed stay under the number of entries (over
# NARROW_SHARE), or under NARROW_MIN. After an edit the whole indexes read every entry's kept
# mentions back (at 10,000 entries 0.44 to 0.53 s), while a source indexed id by id costs about
# 30 us: the title edit of a much-cited entry indexes 1,200 to 2,600 sources (60 to 100 ms),
# which a quarter of the entries (2,500) sometimes cut short, to make the indexes whole.
NARROW_SHARE, NARROW_MIN = 1, 1_000
INDEXES = frozenset({"cited_by", "mentions_out", "mentions_in"})  # what ``Graph._index`` makes


def _recent(cache: dict[str, tuple[T, ...]], entry_id: str, compute: Callable[[str], list[T]]) -> tuple[T, ...]:
    """``compute(entry_id)``, kept in ``cache`` with those of the last ``RECENT`` ids."""
    found = cache.get(entry_id)
    if found is None:
        if len(cache) >= RECENT:
            cache.clear()
        found = cache[entry_id] = tuple(compute(entry_id))
    return found


# The mentions in one entry's prose as plain data, (target, field, line, sentence) each: as a
# worker sends them and the entry cache keeps them.
Scanned = list[tuple[str, str, int, str]]
Scan = list[Mention]  # the mentions in one entry's prose, as the graph's indexes hold them (``mentions_of``)


def mentions_of(source: str, found: Scanned) -> Scan:
    """The mentions ``found`` in the prose of ``source``, as the graph holds them: made once,
    when they reach this process, and shared from then on by its indexes (``mentions_out``,
    ``mentions_in``) and what the entry cache keeps. Each target is interned: an id is
    mentioned from many entries, each of which found it in its own text (at 100,000 entries
    of research Markdown, some 550,000 mentions: holding them as plain tuples beside the
    graph's own made the peak of a cold ``render -j 2`` 44 MiB higher)."""
    new, intern = tuple.__new__, sys.intern
    return [new(Mention, (source, intern(target), name, line, sentence)) for target, name, line, sentence in found]


def found_of(scan: Scan) -> Scanned:
    """``scan`` as plain data, as the entry cache keeps it (``mentions_of`` gives it back)."""
    return [mention[1:] for mention in scan]


PARALLEL_MIN = 2_000  # entries; below this starting workers costs more than they save


Texts = list[tuple[str, list[tuple[str, str, int]]]]  # per entry: its id and its prose (field, text, first line)


def _texts(record: Record, ids: list[str]) -> Texts:
    """The prose of each entry of ``ids``, with the line of its file each field starts on: all
    that finding its mentions needs (plain data, sent to a worker: ``parallel.map_shipped``)."""
    out = []
    for entry_id in ids:
        first_lines = record.places[entry_id].prose
        out.append((entry_id, [(name, text, first_lines.get(name, 0)) for name, text in record.entries[entry_id].prose()]))
    return out


def _scan(how: tuple[re.Pattern[str], Compose | None], texts: Texts) -> list[tuple[Scanned, bytes | None]]:
    """The mentions in each entry's prose (``_texts``): (target, field, line, sentence), and
    what ``compose`` made of its body, as plain data (they may be found in a worker)."""
    pattern, compose = how
    out = []
    for entry_id, fields in texts:
        found: Scanned = []
        made = None
        for name, text, first_line in fields:
            if compose is not None and name == "body":
                mentions, made = compose(text, pattern)
            else:
                mentions = find_mentions(text, pattern)
            found.extend((m.id, name, first_line + m.line, m.sentence) for m in mentions if m.id != entry_id)
        out.append((found, made))
    return out


def scanner(config: Config, compose: Compose | None) -> Callable[[Entry, Places], tuple[Scanned, bytes | None]]:
    """What ``build_graph`` finds in one entry (its mentions, what ``compose`` made of its body),
    given the entry and its places: for ``load_record``'s ``each``, so that on a large record
    the process that read an entry's file also scans its prose, and its text is never sent
    to another process to be scanned. Its results go to ``build_graph`` (``scans``, ``composed``)."""
    how = (config.id_pattern, compose)

    def scan(entry: Entry, places: Places) -> tuple[Scanned, bytes | None]:
        first_lines = places.prose
        return _scan(how, [(entry.id, [(name, text, first_lines.get(name, 0)) for name, text in entry.prose()])])[0]
    return scan


@dataclass
class KeptLinks:
    """What ``build_graph`` works out over the whole record, entry by entry, kept between runs
    (``recordtool.record.cache.EntryCache.links``) so that after an edit only the entries whose
    file changed are gone over again: each entry's links, its dangling mentions, its 'uses'
    citations and its missing citations depend on its file (its path and the hash of its
    bytes), the record's ids and the entries that failed to load, and nothing else; the 'uses'
    cycles on the 'uses' citations and the ids. When the ids or the failed entries are not
    those kept, everything is worked out again. Kept compact (a record has a hundred thousand
    entries, read and written on every run): the strings of each list joined in one, the
    entries each one links to as one array of numbers."""

    ids: list[str]  # the record's ids, in its order
    paths: list[str]  # per id: its file (``Places.path``)
    digests: list[str]  # per id: the hash of its file's bytes (``Places.digest``)
    failed: dict[str, str]  # ``Record.failed``
    out: array[int]  # the entries each id cites or mentions (their place in ``ids``), one id after the other
    at: array[int]  # per id, then one more: where its links start in ``out`` (they end where the next one's start)
    into: list[int]  # per id: how many entries cite or mention it
    dangling: dict[str, Scanned]  # id -> its mentions of ids that are not in the record
    uses: dict[str, tuple[str, ...]]  # id -> the ids it cites as 'uses', if any
    missing: dict[str, list[tuple[Any, ...]]]  # id -> its citations of ids not in the record (``Problem`` fields)
    cycles: list[list[str]]  # ``uses_cycles``

    def plain(self) -> tuple[Any, ...]:
        """As plain data (``recordtool.record.cache.write_plain``)."""
        return ("\0".join(self.ids), "\0".join(self.paths), "\0".join(self.digests), self.failed,
                self.out.tobytes(), self.at.tobytes(), self.into, self.dangling, self.uses, self.missing, self.cycles)

    @classmethod
    def from_plain(cls, value: Any) -> KeptLinks | None:
        """What ``plain`` gave, or None if ``value`` is not that."""
        if type(value) is not tuple or len(value) != len(_PLAIN) or not all(
                type(part) is kind for part, kind in zip(value, _PLAIN, strict=True)):
            return None
        ids, paths, digests, failed, out, at, into, dangling, uses, missing, cycles = value
        if len(out) % _LINK.itemsize or len(at) % _LINK.itemsize:
            return None
        ids, paths, digests = (text.split("\0") if text else [] for text in (ids, paths, digests))
        kept = cls(ids, paths, digests, failed, array(_LINK.typecode, out), array(_LINK.typecode, at), into, dangling,
                   uses, missing, cycles)
        n = len(kept.ids)
        if not len(kept.paths) == len(kept.digests) == len(kept.into) == len(kept.at) - 1 == n or kept.at[-1] != len(
                kept.out) or max(kept.out, default=-1) >= n:
            return None
        return kept

    def links(self, n: int) -> array[int]:
        """The entries the ``n``-th id cites or mentions (their place in ``ids``)."""
        return self.out[self.at[n]:self.at[n + 1]]


_PATH, _DIGEST = operator.itemgetter(0), operator.itemgetter(4)  # ``Places.path``, ``Places.digest``
_LINK = array("I")  # an entry's place in the record: what ``KeptLinks.out`` and ``at`` hold
_PLAIN = (str, str, str, dict, bytes, bytes, list, dict, dict, dict, list)  # the types of ``KeptLinks.plain``


def _spliced(kept: KeptLinks, new: dict[int, tuple[int, ...]]) -> None:
    """``kept.out`` and ``kept.at`` with the links of each id ``new`` gives (by its place) replaced."""
    old_out, old_at = kept.out, kept.at
    out, at = array(_LINK.typecode), array(_LINK.typecode, [0])
    done = 0  # the ids before this one are in ``out``
    for n in sorted(new):
        if n > done:  # the ids in between, as they were
            shift = len(out) - old_at[done]
            out.extend(old_out[old_at[done]:old_at[n]])
            at.extend([end + shift for end in old_at[done + 1:n + 1]] if shift else old_at[done + 1:n + 1])
        out.extend(new[n])
        at.append(len(out))
        done = n + 1
    if done < len(old_at) - 1:
        shift = len(out) - old_at[done]
        out.extend(old_out[old_at[done]:])
        at.extend([end + shift for end in old_at[done + 1:]] if shift else old_at[done + 1:])
    kept.out, kept.at = out, at


def _entry_links(record: Record, entry_id: str, scan: Scan, order: dict[str, int]
                 ) -> tuple[tuple[int, ...], Scanned, tuple[str, ...], list[tuple[Any, ...]]]:
    """What ``KeptLinks`` keeps of one entry: the entries it cites or mentions (their place in
    ``order``), its dangling mentions, its 'uses' citations, its missing citations."""
    entries, failed = record.entries, record.failed
    cites = record.cites(entry_id)
    targets = set()
    wrong = False  # whether it cites an id not in the record (``check_citations`` says where)
    for cited, _relation in cites:
        if cited in entries:
            if cited != entry_id:
                targets.add(order[cited])
        elif cited != entry_id and cited not in failed:
            wrong = True
    dangling: Scanned = []
    for mention in scan:
        target = mention[1]
        if target in entries:
            targets.add(order[target])
        elif target not in failed:  # it exists, but did not load: not wanted
            dangling.append(mention[1:])
    uses = tuple(cited for cited, relation in cites if relation == "uses") if cites else ()
    missing = [(p.path, p.line, p.col, p.message, p.field, p.severity, p.code)
               for p in check_citations(record, [entry_id])] if wrong else []
    return tuple(sorted(targets)), dangling, uses, missing


def _kept_links(record: Record, scans: Mapping[str, Scan], before: KeptLinks | None, order: dict[str, int]
                ) -> tuple[KeptLinks, bool]:
    """``KeptLinks`` for ``record``: ``before`` brought up to date from the entries whose file
    changed and, when ids came or went, the entries whose links or problems that changes
    (``_renumbered``), when it holds the same failed entries and none failed (each citation or
    mention of one is reported with all the others); else worked out whole. Whether it changed."""
    ids = list(order)
    places = list(map(record.places.__getitem__, ids))  # (without a call to Python code per entry)
    paths, digests = list(map(_PATH, places)), list(map(_DIGEST, places))
    if before is not None and before.failed == record.failed and not record.failed:
        kept, touched, cycles = before, set(), False
        if before.ids != ids:  # (then ``before`` holds every list in the record's order now)
            touched, cycles = _renumbered(before, ids, order), True
        changed = sorted(touched.union(n for n, (a, b, c, d) in enumerate(zip(
            paths, digests, before.paths, before.digests, strict=True)) if a != c or b != d)
                         if before.paths != paths or before.digests != digests else touched)
    else:
        kept = KeptLinks(ids, paths, digests, dict(record.failed), array(_LINK.typecode),
                         array(_LINK.typecode, [0]) * (len(ids) + 1), [0] * len(ids), {}, {}, {}, [])
        changed, cycles = list(range(len(ids))), True
    into, dangling, uses, missing = kept.into, kept.dangling, kept.uses, kept.missing
    new: dict[int, tuple[int, ...]] = {}
    for n in changed:
        entry_id = ids[n]
        for target in kept.links(n):
            into[target] -= 1
        new[n], found, cited, wrong = _entry_links(record, entry_id, scans[entry_id], order)
        for target in new[n]:
            into[target] += 1
        cycles = cycles or cited != uses.get(entry_id, ())
        for value, index in ((found, dangling), (cited, uses), (wrong, missing)):
            if value:
                index[entry_id] = value  # type: ignore[assignment]  # mypy: the value of its index
            else:
                index.pop(entry_id, None)
    kept.paths, kept.digests = paths, digests
    if new:
        _spliced(kept, new)
    if cycles:
        kept.cycles = uses_cycles(record, uses)
    return kept, bool(changed) or cycles


def _renumbered(kept: KeptLinks, ids: list[str], order: dict[str, int]) -> set[int]:
    """``kept``, whose ids were others, made to hold ``ids`` (in ``order``): each entry still
    there keeps its links, renumbered; a new one has none and no file (so it is gone over).
    Returns the entries to go over again besides those whose file changed: those that cited or
    mentioned an id now gone or one now here (a dangling mention, a missing citation), and
    every one with a missing citation (its hint names the closest id of the record)."""
    old_ids, old_out, old_at = kept.ids, kept.out, kept.at
    now = [order.get(entry_id, -1) for entry_id in old_ids]  # old place -> new place, -1: gone
    before = {entry_id: n for n, entry_id in enumerate(old_ids)}
    came = {entry_id for entry_id in ids if entry_id not in before}
    touched: set[int] = set()
    out, at = array(_LINK.typecode), array(_LINK.typecode, [0])
    paths, digests = [""] * len(ids), [""] * len(ids)
    for n, entry_id in enumerate(ids):
        m = before.get(entry_id)
        if m is not None:
            links = [now[target] for target in old_out[old_at[m]:old_at[m + 1]]]
            if -1 in links:
                touched.add(n)
                links = [target for target in links if target != -1]
            out.extend(links)  # (still in order: the ids kept keep their order)
            paths[n], digests[n] = kept.paths[m], kept.digests[m]
        at.append(len(out))
    into = [0] * len(ids)
    for target in out:
        into[target] += 1
    for source, found in kept.dangling.items():
        if source in order and any(mention[0] in came for mention in found):
            touched.add(order[source])
    touched.update(order[source] for source in kept.missing if source in order)
    for index in (kept.dangling, kept.uses, kept.missing):
        for source in [source for source in index if source not in order]:
            del index[source]
    kept.ids, kept.paths, kept.digests, kept.out, kept.at, kept.into = ids, paths, digests, out, at, into
    return touched


def build_graph(record: Record, *, jobs: int | None = None, scans: MutableMapping[str, Scan] | None = None,
                compose: Compose | None = None, composed: dict[str, bytes] | None = None, keep: bool = False,
                kept: KeptLinks | None = None
                ) -> tuple[Graph, list[Problem]]:
    """Index citations and mentions; dangling mentions come back as warnings. ``jobs``: how
    many processes may scan prose for mentions (None: every core). ``scans``: the mentions
    already found in some entries, by id (kept by ``recordtool.record.cache``); the other
    entries are scanned, and what they give is added to it. ``compose``: what else to make of
    the body of each entry scanned, from the parse that finds its mentions (kept in
    ``Graph.composed``; an entry not scanned has none); ``composed``: what it made of the
    bodies of some entries ``scans`` gives (``scanner``). ``keep``: work out what spans the record
    as ``KeptLinks`` (left in ``Graph.kept``, with whether it changed in ``Graph.kept_changed``),
    from ``kept``, what the last run kept, where it holds, unless an entry failed to load (then
    one pass over every entry, as without ``keep``, and nothing to keep); the problems then include the
    citations of ids not in the record (``load.check_citations``: ``load_record`` leaves them
    out when told)."""
    made_here: MutableMapping[str, bytes] = composed if composed is not None else {}
    ids = list(record.entries)
    scans = {} if scans is None else scans
    if isinstance(scans, KeptScans):  # kept mentions that cannot be read back: scanned again
        scans.rescan = lambda entry_id: mentions_of(
            entry_id, _scan((record.config.id_pattern, None), _texts(record, [entry_id]))[0][0])
        made_here = Composed(made_here, scans)
    graph = Graph(record, composed=made_here)
    todo = [entry_id for entry_id in ids if entry_id not in scans]
    # A worker gets the prose of its entries, not a fork of the record (it would copy what it
    # reads of it: ``recordtool.render.slices`` says why).
    how = (record.config.id_pattern, compose)

    def texts(ids: list[str]) -> Texts:
        return _texts(record, ids)

    def here(ids: list[str]) -> list[tuple[Scanned, bytes | None]]:
        return _scan(how, _texts(record, ids))

    found_now = parallel.map_shipped(here, _scan, texts, lambda: how, parallel.chunked(todo, jobs=jobs), jobs=jobs,
                                     min_items=PARALLEL_MIN)
    for entry_id, (scan, made) in zip(todo, found_now, strict=True):
        scans[entry_id] = mentions_of(entry_id, scan)
        if made is not None:
            made_here[entry_id] = made
    for name in INDEXES:
        delattr(graph, name)
    graph._scans = scans
    if keep and not record.failed:  # (with one, all the mentions are needed to report each of its citations)
        return _from_kept(graph, scans, kept)
    # One pass over the citations and mentions for what every command needs: the dangling
    # mentions and the entries linked either way (``Graph.orphans``); the indexes are made
    # when asked for (``Graph._index``).
    entries, failed, cites = record.entries, record.failed, record.cites
    dangling: dict[str, list[Mention]] = {}
    linked: set[str] = set()
    link = linked.add
    for entry_id in ids:
        out = False
        for cited, _relation in cites(entry_id):
            if cited in entries and cited != entry_id:
                link(cited)
                out = True
        for mention in scans[entry_id]:
            target = mention[1]
            if target in entries:
                link(target)
                out = True
            elif target not in failed:  # it exists, but did not load: not wanted
                dangling.setdefault(target, []).append(mention)
        if out:
            link(entry_id)
    graph._linked = linked
    graph.dangling = {k: dangling[k] for k in sorted(dangling, key=id_sort_key)}
    problems = _whole_problems(graph, scans)
    return graph, [*check_citations(record), *problems] if keep else problems


def _from_kept(graph: Graph, scans: Mapping[str, Scan], before: KeptLinks | None) -> tuple[Graph, list[Problem]]:
    """``build_graph``'s pass over the record, from what ``KeptLinks`` keeps, with the
    citations of ids not in the record."""
    record = graph.record
    order = {entry_id: n for n, entry_id in enumerate(record.entries)}
    kept, graph.kept_changed = _kept_links(record, scans, before, order)
    graph.kept = kept
    at = kept.at
    graph._linked = {entry_id for n, (entry_id, linked) in enumerate(zip(kept.ids, kept.into, strict=True))
                     if linked or at[n + 1] != at[n]}
    dangling: dict[str, list[Mention]] = {}
    for source in sorted(kept.dangling, key=order.__getitem__):
        for found in kept.dangling[source]:
            dangling.setdefault(found[0], []).append(Mention(source, *found))
    graph.dangling = {k: dangling[k] for k in sorted(dangling, key=id_sort_key)}
    missing = [Problem(*fields) for source in sorted(kept.missing, key=order.__getitem__)
               for fields in kept.missing[source]]
    return graph, [*missing, *_whole_problems(graph, scans, kept.cycles)]


def _whole_problems(graph: Graph, scans: Mapping[str, Scan], cycles: list[list[str]] | None = None) -> list[Problem]:
    """The dangling mentions, the citations and mentions of entries that failed to load, and
    the 'uses' cycles, as problems."""
    record = graph.record
    problems = []
    for target, mentions in graph.dangling.items():
        for mention in mentions:
            path = record.places[mention.source].path
            problems.append(Problem(path, mention.line, 1,
                                    f"{target} is mentioned but not in the record; add it or write it without "
                                    "its id", field=mention.field, severity="warning", code="dangling-mention"))
    problems.extend(_failed_problems(record, scans))
    problems.extend(cycle_problems(record, cycles))
    return problems


def _failed_problems(record: Record, scans: Mapping[str, Scan]) -> list[Problem]:
    """One warning per entry that could not be loaded and is cited or mentioned: its own error
    is the cause; each citation or mention of it is not reported again."""
    if not record.failed:
        return []
    places: dict[str, list[tuple[str, int, int, str]]] = defaultdict(list)  # failed id -> (path, line, col, field)
    for entry_id in record.entries:
        where = record.places[entry_id]
        for i, (cited, _relation) in enumerate(record.cites(entry_id)):
            if cited in record.failed:
                places[cited].append((where.path, *where.cites[i], f"cites[{i}].id"))
        for _source, target, name, line, _sentence in scans[entry_id]:
            if target in record.failed:
                places[target].append((where.path, line, 1, name))
    problems = []
    for target in sorted(places, key=id_sort_key):
        path, line, col, name = min(places[target])
        others = len(places[target]) - 1
        more = f" (cited or mentioned in {others} more place{'s' if others != 1 else ''})" if others else ""
        problems.append(Problem(path, line, col, f"{target} could not be loaded, see above "
                                f"({record.failed[target]}){more}", field=name, severity="warning",
                                code="not-loaded"))
    return problems


def uses_cycles(record: Record, uses: dict[str, tuple[str, ...]] | None = None) -> list[list[str]]:
    """Each cycle of ``uses`` citations (a claim relying, through others, on itself), as the ids
    around it from its first id in record order, one cycle per strongly connected group.
    ``uses``: the ids each entry cites as 'uses', for every entry that does (``KeptLinks.uses``;
    None: read from the record)."""
    entries = record.entries
    # Only an entry that cites with "uses" and is cited so can be on a cycle: the others are left out.
    out = {}
    if uses is None:
        cites = record.cites
        uses = {}
        for i in entries:
            cited = tuple(cited for cited, relation in cites(i) if relation == "uses")
            if cited:
                uses[i] = cited
    for i, targets in uses.items():
        out[i] = {t for t in targets if t in entries and t != i}
    order = {entry_id: n for n, entry_id in enumerate(entries)}  # the record is in id order (``id_sort_key``)
    edges = {i: sorted((t for t in targets if t in out), key=order.__getitem__) for i, targets in out.items()}
    cycles = []
    for group in _strongly_connected(edges):
        if len(group) < 2:
            continue
        start = min(group, key=order.__getitem__)
        cycles.append(_shortest_cycle(start, edges, set(group)))
    return sorted(cycles, key=lambda cycle: order[cycle[0]])


def cycle_problems(record: Record, cycles: list[list[str]] | None = None) -> list[Problem]:
    """A problem for each 'uses' cycle (``cycles``: ``uses_cycles``, worked out if None)."""
    problems = []
    for cycle in uses_cycles(record) if cycles is None else cycles:
        at = next(i for i, (cited, relation) in enumerate(record.cites(cycle[0]))
                  if relation == "uses" and cited == cycle[1])
        places = record.places[cycle[0]]
        shown = " -> ".join([*cycle, cycle[0]])
        problems.append(Problem(places.path, *places.cites[at],
                                f"'uses' cycle: {shown}; a claim cannot rely on itself, remove one of these "
                                "citations or make it another relation", field=f"cites[{at}].id", code="uses-cycle"))
    return problems


def _strongly_connected(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, without recursion (a chain may be long)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(group)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def _shortest_cycle(start: str, edges: dict[str, list[str]], group: set[str]) -> list[str]:
    """The shortest way from ``start`` back to itself inside ``group``: the ids along it."""
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in edges[node]:
                if target not in group or target in came:
                    continue
                came[target] = node
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return path[::-1]
                following.append(target)
        frontier = following
    raise AssertionError("a strongly connected group has a cycle through each of its members")
