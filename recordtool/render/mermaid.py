"""The graph view of a page: a Mermaid diagram of an entry's neighbourhood.

The entry, what it cites and mentions, what cites and mentions it, and the ids it mentions
that are not in the record; citations are solid arrows labelled with their relation, mentions
dotted. Claims are coloured by their state; every node in the record is clickable (its page).
GitHub and Obsidian both draw a ```` ```mermaid ```` block.
"""

from __future__ import annotations

from recordtool.record.load import id_sort_key
from recordtool.render import escape
from recordtool.render.sitemap import Context, entry_page, relative

MAX_NEIGHBOURS = 40
LABEL_WIDTH = 48

CLASSES: dict[str, str] = {
    "verified": "fill:#d4edda,stroke:#2e7d32,color:#1b3d1f",
    "failed": "fill:#f8d7da,stroke:#c62828,color:#5c1414",
    "no-power": "fill:#fff3cd,stroke:#b08800,color:#4d3b00",
    "error": "fill:#fde2e4,stroke:#8e24aa,color:#4a0f57",
    "timeout": "fill:#ffe8cc,stroke:#e65100,color:#5a2000",
    "skipped": "fill:#eceff1,stroke:#607d8b,color:#263238",
    "stale": "fill:#fff8e1,stroke:#f9a825,color:#4d3b00,stroke-dasharray:5 3",
    "unchecked": "fill:#f5f5f5,stroke:#9e9e9e,color:#424242",
    "entry": "fill:#e8f0fe,stroke:#3f51b5,color:#1a237e",
    "missing": "fill:#ffffff,stroke:#bdbdbd,color:#757575,stroke-dasharray:3 3",
}


def graph_view(ctx: Context, entry_id: str, page: str) -> str:
    """A ```` ```mermaid ```` block: ``entry_id`` and its neighbourhood, links relative to ``page``."""
    graph = ctx.project.graph
    entries = ctx.project.record.entries
    entry = entries[entry_id]
    neighbours = graph.neighbours(entry_id)
    shown = neighbours[:MAX_NEIGHBOURS]
    mentions_out = graph.mentions_out.get(entry_id, ())
    missing = sorted({m.target for m in mentions_out if m.target not in entries},
                     key=id_sort_key)[: max(0, MAX_NEIGHBOURS - len(shown))]
    name = {node: f"n{i}" for i, node in enumerate([entry_id, *shown, *missing])}
    labels = ctx.memo("mermaid.label")

    lines = ["```mermaid", "graph LR"]
    for node, short_name in name.items():
        lines.append(f'  {short_name}["{labels.get(node) or label(ctx, node)}"]')

    # Each pair of nodes gets one arrow: the first found, in this order.
    edges: dict[tuple[str, str], str] = {}
    for citation in entry.cites:
        if citation.id in name:
            edges.setdefault((entry_id, citation.id), f"-->|{citation.as_}|")
    for relation, _label, sources in graph.inverse(entry_id):
        arrow = f"-->|{relation}|"
        for source in sources:
            if source in name:  # most of a much-cited entry's sources are not shown
                edges.setdefault((source, entry_id), arrow)
    # Citations among the neighbours (most cite none of the others: a set says so at once).
    others = frozenset(name) - {entry_id}
    cited = ctx.memo("mermaid.cited")
    for neighbour in shown:
        ids = cited.get(neighbour)
        if not others.isdisjoint(ids if ids is not None else cited_ids(ctx, neighbour)):
            for citation in entries[neighbour].cites:
                if citation.id != entry_id and citation.id in name:
                    edges.setdefault((neighbour, citation.id), f"-->|{citation.as_}|")
    for mention in mentions_out:
        if mention.target in name:
            edges.setdefault((entry_id, mention.target), "-.->")
    for mention in graph.mentions_in.get(entry_id, ()):
        if mention.source in name:
            edges.setdefault((mention.source, entry_id), "-.->")
    lines.extend(f"  {name[source]} {arrow} {name[target]}" for (source, target), arrow in edges.items())

    used: dict[str, list[str]] = {}
    nested = "/" in page
    states = ctx.states
    for node, short_name in name.items():
        if node in entries:
            href = relative(page, entry_page(node)) if nested else entry_page(node)
            lines.append(f'  click {short_name} "{href}"')
            cls = states[node] or "entry"
        else:
            cls = "missing"
        used.setdefault(cls, []).append(short_name)
    for cls, style in CLASSES.items():
        if cls in used:
            css = cls.replace("-", "_")
            lines.append(f"  classDef {css} {style}")
            lines.append(f"  class {','.join(used[cls])} {css}")
    lines.append(f"  style {name[entry_id]} stroke-width:3px")
    lines.append("```")
    out = "\n".join(lines)
    hidden = len(neighbours) - len(shown)
    if hidden > 0:
        out += f"\n\nThe graph shows {len(shown)} of {len(neighbours)} linked entries; Backlinks lists them all."
    return out


def label(ctx: Context, node: str) -> str:
    """A node's label: its id and title (worked out once per entry)."""
    if ctx.has(node):
        text = f"{node}: {escape.short(ctx.title(node), LABEL_WIDTH)}"
    else:
        text = f"{node} (not in the record)"
    found: str = ctx.memo("mermaid.label").setdefault(node, escape.mermaid(text))
    return found


def cited_ids(ctx: Context, entry_id: str) -> tuple[str, ...]:
    """The ids ``entry_id`` cites (worked out once per entry; a tuple is a third of a set)."""
    found: tuple[str, ...] = ctx.memo("mermaid.cited").setdefault(
        entry_id, tuple(c.id for c in ctx.project.record.entries[entry_id].cites))
    return found
