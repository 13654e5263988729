"""Planning the site: every page, which pages may have changed, and how to compose them.

``plan_site`` lists the pages (one per entry, the index pages) and the figures to copy;
``Plan.compose`` composes one page (pure: the same project and statuses give the same bytes,
no clock, no disk but the figures' captions). Which entries' pages to compose again, as mkdocs
rebuilds only the pages whose files are modified: the entries whose face changed (``faces``:
their file, state or status), and the pages that show one of them (``shows``, kept from the
render that wrote each page: ``dirty``). The index pages list the whole record: they are
composed on every render, which costs a small share of composing the entries' pages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from recordtool.render import index, page, sitemap
from recordtool.render.figures import caption
from recordtool.render.sitemap import Context, entry_page, figure_file

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.verify.verdict import ClaimStatus

def code_version() -> str:
    """``sitemap.code_version``: in every page's key."""
    return sitemap.code_version()


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


@dataclass(frozen=True, slots=True)
class Site:
    """The composed site: pages by path, and figures to copy (output path -> source path)."""

    pages: dict[str, bytes]
    assets: dict[str, str]


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    config = project.config
    return Context(project, statuses, out=out_name(config, out), verdicts=config.relative(config.verdicts))


def out_name(config: Config, out: Path | None) -> str | None:
    """The output folder ``out`` (None: the pages folder) as a page names it (``Context.out``):
    relative to the project's root; None when it is outside the project."""
    rel = config.relative((out if out is not None else config.pages).resolve())
    return None if Path(rel).is_absolute() else rel


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
    """What a render keeps of an entry's page: the size and time of its file as written, and
    the ids the page shows (``shows``). A NamedTuple: read back from the store for every page."""

    stat: tuple[int, int]
    shows: tuple[str, ...]


def faces(ctx: Context) -> dict[str, str]:
    """Each entry's face: a hash of what any page may show of it, as it is now. That is its id,
    its file's path and hash (which fix its title, prose, citations and mentions), its state and
    what its page says of its status (its ``repr``, and the titles and captions of its
    figures); and what every page depends on: the output folder, the configuration's relations
    and kinds, and recordtool's code. An entry's page is composed again when its entry's face
    or the face of an id it shows changes (``dirty``)."""
    project = ctx.project
    record, config = project.record, project.config
    places, states = record.places, ctx.states
    shared = repr((code_version(), ctx.out, ctx.verdicts, sorted(config.relations.items()),
                   [(k.prefix, k.name, k.folder) for k in config.kinds.values()]))
    said = _status_said(ctx)
    return {i: hashlib.blake2b(f"{shared}\0{i} {places[i].path} {places[i].digest} {states.get(i)} {said.get(i, '')}"
                               .encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            for i in record.entries}


def shows(ctx: Context, entry_id: str) -> tuple[str, ...]:
    """The ids whose face (``faces``) ``entry_id``'s page shows, whether in the record or not:
    each entry it cites or mentions, or that cites or mentions it, and each id named by a
    sentence it quotes from a backlink (linked or not, as the id is in the record or not)."""
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


def dirty(ctx: Context, now: dict[str, str], kept: dict[str, tuple[str, Shown]]) -> set[str]:
    """The entries whose page may show something else than when it was written: given each
    entry's face ``now`` and, for each entry's page kept, its entry's face then and what it
    showed then. That is each entry whose face changed (or that is new), each page that showed
    an id whose face changed (an entry edited, added or deleted), and each entry that a changed
    entry cites or mentions now (the page shows it as a backlink)."""
    changed = {i for i, face in now.items() if kept.get(i, ("", None))[0] != face}
    changed.update(i for i in kept if i not in now)
    found = {i for i in changed if i in now}
    for entry_id, (_face, shown) in kept.items():
        if entry_id in now and not changed.isdisjoint(shown.shows):
            found.add(entry_id)
    graph, record = ctx.project.graph, ctx.project.record
    for entry_id in changed & now.keys():
        found.update(cited for cited, _relation in record.cites(entry_id) if cited in now)
        found.update(m.target for m in graph.mentions_out.get(entry_id, ()) if m.target in now)
    return found


def _status_said(ctx: Context) -> dict[str, str]:
    """What a claim's page shows of its status beyond its state: its ``repr`` and the titles
    and captions of its figures (read from their sidecars), for the claims with a verdict,
    reasons or dependencies."""
    said: dict[str, str] = {}
    for claim, status in ctx.statuses.items():
        if status.verdict is not None or status.reasons or status.depends:
            figures = [caption(ctx, figure) for figure in status.verdict.figures] if status.verdict else []
            said[claim] = f"{status!r} {figures!r}"
    return said


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)
