"""``--watch``: run ``verify --try`` or ``render`` again each time a file it reads is saved.

One watchfiles watcher for the whole session, started before the first run, so that a file
saved during a run starts the next one as soon as it ends. Each run is the command itself,
called again in this process (``verify`` runs each check in a child process, so a changed
module is imported afresh). Ctrl-C ends the watch as it ends the command (exit 130).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import click
import watchfiles

import recordtool.cli.common as common
from recordtool.record.config import Config
from recordtool.safetext import some
from recordtool.verify.fingerprint import Scanner, claim_fingerprint, covered_paths

# The watcher yields an empty set after this long without events: its first one says that it
# runs, so the first run starts only then and a file saved from then on is seen.
READY_MS = 200


def verify(ctx: click.Context, root: Path | None, ids: tuple[str, ...]) -> NoReturn:
    """Watch the files the fingerprint of the claims ``ids`` (all when none) covers: their
    entries and the check modules they run or import, found again after each run."""
    config = common.config_of(root)
    files: set[Path] = set()

    def refresh() -> str:
        project = common.open_record(root)
        scanner, wanted = Scanner(config), {i.upper() for i in ids}
        for claim in project.record.claims():
            if claim.id in wanted or not wanted:
                fingerprint, _ = claim_fingerprint(claim, scanner)
                place = project.record.places[claim.id].path
                files.update(config.root / rel for rel in covered_paths(place, fingerprint))
        return f"{len(files)} file{'s' if len(files) != 1 else ''}"

    checks = config.root.joinpath(*config.checks.split("."))
    _loop(ctx, config, [config.record, checks], lambda path: path in files, refresh)


def render(ctx: click.Context, root: Path | None, output: Path | None) -> NoReturn:
    """Watch the record's folder and the verdicts (entries, verdicts and their figures), but
    not what recordtool writes there itself (the pages, the site's configuration)."""
    config = common.config_of(root)
    own = [p for p in config.written_here() if p != config.verdicts]
    own += [output.resolve()] if output is not None else []

    def wanted(path: Path) -> bool:
        return not path.name.startswith(".") and not any(o == path or o in path.parents for o in own)

    _loop(ctx, config, [config.record, config.verdicts], wanted, lambda: config.relative(config.record) + "/")


def _loop(ctx: click.Context, config: Config, folders: list[Path], wanted: Callable[[Path], bool],
          refresh: Callable[[], str]) -> NoReturn:
    """Run the command of ``ctx`` (without --watch), then again after each change to a file
    that ``wanted`` keeps under ``folders``, until a run ends interrupted (130, 143)."""
    default = watchfiles.DefaultFilter()
    inside = [f for f in dict.fromkeys(folders) if f.is_dir() and not any(o in f.parents for o in folders)]
    events = watchfiles.watch(*inside, rust_timeout=READY_MS, yield_on_timeout=True,
                              watch_filter=lambda change, path: default(change, path) and wanted(Path(path)))
    with contextlib.closing(events):
        next(events)  # the watcher is running
        while True:
            try:
                ctx.invoke(ctx.command, **{**ctx.params, "watch": False})
            except SystemExit as end:
                if end.code in (130, 143):
                    raise
            common.echo(f"watching {refresh()} for changes; Ctrl-C to stop", err=True)
            changed = next(c for c in events if c)
            names = sorted({config.relative(path) for _, path in changed})
            common.echo(f"changed: {some(names, 5)}; running again", err=True)
