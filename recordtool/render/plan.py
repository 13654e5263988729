"""Planning the site: every page with the key of its inputs and a way to compose it.

``plan_site`` gathers what each page depends on into a key (a hash) and a way to compose it;
``render_site`` composes them all into ``{path: bytes}`` (pure: the same project and statuses
give the same bytes, no clock, no disk). ``code_version`` is part of every key: a page is
composed again when recordtool's code, Python or a package that parses the record changes.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool import snapshot

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.render.sitemap import Context
    from recordtool.verify.verdict import ClaimStatus

# The modules that compose pages (escape, page, prose, ...) import pydantic and markdown-it:
# they are imported where pages are composed, so that deciding "nothing changed" stays cheap.

# Distributions whose version can change what a page says (parsing YAML and Markdown).
RENDER_DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")  # they shape pages too


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of recordtool's own code (every module: loading and linking shape pages too),
    its version, Python's and those of the packages that parse and load the record: pages are
    composed again when any of them changes."""
    return snapshot.code_version(RENDER_DEPENDENCIES)


@dataclass
class Plan:
    """Every file of the site: pages with the key of their inputs, and figures to copy."""

    pages: list[str]  # every page, sorted
    key: Callable[[str], str | None]  # page -> the key of its inputs (None: compose every time)
    compose: Callable[[str], str]
    assets: dict[str, str] = field(default_factory=dict)  # output path -> source, relative to the root
    indexes: list[str] = field(default_factory=list)  # the index pages (composed together, on first need)


@dataclass(frozen=True)
class Site:
    """The composed site: pages by path, and figures to copy (output path -> source path)."""

    pages: dict[str, bytes]
    assets: dict[str, str]


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    from recordtool.render.sitemap import Context

    config = project.config
    rel = config.relative((out if out is not None else config.pages).resolve())
    out_rel = None if Path(rel).is_absolute() else rel
    return Context(project, statuses, out=out_rel, verdicts=config.relative(config.verdicts))


def plan_site(ctx: Context) -> Plan:
    """Every page of the site with the key of its inputs; figures to copy."""
    from recordtool.render import index, page
    from recordtool.render.sitemap import entry_page, figure_file

    project = ctx.project
    shared = repr((code_version(), ctx.out, ctx.verdicts, sorted(project.config.relations.items()),
                   [(k.prefix, k.name) for k in project.config.kinds.values()]))
    owners: dict[str, str] = {entry_page(entry_id): entry_id for entry_id in project.record.entries}
    faces: dict[str, str] = {}
    indexes: dict[str, str] = {}
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts, status.verdict.claim)
            if target is not None:
                assets[target] = figure

    def key(path: str) -> str | None:
        owner = owners.get(path)
        return _entry_key(ctx, owner, shared, faces) if owner is not None else None

    def compose(path: str) -> str:
        owner = owners.get(path)
        if owner is not None:
            return page.render_entry(ctx, owner)
        text = indexes.pop(path, None)  # each is composed once: let it go once written
        if text is None:
            indexes.update(index.index_pages(ctx))
            text = indexes.pop(path)
        return text

    paths = index.index_paths(ctx)
    return Plan(sorted([*owners, *paths]), key, compose, dict(sorted(assets.items())), sorted(paths))


def _entry_key(ctx: Context, entry_id: str, shared: str, faces: dict[str, str]) -> str:
    """A hash of everything ``entry_id``'s page shows: the entry, its status (and the titles
    and captions of its figures, kept beside them), what the page
    shows of each neighbour (worked out once per entry, its "face"), and whether each id of a
    quoted sentence is in the record (a link, or "not in the record").

    An entry is known by the bytes of its file (and the file's path): the same bytes give the
    same entry, so its face needs no more to stand for its title, its citations and the
    sentences of it a page quotes. Whether an id the entry cites or mentions is in the record
    needs no more either: it is exactly whether that id is among the neighbours."""
    graph = ctx.project.graph
    entries = ctx.project.record.entries
    status = ctx.statuses.get(entry_id)
    parts = [shared, faces.get(entry_id) or _face(ctx, entry_id, faces), repr(status)]
    if status is not None and status.verdict is not None:  # the titles and captions of its figures
        from recordtool.render.figures import caption

        parts += [repr(caption(ctx, figure)) for figure in status.verdict.figures]
    parts += [faces.get(n) or _face(ctx, n, faces) for n in graph.neighbours(entry_id)]
    findall = ctx.pattern.findall
    for link in graph.backlinks(entry_id):  # the ids in the sentences quoted, linked or not
        for mention in link.mentions:
            parts += [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
    return hashlib.blake2b("\0".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def _face(ctx: Context, entry_id: str, faces: dict[str, str]) -> str:
    """What pages show of an entry, as a string: its id, file, content and state."""
    places = ctx.project.record.places[entry_id]
    face = faces[entry_id] = f"{entry_id} {places.path} {places.digest} {ctx.state(entry_id)}"
    return face


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)
