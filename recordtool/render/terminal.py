"""An entry as plain text for the terminal (`recordtool show`)."""

from __future__ import annotations

import textwrap

from recordtool.record.graph import Graph
from recordtool.record.schema import Literature, Theory


def _wrap(text: str) -> str:
    paragraphs = [p for p in text.strip().split("\n\n") if p.strip()]
    return "\n\n".join(
        textwrap.fill(" ".join(p.split()), width=92, initial_indent="  ", subsequent_indent="  ")
        if not p.lstrip().startswith(("-", "*", "#", "|", "```"))
        else textwrap.indent(p.rstrip(), "  ")
        for p in paragraphs
    )


def format_entry(graph: Graph, entry_id: str, verdict: str) -> str:
    """The entry's fields, its citations both ways and its backlinks, as plain text;
    ``verdict`` is a claim's state now, in words ("verified since ...")."""
    record = graph.record
    entry = record.entries[entry_id]
    titled = not isinstance(entry, Theory) or entry.title  # a claim without a title: its statement follows
    lines = [f"{entry.id}: {entry.display_title}" if titled else entry.id]
    if verdict:
        lines.append(f"  verdict:  {verdict}")
    lines += [f"  file:     {record.places[entry_id].path}",
             f"  kind:     {entry.kind}",
             f"  status:   {entry.status}" + (f" — {' '.join(entry.status_note.split())}" if entry.status_note else ""),
             f"  version:  {entry.version}"]
    if entry.tags:
        lines.append(f"  tags:     {', '.join(entry.tags)}")
    if entry.created or entry.updated:
        lines.append(f"  dates:    created {entry.created or '-'}, updated {entry.updated or '-'}")
    for citation in entry.cites:
        target = record.entries.get(citation.id)
        title = f" — {_short(target.display_title)}" if target else " (not in the record)"
        lines.append(f"  cites:    {citation.id} as {citation.as_}{title}")
    for _relation, label, sources in graph.inverse(entry_id):
        for source in sources:
            lines.append(f"  {label}: {source} — {_short(record.entries[source].display_title)}")
    if isinstance(entry, Literature):
        ref = entry.reference
        authors = ", ".join(ref.authors) + (", et al." if ref.et_al else "")
        lines += ["", "Reference", f"  {authors} ({ref.year}). {ref.title}." +
                  (f" {ref.venue}." if ref.venue else "") + (f" {ref.url}" if ref.url else "")]
    if isinstance(entry, Theory):
        lines += ["", "Statement", _wrap(entry.statement)]
        for check in entry.checks:
            expects = ", ".join(f"{m} {e}" for m, e in check.expect.items())
            controls = ", ".join(c.name for c in check.all_controls) or "none"
            lines.append(f"  check {check.name}: {check.run} — expects {expects}; controls: {controls}")
    if entry.body:
        lines += ["", "Body", _wrap(entry.body)]
    backlinks = graph.backlinks(entry_id)
    lines += ["", f"Backlinks ({len(backlinks)})"]
    for link in backlinks:
        how = ", ".join([f"cites as {r}" for r in link.relations] + (["mentions"] if link.mentions else []))
        lines.append(f"  {link.source} ({how}) — {_short(record.entries[link.source].display_title)}")
    mentions = graph.mentions_out.get(entry_id, [])
    dangling = sorted({m.target for m in mentions if m.target not in record.entries})
    if dangling:
        lines += ["", f"Mentions not in the record: {', '.join(dangling)}"]
    return "\n".join(lines)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79] + "…"
