"""The rendered site: ``render`` plans the pages (``plan``), writes what changed (``write``),
and, with ``check``, checks every link of the pages written (``linkcheck``).

What a render keeps between runs (the key each page was written under) is in the project's
store (``recordtool.store``), in the cache folder: a fresh clone, or a cache deleted, costs
one render that composes every page and still writes only those whose bytes changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import recordtool
from recordtool.render import linkcheck
from recordtool.render.plan import context, plan_site
from recordtool.render.write import check_output_folder, write_site
from recordtool.store import Store
from recordtool.verify.status import assess

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.record.project import Project
    from recordtool.render.linkcheck import BrokenLink
    from recordtool.verify.verdict import ClaimStatus


@dataclass(slots=True)
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
    errors: int = 0  # problems of the record (entries that could not be loaded)
    refused: list[str] = field(default_factory=list)  # figures not copied, and why

    def summary(self, where: str) -> str:
        return (f"rendered {self.entries} entr{'y' if self.entries == 1 else 'ies'} into {where}: "
                f"{len(self.written)} written, {self.unchanged} unchanged, {len(self.removed)} removed")


def render(project: Project, out: Path | None = None, *, check: bool = False,
           statuses: dict[str, ClaimStatus] | None = None, jobs: int | None = None, fresh: bool = False,
           meter: Meter | None = None) -> RenderReport:
    """Render the record's pages into ``out`` (default: ``[tool.recordtool] pages``); with
    ``check``, parse the written pages and report every link or image that does not resolve.
    ``statuses``: each claim's status (default: ``assess``); ``jobs``: how many processes may
    compose pages and check links (None: every core); ``fresh``: compose every page, trusting
    nothing kept; ``meter``: the command's progress line (``recordtool.meter``)."""
    config = project.config
    target = check_output_folder(config, out if out is not None else config.pages)
    if meter is not None:
        meter.stage("planning the pages")
    plan = plan_site(context(project, statuses if statuses is not None else assess(project), target))
    store = Store(config.cache, recordtool.__version__)
    try:
        report = write_site(plan, target, config.root, store, jobs=jobs, fresh=fresh, meter=meter)
    finally:
        store.close()
    broken = None
    if check:
        checked = meter.stage("checking the links", len(plan.pages)) if meter is not None else None
        broken = linkcheck.check_folder(target, list(plan.pages), jobs=jobs, progress=checked)
    return RenderReport(target, len(project.record.entries), len(plan.pages), report.written, report.unchanged,
                        report.removed, report.missing, broken, len(project.errors), report.refused)
