"""Planning the site: every page with the key of its inputs and a way to compose it.

``plan_site`` gathers what each page depends on into a key (a hash) and a way to compose it;
``render_site`` composes them all into ``{path: bytes}`` (pure: the same project and statuses
give the same bytes, no clock, no disk). ``code_version`` is not part of a key, so that the
manifest, which is committed with the pages, is the same whatever recordtool's version: a
render trusts the keys of the last one only when that was made by the same ``code_version``
(kept locally, in the cache folder: ``recordtool.render.site``), and composes every page
otherwise (and rewrites only those whose bytes changed).
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
    from recordtool.render.sitemap import GRAPH, INDEX, WANTED, entry_page, figure_file

    project = ctx.project
    # recordtool's code is not in the keys, which the committed manifest keeps (a new version
    # would otherwise change every line of it): a render trusts the keys only when the last
    # one was made by the same code (``site.keys_code``), and composes every page otherwise.
    shared = repr((ctx.out, ctx.verdicts, sorted(project.config.relations.items()),
                   [(k.prefix, k.name) for k in project.config.kinds.values()]))
    owners: dict[str, str] = {entry_page(entry_id): entry_id for entry_id in project.record.entries}
    keys: dict[str, str | None] = {}  # worked out for every page at once, on first need
    indexes: dict[str, str] = {}
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts, status.verdict.claim)
            if target is not None:
                assets[target] = figure
    paths = index.index_paths(ctx)

    def key(path: str) -> str | None:
        if not keys:
            keys.update((entry_page(entry_id), k) for entry_id, k in entry_keys(ctx, shared).items())
            groups = index_keys(ctx, shared)
            keys.update((p, groups[index_group(p)]) for p in paths)
        return keys.get(path)

    def compose(path: str) -> str:
        owner = owners.get(path)
        if owner is not None:
            return page.render_entry(ctx, owner)
        text = indexes.pop(path, None)  # each is composed once: let it go once written
        if text is None:  # the pages of its group, composed together (they share their tallies)
            group = index_group(path)
            made = {INDEX: index.dashboard, WANTED: index.wanted, GRAPH: index.graph_page}
            if group in made:
                indexes[path] = made[group](ctx)
            else:
                indexes.update(index.kind_pages(ctx) if group == "kinds" else index.tag_pages(ctx)
                               if group == "tags" else index.index_pages(ctx))
            text = indexes.pop(path)
        return text

    return Plan(sorted([*owners, *paths]), key, compose, dict(sorted(assets.items())), sorted(paths))


def _hash(parts: list[str]) -> str:
    return hashlib.blake2b("\0".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def entry_keys(ctx: Context, shared: str) -> dict[str, str]:
    """The key of every entry's page: a hash of everything it shows. That is the entry, its
    status (and the titles and captions of its figures, kept beside them), what the page shows
    of each neighbour (an entry it cites or mentions, or that cites or mentions it), and
    whether each id of a sentence quoted from a backlink is in the record (a link, or "not in
    the record").

    An entry is known by its "face": its id, the bytes of its file (and the file's path) and
    its state. The same bytes give the same entry, so a face stands for its title, its
    citations and the sentences of it a page quotes. Whether an id the entry cites or mentions
    is in the record needs no more either: it is exactly whether that id is among the
    neighbours. Worked out for all pages at once, from the graph's indexes."""
    from recordtool.render.figures import caption

    record, graph = ctx.project.record, ctx.project.graph
    entries = record.entries
    states = ctx.states
    faces = {i: f"{i} {places.path} {places.digest} {states.get(i)}" for i, places in record.places.items()}
    # The neighbours' faces enter a key as the sum of their hashes (a set has no order to keep,
    # and a sum of 128-bit hashes changes with any one of them): no sorting, no joining.
    sums = {i: int.from_bytes(hashlib.blake2b(face.encode("utf-8"), digest_size=16).digest(), "big")
            for i, face in faces.items()}
    linked: dict[str, set[str]] = {i: set() for i in entries}
    for target, by_relation in graph.cited_by.items():
        for sources in by_relation.values():
            for source in sources:
                linked[target].add(source)
                linked[source].add(target)
    quoted: dict[str, list[str]] = {}
    findall = ctx.pattern.findall
    found: dict[str, list[str]] = {}  # sentence -> its ids, each marked when not in the record
    for target, mentions in graph.mentions_in.items():
        ids = quoted[target] = []
        for mention in mentions:
            linked[target].add(mention.source)
            linked[mention.source].add(target)
            marked = found.get(mention.sentence)
            if marked is None:
                marked = found[mention.sentence] = [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
            ids += marked
    keys = {}
    for entry_id in entries:
        status = ctx.statuses.get(entry_id)
        parts = [shared, faces[entry_id], repr(status)]
        if status is not None and status.verdict is not None:  # the titles and captions of its figures
            parts.append(repr([caption(ctx, figure) for figure in status.verdict.figures]))
        near = linked[entry_id]
        near.discard(entry_id)
        parts.append(f"{len(near)} {sum(map(sums.__getitem__, near)) % (1 << 128):x}")
        parts += quoted.get(entry_id, ())
        keys[entry_id] = _hash(parts)
    return keys


def index_group(path: str) -> str:
    """Which index pages ``path`` is composed with, and shares a key with: the dashboard, the
    wanted page and the graph each alone, the kind pages together, the tag pages together."""
    from recordtool.render.sitemap import GRAPH, INDEX, WANTED

    if path.startswith(("kinds/", "tags/")):
        return path.split("/", 1)[0]
    return path if path in (INDEX, WANTED, GRAPH) else "other"


def index_keys(ctx: Context, shared: str) -> dict[str, str]:
    """The key of each group of index pages (``index_group``): a hash of what they show of
    every entry (id, kind, status, title or statement, tags, citations, dates, version, state)
    and every claim's status; for the dashboard, how many ids are mentioned but not in the
    record; for the wanted page, each of them with where and how. An edit of an entry's body or
    checks leaves them as they were, unless it changes what the wanted page quotes."""
    from recordtool.render.sitemap import GRAPH, INDEX, WANTED

    record, graph = ctx.project.record, ctx.project.graph
    states = ctx.states
    parts = [shared]
    for entry_id, entry in record.entries.items():
        cites = [f"{c.id}{c.as_!r}" for c in entry.cites]
        parts.append(f"{entry_id} {entry.kind!r} {entry.status!r} {entry.status_note!r} {entry.title!r} "
                     f"{getattr(entry, 'statement', None)!r} {entry.tags!r} {cites!r} {entry.version} "
                     f"{entry.created} {entry.updated} {states.get(entry_id)}")
    parts += [repr(status) for status in ctx.statuses.values()]
    listed = _hash(parts)
    wanted = [repr((target, [(m.source, m.field, m.line, m.sentence) for m in mentions]))
              for target, mentions in graph.dangling.items()]
    return {"kinds": _hash([listed, "kinds"]), "tags": _hash([listed, "tags"]), GRAPH: _hash([listed, GRAPH]),
            INDEX: _hash([listed, INDEX, str(len(graph.dangling))]), WANTED: _hash([listed, WANTED, *wanted]),
            "other": _hash([listed, "other", *wanted])}


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)
