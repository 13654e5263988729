"""The rendered site: ``render`` plans the pages (``plan``), writes what changed (``write``),
and, with ``check``, checks every link of the pages written (``linkcheck``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from recordtool.record.project import open_store
from recordtool.render import linkcheck, manifest
from recordtool.render.plan import context, plan_site
from recordtool.render.sitemap import FIGURES, entry_page
from recordtool.render.write import RenderReport, check_output_folder, write_site
from recordtool.verify.status import assess

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.record.project import Project
    from recordtool.verify.verdict import ClaimStatus


def render(project: Project, out: Path | None = None, *, check: bool = False,
           statuses: dict[str, ClaimStatus] | None = None, jobs: int | None = None, fresh: bool = False,
           meter: Meter | None = None) -> RenderReport:
    """Render the record's pages into ``out`` (default: ``[tool.recordtool] pages``); with
    ``check``, report every link or image that does not resolve. ``statuses`` default to
    ``assess``; ``jobs``: processes (None: every core); ``fresh``: trust nothing kept."""
    config = project.config
    target = check_output_folder(config, out if out is not None else config.pages)
    if meter is not None:
        meter.stage("planning the pages")
    ctx = context(project, statuses if statuses is not None else assess(project), target)
    unloaded = unloaded_entries(project)
    written = manifest.read(target)
    ctx.stale = {entry_id: why for entry_id, why in unloaded.items() if entry_page(entry_id) in written}
    # A stale entry's page and figures stay, and while there is one, every tag's and kind's
    # page that would go (its entry may be the one that listed it)
    keep = [rel for rel in written for entry_id in ctx.stale
            if rel == entry_page(entry_id) or rel.startswith(f"{FIGURES}/{entry_id}/")]
    if ctx.stale:
        keep += [rel for rel in written if rel.startswith(("tags/", "kinds/"))]
    plan = plan_site(ctx)
    with contextlib.closing(open_store(config)) as store:
        report = write_site(plan, target, config.root, store, jobs=jobs, fresh=fresh, keep=keep, meter=meter)
    if check:
        checked = meter.stage("checking the links", len(plan.pages)) if meter is not None else None
        report.broken = linkcheck.check_folder(target, list(plan.pages), jobs=jobs, progress=checked)
    report.unloaded, report.stale = unloaded, sorted(entry_page(e) for e in ctx.stale)
    return report


def unloaded_entries(project: Project) -> dict[str, str]:
    """The entries whose file is there but does not load, each with the file's first error
    (their pages are kept: only an entry whose file is gone loses its page)."""
    config, record = project.config, project.record
    folders = tuple(f"{config.relative(config.record / kind.folder)}/" for kind in config.kinds.values())
    files = dict(record.failed)  # id -> its file
    why: dict[str, str] = {}  # path -> its first error
    for problem in project.errors:
        why.setdefault(problem.path, str(problem))
        path = PurePosixPath(problem.path)
        if path.suffix in (".yaml", ".yml") and problem.path.startswith(folders):
            files.setdefault(path.stem, problem.path)
    return {entry_id: why.get(path, path) for entry_id, path in files.items()
            if entry_id not in record.entries and os.path.lexists(config.root / path)}
