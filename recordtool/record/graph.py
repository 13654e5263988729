"""The link graph of a record: typed citations both ways, mentions, backlinks.

Built from a loaded record without touching the disk. Typed citations are declared once, on
the citing side; the graph gives every entry its inverses ("Cited as 'source' by"). Ids in
prose are mentions; an id mentioned but not in the record is a dangling mention (a warning,
and a "wanted" entry), never invented.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from recordtool.parallel import in_two
from recordtool.record.load import Record, id_sort_key
from recordtool.record.mentions import find_mentions
from recordtool.record.problems import Problem


@dataclass(frozen=True, slots=True)
class Mention:
    """``source`` writes ``target`` in the prose of ``field``, on ``line`` of its file."""

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


@dataclass
class Graph:
    record: Record
    cited_by: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # target -> relation -> sources
    mentions_out: dict[str, list[Mention]] = field(default_factory=dict)  # source -> mentions, in order
    mentions_in: dict[str, list[Mention]] = field(default_factory=dict)  # target -> mentions
    dangling: dict[str, list[Mention]] = field(default_factory=dict)  # missing id -> mentions of it
    # Backlinks and neighbours, kept for the last ids asked about (a page asks for its own
    # several times; keeping them for every id would hold a copy of the graph); a graph is
    # complete once ``build_graph`` returns. Ids of the record sort by their place in it.
    _backlinks: dict[str, tuple[Backlink, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _neighbours: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _order: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _key(self, entry_id: str) -> int:
        if not self._order:
            self._order.update((i, n) for n, i in enumerate(self.record.entries))
        return self._order[entry_id]

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
        for mention in self.mentions_in.get(entry_id, []):
            mentions[mention.source].append(mention)
        sources = sorted(set(relations) | set(mentions), key=self._key)
        return [Backlink(s, tuple(relations.get(s, ())), tuple(mentions.get(s, ()))) for s in sources]

    def neighbours(self, entry_id: str) -> list[str]:
        """Ids linked to ``entry_id`` either way (citations and mentions), in the record."""
        return list(_recent(self._neighbours, entry_id, self._compute_neighbours))

    def _compute_neighbours(self, entry_id: str) -> list[str]:
        entry = self.record.entries[entry_id]
        out = {c.id for c in entry.cites if c.id in self.record.entries}
        out |= {m.target for m in self.mentions_out.get(entry_id, []) if m.target in self.record.entries}
        out |= {b.source for b in self.backlinks(entry_id)}
        out.discard(entry_id)
        return sorted(out, key=self._key)

    def orphans(self) -> list[str]:
        """Entries that nothing links to and that link to nothing (in id order)."""
        entries = self.record.entries
        linked = set(self.cited_by) | set(self.mentions_in)  # linked to
        for by_relation in self.cited_by.values():
            for sources in by_relation.values():
                linked.update(sources)  # linking to an entry of the record
        linked.update(m.source for mentions in self.mentions_in.values() for m in mentions)
        return [i for i in entries if i not in linked]


def _recent(cache: dict[str, tuple[T, ...]], entry_id: str, compute: Callable[[str], list[T]]) -> tuple[T, ...]:
    """``compute(entry_id)``, kept in ``cache`` with those of the last ``RECENT`` ids."""
    found = cache.get(entry_id)
    if found is None:
        if len(cache) >= RECENT:
            cache.clear()
        found = cache[entry_id] = tuple(compute(entry_id))
    return found


PARALLEL_MIN = 2_000  # entries; below this a second process costs more than it saves


def _scan(record: Record, ids: list[str]) -> list[list[tuple[str, str, int, str]]]:
    """The mentions in the prose of each entry of ``ids``: (target, field, line, sentence),
    as plain data (half of them may be scanned in another process)."""
    pattern = record.config.id_pattern
    out = []
    for entry_id in ids:
        first_lines = record.places[entry_id].prose
        out.append([(found.id, name, first_lines.get(name, 0) + found.line, found.sentence)
                    for name, text in record.entries[entry_id].prose()
                    for found in find_mentions(text, pattern) if found.id != entry_id])
    return out


def build_graph(record: Record) -> tuple[Graph, list[Problem]]:
    """Index citations and mentions; dangling mentions come back as warnings."""
    graph = Graph(record)
    ids = list(record.entries)
    scanned = in_two(functools.partial(_scan, record), ids, min_items=PARALLEL_MIN)
    same = {entry_id: entry_id for entry_id in ids}  # one string per id, however often it is mentioned
    for entry_id, found in zip(ids, scanned, strict=True):
        for citation in record.entries[entry_id].cites:
            if citation.id in record.entries and citation.id != entry_id:
                graph.cited_by.setdefault(citation.id, {}).setdefault(citation.as_, []).append(entry_id)
        out = [Mention(entry_id, same.get(target, target), name, line, sentence)
               for target, name, line, sentence in found]
        if out:
            graph.mentions_out[entry_id] = out
            for mention in out:
                if mention.target in record.entries:
                    graph.mentions_in.setdefault(mention.target, []).append(mention)
                else:
                    graph.dangling.setdefault(mention.target, []).append(mention)
    graph.dangling = {k: graph.dangling[k] for k in sorted(graph.dangling, key=id_sort_key)}
    problems = []
    for target, mentions in graph.dangling.items():
        for mention in mentions:
            path = record.places[mention.source].path
            problems.append(Problem(path, mention.line, 1,
                                    f"{target} is mentioned but not in the record; add it or write it without "
                                    "its id", field=mention.field, severity="warning", code="dangling-mention"))
    return graph, problems
