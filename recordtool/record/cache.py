"""The entry cache: what loading each entry file gave, kept so that an unchanged file is not read again.

Reading a record is parsing YAML, validating it and scanning its prose for mentions, file by
file; the whole-record checks on top (duplicate ids, citations that resolve, dangling
mentions, cycles, orphans) are cheap. So, the way ruff and mypy keep a cache, each file's own
results are kept in ``<cache>/entries/`` (``[tool.recordtool] cache``, default
``.recordtool-cache/``): the entry, where its parts are, its own problems with their places,
and the mentions found in its prose. The next run uses them for every file that is as it was
and reads only the others; whatever spans files is worked out again each time.

A file is as it was when its size, modification and change times and inode are those kept
(``os.stat``), or else when its content has the hash kept. A file changed within ``RACY_NS``
of being read may change again without its times changing, so it is kept without its times
and its content is compared next time (as git does with "racy" files).

Everything kept depends on recordtool's own code, Python's version, the versions of the
packages that parse the record (``recordtool.snapshot.code_version``) and the configuration:
any change to them and the cache is not used (and is written again). The cache is split in
``SHARDS`` files by path, so that one edit rewrites one small file; each is written atomically
(``recordtool.atomic.write_atomic``), carries a checksum of its content (CRC-32), and is read with an
unpickler that makes nothing but the record's own data classes and dates: a damaged or foreign
shard is ignored and its files read again, never trusted. A cache that cannot be written costs
speed, never the answer.

Every run reads the shards whole; the entries themselves (pydantic objects, most of what is
kept) are not in them but beside them, each pickled on its own in the shard's entries file,
and made only when something asks for that entry (``load.Entries``): after one edit,
`validate` makes almost none. A shard names the entries file it goes with (a random
generation written at the head of both) and keeps each entry's offset, length and CRC-32;
an entry whose bytes are not those (a file damaged, replaced or gone), or that do not make
the entry they should, is read again from its YAML file.

The mentions found in each entry's prose (most of what a shard would hold: each quotes its
sentence) are kept beside the shard too, in its scans file (``shard-NN.scans``, the same
generation at its head), each entry's pickled on its own behind an index of where each is,
read alone when asked for (``EntryCache.scans``, ``_Scans``): after one edit the graph needs
those of the changed entries only (``recordtool.record.graph.KeptLinks``), render those of the
few hundred entries its pages name, spread over every shard. With them, what render made of
the body for its page from the same parse (``prose.compose_body``, packed: about a twelfth of
the body's size), so that the page of an entry whose file is as it was is composed without
parsing its body again (after a title edit, the pages of its neighbours; every page, rendered
into a new folder). A scans file that is damaged, foreign or gone costs the scan of its entries
again (an entry's mentions that are damaged, of that entry), never the answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import io
import itertools
import operator
import os
import pickle
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from recordtool.atomic import sweep, write_atomic
from recordtool.record.lazy import Lazy
from recordtool.snapshot import RACY_NS, Stats, code_version

if TYPE_CHECKING:
    from recordtool.record.config import Config, Kind
    from recordtool.record.graph import KeptLinks, Scan, Scanned
    from recordtool.record.load import Loaded, Record, Summary
    from recordtool.record.schema import Entry
    from recordtool.record.static import KeptStatic

FOLDER = "entries"  # under the cache folder
FORMAT = b"recordtool-entries 6\n"  # 6: each summary with its entry's title (``load.summary``)
ENTRIES_FORMAT = b"recordtool-entry-pickles 1\n"
SCANS_FORMAT = b"recordtool-entry-scans 3\n"  # 3: each entry's mentions with its body composed (``_Scans``)
LINKS = "links.bin"  # what the graph keeps of the whole record (``graph.KeptLinks``)
LINKS_FORMAT = b"recordtool-links 1\n"
STATIC = "static.bin"  # what the static checks found in each entry (``static.KeptStatic``)
STATIC_FORMAT = b"recordtool-static 1\n"
# Shards of the cache: an edit rewrites the shards of the files it changed, each whole (its
# entries, scans and items): at 100,000 entries a shard of 64 was 1,560 files and 0.2 s to
# write; of 256, 390 files. Reading them all back costs the same either way, bar an open each.
SHARDS = 256
# Distributions whose version can change what loading gives (parsing YAML and Markdown, validating).
DEPENDENCIES = ("markdown-it-py", "pydantic", "PyYAML")

Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
# An entry's mentions as its shard's scans file keeps them: the mentions, and what composing
# its body for a page made from the same parse (``prose.compose_body``, packed; None: not
# composed, as by a cold ``validate``, or it cannot be composed before its page is).
KeptScan = tuple["Scan", "bytes | None"]
KeptFound = tuple["Scanned", "bytes | None"]  # the same as a scans file holds it: plain data (``graph.found_of``)


@dataclass(slots=True)
class Item:
    """What loading one file gave, and how to tell the file has not changed since. With slots,
    not a ``__dict__`` each: every run makes a hundred thousand of them back on a large record
    and reads each several times (is its file as it was, what loading it gave, its mentions),
    and an attribute read through an instance's dict costs a second object to reach, out of
    the processor's cache by then (two attributes of every item read in 37 to 45 ms at
    100,000 entries, against 14 to 16 ms with slots)."""

    kind: str  # the kind whose folder holds it
    stat: Stat | None  # None: it was changed just before it was read; compare its content
    digest: str  # a hash of its bytes
    # The entry (read this run), or where its own pickle is in its shard's entries file
    # (offset, length, CRC-32; the file: ``EntryCache.blobs``).
    entry: Entry | tuple[int, int, int] | None
    places: Any  # recordtool.record.load.Places, or None
    problems: list[Any]  # recordtool.record.problems.Problem
    summary: Summary | None  # what the checks that span the record need of the entry (``load.summary``)
    # The mentions in its prose, once the graph has scanned them: the list (found this run, or
    # read back), or True: in its shard's scans file (``EntryCache.scan_files``); None or
    # False: none kept.
    scan: Scan | bool | None = None
    composed: bytes | None = None  # with a list in ``scan``: what composing its body made (``KeptScan``)

    def __reduce__(self) -> tuple[type[Item], tuple[Any, ...]]:
        # Pickled as its class and its fields, made back by one call: pickled as a data class is
        # by default (a bare object, then its ``__dict__`` set), the 10,000 items of a record's
        # shards took 36 ms to make back instead of 24 (each run reads every shard).
        return (Item, _item_fields(self))


_item_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Item)))  # (in ``__init__``'s order)


@dataclass
class EntryCache:
    """The cache of a record's entry files, open for one load (``open_cache``)."""

    folder: Path
    key: bytes  # the code, versions and configuration the kept results hold for
    shards: list[dict[str, Item]]
    # Per shard, the files its items' entries and mentions are kept in, by shard number (``_shard``):
    # an item names none, so that reading a shard back is one unpickling, without a loop over its items.
    blobs: list[_Blobs] = field(default_factory=list)
    scan_files: list[_Scans] = field(default_factory=list)
    items: dict[str, Item] = field(default_factory=dict)  # every shard's, by path: looked up without hashing to a shard
    dirty: set[int] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)  # files looked up this run (the others are gone)
    pending: dict[str, Stat] = field(default_factory=dict)  # files read this run: their state before
    started: int = field(default_factory=time.time_ns)
    hits: int = 0
    known: dict[str, Stat] | None = None  # files already stat-ed by path (``use``), not stat-ed again

    def unchanged(self, files: list[tuple[str, Kind]], rels: list[str]) -> list[Loaded | None]:
        """What loading each file of ``files`` (its path, its kind; ``rels``: its path relative
        to the root) gave last time, where the file is as it was; None: read it. One loop
        over the whole record, without a call per file beyond ``os.stat``: it runs on every
        command, a hundred thousand times on a large record. Each file is stat-ed by its name in
        its folder, opened once while its files come one after the other (``dir_fd``): the
        kernel does not walk the whole path again for each (a third less time); the same answer
        as ``os.stat(path)``, links followed."""
        self.seen.update(rels)
        items, pending, stat = self.items, self.pending, os.stat
        known, self.known = self.known or {}, None
        out: list[Loaded | None] = []
        add = out.append
        at: str | None = None  # the folder ``fd`` is open on (None: stat by the whole path)
        fd: int | None = None
        try:
            for (path, kind), rel in zip(files, rels, strict=True):
                item = items.get(rel)
                now = known.get(path)
                if now is None:
                    folder, _sep, name = path.rpartition(os.sep)
                    try:
                        if folder != at:
                            if fd is not None:
                                was, fd = fd, None
                                os.close(was)
                            at, fd = folder, _open_folder(folder)
                        st = stat(path) if fd is None else stat(name, dir_fd=fd)
                    except OSError:
                        add(None)
                        continue
                    now = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                if item is not None and item.stat == now and item.kind == kind.name:
                    add((item.entry, item.places, item.problems, item.summary))
                    continue
                pending[rel] = now
                add(None if item is None or item.kind != kind.name else self._same_content(path, rel, item, now))
        finally:
            if fd is not None:
                os.close(fd)
        self.hits += sum(found is not None for found in out)
        return out

    def use(self, stats: Stats) -> None:
        """Take each file's state from ``stats`` (a snapshot taken just before: render's)
        instead of stat-ing it again; the files it changed within ``RACY_NS`` of are racy."""
        self.known, self.started = stats.files, min(self.started, stats.taken)

    def _same_content(self, path: str, rel: str, item: Item, stat: Stat) -> Loaded | None:
        """What ``item`` keeps, if ``path`` (whose times are not those kept) holds the bytes it was read from."""
        try:
            digest = _digest(path)
        except OSError:
            return None
        if digest != item.digest:
            return None
        kept = stat if not self._racy(stat) else None
        if item.stat != kept:
            item.stat = kept
            self.dirty.add(_shard(rel))
        del self.pending[rel]
        return item.entry, item.places, item.problems, item.summary

    def learn(self, path: Path, rel: str, kind: Kind, loaded: Loaded, digest: str | None) -> None:
        """Keep what loading ``path`` gave (``digest``: the hash of the bytes it was read from;
        None when reading failed before hashing them)."""
        stat = self.pending.pop(rel, None)
        if stat is None:
            return
        if digest is None:  # hashed now, so only when the file is still as it was before it was read
            with contextlib.suppress(OSError):
                if _stat(path) == stat and not self._racy(stat):
                    digest = _digest(path)
            if digest is None or _stat_or_none(path) != stat:
                return
        shard = _shard(rel)
        self.shards[shard][rel] = self.items[rel] = Item(kind.name, None if self._racy(stat) else stat, digest,
                                                         *loaded)
        self.dirty.add(shard)

    def kept_entries(self) -> KeptEntries:
        """What makes the entries kept in the shards (``Item.entry``) when asked for."""
        return KeptEntries(self.blobs)

    def scans(self, record: Record) -> KeptScans:
        """The mentions kept for the entries of ``record`` whose file was as it was, each read
        from its shard's scans file only when asked for (``KeptScans``)."""
        out = KeptScans(self.dirty, self.scan_files)
        items, keep = self.items, out.keep
        for entry_id, places in record.places.items():
            item = items.get(places[0])  # (its path)
            if item is not None and item.places is places:
                scan = item.scan
                if scan is True:
                    keep(entry_id, places[0])  # in its shard's scans file: read when asked for
                elif type(scan) is list:
                    keep(entry_id, scan)
                    out.composed[entry_id] = item.composed
        return out

    def _kept_scan(self, rel: str) -> KeptScan | None:
        """The mentions kept for ``rel`` and its body composed, read from its shard's scans file
        when they are there; None when that file does not hold them (damaged, foreign or gone:
        the shard is written again)."""
        item = self.items.get(rel)
        if item is None:
            return None
        if item.scan is True:
            kept = self.scan_files[_shard(rel)].get(rel)
            if kept is None or item.summary is None:
                item.scan, item.composed = None, None
                self.dirty.add(_shard(rel))
            else:
                from recordtool.record.graph import mentions_of  # (graph imports this module)

                item.scan, item.composed = mentions_of(item.summary[0], kept[0]), kept[1]
        return (item.scan, item.composed) if type(item.scan) is list else None

    def learn_scans(self, record: Record, scans: Mapping[str, Scan], fresh: Iterable[str],
                    composed: Mapping[str, bytes]) -> None:
        """Keep the mentions found in the entries ``fresh`` of ``record`` (those that ``scans``
        did not give: read this run, or kept without them), and what composing the body of each
        made (``composed``: those this run composed), not looking at the others."""
        items, places = self.items, record.places
        for entry_id in fresh:
            path = places[entry_id].path
            item = items.get(path)
            if item is not None and type(item.scan) is not list and item.places is places[entry_id]:
                found = scans.held(entry_id) if isinstance(scans, KeptScans) else scans.get(entry_id)
                if type(found) is list:
                    item.scan, item.composed = found, composed.get(entry_id)
                    self.dirty.add(_shard(path))

    def kept_reads(self) -> list[tuple[Path, bytes]]:
        """The files of what spans the record, with their formats, for ``read_ahead``."""
        return [(self.folder / LINKS, LINKS_FORMAT)]

    def links(self) -> KeptLinks | None:
        """What the graph kept of the whole record last time (``graph.KeptLinks``), if anything."""
        from recordtool.record.graph import KeptLinks

        return KeptLinks.from_plain(read_plain(self.folder / LINKS, self.key, LINKS_FORMAT))

    def keep_links(self, links: KeptLinks) -> None:
        """Keep ``links`` for the next run (a file that cannot be written costs speed only)."""
        write_plain(self.folder / LINKS, self.key, LINKS_FORMAT, links.plain())

    def static(self, config: Config) -> KeptStatic:
        """What the static checks found last time (``static.KeptStatic``), where the checks
        package is as it was then; else nothing kept."""
        from recordtool.record.static import KeptStatic, package_state

        return KeptStatic.from_plain(read_plain(self.folder / STATIC, self.key, STATIC_FORMAT), package_state(config))

    def keep_static(self, static: KeptStatic) -> None:
        """Keep ``static`` for the next run, if it changed (a file that cannot be written costs speed only)."""
        if static.changed:
            write_plain(self.folder / STATIC, self.key, STATIC_FORMAT, static.plain())

    def _racy(self, stat: Stat) -> bool:
        return stat[1] >= self.started - RACY_NS

    def save(self) -> None:
        """Write the shards that changed, leaving out the files that are gone; never raises for
        a cache that cannot be written (the next run reads those files again)."""
        for _step in self.saving():
            pass

    def saving(self) -> Iterator[None]:
        """``save``, a step for each shard written (each whole: the entries and scans files, then
        the shard), for work that goes on meanwhile (``parallel.map_shipped``'s)."""
        for n, shard in enumerate(self.shards):
            gone = [rel for rel in shard if rel not in self.seen]
            for rel in gone:
                del shard[rel]
            if gone:
                self.dirty.add(n)
        if not self.dirty:
            return
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            sweep(self.folder)
        from recordtool.record.graph import found_of  # (graph imports this module)

        for n in sorted(self.dirty):
            generation = os.urandom(16)
            blobs: list[bytes] = [ENTRIES_FORMAT, generation]
            kept: dict[str, Item] = {}
            scans: dict[str, KeptFound] = {}
            offset = len(ENTRIES_FORMAT) + len(generation)
            self.blobs[n].pin()  # (the entries still to be made from this shard's files are read from these)
            self.scan_files[n].pin()
            for rel, item in self.shards[n].items():
                data = _pickled(item.entry, self.blobs[n])
                if data is None:
                    continue  # its kept entry could not be read back: its file is read again next time
                where = None
                if data:
                    where = (offset, len(data), zlib.crc32(data))
                    blobs.append(data)
                    offset += len(data)
                scan = self._kept_scan(rel) if item.scan is not None and item.scan is not False else None
                if scan is not None:  # (held in ``item`` from now on: the file it was in is written again)
                    scans[rel] = (found_of(scan[0]), scan[1])
                kept[rel] = dataclasses.replace(item, entry=where, scan=scan is not None, composed=None)
            payload = pickle.dumps((generation, kept), protocol=pickle.HIGHEST_PROTOCOL)
            data = FORMAT + self.key + zlib.crc32(payload).to_bytes(4, "big") + payload
            try:  # the entries and scans first: a shard never names a generation that is not written
                write_atomic(self.folder / _name(n, ".entries"), b"".join(blobs), durable=False)
                write_atomic(self.folder / _name(n, ".scans"), _scans_file(generation, scans), durable=False)
                write_atomic(self.folder / _name(n), data, durable=False)
            except OSError:
                return
            self.dirty.discard(n)
            yield


def _open_folder(folder: str) -> int | None:
    """A descriptor of ``folder`` to stat its files by name (``EntryCache.unchanged``); None where
    that is not offered or it cannot be opened (then each is stat-ed by its whole path)."""
    if not _DIR_FD or not folder:
        return None
    try:
        return os.open(folder, _FOLDER_FLAGS)
    except OSError:
        return None


_DIR_FD = os.stat in os.supports_dir_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _pickled(entry: Entry | tuple[int, int, int] | None, blobs: _Blobs) -> bytes | None:
    """``entry``'s own pickle (``b""`` for no entry), read back from the entries file it is kept
    in (``blobs``), or made; None when it cannot be read back."""
    if entry is None:
        return b""
    if type(entry) is tuple:
        return blobs.read(*entry)
    out = io.BytesIO()
    _Pickler(out).dump(entry)
    return out.getvalue()


class KeptScans(Lazy["Scan"]):
    """The mentions kept for each entry whose file was as it was, by id: each read from its
    shard's scans file when first asked for (``_Scans``: that entry's alone), with its body
    composed (``composed_body``); held as the entry's path until then. An entry whose kept
    mentions cannot be read back is scanned again: ``rescan`` (set by the graph) gives them.
    Every way of reading it as a mapping gives mentions (``recordtool.record.lazy``)."""

    def __init__(self, dirty: set[int], files: list[_Scans]) -> None:
        super().__init__()
        self._dirty = dirty  # the shards to write again (``EntryCache.dirty``): not the cache, which may then go
        self._files = files  # each shard's scans file (``EntryCache.scan_files``)
        self.rescan: Callable[[str], Scan] | None = None
        self.rescanned: set[str] = set()  # the ids scanned again, to keep (``EntryCache.learn_scans``)
        self.composed: dict[str, bytes | None] = {}  # id -> its body composed, for the mentions read (``KeptScan``)

    def __getitem__(self, key: str) -> Scan:
        value: Scan | str = self._data[key]
        if type(value) is str:  # the entry's path: its mentions are in its shard's scans file
            kept = self._files[_shard(value)].get(value)
            if kept is None:
                self._dirty.add(_shard(value))
                if self.rescan is None:
                    raise KeyError(key)
                found = self.rescan(key)
                self.rescanned.add(key)
            else:
                from recordtool.record.graph import mentions_of  # (graph imports this module)

                found, self.composed[key] = mentions_of(key, kept[0]), kept[1]
            self._data[key] = found
            return found
        return value  # type: ignore[return-value]  # mypy: a Scan here

    def composed_body(self, key: str) -> bytes | None:
        """What composing the body of ``key`` made when its mentions were found (``KeptScan``),
        read with them; None when nothing is kept for it (not composed, scanned again, or not
        among these)."""
        if key not in self._data:
            return None
        self[key]  # (its mentions read, and with them its body composed)
        return self.composed.get(key)

    def values(self) -> Any:
        return [self[key] for key in self._data]

    def items(self) -> Any:
        return [(key, self[key]) for key in self._data]


class _Held:
    """A file of the cache that its object may hold open (``fd``), closed when the object goes."""

    fd: int | None

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        # ``os.close`` bound when the class was made, and no ``contextlib``: at the interpreter's
        # exit the module's globals may be gone before the last files of a cache are (a program
        # that kept an opened project to its end, the collector frozen, printed an ignored
        # error per shard)
        if self.fd is not None:
            try:  # noqa: SIM105 - see above
                _close(self.fd)
            except OSError:
                pass


class _Scans(_Held):
    """A shard's scans file: the mentions found in each of its entries, each pickled on its own,
    and an index of where each is by path (``_scans_file``). The index is read the first time
    one is asked for; then each entry's mentions alone (after one edit at 100,000 entries the
    pages composed ask for those of a few hundred entries spread over every shard: reading
    each shard's file whole took most of a second)."""

    def __init__(self, path: Path, generation: bytes) -> None:
        self.path = path
        self.generation = generation
        self.index: dict[str, tuple[int, int, int]] | None = None  # path -> offset, length, CRC-32
        self.fd: int | None = None
        self.start = 0  # where the index ends, which its offsets count from
        self.pinned = False
        self.opened = False  # the index was read from the file

    def pin(self) -> None:
        """Keep the file open from now on (it is about to be written again): the mentions still
        to be read are read from the file the index was read from."""
        self.pinned = True
        if self.fd is None and self.index is not None and self.opened:
            self.fd = self._reopen()

    def _reopen(self) -> int | None:
        """The file open again, if it is still the one the index was read from (its head names
        the same generation: a file written again has another)."""
        if not self.opened:
            return None
        head = SCANS_FORMAT + self.generation
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            same = os.pread(fd, len(head), 0) == head
        except OSError:
            same = False
        if not same:
            os.close(fd)
            return None
        return fd

    def _close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def get(self, rel: str) -> KeptFound | None:
        if self.index is None:
            self.index = self._open()
            if not self.pinned and self.fd is not None:  # (held open only once pinned: ``pin``)
                self._close()
        where = self.index.get(rel)
        if where is None:
            return None
        fd = self.fd if self.fd is not None else self._reopen()
        if fd is None:
            return None
        offset, length, crc = where
        try:
            data = os.pread(fd, length, self.start + offset)
        except OSError:
            return None
        finally:
            if fd != self.fd:
                os.close(fd)
        if len(data) != length or zlib.crc32(data) != crc:
            return None
        try:
            found = _PlainUnpickler(io.BytesIO(data)).load()
        except Exception:  # anything damaged bytes raise: its entry is scanned again
            return None
        if not (type(found) is tuple and len(found) == 2 and type(found[0]) is list
                and (found[1] is None or type(found[1]) is bytes)):
            return None
        return found

    def _open(self) -> dict[str, tuple[int, int, int]]:
        """The index, the file kept open to read each entry's mentions from; {} when the file is
        not there, or not whole and of the generation the shard names."""
        head = SCANS_FORMAT + self.generation
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return {}
        index: Any = None
        try:
            top = os.pread(fd, len(head) + 8, 0)
            if top[:len(head)] == head and len(top) == len(head) + 8:
                crc, length = int.from_bytes(top[-8:-4], "big"), int.from_bytes(top[-4:], "big")
                data = os.pread(fd, length, len(top))
                if len(data) == length and zlib.crc32(data) == crc:
                    index = _PlainUnpickler(io.BytesIO(data)).load()
        except Exception:  # anything a damaged file raises: its entries are scanned again
            index = None
        if not (isinstance(index, dict) and all(type(v) is tuple and len(v) == 3 for v in index.values())):
            os.close(fd)
            return {}
        self.fd, self.start, self.opened = fd, len(head) + 8 + length, True
        return index


def _scans_file(generation: bytes, scans: dict[str, KeptFound]) -> list[bytes]:
    """A shard's scans file (``_Scans``): its head (format and generation), the CRC-32 and
    length of the index, the index (path -> offset, length and CRC-32 of that entry's
    mentions, counted from the end of the index), then each entry's mentions and body composed
    (``KeptScan``) pickled on their own."""
    blobs: list[bytes] = []
    where: dict[str, tuple[int, int, int]] = {}
    offset = 0
    for rel, scan in scans.items():
        data = pickle.dumps(scan, protocol=pickle.HIGHEST_PROTOCOL)
        where[rel] = (offset, len(data), zlib.crc32(data))
        blobs.append(data)
        offset += len(data)
    index = pickle.dumps(where, protocol=pickle.HIGHEST_PROTOCOL)
    return [SCANS_FORMAT, generation, zlib.crc32(index).to_bytes(4, "big"), len(index).to_bytes(4, "big"), index,
            *blobs]


class _Pickler(pickle.Pickler):
    """Pickles an entry at the C pickler's own pace: only its models are reduced here
    (``reducer_override`` is not called for strings, lists, dicts and the other plain types
    an entry is mostly made of), each to ``_model``: its class, its state and its set of
    explicitly set field names, written as its names when models share that set
    (``schema.compact``), so that the entry made again shares it too, without walking its
    models again (``schema.field_set``). (A ``persistent_id`` looking for those sets was
    called for every object, a hundred per entry: two thirds of the time the cache took to
    write a cold record's entries.)"""

    def __init__(self, file: io.BytesIO) -> None:
        from pydantic import BaseModel

        from recordtool.record.schema import shares

        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.model, self.shares = BaseModel, shares  # (looked up once an entry, not once an object)

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, self.model):
            return NotImplemented
        state = obj.__getstate__()
        names = state.pop("__pydantic_fields_set__")
        return _model, (type(obj), state, tuple(sorted(names)) if self.shares(names) else names)


def _model(cls: Any, state: Any, names: Any) -> Any:
    """A model pickled by ``_Pickler``: of a class ``_Unpickler`` allows (a model of the record),
    with its state and its field names (a set, or names: the set models share)."""
    from pydantic import BaseModel

    from recordtool.record.schema import field_set

    if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or type(state) is not dict:
        raise pickle.UnpicklingError("not a model of the record")
    if type(names) is tuple and all(type(name) is str for name in names):
        names = field_set(names)
    elif type(names) is not set:
        raise pickle.UnpicklingError("not a set of field names")
    model = cast(Any, cls).__new__(cls)  # (a build's type check without pydantic reads cls as a plain type)
    model.__setstate__({**state, "__pydantic_fields_set__": names})
    return model


class _Blobs(_Held):
    """A shard's entries file, opened for each entry read from it, or kept open once pinned
    (``pin``: before this run writes the shard again, so that a new file renamed over it
    changes nothing for the entries still to be made from the old one). Only pinned files are
    held open: a process that opens many records (a test run) holds no descriptor for each."""

    def __init__(self, path: Path, generation: bytes) -> None:
        self.path = path
        self.generation = generation
        self.fd: int | None = None
        self.bad = False  # not there, or not the generation the shard names

    def read(self, offset: int, length: int, crc: int) -> bytes | None:
        """The bytes at ``offset``, if they are those kept there (their CRC-32 is ``crc``)."""
        fd = self.fd if self.fd is not None else self._open()
        if fd is None:
            return None
        try:
            data = os.pread(fd, length, offset)
        except OSError:
            return None
        finally:
            if fd != self.fd:
                os.close(fd)
        return data if len(data) == length and zlib.crc32(data) == crc else None

    def pin(self) -> None:
        """Keep the file open from now on (it is about to be written again)."""
        if self.fd is None:
            self.fd = self._open()

    def _open(self) -> int | None:
        """The file open, if it is there and of the generation the shard names."""
        if self.bad:
            return None
        head = ENTRIES_FORMAT + self.generation
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            self.bad = True
            return None
        try:
            same = os.pread(fd, len(head), 0) == head
        except OSError:
            same = False
        if not same:
            os.close(fd)
            self.bad = True
            return None
        return fd


class KeptEntries:
    """Makes the entries the cache keeps (``Item.entry``) when asked for (``load.Entries``): it
    holds each shard's entries file, not the cache, which goes once the record is open."""

    def __init__(self, blobs: list[_Blobs]) -> None:
        self.blobs = blobs

    def entry(self, rel: str, kept: tuple[int, int, int], model: type[Entry]) -> Entry | None:
        """The entry of ``rel``, of model ``model``, kept where ``kept`` says, made by the
        unpickler that makes only the record's own data classes; None if its bytes are not
        those kept there or do not make a ``model`` (the caller reads its file again)."""
        data = self.blobs[_shard(rel)].read(*kept)
        if data is None:
            return None
        try:
            entry = _Unpickler(io.BytesIO(data)).load()
        except Exception:  # anything damaged bytes raise
            return None
        if type(entry) is not model:
            return None
        return entry


def open_cache(config: Config) -> EntryCache:
    """The entry cache of ``config``'s record, with whatever valid shards it holds."""
    folder = config.cache / FOLDER
    key = cache_key(config)
    shards: list[dict[str, Item]] = []
    blobs: list[_Blobs] = []
    scan_files: list[_Scans] = []
    for n in range(SHARDS):
        generation, items = _read_shard(folder, n, key)
        shards.append(items)
        blobs.append(_Blobs(folder / _name(n, ".entries"), generation))
        scan_files.append(_Scans(folder / _name(n, ".scans"), generation))
    items = {}
    for shard in shards:
        items.update(shard)
    return EntryCache(folder, key, shards, blobs, scan_files, items)


def clear_cache(config: Config) -> None:
    """Remove the entry cache (``recordtool validate --no-cache`` does not read it either)."""
    folder = config.cache / FOLDER
    for n in range(SHARDS):
        for suffix in (".bin", ".entries", ".scans"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / _name(n, suffix))
    for name in (LINKS, STATIC):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / name)


def cache_key(config: Config) -> bytes:
    """What every kept result depends on beyond its file: recordtool's code and version,
    Python's, the parsing packages' versions, and the configuration (its root included)."""
    text = repr((code_version(DEPENDENCIES), os.path.realpath(config.root), config))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _name(n: int, suffix: str = ".bin") -> str:
    return f"shard-{n:02d}{suffix}"


def _shard(rel: str) -> int:
    return zlib.crc32(rel.encode("utf-8", "surrogateescape")) % SHARDS


def _stat(path: Path) -> Stat:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _stat_or_none(path: Path) -> Stat | None:
    try:
        return _stat(path)
    except OSError:
        return None


def _digest(path: Path | str) -> str:
    """The hash loading gives a file's bytes (``Places.digest``)."""
    with open(path, "rb") as handle:
        return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()


def _read_shard(folder: Path, n: int, key: bytes) -> tuple[bytes, dict[str, Item]]:
    """Shard ``n``'s generation (that of its entries and scans files) and items; no items when
    there is none or it is not a whole shard written for ``key``."""
    none: tuple[bytes, dict[str, Item]] = (b"", {})
    payload = _payload(folder / _name(n), key, FORMAT)
    if payload is None:
        return none
    try:
        generation, items = _Unpickler(io.BytesIO(payload)).load()
    except Exception:  # anything a damaged shard raises: read its files again
        return none
    if not isinstance(generation, bytes) or not isinstance(items, dict):
        return none
    # Each item what a shard keeps (where its entry is: three numbers, or None; whether its
    # mentions are kept: True or False), checked without a call per item: it runs for every
    # file of the record.
    values = items.values()
    if not (set(map(type, items)) <= {str} and set(map(type, values)) <= {Item}
            and set(map(type, map(_SCAN, values))) <= {bool}):
        return none
    entries = [entry for entry in map(_ENTRY, values) if entry is not None]
    if not (set(map(type, entries)) <= {tuple} and set(map(len, entries)) <= {3}
            and set(map(type, itertools.chain.from_iterable(entries))) <= {int}):
        return none
    return generation, items


_SCAN, _ENTRY = operator.attrgetter("scan"), operator.attrgetter("entry")


class _Unpickler(pickle.Unpickler):
    """Makes only the record's data classes (dataclasses and pydantic models of
    ``recordtool.record``, ``load.Places``) and dates: a shard can name no function to call
    but ``_model``, which makes a model of one of those classes and nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            found = _ALLOWED[(module, name)] = _allowed(module, name)
        return found


_ALLOWED: dict[tuple[str, str], Any] = {}  # the classes found allowed so far (an entry is made alone, and often)


def _allowed(module: str, name: str) -> Any:
    if (module, name) == ("datetime", "date"):
        import datetime

        return datetime.date
    if (module, name) == (__name__, "_model"):  # a model (``_Pickler``), of a class allowed here
        return _model
    if (module, name) == ("recordtool.record.load", "Places"):  # a tuple of plain data (``load.Places``)
        from recordtool.record.load import Places

        return Places
    if module.startswith("recordtool.record.") and name.isidentifier():
        found = getattr(importlib.import_module(module), name, None)
        if isinstance(found, type) and (dataclasses.is_dataclass(found) or _is_model(found)):
            return found
    raise pickle.UnpicklingError(f"{module}.{name} is not kept in an entry cache")


def read_plain(path: Path, key: bytes, form: bytes) -> Any:
    """What ``write_plain`` kept at ``path`` for ``key`` (in the file format ``form``): plain data
    only (dicts, lists, tuples, sets, strings, numbers), read with an unpickler that makes no
    object of any class. None when there is none, or it is damaged, foreign or not for ``key``.
    What ``read_ahead`` read of the same file, still the same file, is taken instead (once)."""
    ahead = _AHEAD.pop(os.fspath(path), None)
    if ahead is not None and ahead[:3] == (key, form, _stat_or_none(path)):
        return ahead[3]
    return _read_plain(path, key, form)


def read_ahead(path: Path, key: bytes, form: bytes) -> None:
    """Read ``path`` now as ``read_plain`` would, for the next ``read_plain`` of it in this
    process: ``render`` reads its kept files while a worker takes the snapshot of its inputs,
    a wait of about half a second on a large record. That ``read_plain`` takes what was read
    only while the file is the one read here (its size, times and inode, before and after):
    a file written over since is read again."""
    before = _stat_or_none(path)
    if before is None:
        return
    value = _read_plain(path, key, form)
    if _stat_or_none(path) == before:
        _AHEAD[os.fspath(path)] = (key, form, before, value)


def forget_ahead() -> None:
    """Drop what ``read_ahead`` read and no ``read_plain`` took (a render that found nothing
    to do takes none): a process that renders again, or opens other projects, holds none of it."""
    _AHEAD.clear()


# What ``read_ahead`` read, by path, until ``read_plain`` takes it: (key, form, the file's state, value).
_AHEAD: dict[str, tuple[bytes, bytes, Stat, Any]] = {}


def _payload(path: Path, key: bytes, form: bytes) -> bytes | None:
    """What a kept file (a shard, or one written by ``write_plain``) holds after its head: the
    format line ``form``, the 16 bytes of ``key`` and the CRC-32 of the rest, all checked; None
    when it cannot be read or is not such a file written for ``key`` (a damaged file, not a
    forged one: the unpickler guards against those). The file is read unbuffered, its head
    apart from the rest, so that the rest is read into one buffer of its size and never copied
    (a buffered reader joins what it buffered to the rest): the page keys of 100,000 entries
    are 34 MB, and a copy cost as much again in memory, page faults and time."""
    at = len(form)
    try:
        with open(path, "rb", buffering=0) as handle:
            head = handle.read(at + 20)
            if head[:at] != form or head[at:at + 16] != key:
                return None
            payload = handle.read()
    except OSError:
        return None
    if zlib.crc32(payload).to_bytes(4, "big") != head[at + 16:]:
        return None
    return payload


def _read_plain(path: Path, key: bytes, form: bytes) -> Any:
    payload = _payload(path, key, form)
    if payload is None:
        return None
    try:
        return _PlainUnpickler(io.BytesIO(payload)).load()
    except Exception:  # anything a damaged file raises: work it out again
        return None


def write_plain(path: Path, key: bytes, form: bytes, value: Any) -> None:
    """Keep ``value`` (plain data) at ``path`` for ``key``, atomically, with a checksum; a file
    that cannot be written is left out (the next run works it out again)."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, [form + key + zlib.crc32(payload).to_bytes(4, "big"), payload],  # no joined copy
                     durable=False)


class _PlainUnpickler(pickle.Unpickler):
    """Makes no object of any class: plain data only."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def _is_model(cls: type) -> bool:
    from pydantic import BaseModel

    return issubclass(cls, BaseModel)
