"""Writing the site: the pages of a plan composed and written incrementally and atomically.

``write_site`` writes what changed into the output folder, copies the checks' figures, removes
the pages it wrote before that are gone now (only files the manifest lists), and keeps the
manifest. Nothing is written outside the output folder, which may not be the project root or
one of the record's entry folders.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool import parallel
from recordtool.atomic import sweep, temporary_name, write_atomic
from recordtool.record.confine import Refused, read_inside, refused
from recordtool.render import manifest
from recordtool.render.manifest import MANIFEST, Manifest, Written
from recordtool.safetext import some
from recordtool.snapshot import content_hash, stat_file

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator

    from recordtool.meter import Meter
    from recordtool.record.config import Config
    from recordtool.render.plan import Plan
    from recordtool.render.slices import Memos, Packed, Shared


class RenderError(Exception):
    """The site cannot be written where asked; the message says why."""


class Outputs:
    """The files the last render wrote, as its snapshot keeps them: their paths, the [size,
    mtime_ns] of each as written packed in one array (two numbers a path), and the manifest's.
    At 100,000 pages a dict of a list per file took a third of a second to make, and as long
    again to write back."""

    def __init__(self, paths: list[str], stats: array[int], manifest: list[int] | None = None) -> None:
        assert len(stats) == 2 * len(paths)
        self.paths, self.stats, self.manifest = paths, stats, manifest
        self._where: dict[str, int] | None = None
        # ``stat_ahead`` (or the worker that took the inputs: ``snapshot.Taking``): the folder, and
        # what gives the worker's answer (waiting for it; raises if there is none)
        self._ahead: tuple[str, Callable[[], bytes]] | None = None

    def stat_ahead(self, base: str, jobs: int | None) -> None:
        """Start stat-ing every file under ``base`` (``spoiled``) in a forked worker, while this
        process goes on (opening the project takes seconds on a large record): at 100,000 pages
        the stats take a quarter of a second. Only with more than one job, at least
        ``AHEAD_MIN`` files, ``fork``, and no other thread (forking those is unsafe); not when a
        worker is stat-ing them already (``given``)."""
        global _ahead
        if self._ahead is not None or parallel.workers(jobs) < 2 or len(self.paths) < AHEAD_MIN:
            return
        import multiprocessing  # (only here: a render that starts no worker does without it)
        from concurrent.futures import ProcessPoolExecutor

        if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            return
        _ahead = (base, self.paths)  # the worker is forked with it: nothing to pickle
        try:
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            parallel.roomy_results(pool)  # (the states of 100,000 pages: 1.6 MB)
            self._ahead = (base, pool.submit(_stat_ahead).result)  # (the worker is forked here)
            pool.shutdown(wait=False)
        except OSError:
            self._ahead = None
        finally:
            _ahead = None

    def given(self, base: str, answer: Callable[[], bytes]) -> None:
        """The files are being stat-ed under ``base`` by a worker; ``answer`` waits for what
        ``stat_all`` gives there, packed (or raises: they are stat-ed here then)."""
        self._ahead = (base, answer)

    def where(self) -> dict[str, int]:
        """Each path's place in ``paths``."""
        if self._where is None:
            self._where = {rel: n for n, rel in enumerate(self.paths)}
        return self._where

    def get(self, rel: str) -> list[int] | None:
        n = self.where().get(rel)
        return None if n is None else [self.stats[2 * n], self.stats[2 * n + 1]]

    def spoiled(self, base: str) -> set[str]:
        """The files not as written now under ``base`` (changed, gone): every file stat-ed
        (here, or ahead by a worker: ``stat_ahead``), and the states compared at once."""
        current = None
        if self._ahead is not None:
            (folder, answer), self._ahead = self._ahead, None
            with contextlib.suppress(Exception):  # a worker that failed: stat them here
                if folder == base:
                    current = array("q")
                    current.frombytes(answer())
        if current is None or len(current) != len(self.stats):
            current = stat_all(base, self.paths)
        stats = self.stats
        if current == stats:
            return set()
        spoiled: set[str] = set()
        step = 4096
        for low in range(0, len(stats), step):
            if current[low:low + step] != stats[low:low + step]:
                spoiled.update(self.paths[n // 2] for n in range(low, min(low + step, len(stats)))
                               if current[n] != stats[n])
        return spoiled


AHEAD_MIN = 20_000  # files written by the last render; below this, a worker saves little (10,000 pages: 25 ms)
_ahead: tuple[str, list[str]] | None = None  # what a worker forked by ``Outputs.stat_ahead`` stats


def _stat_ahead() -> bytes:
    """In a worker forked by ``Outputs.stat_ahead``: the [size, mtime_ns] of each file, packed."""
    assert _ahead is not None
    return stat_all(*_ahead).tobytes()


def stat_all(base: str, paths: list[str]) -> array[int]:
    """The [size, mtime_ns] of each of ``paths`` under ``base`` ([-1, -1]: none), packed."""
    current = array("q")
    add, stat, sep = current.append, os.stat, os.sep
    prefix = base + sep
    for rel in paths:
        try:
            st = stat(prefix + (rel if sep == "/" else rel.replace("/", sep)))
        except OSError:
            add(-1)
            add(-1)
            continue
        add(st.st_size)
        add(st.st_mtime_ns)
    return current


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    files: Manifest = field(default_factory=Manifest)  # the new manifest
    stats: dict[str, list[int]] = field(default_factory=dict)  # file -> [size, mtime_ns] as written
    # the files of the last render found as it wrote them (those not in ``stats``): from its snapshot
    kept: Outputs | None = None
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # figures named by a verdict but not found
    refused: list[str] = field(default_factory=list)  # figures not copied, and why: "path why"

    def outputs(self) -> Outputs:
        """Every file of the new manifest with its [size, mtime_ns] as written, in the order
        of their paths (those of the last render's files left as they were taken from it)."""
        paths = sorted(self.files.lines)
        stats, kept = self.stats, self.kept
        if kept is not None and kept.paths == paths:  # the same files: the states that changed
            packed = array("q", kept.stats)
            where = kept.where()
            for rel, stat in stats.items():
                n = where[rel]
                packed[2 * n], packed[2 * n + 1] = stat
            return Outputs(paths, packed)
        packed = array("q")
        for rel in paths:
            state = stats.get(rel) or (kept.get(rel) if kept is not None else None)
            assert state is not None, rel
            packed.extend(state)
        return Outputs(paths, packed)


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



def write_site(plan: Plan, out: Path, root: Path, last: Outputs | None = None, *,
               jobs: int | None = None, trust_keys: bool = True, meanwhile: Iterable[object] = (),
               sources_as_left: Collection[str] = (), meter: Meter | None = None) -> WriteReport:
    """Write the pages of ``plan`` into ``out`` (already checked): compose and write only what
    changed, copy figures, remove what recordtool wrote before and is gone, keep a manifest.

    ``last``: the files the last render wrote, as its snapshot keeps them: a file still as
    written (its size and time) is as written, and its hash in the manifest says whether it
    changes; a manifest as written is read line by line (``manifest.read``).
    ``jobs``: how many processes may compose and write pages (None: every core).
    ``trust_keys``: whether the manifest's keys were made by this code; when not, every page
    is composed (and written only when its bytes changed). ``meanwhile``: other work of this
    process's own, in steps, done while workers compose pages (``parallel.map_shipped``), or
    before the pages when none do. ``sources_as_left``: the figures (paths relative to ``root``)
    whose files are as the last render found them (``snapshot.as_left``); the copy of such a
    figure that is still as written is kept without reading, checking or hashing the figure
    again (a verified record holds thousands: reading them took a quarter of a render after
    one edit). ``meter``: the command's progress line (``recordtool.meter``), told of the pages
    written."""
    report = WriteReport()
    out.mkdir(parents=True, exist_ok=True)
    base = os.path.realpath(out)
    if last is None:  # the last render did not finish (or there was none): what it left half-done goes
        for folder, _dirs, _files in os.walk(base):
            sweep(folder)
    folders = _Folders(base)
    as_written = last is not None and last.manifest is not None and stat_file(os.path.join(base, MANIFEST)) == last.manifest
    old = manifest.read(Path(base), as_written=as_written)
    ahead = _own(base, old, [*plan.pages, *plan.assets])
    new = report.files
    copied: list[Copied] = []  # each figure's outcome, in the plan's order

    def copy_figures(still_written: Callable[[str], bool]) -> Iterator[None]:
        """Copy the figures, a step of ``FIGURES_STEP`` at a time: this process's own work while
        workers compose the pages (a cold render of a verified record copies thousands)."""
        for n, (rel, source) in enumerate(plan.assets.items(), 1):
            kept = still_written(rel) and source in sources_as_left and old.copied(rel)
            copied.append((True, None, None) if kept else
                          _copy(folders, root, rel, source, old.get(rel), last.get(rel) if last is not None else None))
            if n % FIGURES_STEP == 0:
                yield

    _write_pages(plan, base, folders, report, old, last, jobs, trust_keys, meanwhile, copy_figures, meter)
    for (rel, source), (kept, why, written) in zip(plan.assets.items(), copied, strict=True):
        if kept:
            new.keep(rel, old)  # copied from the same file, and still as copied (its state: ``report.kept``)
            report.unchanged += 1
        elif written is None:
            (report.missing if why is None else report.refused).append(source if why is None else f"{source} {why}")
        else:
            size, digest, stat, changed = written
            new.put(rel, (None, size, digest))
            report.stats[rel] = stat
            if changed:
                report.written.append(rel)
            else:
                report.unchanged += 1
    for rel in sorted(old.lines.keys() - new.lines.keys()):
        try:
            path = folders.inside(rel)
        except RenderError:
            continue  # a damaged manifest never makes us delete outside the folder
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
            report.removed.append(rel)
            _prune(base, os.path.dirname(path))
    if new != (ahead if ahead is not None else old) or not os.path.exists(os.path.join(base, MANIFEST)):
        write_atomic(Path(base) / MANIFEST, new.text())
    return report


# What copying one figure came to: kept as the last render copied it; else why it was not
# copied (None: not found) or, when it was, (size, hash, [size, mtime_ns], whether written).
Copied = tuple[bool, "str | None", "tuple[int, str, list[int], bool] | None"]


def _copy(folders: _Folders, root: Path, rel: str, source: str, before: Written | None,
          last: list[int] | None) -> Copied:
    """Copy the figure ``source`` (from ``root``) to ``rel``; ``before``: the manifest's line of
    ``rel``. A figure whose file is as the last render found it, its copy still as written and
    the manifest's line that of a figure copied (``Manifest.copied``) is kept without being read,
    and never comes here."""
    why, data = read_figure(root, source, rel)
    if data is None:
        return False, why, None
    digest = content_hash(data)
    stat, written = _put(folders, rel, data, digest, before, last)
    return False, None, (len(data), digest, stat, written)


PENDING: Written = (None, 0, "")  # a file about to be written for the first time (``_own``)
SHOWN_THEIRS = 5  # files named when refusing to write over files recordtool did not write


def _own(base: str, old: Manifest, paths: list[str]) -> Manifest | None:
    """Before a render writes into ``base``: RenderError when a file it is to write (a page or
    a figure of ``paths``) is there but recordtool did not write it (the last render's
    manifest ``old`` does not list it): a user's ``index.md`` in a folder given to ``-o`` is
    never overwritten. The files to be written for the first time are then listed in the
    manifest (``PENDING``) before any is written, so that a render stopped half-way (Ctrl-C, a
    full disk) leaves only files the next render knows as its own: the manifest so written, or
    None when there were none."""
    kept = old.lines
    fresh = [rel for rel in paths if rel not in kept]
    if not fresh:
        return None
    if len(old) == 0 and not os.path.lexists(os.path.join(base, MANIFEST)):  # a first render here
        there = _listed(base)
        theirs = [rel for rel in fresh if rel in there]
    else:
        theirs = [rel for rel in fresh if os.path.lexists(os.path.join(base, *rel.split("/")))]
    if theirs:
        shown = some(theirs, SHOWN_THEIRS)
        raise RenderError(f"{base} holds {len(theirs)} file{'s' if len(theirs) != 1 else ''} that recordtool "
                          f"did not write and would write over: {shown}; move {'them' if len(theirs) != 1 else 'it'} "
                          "away, or render into a folder "
                          f"of its own with -o (pages of an earlier render whose {MANIFEST} is gone: delete them, "
                          "and render again)")
    ahead = Manifest(dict(old.lines))
    for rel in fresh:
        ahead.put(rel, PENDING)
    write_atomic(Path(base) / MANIFEST, ahead.text())
    return ahead


def _listed(base: str) -> set[str]:
    """Every path under ``base`` (files, folders, links; relative, with '/'), links not followed."""
    out: set[str] = set()
    for folder, folders, files in os.walk(base):
        rel = os.path.relpath(folder, base)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out.update(prefix + name for name in (*folders, *files))
    return out


PARALLEL_MIN = 2_000  # pages; below this starting workers costs more than they save
KEYS_STEP = 500  # pages whose keys are worked out in one step of this process's own work (``meanwhile``)
FIGURES_STEP = 16  # figures copied in one step of it




def _write_pages(plan: Plan, base: str, folders: _Folders, report: WriteReport,
                 old: Manifest, last: Outputs | None, jobs: int | None,
                 trust_keys: bool = True, meanwhile: Iterable[object] = (),
                 then: Callable[[Callable[[str], bool]], Iterable[object]] | None = None,
                 meter: Meter | None = None) -> None:
    """Work out each page's key; compose and write the pages whose key changed (or whose
    file is not as written). Deciding which is cheap and done here; when many pages are to be
    composed, they are shared by a pool of workers (``recordtool.parallel``; pages are
    independent, composing is pure), each giving back only what the manifest keeps of a page,
    so that a render after a small edit starts no pool. Every page is still written
    atomically; this process alone writes the manifest. ``then``: more work of this process's
    own in steps (copying the figures), done after ``meanwhile``'s and the keys', given whether
    a file of the last render (a figure copied) is as written, known from its snapshot
    (``report.kept``; False for every file when that is not known)."""
    todo: list[str] = []
    keys: dict[str, str | None] = {}
    new = report.files
    as_written: Callable[[str], bool] = _nothing_known
    # A page is left as it is only when its key is the one kept for it and its file is as
    # written; when no key is trusted or kept (a first render, new code), every page is
    # composed, and the keys (0.4 s for 10,000 entries) are worked out while the workers
    # start (``meanwhile``).
    if trust_keys and len(old):
        spoiled: set[str] = set()
        where: dict[str, int] = {}
        if last is not None:  # the files the last render wrote: each stat-ed, compared at once
            spoiled, where = last.spoiled(base), last.where()
            report.kept = last
            as_written = _as_written(where, spoiled)
        # (one pass over every page, 100,000 at 100,000 entries: what it calls looked up once)
        keep, has_key, kept_lines, plan_key = new.keep, old.has_key, old.lines, plan.key
        quick = new.plain() and old.plain()  # a kept page's line copied as it is (``Manifest.keep``)
        new_lines = new.lines
        unchanged = 0
        for rel in plan.pages:
            key = keys[rel] = plan_key(rel)
            if key is not None and has_key(rel, key):
                if rel in where:
                    if rel not in spoiled:
                        if quick:
                            new_lines[rel] = kept_lines[rel]
                        else:
                            keep(rel, old)
                        unchanged += 1
                        continue
                else:  # not in the last render's snapshot: as written when of the size written
                    stat = stat_file(os.path.join(base, *rel.split("/")))
                    before = old.get(rel)
                    if stat is not None and before is not None and stat[0] == before[1]:
                        keep(rel, old)
                        report.stats[rel] = stat
                        unchanged += 1
                        continue
            todo.append(rel)
        report.unchanged += unchanged
    else:
        todo = list(plan.pages)

    def work_out_keys() -> Iterator[None]:
        yield from plan.work_out_keys()  # (every key, in steps)
        for n, rel in enumerate(plan.pages, 1):
            if rel not in keys:
                keys[rel] = plan.key(rel)
            if n % KEYS_STEP == 0:
                yield

    # An index page whose key changed is made from the page as written, when the keys are
    # trusted (the same code made them) and the file holds what the manifest says (``_spliced``).
    splice = plan.splice if trust_keys and len(old) else None

    def here(rel: str) -> Done:
        before = old.get(rel)
        text = _spliced(splice, folders.inside(rel), rel, before) if splice is not None and rel in indexes else None
        data = (text if text is not None else plan.compose(rel)).encode("utf-8")
        digest = content_hash(data)
        stat, written = _put(folders, rel, data, digest, before, last.get(rel) if last is not None else None)
        return len(data), digest, stat, written

    def run(rels: list[str]) -> list[Done | None]:
        return [here(rel) for rel in rels]

    # The index pages are composed together (they share their tallies): one chunk of their own,
    # the last, which this process does itself when workers share the pages (``own``: a worker,
    # which holds only slices of the project, could not compose them).
    indexes = set(plan.indexes)
    last_chunk = [rel for rel in todo if rel in indexes]
    chunks = [chunk for chunk in [*parallel.chunked([rel for rel in todo if rel not in indexes], jobs=jobs), last_chunk]
              if chunk]
    own = 1 if last_chunk else 0
    order = [rel for chunk in chunks for rel in chunk]
    after = then(as_written) if then is not None else ()
    ctx = plan.context
    wrote = meter.stage("composing the pages", len(order)) if meter is not None and order else None
    if ctx is None or len(order) < PARALLEL_MIN or parallel.fork_fits(jobs):  # (too few pages: no pool either way)
        # Workers forked from this process share the project as it is, copy-on-write: nothing
        # packed, pickled or imported (at 10,000 entries and -j 2, the pages took 5.1 s of wall
        # time against 6.7 s with slices shipped to a fresh interpreter).
        done = parallel.map_chunks(run, chunks, jobs=jobs, min_items=PARALLEL_MIN,
                                   meanwhile=itertools.chain(meanwhile, work_out_keys(), after), progress=wrote,
                                   own=own)
    else:
        from recordtool.render import slices

        def pack(rels: list[str]) -> Shipped:
            entries = [plan.owners[rel] for rel in rels if rel in plan.owners]
            return ([(rel, plan.owners.get(rel), old.get(rel), last.get(rel) if last is not None else None)
                     for rel in rels],
                    slices.pack(ctx, entries))

        done = parallel.map_shipped(run, compose_shipped, pack, lambda: (slices.shared(ctx), base), chunks, jobs=jobs,
                                    min_items=PARALLEL_MIN, meanwhile=itertools.chain(meanwhile, work_out_keys(), after),
                                    progress=wrote, own=own)
    for rel, result in zip(order, done, strict=True):
        if result is None:  # a page its worker's slice could not compose
            result = here(rel)
        size, digest, stat, written = result
        new.put(rel, (keys[rel], size, digest))
        report.stats[rel] = stat
        if written:
            report.written.append(rel)
        else:
            report.unchanged += 1
    report.written.sort()


def _spliced(splice: Callable[[str, str, str], str | None], path: str, rel: str, before: Written | None) -> str | None:
    """The index page ``rel`` made from its file at ``path`` as the last render wrote it
    (``Plan.splice``, given the key it was written with), when the file holds what the manifest
    says was written there (its size and hash); None: compose it."""
    if before is None or before[0] is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if len(data) != before[1] or content_hash(data) != before[2]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return splice(rel, text, before[0])


def _nothing_known(_rel: str) -> bool:
    return False


def _as_written(where: dict[str, int], spoiled: set[str]) -> Callable[[str], bool]:
    """Whether a file of the last render is as written: among its files, and not spoiled since."""
    return lambda rel: rel in where and rel not in spoiled


Done = tuple[int, str, list[int], bool]  # a page composed and put: its size, hash, [size, mtime_ns], written?
# What a worker gets for a chunk of pages: each page with its entry (None: not an entry page) and
# what the manifest and the last render say of it, and the slice of the project they need.
Shipped = tuple[list[tuple[str, "str | None", "Written | None", "list[int] | None"]], "Packed"]


_kept: tuple[Shared, Memos] | None = None  # in a worker: the memos of its chunks' contexts (``slices.context``)


def compose_shipped(common: tuple[Shared, str], shipped: Shipped) -> list[Done | None]:
    """In a worker that does not hold the project (``parallel.map_shipped``): compose and put
    the entry pages of one chunk from their slice of the project; None for a page that is
    not an entry's or that needs more than its slice (it is composed by the caller)."""
    from recordtool.render import slices
    from recordtool.render.page import render_entry

    global _kept
    shared, base = common
    pages, packed = shipped
    ctx = slices.context(shared, packed, _kept[1] if _kept is not None and _kept[0] is shared else None)
    _kept = (shared, slices.memos(ctx))
    folders = _Folders(base)
    out: list[Done | None] = []
    for rel, entry_id, before, last in pages:
        if entry_id is None:
            out.append(None)
            continue
        try:
            data = render_entry(ctx, entry_id).encode("utf-8")
        except slices.Missing:
            out.append(None)
            continue
        digest = content_hash(data)
        stat, written = _put(folders, rel, data, digest, before, last)
        out.append((len(data), digest, stat, written))
    return out


# What an image file starts with: the only files copied from the verdict store into pages.
IMAGES = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",),
          ".gif": (b"GIF87a", b"GIF89a"), ".webp": (b"RIFF",)}


def read_figure(root: Path, source: str, rel: str) -> tuple[str | None, bytes | None]:
    """The bytes of the figure ``source`` (relative to ``root``) copied to ``rel`` (under
    ``figures/<claim>/``), or (why, None) when it is not copied: it leads out of its claim's
    figure folder, or is not an image (by its name and its first bytes: PNG, JPEG, GIF, WebP;
    an SVG may hold scripts). (None, None): it is missing."""
    folder = root / source[: len(source) - len(rel)] / "/".join(rel.split("/")[:2])
    path = root / source
    if not os.path.lexists(path):
        return None, None
    why = refused(path, folder)
    if why is not None:
        return why, None
    magic = IMAGES.get(os.path.splitext(source)[1].lower())
    if magic is None:
        return "is not an image file (.png, .jpg, .gif, .webp)", None
    try:
        data = read_inside(path, folder)  # checked again as it is opened: no swap in between
    except Refused as exc:
        return str(exc), None
    except OSError as exc:
        return f"cannot be read: {exc.strerror}", None
    if not data.startswith(magic) or (source.lower().endswith(".webp") and data[8:12] != b"WEBP"):
        return "does not hold the image its name says", None
    return None, data


def _put(folders: _Folders, rel: str, data: bytes, digest: str, before: Written | None,
         last: list[int] | None) -> tuple[list[int], bool]:
    """Write ``data`` (whose hash is ``digest``) to ``rel`` unless the file already holds it:
    its [size, mtime_ns] then, and whether it was written."""
    path = folders.inside(rel)
    stat = stat_file(path)
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
    return replace_file(path, data), True


def replace_file(path: str, data: bytes) -> list[int]:
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
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:  # left by a process of the same id that died: a fresh name then
            tmp = temporary_name(folder, name)
            fd = os.open(tmp, flags, 0o666)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:  # named after the page, not the temporary file
            raise OSError(exc.errno, exc.strerror, path) from None
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

