"""Every page of a site composed in memory, for tests that compare pages without writing them."""

from __future__ import annotations

from pathlib import Path

from recordtool.record.project import Project
from recordtool.render.plan import context, plan_site
from recordtool.verify.verdict import ClaimStatus


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> dict[str, bytes]:
    """Every page of the site, composed: ``{path: bytes}``."""
    plan = plan_site(context(project, statuses, out))
    return {p: plan.compose(p).encode("utf-8") for p in plan.pages}
