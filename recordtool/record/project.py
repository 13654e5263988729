"""A project: its configuration, record and graph, opened in one call for the commands."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool.record.config import Config, find_root, load_config
from recordtool.record.duplicates import duplicate_problems
from recordtool.record.graph import Graph, build_graph
from recordtool.record.load import Record, load_record
from recordtool.record.problems import Problem
from recordtool.record.static import static_problems
from recordtool.store import Store, code_version

if TYPE_CHECKING:
    from recordtool.meter import Meter

# Distributions whose version can change what loading gives (parsing YAML and Markdown,
# validating): with recordtool's own code, the store's version (``open_store``).
DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")
# Entries from which a record, once built, is moved out of the collector's sight (``gc.freeze``),
# whose later passes would go over every object of it again and again; below, they cost little.
FREEZE_MIN = 2_000


@dataclass
class Project:
    config: Config
    record: Record
    graph: Graph
    problems: list[Problem]
    cached: bool = False  # opened with the store: later stages may keep what they work out there too

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def open_store(config: Config) -> Store:
    """The store in ``config``'s cache folder, for this code and the versions of what it reads with."""
    return Store(config.cache, code_version(DEPENDENCIES))


def open_project(start: Path | None = None, *, root: Path | None = None, jobs: int | None = None,
                 cache: bool = False, meter: Meter | None = None) -> Project:
    """Load the record of the project at ``root`` (or found above ``start``), with its graph
    and every problem: the errors first, then the warnings, each in file order. ``cache``:
    with the store, which changes what is read again, never the project."""
    base = root.resolve() if root is not None else find_root(start or Path.cwd())
    config = load_config(base)
    store = open_store(config) if cache else None
    # The collector paused while the record is built: many small objects that all live on,
    # which it would otherwise go over again and again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        record, problems = load_record(config, jobs=jobs, store=store, meter=meter)
        if meter is not None:
            meter.stage("linking the record")
        graph, more = build_graph(record)
        more += static_problems(config, record) + duplicate_problems(record)
        if len(record.entries) >= FREEZE_MIN:
            gc.freeze()
    finally:
        if store is not None:
            store.close()
        if collecting:
            gc.enable()
    problems = sorted([*problems, *more], key=lambda p: (p.severity != "error", *p.sort_key()))
    return Project(config, record, graph, problems, cached=cache)
