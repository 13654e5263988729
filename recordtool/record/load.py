"""Loading a record: every YAML file read, validated, and each problem kept with its place.

``load_record`` never stops at the first problem: it returns what loaded cleanly and every
problem. What each file gives on its own (``recordtool.record.entry``) is kept in the store
under the hash of its bytes and of the configuration, so an unchanged file is not read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool import parallel
from recordtool.record.config import Config, Kind
from recordtool.record.confine import NOT_REGULAR, checks_problems, refused
from recordtool.record.entry import (
    ID,
    OUTSIDE,
    Loaded,
    Mention,
    Places,
    load_file,
)
from recordtool.record.problems import Problem, did_you_mean_id
from recordtool.record.schema import Entry, Theory
from recordtool.record.source import SourceError, bytes_digest, read_bytes

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.store import Store

YAML_SUFFIXES = (".yaml", ".yml")
ENTRIES = "entries"  # the store's table of what each entry file gave: path -> (digest, ``Loaded``)


@dataclass
class Record:
    """The loaded entries, in id order, where each came from, and the mentions in their prose."""

    config: Config
    entries: Mapping[str, Entry] = field(default_factory=dict)  # (a dict, but a page's slice of it: ``render.slices``)
    places: Mapping[str, Places] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # id of an entry that could not be loaded -> its file
    mentions: dict[str, list[Mention]] = field(default_factory=dict)  # id -> the mentions in its prose

    def claims(self) -> list[Theory]:
        return [e for e in self.entries.values() if isinstance(e, Theory)]

    def claim_ids(self) -> list[str]:
        """The ids of the claims, in record order."""
        return [c.id for c in self.claims()]

    @property
    def modules(self) -> dict[str, tuple[str, ...]]:
        """Claim id -> the modules of its checks, for the claims with checks."""
        return {c.id: tuple(check.module for check in c.checks) for c in self.claims() if c.checks}

    def title(self, entry_id: str) -> str:
        """``entry_id``'s title on one line (``title_line``)."""
        return title_line(self.entries[entry_id])

    def cites(self, entry_id: str) -> tuple[tuple[str, str], ...]:
        """``entry_id``'s citations, (cited id, relation), in order."""
        return tuple((c.id, c.as_) for c in self.entries[entry_id].cites)


def id_sort_key(entry_id: str) -> tuple[str, int, str]:
    """LIT-2 before LIT-10: by prefix, then number."""
    match = ID.match(entry_id)
    return (match["prefix"], int(match["number"]), entry_id) if match else (entry_id, -1, entry_id)


def entry_files(config: Config) -> tuple[list[tuple[str, Kind]], list[Problem]]:
    """Every YAML file under each kind's folder (its path, a string), sorted; stray files are
    warned about."""
    files: list[tuple[str, Kind]] = []
    problems: list[Problem] = []
    if not config.record.is_dir():
        problems.append(Problem(config.relative(config.record), 0, 0,
                                "no record folder here; create it or run from the project's root", code="no-record"))
        return files, problems
    real_root, real_record = os.path.realpath(config.root), os.path.realpath(config.record)
    if not real_record.startswith(real_root + os.sep):
        problems.append(Problem(config.relative(config.record), 0, 0, f"the record folder is a link to {real_record}, "
                                "outside the project; it is not read", code="outside"))
        return files, problems
    folders = {kind.folder: kind for kind in config.kinds.values()}
    # What recordtool writes (the pages, the verdicts, the site's files), and the folders that
    # hold it, unless they are kind folders
    written = config.written_here()
    skip = {folder for path in written for folder in (path.resolve(), *path.resolve().parents)}
    own = frozenset(str(path) for path in written)  # (in a kind folder: never read as entries)
    for child in sorted(config.record.iterdir()):
        if child.name.startswith(".") or (child.name not in folders and child.resolve() in skip):
            continue
        kind = folders.get(child.name)
        if kind is None or not child.is_dir():
            expected = ", ".join(sorted(folders))
            problems.append(Problem(config.relative(child), 0, 0,
                                    f"not a kind folder of the record ({expected}); it is ignored",
                                    severity="warning", code="stray-file"))
            continue
        if child.is_symlink() and (why := refused(child, config.record)) is not None:
            problems.append(Problem(config.relative(child), 0, 0, f"the folder {why}; entries must be files inside "
                                    "the record: it is not read", code="outside"))
            continue
        for path, name, link in _walk(str(child), own):
            why = refused(Path(path), config.record) if link else None
            # (a link to a folder is refused when it leads out, else reported as not YAML)
            if why is not None and (name.endswith(YAML_SUFFIXES) or (why != NOT_REGULAR and os.path.isdir(path))):
                problems.append(Problem(config.relative(path), 0, 0, f"{why}; {OUTSIDE}", code="outside"))
            elif not name.endswith(YAML_SUFFIXES):
                problems.append(Problem(config.relative(path), 0, 0, _not_yaml(name), severity="warning",
                                        code="stray-file"))
            else:
                files.append((path, kind))
    return files, problems


def _not_yaml(name: str) -> str:
    """What is said of a file in a kind folder that is not an entry file."""
    stem, dot, suffix = name.rpartition(".")
    if dot and f".{suffix.lower()}" in YAML_SUFFIXES:  # NOTE-1.YAML
        return f"not a YAML entry (.yaml or .yml, in lower case); it is ignored: rename it {stem}.{suffix.lower()}"
    return "not a YAML entry (.yaml or .yml); it is ignored"


def _walk(folder: str, own: frozenset[str] = frozenset()) -> Iterator[tuple[str, str, bool]]:
    """Every file under ``folder`` (sorted, hidden ones and the paths in ``own`` left out): its
    path, its name and whether it is a link (a link to a folder is not followed)."""
    with os.scandir(folder) as scan:
        items = sorted(scan, key=lambda item: item.name)
    for item in items:
        if item.name.startswith(".") or item.path in own:
            continue
        if item.is_dir(follow_symlinks=False):
            yield from _walk(item.path, own)
        else:  # a link to a folder: refused as leading outside, or reported as not YAML
            yield item.path, item.name, item.is_symlink()


def title_line(entry: Entry) -> str:
    """An entry's title on one line (a claim without one: its statement), runs of whitespace
    made one space: as pages name it."""
    return " ".join(entry.display_title.split())


def load_record(config: Config, *, jobs: int | None = None, store: Store | None = None,
                meter: Meter | None = None) -> tuple[Record, list[Problem]]:
    """Read every entry of the record (``jobs`` processes, None: every core; what ``store``
    kept for the files unchanged); return the record and every problem found."""
    files, problems = entry_files(config)
    problems.extend(checks_problems(config))
    rels = [config.relative(path) for path, _kind in files]
    loaded = _load_files(config, files, rels, jobs, store, meter)
    record = _assembled(config, files, rels, loaded, problems)
    problems.extend(check_citations(record))
    return record, problems


def _load_files(config: Config, files: list[tuple[str, Kind]], rels: list[str], jobs: int | None,
                store: Store | None, meter: Meter | None) -> list[Loaded]:
    """What each file gives (``entry.load_file``), from the store where its bytes are as they were
    (kept under the hash of its bytes and of the configuration)."""
    key = config_digest(config)
    digests: dict[str, str] = {}
    if store is not None:
        for (path, _kind), rel in zip(files, rels, strict=True):
            # (a link, not a regular file, too large or unreadable: read below, to say why)
            with contextlib.suppress(OSError, SourceError):
                digests[rel] = f"{bytes_digest(read_bytes(path, follow=False))}:{key}"
    kept: dict[str, Loaded] = store.get_many(ENTRIES, digests) if store is not None else {}
    todo = [i for i, rel in enumerate(rels) if rel not in kept]

    def work(indices: list[int]) -> list[Loaded]:
        return [load_file(files[i][0], files[i][1], config, rels[i]) for i in indices]

    progress = meter.stage("reading the entry files", len(todo)) if meter is not None and todo else None
    fresh = dict(zip(todo, parallel.map_items(work, todo, jobs=jobs, progress=progress), strict=True))
    if store is not None:
        gone = store.keys(ENTRIES) - set(rels)
        store.put_many(ENTRIES, [(rels[i], f"{result.digest}:{key}", result) for i, result in fresh.items()
                                 if result.digest is not None], drop=gone)
    return [fresh[i] if i in fresh else kept[rel] for i, rel in enumerate(rels)]


def config_digest(config: Config) -> str:
    """A hash of the configuration, its root included: what every kept result depends on
    beyond its own file (recordtool's code and versions key the store itself)."""
    text = repr((os.path.realpath(config.root), config))
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _assembled(config: Config, files: list[tuple[str, Kind]], rels: list[str], loaded: list[Loaded],
               problems: list[Problem]) -> Record:
    """The record of what each file gave, in id order: duplicate ids said in ``problems``, and
    the files that failed to load but are named after an id of their kind kept as failed."""
    seen: dict[str, str] = {}
    found: list[tuple[Entry, Places, list[Mention]]] = []
    failed: dict[str, str] = {}
    for (path, kind), rel, got in zip(files, rels, loaded, strict=True):
        problems.extend(got.problems)
        if got.entry is None or got.places is None:
            stem = os.path.splitext(os.path.basename(path))[0]
            if got.problems and ID.match(stem) and stem.startswith(f"{kind.prefix}-"):
                failed.setdefault(stem, rel)
            continue
        entry_id, places = got.entry.id, got.places
        if entry_id in seen:
            problems.append(Problem(places.path, *places.id, f"duplicate id {entry_id}, also in {seen[entry_id]}; "
                                    "ids are unique: rename one file and its id", field="id", code="duplicate-id"))
            continue
        seen[entry_id] = places.path
        found.append((got.entry, places, got.mentions))
    found.sort(key=lambda item: id_sort_key(item[0].id))
    entries = {entry.id: entry for entry, _places, _mentions in found}
    return Record(config, entries, {entry.id: places for entry, places, _mentions in found},
                  {entry_id: rel for entry_id, rel in failed.items() if entry_id not in entries},
                  {entry.id: mentions for entry, _places, mentions in found})


def check_citations(record: Record) -> list[Problem]:
    """Every typed citation must name an entry of the record (citations of an entry that could
    not be loaded are the graph's to report, once for all of them)."""
    entries, failed = record.entries, record.failed
    return [Problem(record.places[entry_id].path, *record.places[entry_id].cites[i],
                    f"cites {cited.id}, which is not in the record{did_you_mean_id(cited.id, entries)}",
                    field=f"cites[{i}].id", code="missing-citation")
            for entry_id, entry in entries.items() for i, cited in enumerate(entry.cites)
            if cited.id not in entries and cited.id != entry_id and cited.id not in failed]
