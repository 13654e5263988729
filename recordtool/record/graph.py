"""The link graph of a record: typed citations both ways, mentions, backlinks.

Built from a loaded record without touching the disk: typed citations are declared on the
citing side, and the graph gives each entry their inverses; an id mentioned but not in the
record is a dangling mention (a warning), never invented.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from recordtool.record.entry import Mention
from recordtool.record.load import Record, id_sort_key
from recordtool.record.problems import Problem


@dataclass(frozen=True, slots=True)
class Backlink:
    """Why ``source`` links to an entry: its typed relations and/or its mentions."""

    source: str
    relations: tuple[str, ...]
    mentions: tuple[Mention, ...]


@dataclass
class Graph:
    """A record's links, indexed both ways (``build_graph``)."""

    record: Record
    cited_by: Mapping[str, dict[str, list[str]]] = field(default_factory=dict)  # target -> relation -> sources
    mentions_out: Mapping[str, list[Mention]] = field(default_factory=dict)  # source -> mentions, in order
    mentions_in: Mapping[str, list[Mention]] = field(default_factory=dict)  # target -> mentions
    dangling: Mapping[str, list[Mention]] = field(default_factory=dict)  # missing id -> mentions of it

    @cached_property
    def _place(self) -> dict[str, int]:
        """Each id's place in the record: ids sort by it."""
        return {entry_id: n for n, entry_id in enumerate(self.record.entries)}

    def inverse(self, entry_id: str) -> list[tuple[str, str, list[str]]]:
        """(relation, inverse label, citing ids) for ``entry_id``, in vocabulary order."""
        relations = self.record.config.relations
        by_relation = self.cited_by.get(entry_id, {})
        return [(rel, relations.get(rel, rel), by_relation[rel]) for rel in relations if rel in by_relation]

    def backlinks(self, entry_id: str) -> list[Backlink]:
        """Every entry that cites or mentions ``entry_id``, each once, in id order."""
        relations: dict[str, list[str]] = defaultdict(list)
        for rel, sources in self.cited_by.get(entry_id, {}).items():
            for source in sources:
                relations[source].append(rel)
        mentions: dict[str, list[Mention]] = defaultdict(list)
        for mention in self.mentions_in.get(entry_id, ()):
            mentions[mention.source].append(mention)
        sources = sorted(relations.keys() | mentions.keys(), key=self._place.__getitem__)
        return [Backlink(s, tuple(relations.get(s, ())), tuple(mentions.get(s, ()))) for s in sources]

    def neighbours(self, entry_id: str) -> list[str]:
        """Ids linked to ``entry_id`` either way (citations and mentions), in the record."""
        entries = self.record.entries
        linked = {cited for cited, _relation in self.record.cites(entry_id)}
        linked.update(m.target for m in self.mentions_out.get(entry_id, ()))
        out = {i for i in linked if i in entries}  # (an id cited or mentioned that is not in the record: none)
        out.update(b.source for b in self.backlinks(entry_id))
        out.discard(entry_id)
        return sorted(out, key=self._place.__getitem__)

    def orphans(self) -> list[str]:
        """Entries that nothing links to and that link to nothing (in id order)."""
        linked = set(self.cited_by) | set(self.mentions_in)  # linked to
        linked.update(source for by_relation in self.cited_by.values() for sources in by_relation.values()
                      for source in sources)  # linking to an entry of the record
        linked.update(m.source for found in self.mentions_in.values() for m in found)  # linking to one
        return [i for i in self.record.entries if i not in linked]


def build_graph(record: Record) -> tuple[Graph, list[Problem]]:
    """Index citations and mentions (those ``load_record`` found as it read each file); dangling
    mentions, links to entries that failed to load and 'uses' cycles come back as problems."""
    entries, failed = record.entries, record.failed
    cited_by: dict[str, dict[str, list[str]]] = {}
    mentions_out: dict[str, list[Mention]] = {}
    mentions_in: dict[str, list[Mention]] = {}
    dangling: dict[str, list[Mention]] = {}
    for entry_id, entry in entries.items():
        for citation in entry.cites:
            if citation.id in entries and citation.id != entry_id:
                cited_by.setdefault(citation.id, {}).setdefault(citation.as_, []).append(entry_id)
        found = record.mentions[entry_id]
        if found:
            mentions_out[entry_id] = found
        for mention in found:
            if mention.target in entries:
                mentions_in.setdefault(mention.target, []).append(mention)
            elif mention.target not in failed:  # it exists, but did not load: not wanted
                dangling.setdefault(mention.target, []).append(mention)
    graph = Graph(record, cited_by, mentions_out, mentions_in, {k: dangling[k] for k in sorted(dangling, key=id_sort_key)})
    problems = [Problem(record.places[mention.source].path, mention.line, 1, f"{target} is mentioned but not in "
                        "the record; add it or write it without its id", field=mention.field, severity="warning",
                        code="dangling-mention") for target, mentions in graph.dangling.items() for mention in mentions]
    problems.extend(_failed_problems(record))
    for cycle in uses_cycles(record):
        at = next(i for i, (cited, relation) in enumerate(record.cites(cycle[0]))
                  if relation == "uses" and cited == cycle[1])
        places = record.places[cycle[0]]
        shown = " -> ".join([*cycle, cycle[0]])
        problems.append(Problem(places.path, *places.cites[at],
                                f"'uses' cycle: {shown}; a claim cannot rely on itself, remove one of these "
                                "citations or make it another relation", field=f"cites[{at}].id", code="uses-cycle"))
    return graph, problems


def _failed_problems(record: Record) -> list[Problem]:
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
        for _source, target, name, line, _sentence in record.mentions[entry_id]:
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


def uses_cycles(record: Record) -> list[list[str]]:
    """Each cycle of ``uses`` citations (a claim relying, through others, on itself), as the ids
    around it from its first id in record order, one cycle per strongly connected group."""
    entries = record.entries
    # Only an entry that cites with "uses" and is cited so can be on a cycle: the others are left out.
    out = {i: targets for i, entry in entries.items()
           if (targets := {c.id for c in entry.cites if c.as_ == "uses" and c.id != i and c.id in entries})}
    order = {entry_id: n for n, entry_id in enumerate(entries) if entry_id in out}  # (the record is in id order)
    edges = {i: sorted((t for t in targets if t in out), key=order.__getitem__) for i, targets in out.items()}
    cycles = [_shortest_cycle(min(group, key=order.__getitem__), edges, set(group))
              for group in _strongly_connected(edges) if len(group) > 1]
    return sorted(cycles, key=lambda cycle: order[cycle[0]])


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
