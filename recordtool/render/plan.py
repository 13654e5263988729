"""Planning the site: every page and figure (``plan_site``), how to compose a page
(``Plan.compose``), and which pages may have changed since they were written (``dirty``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from recordtool.render import index, page
from recordtool.render.figures import caption
from recordtool.render.sitemap import Context, entry_page, figure_file

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.verify.verdict import ClaimStatus


@dataclass(slots=True)
class Plan:
    """Every file of the site: the pages, and the figures to copy."""

    context: Context
    pages: list[str]  # every page, sorted
    owners: dict[str, str]  # entry page -> its entry's id
    indexes: list[str]  # the index pages
    assets: dict[str, str] = field(default_factory=dict)  # output path -> source, relative to the root

    def compose(self, path: str) -> str:
        """The page ``path``, composed."""
        owner = self.owners.get(path)
        return page.render_entry(self.context, owner) if owner is not None else index.index_page(self.context, path)


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    config = project.config
    rel = config.relative((out if out is not None else config.pages).resolve())  # (absolute: outside the project)
    return Context(project, statuses, out=None if Path(rel).is_absolute() else rel,
                   verdicts=config.relative(config.verdicts))


def plan_site(ctx: Context) -> Plan:
    """Every page of the site and every figure to copy."""
    owners = {entry_page(entry_id): entry_id for entry_id in ctx.project.record.entries}
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts, status.verdict.claim)
            if target is not None:
                assets[target] = figure
    indexes = index.index_paths(ctx)
    return Plan(ctx, sorted([*owners, *indexes]), owners, sorted(indexes), dict(sorted(assets.items())))


class Shown(NamedTuple):
    """What a render keeps of an entry's page: the size and time of its file as written, the
    ids the page shows (``shows``), what other pages showed of the entry (``seen``) and what
    the index pages did (``listed``)."""

    stat: tuple[int, int]
    shows: tuple[str, ...]
    seen: str
    listed: str


def faces(ctx: Context) -> dict[str, str]:
    """Each entry's face: a hash of what any page may show of it now (its file, its state,
    what its page says of its status, and what every page depends on)."""
    record = ctx.project.record
    places, states = record.places, ctx.states
    shared = _shared(ctx)
    said = _status_said(ctx)
    return {i: _hash(f"{shared}\0{i} {places[i].path} {places[i].digest} {states.get(i)} {said.get(i, '')}")
            for i in record.entries}


def index_key(ctx: Context) -> str:
    """What the index pages show beyond what each entry's ``listed`` says: what every page
    depends on (``faces``), and the pages kept stale."""
    return _hash(f"{_shared(ctx)}\0{sorted(ctx.stale.items())!r}")


def _shared(ctx: Context) -> str:
    """What every page depends on: the output folder, the configuration's relations and kinds
    (another version of recordtool finds an empty store)."""
    config = ctx.project.config
    return repr((ctx.out, ctx.verdicts, sorted(config.relations.items()),
                 [(k.prefix, k.name, k.folder) for k in config.kinds.values()]))


def shows(ctx: Context, entry_id: str) -> tuple[str, ...]:
    """The ids whose face ``entry_id``'s page shows: those it cites or mentions, that cite or
    mention it, and those named by a sentence it quotes from a backlink."""
    graph = ctx.project.graph
    near = {cited for cited, _relation in ctx.project.record.cites(entry_id)}
    near.update(m.target for m in graph.mentions_out.get(entry_id, ()))
    for sources in graph.cited_by.get(entry_id, {}).values():
        near.update(sources)
    findall = ctx.pattern.findall
    for mention in graph.mentions_in.get(entry_id, ()):
        near.add(mention.source)
        near.update(findall(mention.sentence))
    near.discard(entry_id)
    return tuple(sorted(near))


def seen(ctx: Context, entry_id: str) -> str:
    """A hash of what other entries' pages show of ``entry_id``: its title, state, citations
    and mentions (their sentences are quoted as backlinks)."""
    mentions = [(m.target, m.field, m.sentence) for m in ctx.project.graph.mentions_out.get(entry_id, ())]
    return _hash(repr((ctx.title(entry_id), ctx.states.get(entry_id), ctx.project.record.cites(entry_id), mentions)))


def listed(ctx: Context, entry_id: str) -> str:
    """A hash of what the index pages show of ``entry_id``: its row, its state and status, a
    claim's citations (``graph.md``), and its mentions of ids not in the record (``wanted.md``)."""
    record, entries = ctx.project.record, ctx.project.record.entries
    row = ctx.rows[entry_id]
    wanted = [(m.target, m.field, m.sentence) for m in ctx.project.graph.mentions_out.get(entry_id, ())
              if m.target not in entries]
    return _hash(repr((row, ctx.states.get(entry_id), ctx.statuses.get(entry_id),
                       record.cites(entry_id) if row.claim else (), wanted)))


def dirty(ctx: Context, now: dict[str, str], kept: dict[str, tuple[str, Shown]]) -> tuple[set[str], bool]:
    """The entries whose page may show something else than when it was written, given each
    face ``now`` and what was ``kept`` of each page (its face then, its ``Shown``): those whose
    face changed and, where what others show of one changed (``seen``), the pages that show it;
    and whether the index pages may (``listed``)."""
    changed = {i for i, face in now.items() if kept.get(i, ("", None))[0] != face}
    gone = {i for i in kept if i not in now}
    reshown = {i for i in changed if i not in kept or kept[i][1].seen != seen(ctx, i)} | gone
    found = changed | {i for i, (_face, shown) in kept.items()
                       if i in now and not reshown.isdisjoint(shown.shows)}
    graph, record = ctx.project.graph, ctx.project.record
    for entry_id in reshown - gone:
        found.update(cited for cited, _relation in record.cites(entry_id) if cited in now)
        found.update(m.target for m in graph.mentions_out.get(entry_id, ()) if m.target in now)
    indexes = bool(gone) or any(i not in kept or kept[i][1].listed != listed(ctx, i) for i in changed)
    return found, indexes


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _status_said(ctx: Context) -> dict[str, str]:
    """What a claim's page shows of its status beyond its state: its ``repr`` and its figures'
    titles and captions."""
    said: dict[str, str] = {}
    for claim, status in ctx.statuses.items():
        if status.verdict is not None or status.reasons or status.depends:
            figures = [caption(ctx, figure) for figure in status.verdict.figures] if status.verdict else []
            said[claim] = f"{status!r} {figures!r}"
    return said

