"""Planning the site: every page, the key of what it shows, and how to compose it.

``plan_site`` lists the pages (one per entry, the index pages) and the figures to copy;
``Plan.compose`` composes one page (pure: the same project and statuses give the same bytes,
no clock, no disk but the figures' captions). ``page_keys`` gives each entry's page a key, a
hash of everything the page shows: a render composes again only the pages whose key is not the
one it kept for the file as written (``recordtool.render.write``), as mkdocs rebuilds only the
pages whose files are modified. The index pages list the whole record: they are composed on
every render, which costs a small share of composing the entries' pages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool import snapshot
from recordtool.render import index, page
from recordtool.render.figures import caption
from recordtool.render.sitemap import Context, entry_page, figure_file

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.verify.verdict import ClaimStatus

# Distributions whose version can change what a page says (parsing YAML and Markdown).
RENDER_DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")


def code_version() -> str:
    """A hash of recordtool's own code, its version, Python's and those of the packages that
    parse and load the record: part of every page's key, so that new code composes every page
    again (and rewrites only those whose bytes changed)."""
    return snapshot.code_version(RENDER_DEPENDENCIES)


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


def page_keys(plan: Plan) -> dict[str, str]:
    """The key of each entry's page: a hash of everything the page shows.

    That is the entry itself (its id, its file's path and hash, its state), what the page says
    of its status (its ``repr``, and the titles and captions of its figures), each neighbour
    (an entry it cites or mentions, or that cites or mentions it: by its id, file and state,
    which fix its title, citations and mentions; an id not in the record by its id alone), and
    whether each id named by a sentence quoted from a backlink is in the record. The output
    folder, the configuration's relations and kinds, and recordtool's code are in every key."""
    ctx = plan.context
    project = ctx.project
    record, graph, config = project.record, project.graph, project.config
    entries, places, states = record.entries, record.places, ctx.states
    shared = repr((code_version(), ctx.out, ctx.verdicts, sorted(config.relations.items()),
                   [(k.prefix, k.name, k.folder) for k in config.kinds.values()]))
    faces = {i: f"{i} {where.path} {where.digest} {states.get(i)}" for i, where in places.items() if i in entries}
    said = _status_said(ctx)
    findall = ctx.pattern.findall
    keys: dict[str, str] = {}
    for rel, entry_id in plan.owners.items():
        near = {cited for cited, _relation in record.cites(entry_id)}
        near.update(m.target for m in graph.mentions_out.get(entry_id, ()))
        for sources in graph.cited_by.get(entry_id, {}).values():
            near.update(sources)
        parts = [shared, faces[entry_id], said.get(entry_id, "")]
        for mention in graph.mentions_in.get(entry_id, ()):
            near.add(mention.source)
            parts += [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
        parts += sorted(faces.get(i, f"!{i}") for i in near)
        keys[rel] = _hash(parts)
    return keys


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


def _hash(parts: list[str]) -> str:
    hasher = hashlib.blake2b(digest_size=16)
    for part in parts:
        hasher.update(part.encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)
