"""The rendered site: every page composed (pure), then written incrementally and atomically.

``plan_site`` gathers what each page depends on into a key (a hash) and a way to compose it;
``render_site`` composes them all into ``{path: bytes}`` (pure: the same project and statuses
give the same bytes, no clock, no disk); ``write_site`` writes what changed into the output
folder, copies the checks' figures, and removes the pages it wrote before that are gone now.

A manifest (``.recordtool-manifest.json`` in the output folder) lists every file recordtool
wrote, with its key: an unchanged page is not even composed again, and only files the
manifest lists are ever removed. Nothing is written outside the output folder, which may not
be the project root or one of the record's entry folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool import escape, evidence, index, linkcheck, mermaid, page, prose, sitemap
from recordtool.atomic import write_atomic
from recordtool.linkcheck import BrokenLink
from recordtool.sitemap import MANIFEST, Context, entry_page, figure_file

if TYPE_CHECKING:
    from recordtool.config import Config
    from recordtool.project import Project
    from recordtool.verdict import ClaimStatus

MANIFEST_FORMAT = 1


class RenderError(Exception):
    """The site cannot be written where asked; the message says why."""


def _code_version() -> str:
    """A hash of the modules that compose pages: pages are composed again when they change."""
    digest = hashlib.blake2b(digest_size=8)
    for module in (escape, evidence, index, mermaid, page, prose, sitemap):
        path = getattr(module, "__file__", None)
        if path:
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


_CODE = _code_version()


@dataclass
class Plan:
    """Every file of the site: pages with the key of their inputs, and figures to copy."""

    keys: dict[str, str | None]  # page -> key (None: compose every time)
    compose: Callable[[str], str]
    assets: dict[str, str] = field(default_factory=dict)  # output path -> source, relative to the root


@dataclass(frozen=True)
class Site:
    """The composed site: pages by path, and figures to copy (output path -> source path)."""

    pages: dict[str, bytes]
    assets: dict[str, str]


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # figures named by a verdict but not found


@dataclass
class RenderReport:
    """What `recordtool render` did."""

    out: Path
    entries: int
    pages: int
    written: list[str]
    unchanged: int
    removed: list[str]
    missing: list[str]
    broken: list[BrokenLink] | None = None  # None when links were not checked

    def summary(self, where: str) -> str:
        return (f"rendered {self.entries} entr{'y' if self.entries == 1 else 'ies'} into {where}: "
                f"{len(self.written)} written, {self.unchanged} unchanged, {len(self.removed)} removed")


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    config = project.config
    rel = config.relative(out if out is not None else config.pages)
    out_rel = None if Path(rel).is_absolute() else rel
    return Context(project, statuses, out=out_rel, verdicts=config.relative(config.verdicts))


def plan_site(ctx: Context) -> Plan:
    """Every page of the site with the key of its inputs; figures to copy."""
    project = ctx.project
    shared = repr((_CODE, ctx.out, ctx.verdicts, sorted(project.config.relations.items()),
                   [(k.prefix, k.name) for k in project.config.kinds.values()]))
    keys: dict[str, str | None] = {}
    owners: dict[str, str] = {}
    ids = list(project.record.entries)
    for entry_id in ids:
        path = entry_page(entry_id)
        keys[path] = _entry_key(ctx, entry_id, shared)
        owners[path] = entry_id
    indexes = index.index_pages(ctx)
    for path in indexes:
        keys[path] = None
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts)
            if target is not None:
                assets[target] = figure

    def compose(path: str) -> str:
        owner = owners.get(path)
        if owner is not None:
            return page.render_entry(ctx, owner)
        return indexes[path]

    return Plan(dict(sorted(keys.items())), compose, dict(sorted(assets.items())))


def _entry_key(ctx: Context, entry_id: str, shared: str) -> str:
    project = ctx.project
    graph = project.graph
    entries = project.record.entries
    entry = entries[entry_id]
    neighbours = graph.neighbours(entry_id)
    parts: list[Any] = [
        shared,
        entry.model_dump_json(),
        project.record.places[entry_id].path if entry_id in project.record.places else "",
        repr(ctx.statuses.get(entry_id)),
        [(n, ctx.title(n), ctx.state(n), [(c.id, c.as_) for c in entries[n].cites]) for n in neighbours],
        [(m.target, m.target in entries) for m in graph.mentions_out.get(entry_id, ())],
        repr(graph.backlinks(entry_id)),
        [(c.id, c.id in entries) for c in entry.cites],
    ]
    return hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=16).hexdigest()


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.keys}, plan.assets)


# Writing ------------------------------------------------------------------------------------


def check_output_folder(config: Config, out: Path) -> Path:
    """``out`` resolved, or RenderError when pages must not go there."""
    target = out.resolve()
    root = config.root.resolve()
    if target == root or root.is_relative_to(target):
        raise RenderError(f"{out} is the project folder (or above it); render into a folder of its own, "
                          "e.g. record/pages")
    protected = [config.record, config.verdicts, config.root / config.checks,
                 *(config.record / k.folder for k in config.kinds.values())]
    for folder in protected:
        folder = folder.resolve()
        if target == folder or (folder != config.record.resolve() and target.is_relative_to(folder)):
            raise RenderError(f"{out} is {config.relative(folder)}/, which holds the record's own files; "
                              "render into a folder of its own, e.g. record/pages")
    if target.exists() and not target.is_dir():
        raise RenderError(f"{out} is a file, not a folder")
    return target


def _inside(base: str, rel: str) -> str:
    """``base/rel`` for a safe relative path ``rel``; RenderError for one that would leave."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\0" in rel:
        raise RenderError(f"refusing to write '{rel}': not a plain path inside the output folder")
    path = os.path.join(base, *parts)
    real = os.path.realpath(os.path.dirname(path))
    if real != base and not real.startswith(base + os.sep):
        raise RenderError(f"refusing to write '{rel}': it leads outside the output folder (a link?)")
    return path


def read_manifest(out: Path) -> dict[str, dict[str, Any]]:
    """The files recordtool wrote into ``out`` last time (path -> key, size); {} if none."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {str(k): v for k, v in files.items() if isinstance(v, dict)}


def write_site(plan: Plan, out: Path, root: Path) -> WriteReport:
    """Write the pages of ``plan`` into ``out`` (already checked): compose and write only what
    changed, copy figures, remove what recordtool wrote before and is gone, keep a manifest."""
    report = WriteReport()
    out.mkdir(parents=True, exist_ok=True)
    base = os.path.realpath(out)
    old = read_manifest(out)
    new: dict[str, dict[str, Any]] = {}
    todo: list[str] = []
    for rel, key in plan.keys.items():
        path = os.path.join(base, *rel.split("/"))
        before = old.get(rel)
        if key is not None and before is not None and before.get("key") == key:
            try:
                size = os.stat(path).st_size
            except OSError:
                size = -1
            if size == before.get("size"):
                new[rel] = before
                report.unchanged += 1
                continue
        todo.append(rel)
    for rel in todo:
        data = plan.compose(rel).encode("utf-8")
        new[rel] = {"key": plan.keys[rel], "size": len(data)}
        _put(base, rel, data, report)
    for rel, source in plan.assets.items():
        try:
            data = (root / source).read_bytes()
        except OSError:
            report.missing.append(source)
            continue
        new[rel] = {"key": None, "size": len(data)}
        _put(base, rel, data, report)
    for rel in sorted(set(old) - set(new)):
        try:
            path = _inside(base, rel)
        except RenderError:
            continue  # a damaged manifest never makes us delete outside the folder
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
            report.removed.append(rel)
            _prune(base, os.path.dirname(path))
    manifest = json.dumps({"format": MANIFEST_FORMAT, "files": new}, sort_keys=True, indent=1) + "\n"
    if new != old or not os.path.exists(os.path.join(base, MANIFEST)):
        write_atomic(Path(base) / MANIFEST, manifest)
    return report


def _put(base: str, rel: str, data: bytes, report: WriteReport) -> None:
    path = _inside(base, rel)
    try:
        with open(path, "rb") as handle:
            same = handle.read() == data
    except OSError:
        same = False
    if same:
        report.unchanged += 1
        return
    _replace(path, data)
    report.written.append(rel)


def _replace(path: str, data: bytes) -> None:
    """Write ``path`` atomically: a temporary file in the same folder, renamed over it.

    Unlike ``recordtool.atomic.write_atomic`` it does not fsync each file: pages are derived
    output, rewritten by the next render, and an fsync per page would cost seconds on a large
    record. A reader still sees the old page or the new one, never half of either.
    """
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _prune(base: str, folder: str) -> None:
    """Remove ``folder`` and its parents up to ``base`` while they are empty."""
    while folder != base and folder.startswith(base + os.sep):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)


def render(project: Project, out: Path | None = None, *, check: bool = False,
           statuses: dict[str, ClaimStatus] | None = None) -> RenderReport:
    """Render the record's pages into ``out`` (default: ``[tool.recordtool] pages``); with
    ``check``, parse the written pages and report every link or image that does not resolve."""
    config = project.config
    folder = out if out is not None else config.pages
    target = check_output_folder(config, folder)
    if statuses is None:
        from recordtool.status import assess

        statuses = assess(project)
    plan = plan_site(context(project, statuses, target))
    report = write_site(plan, target, config.root)
    broken = None
    if check:
        broken = linkcheck.check_folder(target, [p for p in plan.keys])
    return RenderReport(target, len(project.record.entries), len(plan.keys), report.written,
                        report.unchanged, report.removed, report.missing, broken)
