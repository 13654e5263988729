"""Loading a record: every YAML file read, validated, and each problem kept with its place.

``load_record`` never stops at the first problem: it reads every file, collects every
problem (file:line:col, field path, message with a hint) and returns what loaded cleanly
alongside them. Checks that need the whole record (duplicate ids, citations that resolve)
are made here too; prose mentions are the graph's business.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from recordtool import parallel
from recordtool.record.config import Config, Kind
from recordtool.record.confine import Refused, checks_problems, refused
from recordtool.record.expect import ExpectationSyntaxError
from recordtool.record.lazy import Lazy
from recordtool.record.problems import (
    Problem,
    RecordError,
    did_you_mean,
    did_you_mean_id,
    field_path,
)
from recordtool.record.schema import MODELS, Entry, Theory, compact
from recordtool.record.source import Loc, Mark, Source, SourceError, read_source
from recordtool.record.static import looked_at

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.record.cache import EntryCache, KeptEntries

YAML_SUFFIXES = (".yaml", ".yml")
T = TypeVar("T")
_ID = re.compile(r"^(?P<prefix>[A-Z][A-Z0-9]*)-(?P<number>[0-9]+)$", re.ASCII)
ID_RULE = "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9"


class Places(tuple[str, Mark, tuple[Mark, ...], tuple[tuple[str, int], ...], str]):
    """Where an entry's parts are in its file (1-based line, col), kept for later stages:
    ``Places((path, id, cites, prose, digest))``, ``prose`` as (field, line) pairs.

    A tuple, so that the entry cache makes a hundred thousand of them back from its shards
    without a call to Python code for each (a dataclass with its own ``__setstate__`` took a
    fifth of reading the shards back): pickled as its class and its tuple, made by the tuple's
    own constructor. Its parts but the path and digest are tuples of small numbers, the same in
    many entries: each is shared (``_shared``), not held once per entry (at 100,000 entries a
    mark per citation and a dict per entry's prose made the peak of a cold ``render -j 2`` 42 MiB
    higher)."""

    __slots__ = ()

    @property
    def path(self) -> str:
        """The file, from the project's root."""
        return self[0]

    @property
    def id(self) -> Mark:
        """Where the id is."""
        return self[1]

    @property
    def cites(self) -> tuple[Mark, ...]:
        """Where each citation is, in order."""
        return self[2]

    @property
    def prose(self) -> dict[str, int]:
        """Each prose field -> the line its text starts on."""
        return dict(self[3])

    @property
    def digest(self) -> str:
        """A hash of the file's bytes: the same bytes make the same entry."""
        return self[4]

    def __repr__(self) -> str:
        return f"Places(path={self[0]!r}, id={self[1]!r}, cites={self[2]!r}, prose={self[3]!r}, digest={self[4]!r})"


Links = tuple[tuple[str, str], ...]  # an entry's citations: (cited id, relation), in order
Kept = tuple[int, int, int]  # where the entry cache keeps an entry, made when asked for (``recordtool.record.cache.KeptEntries``)


class Entries(Lazy[Entry]):
    """A record's entries, in id order; those kept in the entry cache are made from what it
    keeps only when asked for (``recordtool.record.cache``): the checks that span the record
    read what they need from ``Record.links``, so that after one edit nobody makes the entries
    that no page or command looks at. Every way of reading it gives made entries
    (``recordtool.record.lazy``)."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[str, Kept], Entry]) -> None:
        super().__init__()
        self._make = make  # an id and what the cache keeps of it -> its entry

    def __getitem__(self, key: str) -> Entry:
        value: Entry | Kept = self._data[key]
        if type(value) is tuple:
            return self._made(key, value)
        return value  # type: ignore[return-value]  # mypy: not Kept here

    def _made(self, key: str, kept: Kept) -> Entry:
        entry = self._make(key, kept)
        self._data[key] = entry
        return entry

    def values(self) -> ValuesView[Entry]:
        self.make_all()
        return self._data.values()

    def items(self) -> ItemsView[str, Entry]:
        self.make_all()
        return self._data.items()

    def make_all(self) -> None:
        """Make every entry not made yet."""
        for key, value in list(self._data.items()):
            if type(value) is tuple:
                self._made(key, value)

    def kept(self, key: str) -> bool:
        """Whether ``key``'s entry is still only what the cache keeps of it (not made yet)."""
        return type(self._data[key]) is tuple


@dataclass
class Record:
    """The loaded entries, in id order, and where each came from."""

    config: Config
    entries: Mapping[str, Entry] = field(default_factory=dict)
    places: Mapping[str, Places] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # id of an entry that could not be loaded -> its file
    # What the checks that span the record need of each entry, so that they make no entry
    # (filled by ``load_record``; for a record made otherwise the entries are asked instead):
    links: dict[str, Links] = field(default_factory=dict)  # id -> its citations, for entries not made yet
    # id -> its title on one line (``title_line``), for entries not made yet: a page names an
    # entry by its title without making it (after a title edit of an entry cited by many, the
    # pages of its neighbours are composed again, each showing the titles of its own neighbours)
    titles: dict[str, str] = field(default_factory=dict)
    theories: set[str] | None = None  # the ids of the claims
    looked: set[str] | None = None  # the ids whose entry the static checks look at (``static.looked_at``)
    modules: dict[str, tuple[str, ...]] | None = None  # claim id -> the modules of its checks, for claims with checks
    each: dict[str, Any] = field(default_factory=dict)  # id -> what ``load_record``'s ``each`` gave, if read this run

    def claims(self) -> list[Theory]:
        if self.theories is not None:
            theories, entries = self.theories, self.entries
            return [cast(Theory, entries[i]) for i in entries if i in theories]
        return [e for e in self.entries.values() if isinstance(e, Theory)]

    def claim_ids(self) -> list[str]:
        """The ids of the claims, in record order, without making the entries not made yet
        (``theories``)."""
        theories = self.theories
        if theories is None:
            return [c.id for c in self.claims()]
        return [i for i in self.entries if i in theories]

    def all_made(self) -> bool:
        """Whether every entry is made: none is still only what the entry cache keeps of it
        (``links`` holds the citations of those, and of those only)."""
        return not self.links

    def title(self, entry_id: str) -> str:
        """``entry_id``'s title on one line (``title_line``), without making an entry kept in
        the entry cache (``titles``)."""
        title = self.titles.get(entry_id)
        return title if title is not None else title_line(self.entries[entry_id])

    def cites(self, entry_id: str) -> Links:
        """``entry_id``'s citations, (cited id, relation), in order."""
        found = self.links.get(entry_id)
        if found is None:
            found = tuple((c.id, c.as_) for c in self.entries[entry_id].cites)
        return found


def id_sort_key(entry_id: str) -> tuple[str, int, str]:
    """LIT-2 before LIT-10: by prefix, then number."""
    match = _ID.match(entry_id)
    if match:
        return (match["prefix"], int(match["number"]), entry_id)
    return (entry_id, -1, entry_id)


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
            if link and os.path.isdir(path) and (why := refused(Path(path), config.record)) != "is not a regular file":
                problems.append(Problem(config.relative(Path(path)), 0, 0, f"{why}; an entry must be a file inside "
                                        "the record (copy it in instead of linking): it is not read", code="outside"))
            elif not name.endswith(YAML_SUFFIXES):
                problems.append(Problem(config.relative(Path(path)), 0, 0,
                                        _not_yaml(name),
                                        severity="warning", code="stray-file"))
            elif link and (why := refused(Path(path), config.record)) is not None:
                problems.append(Problem(config.relative(Path(path)), 0, 0, f"{why}; an entry must be a file inside "
                                        "the record (copy it in instead of linking): it is not read", code="outside"))
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
    path, its name and whether it is a link; a link to a folder is not followed (a link to a
    folder outside the record is reported). Paths are strings: a large record has a hundred
    thousand files, listed on every run."""
    with os.scandir(folder) as scan:
        items = sorted(scan, key=_name)
    for item in items:
        if item.name.startswith(".") or item.path in own:
            continue
        if item.is_dir(follow_symlinks=False):
            yield from _walk(item.path, own)
        elif item.is_symlink():
            yield item.path, item.name, True  # a link to a folder: refused as leading outside, or reported as not YAML
        else:
            yield item.path, item.name, False


def _name(item: os.DirEntry[str]) -> str:
    return item.name


# an entry's id, its citations, whether it is a claim, ``static.looked_at``, the modules of a claim's
# checks, its title on one line (``title_line``)
Summary = tuple[str, Links, bool, bool, tuple[str, ...], str]
# What loading one file gives: the entry (or, kept in the entry cache, what it keeps, made into the
# entry when asked for: ``Entries``), its places, its own problems and its summary.
Loaded = tuple[Entry | Kept | None, Places | None, list[Problem], Summary | None]


def summary(entry: Entry) -> Summary:
    """What the checks that span the record and the pages that name ``entry`` need of it, as
    plain data."""
    modules = tuple(check.module for check in entry.checks) if isinstance(entry, Theory) else ()
    return (entry.id, tuple((c.id, c.as_) for c in entry.cites), isinstance(entry, Theory), looked_at(entry), modules,
            title_line(entry))


def title_line(entry: Entry) -> str:
    """An entry's title on one line (a claim without one: its statement), runs of whitespace
    made one space: as pages name it."""
    display = entry.display_title
    line = " ".join(display.split())
    return display if line == display else line  # (no second copy)


def load_record(config: Config, *, jobs: int | None = None, cache: EntryCache | None = None,
                each: Callable[[Entry, Places], Any] | None = None, citations: bool = True,
                each_few: Callable[[Entry, Places], Any] | None = None,
                meter: Meter | None = None) -> tuple[Record, list[Problem]]:
    """Read every entry of the record; return the record and every problem found. ``jobs``:
    how many processes may read, parse and validate files (``recordtool.parallel``; None:
    every core). ``each``: more work on each entry read, in the process that read it (the
    graph's scan of its prose: ``recordtool.record.graph.scanner``); what it gives, which must
    pickle, is kept by id in ``Record.each``. ``each_few``: instead of ``each`` when at most
    ``EACH_FEW`` files are read (after an edit: more work that a cold run leaves out).
    ``cache``: what loading each file gave last time (``recordtool.record.cache``): a file
    that is as it was is not read again, and what the others give is kept in it; the entries
    of the files not read are made from what is kept only when asked for (``Entries``).
    ``citations``: check that every citation names an entry of the record (``check_citations``;
    the graph does when it keeps what spans the record: ``graph.KeptLinks``). ``meter``: the
    command's progress line (``recordtool.meter``), told of the files read."""
    files, problems = entry_files(config)
    problems.extend(checks_problems(config))
    kinds: dict[str, Kind] = {}  # id -> the kind whose folder holds the entry (to read it again if what is kept fails)
    placed: dict[str, Places] = {}
    linked: dict[str, Links] = {}  # the citations of the entries not made yet: a made one has its own
    titled: dict[str, str] = {}  # ... and their titles

    reader = cache.kept_entries() if cache is not None else None

    def make(entry_id: str, kept: Kept) -> Entry:
        # (refers to no part of the record that holds it: no cycle keeps the record alive once
        # nothing else does, nor the entry cache's files it keeps open)
        entry = _made(config, placed, entry_id, kinds[entry_id], kept, reader)
        linked.pop(entry_id, None)
        titled.pop(entry_id, None)
        return entry

    entries = Entries(make)
    record = Record(config, entries, placed, links=linked, titles=titled, theories=set(), looked=set(),
                    modules={})
    # Files are parsed (by a pool of workers on a large record) and validated here chunk by
    # chunk, in file order, so that only a few chunks' parsed YAML are held at a time.
    base = os.fspath(config.root) + os.sep
    cut = len(base)
    rels = [(path[cut:] if os.sep == "/" else path[cut:].replace(os.sep, "/")) if path.startswith(base)
            else config.relative(Path(path)) for path, _kind in files]
    read = cache.unchanged(files, rels) if cache is not None else [None] * len(files)  # None: read it now
    todo = [i for i, known in enumerate(read) if known is None]
    if each_few is not None and len(todo) <= EACH_FEW:
        each = each_few

    def read_files(indices: list[int]) -> list[_Done]:
        return _load_files([(files[i][0], files[i][1], rels[i]) for i in indices], config, each)

    extra: dict[int, Any] = {}  # file -> what ``each`` gave for its entry
    chunks = parallel.chunked(todo, jobs=jobs)
    read_some = meter.stage("reading the entry files", len(todo)) if meter is not None and todo else None
    with parallel.chunk_results(read_files, chunks, jobs=jobs, min_items=PARALLEL_MIN, helping=True,
                                progress=read_some) as results:
        for chunk, done in zip(chunks, results, strict=True):
            for i, (result, how, digest, more) in zip(chunk, done, strict=True):
                read[i] = result
                if result[0] is not None:
                    compact(result[0])  # (again: one made in a worker was pickled without its shared sets)
                if more is not None:
                    extra[i] = more
                if cache is not None and how != "io":
                    cache.learn(Path(files[i][0]), rels[i], files[i][1], result, digest)
    seen: dict[str, str] = {}
    loaded: list[tuple[Entry | Kept, Places, Summary, Kind]] = []
    nothing: Loaded = (None, None, [], None)
    for n, ((path, kind), rel, got) in enumerate(zip(files, rels, read, strict=True)):
        entry, places, found, about = got if got is not None else nothing
        if found:
            problems.extend(found)
        if entry is None or places is None or about is None:
            stem = os.path.splitext(os.path.basename(path))[0]
            if found and _ID.match(stem) and stem.startswith(f"{kind.prefix}-"):
                record.failed.setdefault(stem, rel)
            continue
        entry_id = about[0]
        if entry_id in seen:
            problems.append(Problem(places.path, *places.id, f"duplicate id {entry_id}, also in {seen[entry_id]}; "
                                    "ids are unique: rename one file and its id", field="id", code="duplicate-id"))
            continue
        seen[entry_id] = places.path
        loaded.append((entry, places, about, kind))
        if n in extra:
            record.each[entry_id] = extra.pop(n)
    try:
        loaded.sort(key=_loaded_order)
    except ValueError:  # (an id that is not PREFIX-NUMBER: none loads, but the slow way sorts any)
        loaded.sort(key=lambda item: id_sort_key(item[2][0]))
    keep = entries.keep
    theories: set[str] = set()
    looked: set[str] = set()
    modules: dict[str, tuple[str, ...]] = {}
    failed = record.failed
    for kept, places, (entry_id, cites, theory, look, checks, title), kind in loaded:
        keep(entry_id, kept)  # the entry, or what the cache keeps of it
        if type(kept) is tuple:  # not made: its citations and title beside it (the checks that span
            linked[entry_id] = cites  # the record, the pages that name it)
            titled[entry_id] = title
        placed[entry_id] = places
        kinds[entry_id] = kind
        if theory:
            theories.add(entry_id)
        if look:
            looked.add(entry_id)
        if checks:
            modules[entry_id] = checks
    for entry_id in [entry_id for entry_id in failed if entry_id in placed]:
        del failed[entry_id]  # another file holds it (a duplicate that did load)
    record.theories, record.looked, record.modules = theories, looked, modules
    if citations:
        problems.extend(check_citations(record))
    return record, problems


def _loaded_order(item: tuple[Any, Any, Summary, Kind]) -> tuple[str, int, str]:
    """``id_sort_key`` of a loaded entry's id, which is ``PREFIX-NUMBER`` (an entry whose id is not
    one does not load): without the pattern, a hundred thousand times on a large record."""
    entry_id = item[2][0]
    prefix, _sep, number = entry_id.partition("-")
    return prefix, int(number), entry_id


def _made(config: Config, places: dict[str, Places], entry_id: str, kind: Kind, kept: Kept,
          reader: KeptEntries | None) -> Entry:
    """The entry kept as ``kept`` (``recordtool.record.cache.KeptEntries``), or, should that
    fail, read again from its file: a damaged cache costs time, never the answer."""
    rel = places[entry_id].path
    entry = reader.entry(rel, kept, MODELS[kind.schema]) if reader is not None else None
    if entry is not None and entry.id == entry_id:
        return entry
    path = config.root / rel
    read = _read_sources([str(path)], str(config.record))[0]
    entry = load_entry(path, kind, config, rel, _source(read))[0]
    if entry is None or entry.id != entry_id:
        raise RecordError([Problem(rel, 0, 0, f"changed while it was read (it held {entry_id}); run the "
                                   "command again", code="changed")])
    return entry


# Files read as plain data, so that a worker can read some of them (``parallel.chunk_results``):
# ("source", data, marks, key_marks, styles, digest), ("error", message, line, col, code) or ("io", why).
_Read = tuple[Any, ...]
PARALLEL_MIN = 1_000  # files; below this starting workers costs more than they save
# Files read, at most, for ``load_record``'s ``each_few``: composing a body of research Markdown
# for its page costs about 0.7 ms beside its scan's 1.2 ms (prose.compose_body), which a command
# that reads a few files after an edit pays for render's pages and a cold run leaves out.
EACH_FEW = 200


# What loading one file in a reader gives (``_load_files``): what ``load_entry`` made of it
# (``Loaded``), how reading went ("source", "error" or "io"), the digest of the bytes read (None
# unless "source"), and what ``each`` gave for its entry (None: no entry, or no ``each``).
_Done = tuple[Loaded, str, "str | None", Any]


def _load_files(files: list[tuple[str, Kind, str]], config: Config,
                each: Callable[[Entry, Places], Any] | None) -> list[_Done]:
    """Read, parse and validate each file (its path, kind and path from the project's root),
    and give its entry to ``each``: all the work of a file that needs nothing of the others,
    done in one process, so that on a large record one worker does it from the bytes to what
    the graph keeps (``load_record``) and nothing of it but the result is pickled."""
    out: list[_Done] = []
    for (path, kind, rel), read in zip(files, _read_sources([path for path, _kind, _rel in files], str(config.record)),
                                       strict=True):
        made, places, found = load_entry(Path(path), kind, config, rel, _source(read))
        more = each(made, places) if each is not None and made is not None and places is not None else None
        out.append(((made, places, found, summary(made) if made is not None else None), read[0],
                    read[-1] if read[0] == "source" else None, more))
    return out


def _read_sources(paths: list[str], record: str) -> list[_Read]:
    out: list[_Read] = []
    for path in paths:
        try:
            source = read_source(Path(path), inside=record)  # still inside the record as it is read
        except SourceError as exc:
            out.append(("error", exc.message, exc.line, exc.col, exc.code))
        except Refused as exc:
            out.append(("error", "not a regular file; an entry is a YAML file", 0, 0, "not-a-file")
                       if exc.why == "is not a regular file" else
                       ("error", f"{exc.why}; an entry must be a file inside the record (copy it in instead of "
                        "linking): it is not read", 0, 0, "outside"))
        except OSError as exc:
            out.append(("io", exc.strerror or str(exc)))
        else:
            out.append(("source", source.data, source.marks, source.key_marks, source.styles, source.digest))
    return out


def _source(read: _Read) -> Source | SourceError | OSError:
    if read[0] == "source":
        return Source(*read[1:])
    if read[0] == "error":
        return SourceError(read[1], read[2], read[3], code=read[4])
    return OSError(0, read[1])


def load_entry(path: Path, kind: Kind, config: Config, rel: str, source: Source | SourceError | OSError
               ) -> tuple[Entry | None, Places | None, list[Problem]]:
    """Validate one file, given what reading it gave; the entry is None when it cannot be used."""
    if isinstance(source, SourceError):
        return None, None, [Problem(rel, source.line, source.col, source.message, code=source.code)]
    if isinstance(source, OSError):
        return None, None, [Problem(rel, 0, 0, f"cannot read: {source.strerror}", code="io")]
    data = source.data
    problems: list[Problem] = []
    model = MODELS[kind.schema]
    if "kind" not in data and "id" in data:
        data = {**data, "kind": kind.name}
    try:
        entry = model.model_validate(data)
    except ValidationError as exc:
        return None, None, _schema_problems(exc, model, _with_all_marks(path, source), rel)
    compact(entry)
    marks = _Marks(path, source)
    problems.extend(_identity_problems(entry, path, kind, config, source, rel))
    if any(p.code == "bad-id" for p in problems):
        return None, None, problems  # an id that is not one cannot be cited, linked or paged
    problems.extend(_relation_problems(entry, config, marks, rel))
    if isinstance(entry, Theory):
        problems.extend(_check_problems(entry, config, marks, rel))
    places = Places((
        rel,  # path
        _shared(source.mark(("id",))),  # id
        _shared(tuple(_shared(source.mark(("cites", i))) for i in range(len(entry.cites)))),  # cites
        _shared(tuple((name, _prose_start(source, name)) for name, _text in entry.prose())),  # prose
        source.digest,  # digest
    ))
    return entry, places, problems


_SHARED: dict[Any, Any] = {}  # a value of ``Places`` -> the one object that stands for it in this process
SHARED_MAX = 1 << 16  # values kept at most (a file's marks are few; many files share them)


def _shared(value: T) -> T:
    """The one object equal to ``value`` that this process's ``Places`` hold (an immutable
    tuple of marks or of prose starts: many entries have the same)."""
    found: T = _SHARED.get(value, value)
    if found is value and len(_SHARED) < SHARED_MAX:
        _SHARED[value] = value
    return found


class _Marks:
    """Places in one file, read in full only when a problem needs a deep one."""

    def __init__(self, path: Path, source: Source) -> None:
        self.path = path
        self.source = source
        self.full: Source | None = None

    def __call__(self, loc: Loc) -> Mark:
        if self.full is None:
            self.full = _with_all_marks(self.path, self.source)
        return self.full.mark(loc)


def _with_all_marks(path: Path, source: Source) -> Source:
    """The same file with a mark for every value (read again: only files with problems pay;
    the same bytes, or the marks are those there are)."""
    try:
        full = read_source(path, all_marks=True)
    except (SourceError, OSError):
        return source
    return full if full.digest == source.digest else source


def _prose_start(source: Source, name: str) -> int:
    line, _col = source.mark((name,))
    # A block scalar ('|' or '>') starts on the line after its indicator.
    return line + 1 if source.styles.get((name,)) in ("|", ">") else line


def _identity_problems(entry: Entry, path: Path, kind: Kind, config: Config, source: Source, rel: str
                       ) -> list[Problem]:
    problems = []
    match = _ID.match(entry.id)
    if not match:
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"{_shown(entry.id)} is not an id; {ID_RULE}, e.g. {kind.prefix}-1",
                                field="id", code="bad-id"))
    elif match["prefix"] != kind.prefix:
        other = config.kinds.get(match["prefix"])
        where = f"{config.relative(config.record / other.folder)}/" if other else f"a folder of its own (no kind has prefix {match['prefix']})"
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"{entry.id} has prefix {match['prefix']}, but {kind.folder}/ holds {kind.name} "
                                f"entries ({kind.prefix}-...); move it to {where} or give it a {kind.prefix}- id",
                                field="id", code="wrong-prefix"))
    stem = path.stem
    if entry.id != stem:
        # only what would be right: a file named after an id of this kind, an id of this kind
        named = _ID.match(stem)
        fixes = [*([f"rename the file to {entry.id}{path.suffix}"] if match and match["prefix"] == kind.prefix else []),
                 *([f"set id: {stem}"] if named and named["prefix"] == kind.prefix else [])]
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"id {entry.id} does not match the file name {path.name}; "
                                + (" or ".join(fixes) if fixes else
                                   f"give the entry an id such as {kind.prefix}-1 and name its file after it"),
                                field="id", code="id-mismatch"))
    if entry.kind != kind.name:
        problems.append(Problem(rel, *source.mark(("kind",)),
                                f"kind '{entry.kind}' does not match the folder {kind.folder}/; "
                                f"write kind: {kind.name} (or leave it out){_move_hint(entry.kind, config)}",
                                field="kind", code="wrong-kind"))
    return problems


def _shown(text: str) -> str:
    """``text`` quoted for a message, with anything outside printable ASCII written as an escape
    (``\\U0001d7cf`` for a mathematical digit that looks like 1)."""
    return "'" + "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in text) + "'"


def _move_hint(kind_name: str, config: Config) -> str:
    other = config.kind_named(kind_name)
    if other is not None:
        return f", or move the file to record/{other.folder}/ with a {other.prefix}- id"
    return did_you_mean(kind_name, [k.name for k in config.kinds.values()])


def _relation_problems(entry: Entry, config: Config, mark: _Marks, rel: str) -> list[Problem]:
    problems = []
    for i, citation in enumerate(entry.cites):
        if citation.as_ not in config.relations:
            known = ", ".join(sorted(config.relations))
            hint = did_you_mean(citation.as_, config.relations) or f"; known relations: {known}"
            problems.append(Problem(rel, *mark(("cites", i, "as")),
                                    f"unknown relation '{citation.as_}'{hint}",
                                    field=f"cites[{i}].as", code="unknown-relation"))
        if citation.id == entry.id:
            problems.append(Problem(rel, *mark(("cites", i, "id")),
                                    f"{entry.id} cites itself; remove this citation",
                                    field=f"cites[{i}].id", code="self-citation"))
    return problems


def _check_problems(entry: Theory, config: Config, mark: _Marks, rel: str) -> list[Problem]:
    problems = []
    for i, check in enumerate(entry.checks):
        root = check.module.split(".", 1)[0]
        if root != config.checks or check.module == config.checks:
            problems.append(Problem(rel, *mark(("checks", i, "run")),
                                    f"'{check.run}' is outside {config.checks}/; checks run only code inside "
                                    f"the record's {config.checks} package: write '{config.checks}.module:function'",
                                    field=f"checks[{i}].run", code="run-outside-checks"))
    problems.extend(_clause_problems(entry, mark, rel))
    return problems


def _clause_problems(entry: Theory, mark: _Marks, rel: str) -> list[Problem]:
    """Expectations and observations against the claim's clauses (docs/verdicts.md): every
    clause id they name exists, a claim of several clauses says which each one tests, and
    a clause that nothing tests is warned about."""
    problems = []
    known = entry.clause_ids
    shown = ", ".join(known)
    named: set[str] = set()

    def unknown(clause: str, loc: tuple[str | int, ...], field: str) -> Problem:
        hint = did_you_mean(clause, known) or f"; the claim's clauses: {shown}"
        return Problem(rel, *mark(loc), f"unknown clause '{clause}'{hint}", field=field, code="unknown-clause")

    for i, check in enumerate(entry.checks):
        for metric, expect in check.expect.items():
            loc: tuple[str | int, ...] = ("checks", i, "expect", metric)
            field = f"checks[{i}].expect.{metric}"
            if not expect.clause and len(known) > 1:
                example = f'{{is: "{expect}", clause: {known[0]}}}'
                written = "a plain comparison" if expect.plain else "an expectation without 'clause:'"
                problems.append(Problem(rel, *mark(loc),
                                        f"{written} in a claim of {len(known)} clauses; say which clause it tests: "
                                        f"{metric}: {example} (clauses: {shown})",
                                        field=field, code="expectation-without-clause"))
            for clause in expect.clause:
                if clause in known:
                    named.add(clause)
                else:
                    problems.append(unknown(clause, (*loc, "clause"), f"{field}.clause"))
            if not expect.clause and len(known) == 1:
                named.add(known[0])
            if expect.null is not None and expect.null == metric:
                problems.append(Problem(rel, *mark((*loc, "null")),
                                        f"'{metric}' is its own null; name the metric the check returns for the "
                                        f"null hypothesis, e.g. {metric}_null",
                                        field=f"{field}.null", code="bad-null"))
        for metric, clauses in check.observe.items():
            loc = ("checks", i, "observe", metric)
            field = f"checks[{i}].observe.{metric}"
            if metric in check.expect:
                problems.append(Problem(rel, *mark(loc), f"'{metric}' is both expected and observed; keep one",
                                        field=field, code="observed-and-expected"))
            for clause in clauses:
                if clause in known:
                    named.add(clause)
                else:
                    problems.append(unknown(clause, loc, field))
    if entry.checks:
        for clause in known:
            if clause not in named:
                loc = ("clauses", clause) if entry.clauses else ("statement",)
                problems.append(Problem(rel, *mark(loc),
                                        f"clause '{clause}' is tested by no expectation and observed by no check: "
                                        "it stays untested and the claim cannot be verified; name it in an "
                                        f"expectation's 'clause:' or under 'observe:'",
                                        field=f"clauses.{clause}" if entry.clauses else "statement",
                                        severity="warning", code="untested-clause"))
    return problems


def check_citations(record: Record, ids: Iterable[str] | None = None) -> list[Problem]:
    """Every typed citation must name an entry of the record (citations of an entry that could
    not be loaded are the graph's to report, once for all of them); ``ids``: of those entries
    only (None: every entry)."""
    problems = []
    entries, failed, cites = record.entries, record.failed, record.cites
    for entry_id in entries if ids is None else ids:
        for i, (cited, _relation) in enumerate(cites(entry_id)):
            if cited not in entries and cited != entry_id and cited not in failed:
                places = record.places[entry_id]
                hint = did_you_mean_id(cited, entries)
                problems.append(Problem(places.path, *places.cites[i],
                                        f"cites {cited}, which is not in the record{hint}",
                                        field=f"cites[{i}].id", code="missing-citation"))
    return problems


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the mapping at ``loc`` (for 'did you mean' hints)."""
    current: type[BaseModel] = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part)) or next(
            (f for f in current.model_fields.values() if f.alias == part), None)
        if info is None:
            return None
        inner = _submodel(info.annotation)
        if inner is None:
            return None
        current = inner
    return current


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _schema_problems(exc: ValidationError, model: type[BaseModel], source: Source, rel: str) -> list[Problem]:
    problems: dict[tuple[str, str], Problem] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p[:1].isupper()))
        kind = error["type"]
        name = loc[-1] if loc else ""
        ctx = error.get("ctx") or {}
        if kind == "missing":
            parent = loc[:-1]
            line, col = source.mark(parent)
            where = field_path(parent)
            message = f"missing required field '{name}'" + (f" in {where}" if where else "")
            problems.setdefault((field_path(loc), "missing"), Problem(rel, line, col, message, field_path(loc), code="missing-field"))
            continue
        if kind == "extra_forbidden":
            owner = _model_at(model, loc[:-1])
            hint = did_you_mean(str(name), _field_names(owner)) if owner else ""
            if not hint and owner:
                hint = f"; known fields: {', '.join(_field_names(owner))}"
            line, col = source.mark(loc, key=True)
            problems.setdefault((field_path(loc), kind),
                                Problem(rel, line, col, f"unknown field '{name}'{hint}", field_path(loc), code="unknown-field"))
            continue
        line, col = source.mark(loc)
        original = ctx.get("error")
        if isinstance(original, (ValueError, ExpectationSyntaxError)) and kind == "value_error":
            message = str(original)
        elif kind == "literal_error":
            given = error.get("input")
            expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
            choices = [c.strip() for c in expected.split(",")]
            message = f"'{given}' is not one of: {', '.join(choices)}{did_you_mean(str(given), choices)}"
        elif kind == "too_short":
            message = f"is empty; give at least {ctx.get('min_length', 1)}"
        elif error.get("input", "") is None:  # ``title:`` with nothing after it, or ``~``
            message = "has no value (it is empty or null); write one"
        else:
            given = error.get("input")
            shown = repr(given) if not isinstance(given, (dict, list)) else type(given).__name__
            message = f"{error['msg'][0].lower()}{error['msg'][1:]} (got {shown})"
        code = "bad-expectation" if "expect" in loc else "invalid-value"
        problems.setdefault((field_path(loc), "value"), Problem(rel, line, col, message, field_path(loc), code=code))
    return list(problems.values())
