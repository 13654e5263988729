"""Writing the site: the pages that may have changed composed, and each file written
atomically when its bytes differ, never outside the output folder or over a file recordtool
did not write."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from recordtool import parallel
from recordtool.atomic import sweep, temporary_name
from recordtool.record.confine import Refused, not_plain, read_inside, refused
from recordtool.render import manifest
from recordtool.render.plan import Plan, Shown, dirty, faces, index_key, listed, seen, shows
from recordtool.safetext import some
from recordtool.verify.snapshot import stat_file

if TYPE_CHECKING:
    from recordtool.meter import Meter
    from recordtool.record.config import Config
    from recordtool.render.linkcheck import BrokenLink
    from recordtool.store import Store

PAGES = "pages"  # the store's table: an entry's page (folder NUL id) -> (its entry's face, ``Shown``)
FILES = "files"  # and an index page (its path) -> (``plan.index_key``, its (size, mtime_ns) as written)


class RenderError(Exception):
    """The site cannot be written where asked; the message says why."""


@dataclass(slots=True)
class RenderReport:
    """What `recordtool render` did."""

    out: Path
    entries: int
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # figures named by a verdict but not found
    refused: list[str] = field(default_factory=list)  # figures not copied, and why: "path why"
    broken: list[BrokenLink] | None = None  # None when links were not checked
    # entries whose file is there but does not load: id -> the file's first error
    unloaded: dict[str, str] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)  # the pages of those kept as they were

    def summary(self, where: str) -> str:
        return (f"rendered {self.entries} entr{'y' if self.entries == 1 else 'ies'} into {where}: "
                f"{len(self.written)} written, {self.unchanged} unchanged, {len(self.removed)} removed")


class Put(NamedTuple):
    """A file put in place: its (size, mtime_ns) as it is now, and whether it was written."""

    stat: tuple[int, int]
    written: bool


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


def _inside(base: str, rel: str) -> str:
    """``base/rel``; RenderError when ``rel`` would leave ``base`` (by ``..`` or a link)."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\0" in rel:
        raise RenderError(f"refusing to write '{rel}': not a plain path inside the output folder")
    path = os.path.join(base, *parts)
    real = os.path.realpath(os.path.dirname(path))
    if real != base and not real.startswith(base + os.sep):
        raise RenderError(f"refusing to write '{rel}': it leads outside the output folder (a link?)")
    return path


def write_site(plan: Plan, out: Path, root: Path, store: Store, *, jobs: int | None = None, fresh: bool = False,
               keep: Collection[str] = (), meter: Meter | None = None) -> RenderReport:
    """Write the pages of ``plan`` into ``out`` (already checked): compose and write what may
    have changed, copy the figures, remove what recordtool wrote before and no longer writes
    (but ``keep``), keep the manifest. ``store`` keeps what each page showed; ``fresh``: trust
    none of it."""
    report = RenderReport(out, len(plan.owners))
    out.mkdir(parents=True, exist_ok=True)
    base = os.path.realpath(out)
    for folder, _dirs, _files in os.walk(base):  # what a render that was stopped left half-done
        sweep(folder)
    old = manifest.read(Path(base))
    _own(base, old, [*plan.pages, *plan.assets])
    ctx = plan.context
    paths = {rel: os.path.join(base, *rel.split("/")) for rel in plan.pages}  # (to stat; written through ``inside``)
    now, indexed = faces(ctx), index_key(ctx)
    mine = base + "\0"  # (the keys of this folder's pages in ``PAGES``: the folder and the entry's id)
    kept = {key[len(mine):]: found for key, found in store.items(PAGES).items() if key.startswith(mine)}
    todo = list(plan.pages) if fresh else _todo(plan, paths, kept, now, store.get_many(
        FILES, {paths[rel]: indexed for rel in plan.indexes}))
    report.unchanged += len(plan.pages) - len(todo)
    advance = meter.stage("composing the pages", len(todo)) if meter is not None else None
    composed = _compose(plan, base, [rel for rel in todo if rel in plan.owners], jobs)
    done = {rel: put for rel, (put, _) in composed.items()}
    done.update((rel, _put(base, rel, plan.compose(rel).encode("utf-8"))) for rel in todo if rel not in plan.owners)
    if advance is not None:
        advance(len(done))
    kept_now = [(mine + plan.owners[rel], now[plan.owners[rel]], shown) for rel, (_, shown) in composed.items()]
    for rel, source in plan.assets.items():  # each figure whose copy differs from its source
        why, data = read_figure(root, source, rel)
        if data is None:
            (report.missing if why is None else report.refused).append(source if why is None else f"{source} {why}")
        else:
            done[rel] = _put(base, rel, data)
    copied = [(paths[rel], indexed, done[rel].stat) for rel in plan.indexes if rel in done]
    report.written = sorted(rel for rel, put in done.items() if put.written)
    report.unchanged += len(done) - len(report.written)
    _remove(base, sorted(old - {*plan.pages, *plan.assets} - set(keep)), report)
    files = {*plan.pages, *(rel for rel in plan.assets if rel in done), *(old & set(keep))}
    manifest.write(Path(base), files)
    store.put_many(PAGES, kept_now, drop=[mine + entry_id for entry_id in kept if entry_id not in now])
    store.put_many(FILES, copied, drop=[os.path.join(base, *rel.split("/")) for rel in report.removed])
    return report


def _todo(plan: Plan, paths: dict[str, str], kept: dict[str, tuple[str, Shown]], now: dict[str, str],
          indexes: dict[str, tuple[int, int]]) -> list[str]:
    """The pages to compose: those that may show something else now (``plan.dirty``) or
    whose file is not as written (``kept`` and ``indexes``: their (size, time) as written)."""
    entries, indexes_changed = dirty(plan.context, now, kept)
    todo = [rel for rel, entry_id in plan.owners.items()
            if entry_id in entries or stat_file(paths[rel]) != list(kept[entry_id][1].stat)]
    if indexes_changed or any(stat_file(paths[rel]) != list(indexes.get(paths[rel], ())) for rel in plan.indexes):
        todo += plan.indexes
    return sorted(todo)


def _compose(plan: Plan, base: str, rels: list[str], jobs: int | None) -> dict[str, tuple[Put, Shown]]:
    """Compose and put the entries' pages ``rels`` (in forked workers when they are many), and
    what to keep of each."""
    ctx = plan.context

    def work(chunk: list[str]) -> list[tuple[Put, Shown]]:
        out = []
        for rel in chunk:
            entry_id = plan.owners[rel]
            put = _put(base, rel, plan.compose(rel).encode("utf-8"))
            out.append((put, Shown(put.stat, shows(ctx, entry_id), seen(ctx, entry_id), listed(ctx, entry_id))))
        return out

    results = parallel.map_items(work, rels, jobs=jobs)  # (a pool only for many: ``parallel.MIN_ITEMS``)
    return dict(zip(rels, results, strict=True))


def _remove(base: str, gone: list[str], report: RenderReport) -> None:
    """Remove the files of ``gone`` (listed by the manifest: recordtool wrote them), and their
    folders up to ``base`` while they are empty."""
    for rel in gone:
        try:
            path = _inside(base, rel)
        except RenderError:
            continue  # a damaged manifest never makes us delete outside the folder
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
            report.removed.append(rel)
            folder = os.path.dirname(path)
            while folder != base and folder.startswith(base + os.sep):
                try:
                    os.rmdir(folder)
                except OSError:
                    break
                folder = os.path.dirname(folder)


def _put(base: str, rel: str, data: bytes) -> Put:
    """Write ``data`` to ``rel`` unless the file there holds it already."""
    path = _inside(base, rel)
    with contextlib.suppress(OSError):
        st = os.stat(path)
        if st.st_size == len(data):
            with open(path, "rb") as handle:
                if handle.read() == data:
                    return Put((st.st_size, st.st_mtime_ns), False)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return Put(replace_file(path, data), True)


# What an image file starts with: the only files copied from the verdict store into pages.
IMAGES = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",),
          ".gif": (b"GIF87a", b"GIF89a"), ".webp": (b"RIFF",)}


def read_figure(root: Path, source: str, rel: str) -> tuple[str | None, bytes | None]:
    """The bytes of the figure ``source`` (relative to ``root``) copied to ``rel``; (why, None)
    when it leads out of its claim's figure folder, is no plain file or is not an image (an SVG
    may hold scripts); (None, None) when it is missing."""
    folder = root / source[: len(source) - len(rel)] / "/".join(rel.split("/")[:2])
    path = root / source
    if not os.path.lexists(path):
        return None, None
    why = refused(path, folder) or not_plain(path)
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


def replace_file(path: str, data: bytes) -> tuple[int, int]:
    """Write ``path`` atomically, as ``recordtool.atomic.write_atomic`` does, and give the
    (size, mtime_ns) of what was written. Without an fsync per page: pages are derived output,
    and on a large record the fsyncs would cost seconds."""
    tmp = temporary_name(*os.path.split(path))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
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
    except OSError as exc:
        if exc.errno is not None:  # named after the page, not the temporary file
            raise OSError(exc.errno, exc.strerror, path) from None
        raise
    return st.st_size, st.st_mtime_ns


SHOWN_THEIRS = 5  # files named when refusing to write over files recordtool did not write


def _own(base: str, old: set[str], paths: list[str]) -> None:
    """RenderError when a file of ``paths`` is in ``base`` but the manifest ``old`` does not
    list it: recordtool did not write it. Else list the new files in the manifest before any
    is written, so that a render stopped half-way leaves only files the next one knows."""
    fresh = [rel for rel in paths if rel not in old]
    theirs = [rel for rel in fresh if os.path.lexists(os.path.join(base, *rel.split("/")))]
    if theirs:
        shown = some(theirs, SHOWN_THEIRS)
        raise RenderError(f"{base} holds {len(theirs)} file{'s' if len(theirs) != 1 else ''} that recordtool "
                          f"did not write and would write over: {shown}; move {'them' if len(theirs) != 1 else 'it'} "
                          "away, or render into a folder "
                          f"of its own with -o (pages of an earlier render whose {manifest.MANIFEST} is gone: delete them, "
                          "and render again)")
    manifest.write(Path(base), old | set(fresh))
