"""A project: its configuration, record and graph, opened in one call for the commands."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from recordtool.record.cache import EntryCache, KeptScans, cache_key, open_cache
from recordtool.record.config import Config, ConfigError, find_root, load_config
from recordtool.record.graph import Compose, Composed, Graph, build_graph, mentions_of, scanner
from recordtool.record.load import Record, load_record
from recordtool.record.problems import Problem
from recordtool.record.static import KeptStatic, static_problems
from recordtool.snapshot import Stats

if TYPE_CHECKING:
    from recordtool.meter import Meter


@dataclass
class Project:
    config: Config
    record: Record
    graph: Graph
    problems: list[Problem]
    cached: bool = False  # opened with the entry cache: later stages may keep what they work out too
    # What opening found to keep in the entry cache and has not written yet (``open_project``'s
    # ``keep_later``), in steps: written by ``keep_cache``, or a step at a time meanwhile.
    unkept: Iterator[None] = field(default_factory=lambda: iter(()))

    def keep_cache(self) -> None:
        """Write what the entry cache has left to keep (nothing, unless opened with ``keep_later``)."""
        for _step in self.unkept:
            pass

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def errors_said(self) -> list[str]:
        """What a command that goes on despite the record's errors says of them (stderr): the
        first ``SHOWN_ERRORS`` with their places, then how many there are; nothing when none."""
        errors = self.errors
        if not errors:
            return []
        more = f" ({len(errors) - SHOWN_ERRORS} more not shown)" if len(errors) > SHOWN_ERRORS else ""
        return [*(str(problem) for problem in errors[:SHOWN_ERRORS]),
                f"warning: {len(errors)} error{'s' if len(errors) != 1 else ''} in the record{more}; "
                "run `recordtool validate`"]


SHOWN_ERRORS = 5  # errors shown with their places by a command that goes on despite them


FREEZE_MIN = 2_000  # entries: below, the collector's passes over what a record built cost next to nothing


class GcPause:
    """Build many small, long-lived objects without the cyclic collector rescanning them all
    again and again, during the build and, for a large record (``freeze``: ``FREEZE_MIN``
    entries or more), after it: what was built is then moved out of the collector's sight
    (``gc.freeze``). Reference counting still frees it. Without this, validating 100,000
    entries takes twice as long, most of it in the collector.

    What is frozen in cycles is never collected while frozen (a command's frames, a test
    runner's traceback that holds them, with the entry cache's open files): a process that
    opens a project again (a test run, ``mkdocs serve``) gives what it froze before back to
    the collector first, a full collection of its whole heap. So small records are never
    frozen: a test process that opens hundreds of them pays for no such collection (that
    was most of the suite's time), and their garbage goes as any other. A command opens one
    project and pays nothing for this. ``keep_frozen``: what is frozen already is part of
    what is built (the entry cache read ahead: ``open_entry_cache``), and stays so."""

    def __init__(self, *, keep_frozen: bool = False) -> None:
        self.freeze = False  # set while building: freeze what was built at the end
        self.keep_frozen = keep_frozen

    # Whether this process froze what it built and has not given it back yet. (Not
    # ``gc.get_freeze_count()``: it walks every object frozen, 0.06 s at 100,000 entries, and on
    # Python 3.12 it is never 0, its collections putting the immortal objects they meet there.)
    frozen: ClassVar[bool] = False

    def __enter__(self) -> GcPause:
        if not self.keep_frozen and GcPause.frozen:
            GcPause.thaw()
            gc.collect()
        self.was_enabled = gc.isenabled()
        gc.disable()
        return self

    @staticmethod
    def thaw() -> None:
        """Give what this process froze back to the collector (``gc.unfreeze``)."""
        gc.unfreeze()
        GcPause.frozen = False

    def __exit__(self, *exc: object) -> None:
        if self.freeze and exc[0] is None:
            gc.freeze()
            GcPause.frozen = True
        if self.was_enabled:
            gc.enable()


def open_project(start: Path | None = None, *, root: Path | None = None, jobs: int | None = None,
                 cache: bool = False, compose: Compose | None = None, stats: Stats | None = None,
                 opened: EntryCache | None = None, keep_later: bool = False,
                 compose_few: Compose | None = None, meter: Meter | None = None) -> Project:
    """Load the record of the project at ``root`` (or found above ``start``), with its graph
    and every problem: the errors first, then the warnings, each in file order (a cause comes
    before what it causes). Raises ConfigError for a malformed configuration. ``jobs``: how
    many processes may share reading a large record (None: every core). ``cache``: read only
    the entry files changed since the last load, and keep what the others gave
    (``recordtool.record.cache``); the project is the same either way. ``compose``: what else
    to make of each body from the parse that finds its mentions (``build_graph``). ``compose_few``:
    the same, only when few files are read (``load.EACH_FEW``): with the entry cache, what
    another command composes of the bodies it reads after an edit is kept for render's pages
    (``cache.KeptScan``), for a few milliseconds a body, which a cold run would pay for every
    body. ``stats``: the entry files as a snapshot just stat-ed them, for the entry cache
    (``EntryCache.use``).
    ``opened``: the entry cache, already opened for this project (``open_entry_cache``).
    ``keep_later``: leave writing the entry cache to the caller (``Project.unkept``, its steps
    done while workers compose pages: ``render``); else it is written before this returns.
    ``meter``: the command's progress line (``recordtool.meter``), told what it is doing."""
    base = root.resolve() if root is not None else find_root(start or Path.cwd())
    config = load_config(base)
    with GcPause(keep_frozen=opened is not None) as pause:
        if opened is not None and opened.key != cache_key(config):
            opened = None  # (opened for another project or configuration)
        kept = (opened or open_cache(config)) if cache else None
        if kept is not None and stats is not None:
            kept.use(stats)
        # Each entry read is scanned for mentions by the process that read it (``scanner``).
        record, problems = load_record(config, jobs=jobs, cache=kept, each=scanner(config, compose),
                                       citations=kept is None,
                                       each_few=scanner(config, compose_few) if compose is None and compose_few
                                       and kept is not None else None, meter=meter)
        if meter is not None:
            meter.stage("linking the record")
        pause.freeze = len(record.places) >= FREEZE_MIN
        scans = kept.scans(record) if kept is not None else {}
        known = set(scans)
        composed: dict[str, bytes] = {}
        for entry_id, (scan, made) in record.each.items():
            scans[entry_id] = mentions_of(entry_id, scan)
            if made is not None:
                composed[entry_id] = made
        record.each = {}
        graph, more = build_graph(record, jobs=jobs, scans=scans, compose=compose, composed=composed,
                                  keep=kept is not None, kept=kept.links() if kept is not None else None)
        if kept is not None:
            rescanned = scans.rescanned if isinstance(scans, KeptScans) else set()
            made = graph.composed.made if isinstance(graph.composed, Composed) else graph.composed  # (this run's)
            kept.learn_scans(record, scans, (scans.keys() - known) | rescanned, made)
        static = kept.static(config) if kept is not None else None
        more += static_problems(config, record, static)
        problems = sorted([*problems, *more], key=lambda p: (p.severity != "error", *p.sort_key()))
        project = Project(config, record, graph, problems, cached=cache)
        if kept is not None:
            project.unkept = _keeping(kept, graph, static)
            if not keep_later:
                project.keep_cache()
    return project


def _keeping(kept: EntryCache, graph: Graph, static: KeptStatic | None) -> Iterator[None]:
    """Writing what the entry cache keeps of this opening, a step at a time (``Project.unkept``)."""
    yield from kept.saving()
    if graph.kept is not None and graph.kept_changed:
        kept.keep_links(graph.kept)
    if static is not None:
        kept.keep_static(static)


def open_entry_cache(root: Path | None = None) -> EntryCache | None:
    """The entry cache of the project at ``root`` (or found above the current folder), read
    ahead of ``open_project`` (``opened``) while a worker stats the inputs (``render``); None
    when the project cannot be opened (``open_project`` will say why). A large one is frozen
    (``GcPause``) as ``open_project`` freezes what it builds: else the collector's next pass
    would go over all of it (a third of a second at 100,000 entries)."""
    try:
        config = load_config(root.resolve() if root is not None else find_root(Path.cwd()))
    except (ConfigError, OSError):
        return None
    with GcPause() as pause:
        cache = open_cache(config)
        pause.freeze = len(cache.items) >= FREEZE_MIN
    return cache
