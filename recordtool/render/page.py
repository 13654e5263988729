"""One entry's page (``render_entry``, pure): title, properties, graph view, reference,
statement, body, verdict, backlinks."""

from __future__ import annotations

import math
import posixpath

from recordtool.record.load import id_sort_key
from recordtool.record.schema import Entry, Literature, Reference, Theory
from recordtool.render import escape
from recordtool.render.evidence import banner, verdict_badge, verdict_section
from recordtool.render.frontmatter import front_matter
from recordtool.render.mermaid import graph_view
from recordtool.render.prose import Style, block, inline, linked
from recordtool.render.sitemap import (
    INDEX,
    Context,
    entry_page,
    relative,
    tag_page,
    wanted_link,
)

HEADING_WIDTH = 120
PROPERTIES = "| Property | Value |"
STATUS_WORDS = {"active": "Active", "superseded": "Superseded", "retracted": "Retracted", "draft": "Draft"}


def render_entry(ctx: Context, entry_id: str) -> str:
    """The Markdown page of ``entry_id``."""
    record = ctx.project.record
    entry = record.entries[entry_id]
    page = entry_page(entry_id)
    style = prose_style(ctx, entry_id, page)

    heading = entry.title or escape.short(entry.display_title, HEADING_WIDTH)
    words = sum(len(text.split()) for _name, text in entry.prose())
    minutes = max(1, math.floor(words / 200 + 0.5))  # at 200 words a minute, rounded
    lines = [*front_matter(ctx, entry), "", f"# {entry_id}: {escape.line(heading)}", ""]
    if ctx.states.get(entry_id) is not None:
        lines += [banner(ctx, entry_id), ""]
    lines += [f"[The record]({relative(page, INDEX)}) · {minutes} min read", ""]

    lines += _properties(ctx, entry, page, style)
    lines += ["", "## Graph view", "", graph_view(ctx, entry_id, page)]
    if isinstance(entry, Literature):
        lines += ["", "## Reference", "", citation(entry.reference)]
    if isinstance(entry, Theory):
        lines += ["", "## Statement", "", block(entry.statement, style)]
    body = block(entry.body, style)
    if body:
        lines += ["", "## Discussion" if isinstance(entry, Theory) else "## Notes", "", body]
    if isinstance(entry, Theory):
        lines += ["", verdict_section(ctx, entry, page)]
    lines += ["", *_backlinks(ctx, entry_id, page)]
    return "\n".join(lines).rstrip("\n") + "\n"


def prose_style(ctx: Context, entry_id: str, page: str) -> Style:
    """How an entry's prose is written on ``page``: ids linked, relative links rewritten."""
    source = ctx.project.record.places[entry_id].path if entry_id in ctx.project.record.places else ""

    def link(target: str) -> tuple[str, str | None]:
        if target in ctx.project.record.entries:
            return relative(page, entry_page(target)), None
        return wanted_link(page, target), "not in the record"

    def rewrite(href: str) -> str:
        # A relative link in prose is relative to the entry's YAML file; on the page it must
        # still point at the same file of the project.
        if ctx.out is None or not source:
            return href
        path, hash_, fragment = href.partition("#")  # (a path: ``prose`` rewrites no anchor)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        return posixpath.relpath(target, posixpath.join(ctx.out, posixpath.dirname(page))) + hash_ + fragment

    return Style(ctx.pattern, link, rewrite)


def _properties(ctx: Context, entry: Entry, page: str, style: Style) -> list[str]:
    """The properties table: what the front matter cannot show (links, titles, notes, the
    verdict's scope); the site adds the rest (``mkdocs_plugin.site_properties``)."""
    rows: list[tuple[str, str]] = []
    status = STATUS_WORDS.get(entry.status, entry.status)
    if entry.status_note:
        status += " — " + inline(entry.status_note, style)
    rows.append(("Status", status))
    state = ctx.states.get(entry.id)
    if state is not None:
        rows.append(("Verdict", verdict_badge(ctx, entry.id, state)))
    if entry.tags:
        rows.append(("Tags", ", ".join(f"[{escape.line(t)}]({relative(page, tag_page(t))})" for t in entry.tags)))
    if entry.cites:
        cited = []
        for c in entry.cites:
            what = f" — {escape.line(ctx.title(c.id))}" if c.id in ctx.project.record.entries else " (not in the record)"
            note = f" ({escape.line(c.note)})" if c.note else ""
            cited.append(f"{ctx.link(page, c.id)} as {escape.line(c.as_)}{what}{note}")
        rows.append(("Cites", "<br>".join(cited)))
    for _relation, label, sources in ctx.project.graph.inverse(entry.id):
        cell = ", ".join(f"{ctx.link(page, s)} — {escape.line(ctx.title(s))}" for s in sources)
        rows.append((escape.line(label), cell))
    return [PROPERTIES, "| --- | --- |", *(f"| {name} | {value} |" for name, value in rows)]


def citation(ref: Reference) -> str:
    """A reference as a citation: ``Elhage, N., ... et al. (2021). Title. *Venue*, date. URL``."""
    authors = ", ".join(escape.line(a) for a in ref.authors)
    if ref.et_al:
        authors += ", et al."
    out = f"{authors} ({ref.year}). {escape.line(ref.title.rstrip('.'))}."
    where = [f"*{escape.line(ref.venue)}*"] if ref.venue else []
    where += [f"{ref.date.day} {ref.date.strftime('%B')} {ref.date.year}"] if ref.date else []
    if where:
        out += " " + ", ".join(where) + "."
    if ref.doi:
        doi = f"https://doi.org/{ref.doi}"
        out += f" [doi:{escape.line(ref.doi)}]({escape.href(doi)})"
    if ref.url:
        out += f" <{escape.href(ref.url)}>"
    return out


def _backlinks(ctx: Context, entry_id: str, page: str) -> list[str]:
    graph = ctx.project.graph
    backlinks = graph.backlinks(entry_id)
    out = ["## Backlinks", ""]
    if not backlinks:
        out.append("Nothing links here yet.")
    for link in backlinks:
        how = [f"cites it as {escape.line(r)}" for r in link.relations]
        if link.mentions:
            count = len(link.mentions)
            how.append("mentions it" + (f" {count} times" if count > 1 else ""))
        out.append(f"- {ctx.link(page, link.source)} — {escape.line(ctx.title(link.source))} ({', '.join(how)})")
        for mention in link.mentions:
            named = escape.line(mention.field.replace("_", " "))
            out.append(f"    - {named}: “{sentence(ctx, mention.sentence, page)}”")
    entries = ctx.project.record.entries
    dangling = sorted({m.target for m in graph.mentions_out.get(entry_id, ()) if m.target not in entries},
                      key=id_sort_key)
    if dangling:
        ids = ", ".join(ctx.link(page, d) for d in dangling)
        out += ["", f"Mentioned here but not in the record: {ids}."]
    return out


def sentence(ctx: Context, text: str, page: str) -> str:
    """A mention's sentence (plain text) on one line, escaped, with its ids linked."""
    return linked(" ".join(text.split()), prose_style(ctx, "", page), line_start=False)
