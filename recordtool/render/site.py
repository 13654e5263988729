"""The rendered site: ``render`` plans the pages (``plan``), writes what changed (``write``,
keeping the ``manifest``), and keeps the ``snapshot`` that lets the next render say "nothing
changed" without opening the project.

The manifest's keys say which pages need composing again; they leave out recordtool's own
code, so that the manifest committed beside the pages does not change with recordtool's
version. Which code made them is kept locally instead, in the cache folder
(``<cache>/pages/<hash of the output folder>``, ``keys_code``): removed when a render starts,
written when it has finished. A render whose code is not the one recorded (a new version, a
fresh clone, a render that was interrupted) composes every page and rewrites only those whose
bytes changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool.atomic import write_atomic
from recordtool.render import snapshot
from recordtool.render.plan import code_version, context, plan_site
from recordtool.render.write import check_output_folder, write_site

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.render.linkcheck import BrokenLink
    from recordtool.verify.verdict import ClaimStatus


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
    errors: int = 0  # problems of the record (entries that could not be loaded)
    refused: list[str] = field(default_factory=list)  # figures not copied, and why
    errors_said: list[str] = field(default_factory=list)  # what is said of the errors (``Project.errors_said``)

    def summary(self, where: str) -> str:
        return (f"rendered {self.entries} entr{'y' if self.entries == 1 else 'ies'} into {where}: "
                f"{len(self.written)} written, {self.unchanged} unchanged, {len(self.removed)} removed")


def render(project: Project, out: Path | None = None, *, check: bool = False,
           statuses: dict[str, ClaimStatus] | None = None, inputs: snapshot.Inputs | None = None,
           jobs: int | None = None, meter: Meter | None = None) -> RenderReport:
    """Render the record's pages into ``out`` (default: ``[tool.recordtool] pages``); with
    ``check``, parse the written pages and report every link or image that does not resolve.

    ``inputs``: the snapshot of the inputs taken before ``project`` was opened
    (``snapshot_inputs``); when given (and ``statuses`` is not), the snapshot is kept for
    ``unchanged``. Without it, any snapshot in the output folder is removed. ``jobs``: how many
    processes may compose and write pages (None: every core). ``meter``:
    the command's progress line (``recordtool.meter``), told what it is doing.
    """
    return _render(project, out, check, statuses, inputs, jobs, meter)


def _render(project: Project, out: Path | None, check: bool, statuses: dict[str, ClaimStatus] | None,
            inputs: snapshot.Inputs | None, jobs: int | None, meter: Meter | None) -> RenderReport:
    config = project.config
    folder = out if out is not None else config.pages
    target = check_output_folder(config, folder)
    if meter is not None:
        meter.stage("planning the pages")
    own_statuses = statuses is None
    if statuses is None:
        from recordtool.verify.status import assess

        statuses = assess(project)
    base = os.path.realpath(target)
    mine = inputs is not None and inputs.out == base
    kept = inputs.last() if inputs is not None and mine else snapshot.read_snapshot(base)
    last = inputs.outputs() if inputs is not None and mine else snapshot.outputs(kept)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(base, snapshot.SNAPSHOT))  # from now on, it no longer holds
    trust = keys_code(config, base) == code_version()
    forget_keys_code(config, base)  # until this render has finished, its keys are not trusted
    # (imported here: figures imports pydantic, which a render with nothing to do never does)
    from recordtool.render import figures
    from recordtool.verify.context import SIDECAR

    ctx = context(project, statuses, target)
    # The figures the verdicts name and their sidecars, as the last render found them: a copy
    # still as written is not read again, nor a title and caption (kept in its snapshot).
    named = figures.named(ctx)
    left = snapshot.as_left(inputs, config.root, [*named, *(f + SIDECAR for f in named)]) \
        if inputs is not None and mine else set()
    if inputs is not None and left:
        figures.kept(ctx, snapshot.kept_captions(inputs, named, left))
    plan = plan_site(ctx)
    if trust and plan.pages:
        plan.key(plan.pages[0])  # (the first key asked for works out every page's: ``plan_site``)
    report = write_site(plan, target, config.root, last, jobs=jobs, trust_keys=trust,
                        sources_as_left=left, meter=meter)
    remember_keys_code(config, base)
    broken = None
    if check:
        from recordtool.render import linkcheck

        checked = meter.stage("checking the links", len(plan.pages)) if meter is not None else None
        broken = linkcheck.check_folder(target, list(plan.pages), jobs=jobs, progress=checked)
    result = RenderReport(target, len(project.record.entries), len(plan.pages), report.written,
                          report.unchanged, report.removed, report.missing, broken, len(project.errors),
                          report.refused, project.errors_said())
    if inputs is not None and own_statuses and inputs.out == os.path.realpath(target):
        summary = {"entries": result.entries, "pages": result.pages, "unchanged": len(report.files),
                   "missing": result.missing, "errors": result.errors, "refused": result.refused,
                   "errors_said": result.errors_said}
        snapshot.keep(project, inputs, report, summary, sorted(set(plan.assets.values())), figures.read(ctx))
    return result



def _keys_code_file(config: Config, base: str) -> Path:
    name = hashlib.blake2b(base.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()
    return config.cache / "pages" / name


def keys_code(config: Config, base: str) -> str | None:
    """The code version that made the manifest's keys in the output folder ``base`` (resolved),
    as the last finished render recorded it; None when unknown."""
    try:
        text = _keys_code_file(config, base).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    folder, _, code = text.partition("\n")
    return code.strip() if folder == base else None


def forget_keys_code(config: Config, base: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(_keys_code_file(config, base))


def remember_keys_code(config: Config, base: str) -> None:
    """Record that this code made the keys of ``base``'s manifest; a cache folder that cannot
    be written costs the next render its shortcut, never a wrong page."""
    path = _keys_code_file(config, base)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, f"{base}\n{code_version()}\n".encode("utf-8", "surrogateescape"))


def unchanged(inputs: snapshot.Inputs) -> RenderReport | None:
    """What ``render`` would report when the snapshot of the last render still holds (every
    input and every file written as it was, the same code and versions): nothing to write.
    None when anything differs; then render."""
    info = snapshot.last_report(inputs)
    if info is None:
        return None
    return RenderReport(Path(inputs.out), int(info.get("entries", 0)), int(info.get("pages", 0)), [],
                        int(info.get("unchanged", 0)), [], list(info.get("missing", [])), None,
                        int(info.get("errors", 0)), list(info.get("refused", [])),
                        _lines(info.get("errors_said")))


def _lines(value: object) -> list[str]:
    return [line for line in value if isinstance(line, str)] if isinstance(value, list) else []
