"""Mermaid diagrams: an entry's neighbourhood on its page (``graph_view``), and every claim on
``graph.md`` (``whole_graph``), with a legend under each. The limits below keep a diagram
legible as the record grows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from graphlib import CycleError, TopologicalSorter

from recordtool.render import escape
from recordtool.render.sitemap import (
    BADGES,
    INDEX,
    WANTED,
    Context,
    entry_page,
    kind_page,
    relative,
    tag_page,
)

# At most this many neighbours (15 nodes with the entry, the wanted ids and the rest): a column
# of 12 two-line nodes still reads at its natural size.
MAX_NEIGHBOURS = 12
# Three columns (what cites the entry, the entry, what it cites) fill GitHub's page width; a
# fourth would make Mermaid shrink the text.
MAX_RANKS = 3
# At most this many entries on each side: drawn top to bottom, which fits the page's width.
SMALL_SIDE = 3
# Straight edges: Mermaid's curves run under neighbours, which hide part of their labels.
STRAIGHT = "  linkStyle default interpolate linear"
LINE_WIDTH = 26  # characters per line of a node's title
TITLE_LINES = 2

CLASSES: dict[str, str] = {
    "verified": "fill:#d4edda,stroke:#2e7d32,color:#1b3d1f",
    "partly-verified": "fill:#e6f2c9,stroke:#7cb342,color:#2e4a0f",
    "contradicted": "fill:#f8d7da,stroke:#c62828,color:#5c1414",
    "no-power": "fill:#fff3cd,stroke:#b08800,color:#4d3b00",
    "not-reproduced": "fill:#e0f2f1,stroke:#546e7a,color:#263238",
    "error": "fill:#f3e5f5,stroke:#8e24aa,color:#4a0f57",
    "timeout": "fill:#ffe8cc,stroke:#e65100,color:#5a2000",
    "skipped": "fill:#eceff1,stroke:#607d8b,color:#263238",
    "stale": "fill:#fff8e1,stroke:#f9a825,color:#4d3b00,stroke-dasharray:5 3",
    "unchecked": "fill:#f5f5f5,stroke:#9e9e9e,color:#424242",
    "entry": "fill:#e8f0fe,stroke:#3f51b5,color:#1a237e",
    "missing": "fill:#ffffff,stroke:#bdbdbd,color:#757575,stroke-dasharray:3 3",
    "more": "fill:#ffffff,stroke:#9e9e9e,color:#424242",
}
# What the legend calls each fill (tests/render/test_mermaid.py checks the names against the hues)
COLOURS = {"verified": "green", "partly-verified": "light green", "contradicted": "red", "no-power": "yellow",
           "not-reproduced": "pale teal", "error": "purple", "timeout": "orange",
           "skipped": "grey", "stale": "pale yellow, dashed border", "unchecked": "light grey",
           "entry": "blue", "missing": "white, dashed border"}
WANTED_NODE = "wanted_"  # entry nodes never end with "_" (see node)
MORE_NODE = "more_"
_PLAIN_ID = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$")


def node(entry_id: str) -> str:
    """The Mermaid name of ``entry_id``'s node, derived from the id alone: ``THEORY-977`` is
    ``THEORY_977``. Distinct ids have distinct names, none a Mermaid keyword (``end``)."""
    if _PLAIN_ID.match(entry_id):
        return entry_id.replace("-", "_") if "-" in entry_id else "_" + entry_id
    return "__" + entry_id.encode("utf-8").hex()


def graph_view(ctx: Context, entry_id: str, page: str) -> str:
    """A ```` ```mermaid ```` block: ``entry_id`` and its neighbourhood, links relative to
    ``page``, and the legend under it."""
    graph = ctx.project.graph
    entries = ctx.project.record.entries
    neighbours = graph.neighbours(entry_id)
    shown = _nearest(ctx, entry_id, neighbours)
    dangling = sorted({m.target for m in graph.mentions_out.get(entry_id, ()) if m.target not in entries})

    names = {n: node(n) for n in (entry_id, *shown)}
    lines = ["```mermaid", "graph LR", *(node_line(ctx, n) for n in names)]
    center = names[entry_id]
    if dangling:
        text = (f"{escape.mermaid(dangling[0])}<br/>not in the record" if len(dangling) == 1
                else f"{len(dangling)} ids<br/>not in the record")
        lines.append(f'  {WANTED_NODE}["{text}"]')
    hidden = len(neighbours) - len(shown)
    if hidden:
        lines.append(f'  {MORE_NODE}["{hidden} more linked<br/>entries: see Backlinks"]')
    edges = _edges(ctx, entry_id, names)
    among, dropped = _among(ctx, entry_id, shown, names, edges, bool(dangling))
    edges.update(among)
    lines.extend(f"  {names[source]} {arrow} {names[target]}" for (source, target), arrow in edges.items())
    if dangling:
        lines.append(f"  {center} -.-> {WANTED_NODE}")
    sides = ({s for s, t in edges if t == entry_id}, {t for s, t in edges if s == entry_id} | ({""} if dangling else set()))
    if max(map(len, sides)) <= SMALL_SIDE:
        lines[1] = "graph TB"
    used = _clicks_and_classes(ctx, names, page, lines, bool(dangling), bool(hidden))
    lines += [f"  style {center} stroke-width:3px", "```"]
    out = "\n".join(lines)
    solid = any(a.startswith("-->") for a in edges.values())
    out += "\n\n" + legend(used, solid="solid arrow: a citation, labelled with its relation" if solid else None,
                           dotted="dotted arrow: a mention in prose"
                           if dangling or any(a.endswith("-.->") for a in edges.values()) else None)
    if hidden:
        out += f" The graph shows the {len(shown)} nearest of {len(neighbours)} linked entries; Backlinks lists them all."
    if dropped:
        out += (f" {dropped} citation{'s' if dropped > 1 else ''} among these entries {'are' if dropped > 1 else 'is'} "
                "left out to keep the graph three columns wide; the citing entries' pages show "
                f"{'them' if dropped > 1 else 'it'}.")
    return out


def _nearest(ctx: Context, entry_id: str, neighbours: list[str]) -> list[str]:
    """The neighbours drawn, in the record's order: at most ``MAX_NEIGHBOURS``, those that
    matter most first (claims that use it or are contradicted, citations, mentions)."""
    if len(neighbours) <= MAX_NEIGHBOURS:
        return neighbours
    graph = ctx.project.graph
    cited = {c.id for c in ctx.project.record.entries[entry_id].cites}
    citing = {s for _relation, _label, sources in graph.inverse(entry_id) for s in sources}
    users = {s for relation, _label, sources in graph.inverse(entry_id) if relation == "uses" for s in sources}
    mentioned = {m.target for m in graph.mentions_out.get(entry_id, ())}

    def rank(n: str) -> tuple[int, bool]:
        state = ctx.states.get(n)
        first = (n in users and state is not None) or state in ("contradicted", "not-reproduced")
        return 0 if first else 1 if n in cited or n in citing else 2 if n in mentioned else 3, state is None
    nearest = set(sorted(neighbours, key=rank)[:MAX_NEIGHBOURS])  # (a stable sort: ties in the record's order)
    return [n for n in neighbours if n in nearest]


def _edges(ctx: Context, entry_id: str, names: dict[str, str]) -> dict[tuple[str, str], str]:
    """The arrows between the entry and the neighbours drawn (``names``): one per pair of
    nodes, a citation before a mention, so each neighbour is on one side of the entry."""
    graph = ctx.project.graph
    edges: dict[tuple[str, str], str] = {}

    def add(source: str, target: str, arrow: str) -> None:
        if (source, target) in edges:
            return
        back = edges.get((target, source))
        if back is None:
            edges[(source, target)] = arrow
        elif back == "-.->" and arrow == "-.->":
            edges[(target, source)] = "<-.->"

    for citation in ctx.project.record.entries[entry_id].cites:
        if citation.id in names:
            add(entry_id, citation.id, citation_arrow(citation.as_))
    for relation, _label, sources in graph.inverse(entry_id):
        arrow = citation_arrow(relation)
        for source in sources:
            if source in names:  # most of a much-cited entry's sources are not shown
                add(source, entry_id, arrow)
    for mention in graph.mentions_out.get(entry_id, ()):
        if mention.target in names:
            add(entry_id, mention.target, "-.->")
    for mention in graph.mentions_in.get(entry_id, ()):
        if mention.source in names:
            add(mention.source, entry_id, "-.->")
    return edges


def _clicks_and_classes(ctx: Context, names: dict[str, str], page: str, lines: list[str], dangling: bool,
                        hidden: bool) -> dict[str, list[str]]:
    """Add to ``lines`` each node's click (its page, relative to ``page``) and class (its state,
    or what else it is; a line per node); the nodes by class."""
    used: dict[str, list[str]] = {}
    for n, name in names.items():
        lines.append(f'  click {name} "{relative(page, entry_page(n))}"')
        used.setdefault(ctx.states.get(n) or "entry", []).append(name)
    if dangling:
        lines.append(f'  click {WANTED_NODE} "{relative(page, WANTED)}"')
        used["missing"] = [WANTED_NODE]
    if hidden:
        used["more"] = [MORE_NODE]
    lines.append(STRAIGHT)
    for cls, style in CLASSES.items():
        if cls in used:
            css = cls.replace("-", "_")
            lines.append(f"  classDef {css} {style}")
            lines.extend(f"  class {name} {css}" for name in used[cls])
    return used


def node_line(ctx: Context, entry_id: str) -> str:
    """The line that draws ``entry_id``'s node: its name, and its id over its title in two
    short lines."""
    label = "<br/>".join(escape.mermaid(line) for line in [entry_id, *title_lines(ctx.title(entry_id))])
    return f'  {node(entry_id)}["{label}"]'


def citation_arrow(relation: str) -> str:
    """The solid arrow of a citation as ``relation``, labelled with it."""
    return f"-->|{escape.mermaid(relation)}|"


def _among(ctx: Context, entry_id: str, shown: list[str], names: dict[str, str],
           edges: dict[tuple[str, str], str], wanted: bool) -> tuple[dict[tuple[str, str], str], int]:
    """Citations among the neighbours, each kept only if the diagram still has at most
    ``MAX_RANKS`` columns and no cycle, and how many were left out."""
    found = [(neighbour, cited, citation_arrow(relation)) for neighbour in shown
             for cited, relation in ctx.project.record.cites(neighbour)
             if cited != entry_id and cited in names and (neighbour, cited) not in edges
             and (cited, neighbour) not in edges]
    # The columns: what points at the entry, the entry, what it points at (one side each).
    after: dict[str, set[str]] = {n: set() for n in names}
    if wanted:  # the node of the ids not in the record, on the entry's right
        after[entry_id].add(WANTED_NODE)
        after[WANTED_NODE] = set()
    for source, target in edges:
        after[source].add(target)
    kept: dict[tuple[str, str], str] = {}
    for source, target, arrow in found:
        after[source].add(target)
        longest = _longest_path(after)
        if longest is not None and longest <= MAX_RANKS - 1:
            kept[(source, target)] = arrow
        else:
            after[source].discard(target)
    return kept, len(found) - len(kept)


def _longest_path(after: dict[str, set[str]]) -> int | None:
    """The number of arrows on the longest path of the graph ``after`` (node -> nodes it
    points at); None when it has a cycle."""
    depth: dict[str, int] = {}  # the arrows on the longest path from each node
    try:
        for n in TopologicalSorter(after).static_order():  # (what n points at comes first)
            depth[n] = max((depth[t] + 1 for t in after.get(n, ())), default=0)
    except CycleError:
        return None
    return max(depth.values(), default=0)


def legend(classes: Iterable[str], *, solid: str | None, dotted: str | None = None) -> str:
    """One line saying what the arrows and the colours of a diagram mean (only those it has;
    ``solid``, ``dotted``: what a solid and a dotted arrow are)."""
    parts = [arrow for arrow in (solid, dotted) if arrow]
    parts += [f"{BADGES.get(c, _NAMES.get(c, c))}: {COLOURS[c]}" for c in CLASSES if c in classes and c in COLOURS]
    return "*Legend* — " + "; ".join(parts) + "." if parts else ""


_NAMES = {"entry": "not a claim", "missing": "not in the record"}


def title_lines(title: str, width: int = LINE_WIDTH, most: int = TITLE_LINES) -> list[str]:
    """``title`` in at most ``most`` lines of at most ``width`` characters, cut between words,
    the last ending in " …" when words are left out (not textwrap, which cuts otherwise)."""
    lines: list[str] = []
    line = ""
    for word in title.split():
        while len(word) > width:  # a word longer than a line fills lines of its own
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if line and len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            if line:
                lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines if len(lines) <= most else _ellipsis(lines[:most], width)


def _ellipsis(lines: list[str], width: int) -> list[str]:
    """``lines`` with " …" at the end of the last, words dropped from it to make room."""
    last = lines[-1]
    while last and len(last) + 2 > width:
        last = last.rsplit(" ", 1)[0] if " " in last else last[: width - 2]
    return [*lines[:-1], f"{last} …" if last else "…"]


# The whole record ---------------------------------------------------------------------------

# Up to this many nodes (claims and what they cite) the whole graph is drawn node by node, with
# titles; above it, each claim by its id and what else they cite one node per tag.
WHOLE_MAX = 60
# Mermaid draws at most 500 arrows and 50,000 characters of source; at about 120 characters a
# claim, 320 claims and the groups fit.
MAX_CLAIMS = 320
MAX_ARROWS = 500
MAX_GROUPS = 12  # tags that get a node for the literature and notes claims cite; the rest by kind
STATE_WORSE = ("contradicted", "error", "timeout", "not-reproduced", "no-power", "stale", "skipped", "unchecked",
               "partly-verified", "verified")
# Every claim's graph keeps its natural size: the site scrolls it, GitHub zooms and pans it.
FULL_SIZE = '%%{init: {"flowchart": {"useMaxWidth": false}}}%%'
CLAIM_ARROW = "solid arrow: a claim citing another claim"
GROUP_ARROW = "dotted arrow: a claim citing literature or notes of that group"


def whole_graph(ctx: Context, page: str) -> str:
    """Every claim and what it cites (``uses`` included), coloured by verdict; above
    ``WHOLE_MAX`` nodes, every claim by its id and what else they cite grouped by tag."""
    record = ctx.project.record
    entries = record.entries
    claims = record.claim_ids()
    shown: dict[str, None] = dict.fromkeys(claims)
    for claim in claims:
        shown.update((cited, None) for cited, _relation in record.cites(claim) if cited in entries)
    if len(shown) > WHOLE_MAX:
        return _claims_graph(ctx, claims, page)
    names = {n: node(n) for n in shown}
    lines = ["```mermaid", "graph LR", *(node_line(ctx, n) for n in names)]
    for claim in claims:
        for cited, relation in record.cites(claim):
            if cited in names and cited != claim:
                lines.append(f"  {names[claim]} -->|{escape.mermaid(relation)}| {names[cited]}")
    used = _clicks_and_classes(ctx, names, page, lines, False, False)
    lines.append("```")
    return "\n".join(lines) + "\n\n" + legend(used, solid="arrow: a citation, labelled with its relation")


def _claims_graph(ctx: Context, claims: list[str], page: str) -> str:
    """Every claim a node labelled with its id (at most ``MAX_CLAIMS``, the worst verdicts
    first), the literature and notes they cite one node per tag (or kind), and at most
    ``MAX_ARROWS`` arrows, those between claims first."""
    record, rows = ctx.project.record, ctx.rows
    states = {c: ctx.states.get(c) or "unchecked" for c in claims}
    drawn = claims
    if len(claims) > MAX_CLAIMS:
        worst = set(sorted(claims, key=lambda c: STATE_WORSE.index(states[c]))[:MAX_CLAIMS])  # (a stable sort)
        drawn = [c for c in claims if c in worst]
    among = set(drawn)
    between: dict[tuple[str, str], None] = {}
    cited: dict[str, dict[str, None]] = {c: {} for c in drawn}  # claim -> what else it cites
    for claim in drawn:
        for target, _relation in record.cites(claim):
            if target in among and target != claim:
                between[(claim, target)] = None
            elif target in rows and not rows[target].claim:
                cited[claim][target] = None
    group = _groups(ctx, {t for targets in cited.values() for t in targets})
    members = Counter(group.values())  # group -> how many entries it holds
    groups = sorted(members, key=lambda g: (not g.startswith("#"), -members[g], g))
    names = {g: f"g{i}_" for i, g in enumerate(groups)}  # group nodes: names of their own
    lines = ["```mermaid", FULL_SIZE, "graph LR"]
    lines += [f'  {node(c)}["{escape.mermaid(c)}"]:::{states[c].replace("-", "_")}' for c in drawn]
    lines += [f'  {names[g]}["{escape.mermaid(g)}<br/>{members[g]} entr{"y" if members[g] == 1 else "ies"}"]'
              ":::entry" for g in groups]
    to_groups = [(k, i, c, g) for i, c in enumerate(drawn)
                 for k, g in enumerate(dict.fromkeys(names[group[t]] for t in cited[c]))]
    arrows = [f"  {node(s)} --> {node(t)}" for s, t in between] + [f"  {node(c)} -.-> {g}" for *_, c, g in sorted(to_groups)]
    lines += arrows[:MAX_ARROWS]
    lines += [f'  click {node(c)} "{relative(page, entry_page(c))}"' for c in drawn]
    lines += [f'  click {names[g]} "{relative(page, tag_page(g[1:]) if g.startswith("#") else kind_page(g))}"'
              for g in groups]
    used = {states[c] for c in drawn} | ({"entry"} if groups else set())
    lines += [f"  classDef {c.replace('-', '_')} {style}" for c, style in CLASSES.items() if c in used]
    lines.append("```")
    out = "\n".join(lines) + "\n\n" + legend(used, solid=CLAIM_ARROW if between else None,
                                              dotted=GROUP_ARROW if to_groups else None)
    tags = {ctx.rows[t].tags[0] for t in group if ctx.rows[t].tags}
    out += (f"\n\n{len(claims)} claims and what they cite are more than {WHOLE_MAX} nodes, so the graph is drawn at "
            "full size (scroll across it; on GitHub, zoom and pan it with its buttons), each claim is drawn "
            "by its id (its page gives its title), and the literature and notes they cite are one node per tag, "
            "an entry under its first" + (f"; tags beyond the {MAX_GROUPS} with most entries are one node per kind"
                                          if len(tags) > MAX_GROUPS else "") + ".")
    if len(drawn) < len(claims):
        out += (f" The {MAX_CLAIMS} claims drawn are those with the worst verdicts; the [index]({relative(page, INDEX)}) "
                f"lists all {len(claims)}.")
    if len(arrows) > MAX_ARROWS:
        out += (f" {len(arrows) - MAX_ARROWS} citations are left out, to keep within the {MAX_ARROWS} arrows Mermaid "
                "draws, those of literature and notes first; each claim's page shows all its citations.")
    return out


def _groups(ctx: Context, cited: set[str]) -> dict[str, str]:
    """The group of each of ``cited`` (literature and notes that claims cite): ``#tag`` for its
    first tag when that is one of the ``MAX_GROUPS`` tags with most of them, its kind otherwise."""
    rows = ctx.rows
    counts = Counter(rows[target].tags[0] for target in cited if rows[target].tags)
    top = set(sorted(counts, key=lambda t: (-counts[t], t))[:MAX_GROUPS])
    return {t: "#" + rows[t].tags[0] if rows[t].tags and rows[t].tags[0] in top else rows[t].kind for t in cited}

