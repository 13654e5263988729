"""The rendered site: every page composed (pure), then written incrementally and atomically.

``plan_site`` gathers what each page depends on into a key (a hash) and a way to compose it;
``render_site`` composes them all into ``{path: bytes}`` (pure: the same project and statuses
give the same bytes, no clock, no disk); ``write_site`` writes what changed into the output
folder, copies the checks' figures, and removes the pages it wrote before that are gone now.

A manifest (``.recordtool-manifest.json`` in the output folder) lists every file recordtool
wrote, with its key and a hash of its content: an unchanged page is not even composed again,
a page composed again the same is not rewritten, and only files the manifest lists are ever
removed. Nothing is written outside the output folder, which may not be the project root or
one of the record's entry folders.

A snapshot (``.recordtool-snapshot.json``, next to the manifest; local state, not meant to be
committed) keeps what the last ``recordtool render`` read and wrote: the size and modification
time of every input file (entries, verdicts and figures, the checks package, pyproject.toml),
the versions the claims' fingerprints compare, recordtool's own code, and every file written.
When all of it is as it was, ``unchanged`` says so without opening the project: the site is
already what a render would write.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool import __version__, parallel
from recordtool.atomic import write_atomic
from recordtool.record.config import ConfigError, find_root, load_config

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.render.linkcheck import BrokenLink
    from recordtool.render.sitemap import Context
    from recordtool.verify.verdict import ClaimStatus

# The modules that compose pages (escape, page, prose, ...) import pydantic and markdown-it:
# they are imported where pages are composed, so that deciding "nothing changed" stays cheap.

MANIFEST = ".recordtool-manifest.json"
SNAPSHOT = ".recordtool-snapshot.json"
SNAPSHOT_FORMAT = 1
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its mtime's tick
PACKAGE = Path(__file__).resolve().parents[1]  # recordtool/, every stage
# Distributions whose version can change what a page says (parsing YAML and Markdown).
RENDER_DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")  # they shape pages too

MANIFEST_FORMAT = 1


class RenderError(Exception):
    """The site cannot be written where asked; the message says why."""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of recordtool's own code (every module: loading and linking shape pages too),
    its version, Python's and those of the packages that parse and load the record: pages are
    composed again when any of them changes."""
    digest = hashlib.blake2b(__version__.encode("utf-8"), digest_size=8)
    digest.update(sys.version.encode("utf-8"))
    for dist in RENDER_DEPENDENCIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{dist}={metadata.version(dist)}".encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode("utf-8"))
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass
class Plan:
    """Every file of the site: pages with the key of their inputs, and figures to copy."""

    pages: list[str]  # every page, sorted
    key: Callable[[str], str | None]  # page -> the key of its inputs (None: compose every time)
    compose: Callable[[str], str]
    assets: dict[str, str] = field(default_factory=dict)  # output path -> source, relative to the root
    indexes: list[str] = field(default_factory=list)  # the index pages (composed together, on first need)


@dataclass(frozen=True)
class Site:
    """The composed site: pages by path, and figures to copy (output path -> source path)."""

    pages: dict[str, bytes]
    assets: dict[str, str]


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    files: dict[str, Written] = field(default_factory=dict)  # the new manifest
    stats: dict[str, list[int]] = field(default_factory=dict)  # file -> [size, mtime_ns] as written
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
    errors: int = 0  # problems of the record (entries that could not be loaded)

    def summary(self, where: str) -> str:
        return (f"rendered {self.entries} entr{'y' if self.entries == 1 else 'ies'} into {where}: "
                f"{len(self.written)} written, {self.unchanged} unchanged, {len(self.removed)} removed")


def context(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Context:
    """The context pages are composed in; ``out`` places relative links to project files."""
    from recordtool.render.sitemap import Context

    config = project.config
    rel = config.relative((out if out is not None else config.pages).resolve())
    out_rel = None if Path(rel).is_absolute() else rel
    return Context(project, statuses, out=out_rel, verdicts=config.relative(config.verdicts))


def plan_site(ctx: Context) -> Plan:
    """Every page of the site with the key of its inputs; figures to copy."""
    from recordtool.render import index, page
    from recordtool.render.sitemap import entry_page, figure_file

    project = ctx.project
    shared = repr((code_version(), ctx.out, ctx.verdicts, sorted(project.config.relations.items()),
                   [(k.prefix, k.name) for k in project.config.kinds.values()]))
    owners: dict[str, str] = {entry_page(entry_id): entry_id for entry_id in project.record.entries}
    faces: dict[str, str] = {}
    indexes: dict[str, str] = {}
    assets: dict[str, str] = {}
    for status in ctx.statuses.values():
        if status.verdict is None:
            continue
        for figure in status.verdict.figures:
            target = figure_file(figure, ctx.verdicts)
            if target is not None:
                assets[target] = figure

    def key(path: str) -> str | None:
        owner = owners.get(path)
        return _entry_key(ctx, owner, shared, faces) if owner is not None else None

    def compose(path: str) -> str:
        owner = owners.get(path)
        if owner is not None:
            return page.render_entry(ctx, owner)
        text = indexes.pop(path, None)  # each is composed once: let it go once written
        if text is None:
            indexes.update(index.index_pages(ctx))
            text = indexes.pop(path)
        return text

    paths = index.index_paths(ctx)
    return Plan(sorted([*owners, *paths]), key, compose, dict(sorted(assets.items())), sorted(paths))


def _entry_key(ctx: Context, entry_id: str, shared: str, faces: dict[str, str]) -> str:
    """A hash of everything ``entry_id``'s page shows: the entry, its status, what the page
    shows of each neighbour (worked out once per entry, its "face"), and whether each id of a
    quoted sentence is in the record (a link, or "not in the record").

    An entry is known by the bytes of its file (and the file's path): the same bytes give the
    same entry, so its face needs no more to stand for its title, its citations and the
    sentences of it a page quotes. Whether an id the entry cites or mentions is in the record
    needs no more either: it is exactly whether that id is among the neighbours."""
    graph = ctx.project.graph
    entries = ctx.project.record.entries
    parts = [shared, faces.get(entry_id) or _face(ctx, entry_id, faces), repr(ctx.statuses.get(entry_id))]
    parts += [faces.get(n) or _face(ctx, n, faces) for n in graph.neighbours(entry_id)]
    findall = ctx.pattern.findall
    for link in graph.backlinks(entry_id):  # the ids in the sentences quoted, linked or not
        for mention in link.mentions:
            parts += [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
    return hashlib.blake2b("\0".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def _face(ctx: Context, entry_id: str, faces: dict[str, str]) -> str:
    """What pages show of an entry, as a string: its id, file, content and state."""
    places = ctx.project.record.places[entry_id]
    face = faces[entry_id] = f"{entry_id} {places.path} {places.digest} {ctx.state(entry_id)}"
    return face


def render_site(project: Project, statuses: dict[str, ClaimStatus], out: Path | None = None) -> Site:
    """Every page of the site, composed: ``{path: bytes}`` (pure; byte-identical across runs)."""
    plan = plan_site(context(project, statuses, out))
    return Site({p: plan.compose(p).encode("utf-8") for p in plan.pages}, plan.assets)


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


class _Folders:
    """The folders of the output folder pages go into: each checked (no link leads out of
    the output folder) and created once per render, not once per page."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._checked: set[str] = {base}
        self._made: set[str] = {base}

    def inside(self, rel: str) -> str:
        """``base/rel`` for a safe relative path ``rel``; RenderError for one that would leave."""
        parts = rel.split("/")
        if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\0" in rel:
            raise RenderError(f"refusing to write '{rel}': not a plain path inside the output folder")
        path = os.path.join(self.base, *parts)
        folder = os.path.dirname(path)
        if folder not in self._checked:
            real = os.path.realpath(folder)
            if real != self.base and not real.startswith(self.base + os.sep):
                raise RenderError(f"refusing to write '{rel}': it leads outside the output folder (a link?)")
            self._checked.add(folder)
        return path

    def make(self, folder: str) -> None:
        if folder not in self._made:
            os.makedirs(folder, exist_ok=True)
            self._made.add(folder)


Written = tuple[str | None, int, str]
"""What the manifest keeps of a file written: the key of its inputs (None for a copied figure),
its size and the hash of its content."""


def read_manifest(out: Path) -> dict[str, Written]:
    """The files recordtool wrote into ``out`` last time (path -> key, size, hash); {} if none."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    written: dict[str, Written] = {}
    for rel, v in files.items():
        if isinstance(v, dict):
            key, size, digest = v.get("key"), v.get("size"), v.get("hash")
            if (key is None or isinstance(key, str)) and isinstance(size, int) and isinstance(digest, str):
                written[str(rel)] = (key, size, digest)
    return written


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def write_site(plan: Plan, out: Path, root: Path, last: dict[str, list[int]] | None = None) -> WriteReport:
    """Write the pages of ``plan`` into ``out`` (already checked): compose and write only what
    changed, copy figures, remove what recordtool wrote before and is gone, keep a manifest.

    ``last``: [size, mtime_ns] of each file as the last render wrote it (from its snapshot): a
    file still so is as written, and its hash in the manifest says whether it changes."""
    report = WriteReport()
    out.mkdir(parents=True, exist_ok=True)
    base = os.path.realpath(out)
    folders = _Folders(base)
    old = read_manifest(out)
    last = last or {}
    new = report.files
    _write_pages(plan, base, folders, report, old, last)
    for rel, source in plan.assets.items():
        try:
            data = (root / source).read_bytes()
        except OSError:
            report.missing.append(source)
            continue
        new[rel] = (None, len(data), content_hash(data))
        stat, written = _put(folders, rel, data, new[rel][2], old.get(rel), last.get(rel))
        report.stats[rel] = stat
        if written:
            report.written.append(rel)
        else:
            report.unchanged += 1
    for rel in sorted(set(old) - set(new)):
        try:
            path = folders.inside(rel)
        except RenderError:
            continue  # a damaged manifest never makes us delete outside the folder
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
            report.removed.append(rel)
            _prune(base, os.path.dirname(path))
    if new != old or not os.path.exists(os.path.join(base, MANIFEST)):
        write_atomic(Path(base) / MANIFEST, _manifest_text(new))
    return report


def _manifest_text(files: dict[str, Written]) -> str:
    """The manifest as JSON with one line per file (a render's change reads as a short diff),
    written with the C encoder: ``indent`` would take the pure-Python one, ten times slower."""
    lines = [f"\n {json.dumps(rel)}: {json.dumps({'hash': digest, 'key': key, 'size': size})}"
             for rel, (key, size, digest) in sorted(files.items())]
    return f'{{"format": {MANIFEST_FORMAT}, "files": {{' + ",".join(lines) + ("\n" if lines else "") + "}}\n"


PARALLEL_MIN = 2_000  # pages; below this a second process costs more than it saves


def _write_pages(plan: Plan, base: str, folders: _Folders, report: WriteReport,
                 old: dict[str, Written], last: dict[str, list[int]]) -> None:
    """Work out each page's key; compose and write the pages whose key changed (or whose
    file is not as written). On a large record the pages are shared with a second process
    (``parallel.in_two``; pages are independent, composing is pure), which nearly halves the
    time on two cores. Every page is still written atomically; this process alone writes
    the manifest."""
    def run(rels: list[str]) -> list[tuple[Written, list[int], bool]]:
        done = []
        for rel in rels:
            key = plan.key(rel)
            before = old.get(rel)
            if key is not None and before is not None and before[0] == key:
                stat = _stat(os.path.join(base, *rel.split("/")))
                # as written last time (or, without a snapshot, of the size written)
                if stat is not None and (stat == last.get(rel) or (rel not in last and stat[0] == before[1])):
                    done.append((before, stat, False))
                    continue
            data = plan.compose(rel).encode("utf-8")
            digest = content_hash(data)
            stat, written = _put(folders, rel, data, digest, before, last.get(rel))
            done.append(((key, len(data), digest), stat, written))
        return done

    # The index pages are composed together (they share their tallies): one chunk of their own.
    indexes = set(plan.indexes)
    chunks = [plan.indexes, *parallel.chunked([rel for rel in plan.pages if rel not in indexes])]
    order = [rel for chunk in chunks for rel in chunk]
    for rel, (entry, stat, written) in zip(order, parallel.in_two(run, order, min_items=PARALLEL_MIN,
                                                                      chunks=chunks), strict=True):
        report.files[rel] = entry
        report.stats[rel] = stat
        if written:
            report.written.append(rel)
        else:
            report.unchanged += 1
    report.written.sort()


def _stat(path: str) -> list[int] | None:
    """[size, mtime_ns] of a file, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _put(folders: _Folders, rel: str, data: bytes, digest: str, before: Written | None,
         last: list[int] | None) -> tuple[list[int], bool]:
    """Write ``data`` (whose hash is ``digest``) to ``rel`` unless the file already holds it:
    its [size, mtime_ns] then, and whether it was written."""
    path = folders.inside(rel)
    stat = _stat(path)
    same = False
    if stat is not None and stat[0] == len(data):
        if before is not None and before[2] and stat == last:
            same = before[2] == digest  # the file is as written: its hash says
        else:
            try:
                with open(path, "rb") as handle:
                    same = handle.read() == data
            except OSError:
                same = False
    if same:
        assert stat is not None
        return stat, False
    folders.make(os.path.dirname(path))
    return _replace(path, data), True


def _replace(path: str, data: bytes) -> list[int]:
    """Write ``path`` atomically: a temporary file in the same folder, renamed over it; gives
    the [size, mtime_ns] of what was written.

    Unlike ``recordtool.atomic.write_atomic`` it does not fsync each file: pages are derived
    output, rewritten by the next render, and an fsync per page would cost seconds on a large
    record. A reader still sees the old page or the new one, never half of either.
    """
    # One temporary name per folder and process, used again for every page: creating a new
    # name for each page (as mkstemp does) makes the file system ten times slower here.
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".recordtool-{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileExistsError:  # left by a process of the same id that died: a fresh name then
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return [st.st_size, st.st_mtime_ns]


def _prune(base: str, folder: str) -> None:
    """Remove ``folder`` and its parents up to ``base`` while they are empty."""
    while folder != base and folder.startswith(base + os.sep):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)


def render(project: Project, out: Path | None = None, *, check: bool = False,
           statuses: dict[str, ClaimStatus] | None = None, inputs: Inputs | None = None) -> RenderReport:
    """Render the record's pages into ``out`` (default: ``[tool.recordtool] pages``); with
    ``check``, parse the written pages and report every link or image that does not resolve.

    ``inputs``: the snapshot of the inputs taken before ``project`` was opened
    (``snapshot_inputs``); when given (and ``statuses`` is not), the snapshot is kept for
    ``unchanged``. Without it, any snapshot in the output folder is removed.
    """
    config = project.config
    folder = out if out is not None else config.pages
    target = check_output_folder(config, folder)
    own_statuses = statuses is None
    if statuses is None:
        from recordtool.verify.status import assess

        statuses = assess(project)
    base = os.path.realpath(target)
    last = _read_snapshot(base).get("outputs")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(base, SNAPSHOT))  # from now on, it no longer holds
    plan = plan_site(context(project, statuses, target))
    report = write_site(plan, target, config.root, last if isinstance(last, dict) else None)
    broken = None
    if check:
        from recordtool.render import linkcheck

        broken = linkcheck.check_folder(target, list(plan.pages))
    result = RenderReport(target, len(project.record.entries), len(plan.pages), report.written,
                          report.unchanged, report.removed, report.missing, broken, len(project.errors))
    if inputs is not None and own_statuses and inputs.out == os.path.realpath(target):
        _keep_snapshot(project, inputs, report, result, sorted(set(plan.assets.values())))
    return result


# The snapshot: deciding "nothing changed" without opening the project ------------------------


@dataclass
class Inputs:
    """What a render reads, as found on disk before the project is opened."""

    root: str
    out: str  # the output folder, resolved
    code: str  # recordtool's code and version
    files: dict[str, list[Any]]  # path -> [size, mtime_ns] (+ content hash when changed just now)

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "out": self.out, "code": self.code, "files": self.files}


def snapshot_inputs(root: Path | None = None, out: Path | None = None) -> Inputs | None:
    """The inputs of a render of the project at ``root`` (or found above the current folder)
    into ``out``, taken before the project is opened; None when the project or the output
    folder cannot be used (opening or rendering will say why)."""
    try:
        base = root.resolve() if root is not None else find_root(Path.cwd())
        config = load_config(base)
        target = check_output_folder(config, out if out is not None else config.pages)
    except (ConfigError, RenderError, OSError):
        return None
    start = time.time_ns()
    files: dict[str, list[Any]] = {}
    pyproject = str(config.root / "pyproject.toml")
    stat = _stat(pyproject)
    if stat is not None:
        files[pyproject] = stat
    for kind in config.kinds.values():
        _walk(str(config.record / kind.folder), files)
    _walk(str(config.verdicts), files)
    _walk(str(config.root / config.checks), files)
    for path, value in files.items():
        if value[1] >= start - RACY_NS:  # may change again unseen within its mtime's tick
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                value.append(content_hash(handle.read()))
    return Inputs(str(base), os.path.realpath(target), code_version(), files)


def _walk(folder: str, into: dict[str, list[Any]]) -> None:
    """[size, mtime_ns] of every file under ``folder`` (links to folders not followed, as
    loading does not; ``__pycache__`` left out: importing a check rewrites it)."""
    stack = [folder]
    while stack:
        try:
            scan = os.scandir(stack.pop())
        except OSError:
            continue
        with scan:
            for item in scan:
                if item.is_dir(follow_symlinks=False):
                    if item.name != "__pycache__":
                        stack.append(item.path)
                    continue
                try:
                    st = item.stat()
                except OSError:
                    into[item.path] = [-1, -1]
                    continue
                into[item.path] = [st.st_size, st.st_mtime_ns]


def _read_snapshot(base: str) -> dict[str, Any]:
    try:
        with open(os.path.join(base, SNAPSHOT), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
        return {}
    return data


def _versions(packages: list[str]) -> dict[str, str | None]:
    """The installed versions of ``packages`` (import names, as fingerprints keep them: they
    decide staleness); read from metadata, never by importing. Python's and the versions of
    what pages are made with are in ``code_version``."""
    from recordtool.verify.fingerprint import package_version

    return {name: package_version(name) for name in packages}


def _keep_snapshot(project: Project, inputs: Inputs, report: WriteReport, result: RenderReport,
                   sources: list[str]) -> None:
    """Keep what this render read and wrote, for ``unchanged``."""
    from recordtool.verify.fingerprint import Scanner

    config = project.config
    scanner = Scanner(config)
    packages: set[str] = set()
    extra: dict[str, list[Any] | None] = {}
    modules = {check.module for claim in project.record.claims() for check in claim.checks}
    for module in sorted(modules):
        scan = scanner.scan(module)
        packages |= scan.packages
        parts = module.split(".")
        if parts[0] != config.checks:  # outside the checks package, which is snapshot whole
            for i in range(1, len(parts) + 1):
                stem = config.root.joinpath(*parts[:i])
                for path in (str(stem.with_suffix(".py")), str(stem / "__init__.py")):
                    extra[path] = _stat(path)
    for source in sources:  # figures named by verdicts, wherever they are
        path = str(config.root / source)
        if path not in inputs.files:
            extra[path] = _stat(path)
    base = inputs.out
    outputs = dict(report.stats)
    manifest = _stat(os.path.join(base, MANIFEST))
    if manifest is None:
        return
    data = {
        "format": SNAPSHOT_FORMAT,
        **inputs.as_json(),
        "extra": extra,
        "versions": _versions(sorted(packages)),
        "outputs": outputs,
        "manifest": manifest,
        "report": {"entries": result.entries, "pages": result.pages, "unchanged": len(report.files),
                   "missing": result.missing, "errors": result.errors},
    }
    _replace(os.path.join(base, SNAPSHOT), json.dumps(data, separators=(",", ":")).encode("utf-8"))


def unchanged(inputs: Inputs) -> RenderReport | None:
    """What ``render`` would report when the snapshot of the last render still holds (every
    input and every file written as it was, the same code and versions): nothing to write.
    None when anything differs; then render."""
    last = _read_snapshot(inputs.out)
    if not last or last.get("root") != inputs.root or last.get("out") != inputs.out:
        return None
    if last.get("code") != inputs.code:
        return None
    files = last.get("files")
    if not isinstance(files, dict) or len(files) != len(inputs.files):
        return None
    for path, now in inputs.files.items():
        then = files.get(path)
        if not isinstance(then, list) or then[:2] != now[:2]:
            return None
        if len(then) > 2 and (len(now) < 3 or now[2] != then[2]):
            if len(now) < 3:  # it was racy then, and is old now: check its content
                try:
                    with open(path, "rb") as handle:
                        if content_hash(handle.read()) != then[2]:
                            return None
                except OSError:
                    return None
            else:
                return None
    for path, then in (last.get("extra") or {}).items():
        if _stat(path) != then:
            return None
    outputs = last.get("outputs")
    if not isinstance(outputs, dict) or _stat(os.path.join(inputs.out, MANIFEST)) != last.get("manifest"):
        return None
    for rel, then in outputs.items():
        if _stat(os.path.join(inputs.out, *rel.split("/"))) != then:
            return None
    versions = last.get("versions")
    if not isinstance(versions, dict):
        return None
    packages = [k for k in versions if k != "python" and not k.startswith("dist:")]
    if _versions(packages) != versions:
        return None
    info = last.get("report") or {}
    return RenderReport(Path(inputs.out), int(info.get("entries", 0)), int(info.get("pages", 0)), [],
                        int(info.get("unchanged", 0)), [], list(info.get("missing", [])), None,
                        int(info.get("errors", 0)))
