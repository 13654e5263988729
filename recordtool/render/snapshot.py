"""The snapshot: deciding "nothing changed" without opening the project.

A snapshot (``.recordtool-snapshot.json``, next to the manifest; local state, not meant to be
committed) keeps what the last ``recordtool render`` read and wrote: the size and modification
time of every input file (entries, verdicts and figures, the checks package, pyproject.toml),
the versions the claims' fingerprints compare, recordtool's own code, and every file written.
When all of it is as it was, ``last_report`` says so without opening the project: the site is
already what a render would write. The taking and comparing of files is ``recordtool.snapshot``'s,
shared with ``verify`` and ``status``. The files' states are kept packed (``pack``: the paths in a
list, sizes and times in one array), which at 100,000 pages reads, compares and writes several
times faster than a JSON object per file; a render reads the snapshot once (``Inputs.last``).
"""

from __future__ import annotations

import base64
import gc
import itertools
import json
import operator
import os
import pickle
import select
import threading
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from recordtool import parallel
from recordtool.record.config import ConfigError, find_root, load_config
from recordtool.render import plan
from recordtool.render.manifest import MANIFEST
from recordtool.render.write import (
    Outputs,
    RenderError,
    check_output_folder,
    replace_file,
    stat_all,
)
from recordtool.snapshot import Stats, files_hold, stat_file, stats_hold
from recordtool.snapshot import take as files_state

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator

    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.render.write import WriteReport

SNAPSHOT = ".recordtool-snapshot.json"
SNAPSHOT_FORMAT = 2  # 2: the files' states packed (``pack``)


@dataclass
class Inputs:
    """What a render reads, as found on disk before the project is opened."""

    root: str
    out: str  # the output folder, resolved
    code: str  # recordtool's code and version
    # path -> [size, mtime_ns] (+ content hash when changed just now): ``files``; None: only
    # packed (``_packed``), as a worker sent them, made into the dict when first asked for
    _files: dict[str, list[Any]] | None
    _last: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    # The input files' size, times and inode as stat-ed here, until handed to the entry cache (``stats``)
    _stats: Stats | None = field(default=None, repr=False, compare=False)
    _outputs: tuple[Outputs | None] | None = field(default=None, repr=False, compare=False)
    _packed: dict[str, Any] | None = field(default=None, repr=False, compare=False)  # ``pack``'s form, checked

    @property
    def files(self) -> dict[str, list[Any]]:
        """Every input file's state: path -> [size, mtime_ns] (+ content hash when racy)."""
        if self._files is None:
            self._files = unpack(self._packed) or {}
        return self._files

    def as_json(self) -> dict[str, Any]:
        # (as the worker packed them, when nothing asked for them here: at 100,000 files,
        # unpacking and packing again took 0.13 s)
        files = self._packed if self._files is None else pack(self._files)
        return {"root": self.root, "out": self.out, "code": self.code, "files": files}

    def stats(self) -> Stats | None:
        """The input files as stat-ed for this snapshot (``recordtool.snapshot.Stats``), for the
        entry cache, which then does not stat every entry file again; given once, then let go."""
        stats, self._stats = self._stats, None
        return stats

    def outputs(self) -> Outputs | None:
        """The files the last render wrote (``outputs``), made once: ``Outputs.stat_ahead``
        may be stat-ing them while the project is opened."""
        if self._outputs is None:
            self._outputs = (outputs(self.last()),)
        return self._outputs[0]

    def last(self) -> dict[str, Any]:
        """The snapshot the last render kept in the output folder ({} if none), read once: the
        "nothing changed" check and the render after it share it."""
        if self._last is None:
            self._last = read_snapshot(self.out)
        return self._last


def snapshot_inputs(root: Path | None = None, out: Path | None = None) -> Inputs | None:
    """The inputs of a render of the project at ``root`` (or found above the current folder)
    into ``out``, taken before the project is opened; None when the project or the output
    folder cannot be used (opening or rendering will say why)."""
    found = _locate(root, out)
    return _take(*found) if found is not None else None


def _locate(root: Path | None, out: Path | None) -> tuple[Path, Config, Path] | None:
    """The project's root, its configuration and the output folder (resolved); None when the
    project or the output folder cannot be used."""
    try:
        base = root.resolve() if root is not None else find_root(Path.cwd())
        config = load_config(base)
        target = check_output_folder(config, out if out is not None else config.pages)
    except (ConfigError, RenderError, OSError):
        return None
    return base, config, target


def _take(base: Path, config: Config, target: Path, last: dict[str, Any] | None = None) -> Inputs:
    """The inputs of a render (``snapshot_inputs``); ``last``: the last snapshot, already read."""
    pyproject = str(config.root / "pyproject.toml")
    folders = [str(config.record / kind.folder) for kind in config.kinds.values()]
    stats = Stats({}, 0)
    files = files_state([pyproject], [*folders, str(config.verdicts), str(config.root / config.checks)], stats)
    return Inputs(str(base), os.path.realpath(target), plan.code_version(), files, _last=last, _stats=stats)


# Input files the last snapshot lists from which a worker takes the next one. After one edit,
# with the worker on and off alternating (ten rounds each, -j 2): at 10,000 entries 1.13 against
# 1.16 s (and 0.15 s more CPU, on the second core); at 2,000 and 5,000 no difference showed.
AHEAD_MIN = 5_000
R = TypeVar("R")


class Taking(Generic[R]):
    """The inputs of a render being taken (``snapshot_inputs``) and judged (``judge``: render's
    "nothing changed" check), by a forked worker while this process goes on (``ahead``), or
    here when asked for (``result``). On a large record, stat-ing every input and comparing
    takes most of a second (100,000 entries), which this process may spend meanwhile on what
    opening the project needs anyway (importing, reading the entry cache). When the judgement
    is that something changed, the worker then stats the pages the last render wrote, as
    ``Outputs.stat_ahead`` would, while this process opens the project: forking a second worker
    once the entry cache is read would cost more than it saves (a large process to fork, and its
    pages copied as either side writes them).

    A worker is forked when the last snapshot lists at least ``AHEAD_MIN`` input files and
    ``jobs`` allows two processes, where ``fork`` is offered and no other thread runs (forking
    one is unsafe). A worker that fails, is killed or answers garbled costs the snapshot taken
    here after all (or the pages stat-ed here), never the answer. Written with ``os.fork`` and a
    pipe rather than a process pool: a pool's thread would stay in this process. The last
    snapshot is read once, here, and the worker is forked with it."""

    def __init__(self, root: Path | None, out: Path | None, jobs: int | None, judge: Callable[[Inputs], R]) -> None:
        self.judge = judge
        self.found = _locate(root, out)
        self.last: dict[str, Any] | None = None
        self._worker: _Worker | None = None
        if self.found is None:
            return
        self.last = read_snapshot(os.path.realpath(self.found[2]))
        files = self.last.get("files")
        paths = files.get("paths") if isinstance(files, dict) else None
        if (isinstance(paths, list) and len(paths) >= AHEAD_MIN and parallel.workers(jobs) >= 2
                and hasattr(os, "fork") and threading.active_count() == 1):
            self._worker = _Worker.fork(self._work)

    @property
    def ahead(self) -> bool:
        """Whether a worker is taking them."""
        return self._worker is not None

    def answered(self) -> bool:
        """Whether ``result`` would answer without waiting for the worker (or there is none)."""
        worker = self._worker
        if worker is None or worker.fd is None:
            return True
        try:
            return bool(select.select([worker.fd], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def _work(self, send: Callable[[bytes], None]) -> None:
        """In the worker: the inputs and their judgement; then, if something changed, the
        states of the pages the last render wrote (``Outputs.spoiled`` compares them)."""
        assert self.found is not None
        inputs = _take(*self.found, last=self.last)
        judged = self.judge(inputs)
        stats = inputs.stats()
        assert stats is not None
        send(pickle.dumps(((inputs.root, inputs.out, inputs.code), judged, _sent(inputs.files, stats)),
                          protocol=pickle.HIGHEST_PROTOCOL))
        written = inputs.outputs() if judged is None else None
        if written is not None:
            send(stat_all(inputs.out, written.paths).tobytes())

    def result(self) -> tuple[Inputs | None, R | None]:
        """The inputs (None when the project or the output folder cannot be used) and the judgement."""
        if self.found is None:
            return None, None
        worker, self._worker = self._worker, None
        if worker is not None:
            enabled = gc.isenabled()
            gc.disable()  # (a hundred thousand small objects made at once: no collector passes over them)
            try:
                (root, out, code), judged, sent = pickle.loads(worker.read())
                packed, stats = _received(sent)
                inputs = Inputs(root, out, code, None, _last=self.last, _stats=stats, _packed=packed)
            except Exception:  # anything but a whole answer: taken here
                worker.close()
            else:
                written = inputs.outputs() if judged is None else None
                if written is not None:
                    written.given(inputs.out, worker.read_last)
                else:
                    worker.close()
                return inputs, judged
            finally:
                if enabled:
                    gc.enable()
        inputs = _take(*self.found, last=self.last)
        return inputs, self.judge(inputs)


class _Worker:
    """A forked worker (``Taking``) and its answers: each sent as its length and its bytes, read
    one after the other; the worker is waited for once its answers are read or let go."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd: int | None = fd
        self.owner = os.getpid()  # (a process forked later holds this object too: it never waits for the worker)

    @classmethod
    def fork(cls, work: Callable[[Callable[[bytes], None]], None]) -> _Worker | None:
        """A worker doing ``work(send)``; None when none can be forked."""
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the worker: answer, then leave at once (no exit handlers of the parent's)
            code = 1
            try:
                os.close(read_end)

                def send(data: bytes) -> None:
                    view = memoryview(len(data).to_bytes(8, "big") + data)
                    while view:
                        view = view[os.write(write_end, view):]

                work(send)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        return cls(pid, read_end)

    def read(self) -> bytes:
        """The next answer, waiting for it; OSError when there is none (the worker failed or
        was killed, or was let go: ``close``)."""
        try:
            if self.fd is None:
                raise OSError("the worker was let go")
            size = int.from_bytes(self._exactly(8), "big")
            return self._exactly(size)
        except BaseException:
            self.close()
            raise

    def read_last(self) -> bytes:
        """The next answer, the last one: then the worker is waited for."""
        try:
            return self.read()
        finally:
            self.close()

    def _exactly(self, size: int) -> bytes:
        assert self.fd is not None
        chunks: list[bytes] = []
        while size:
            chunk = os.read(self.fd, min(size, 1 << 20))
            if not chunk:
                raise OSError("the worker ended before answering")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self, _getpid: Callable[[], int] = os.getpid, _close: Callable[[int], None] = os.close,
              _wait: Callable[[int, int], object] = os.waitpid) -> None:
        """Let the worker go (it stops at its next answer) and wait for it."""
        # (the functions bound when the class was made, and no ``contextlib``: called by
        # ``__del__``, also at the interpreter's exit, when the module's globals may be gone)
        if self.fd is not None and _getpid() == self.owner:
            fd, self.fd = self.fd, None
            _close(fd)
            try:  # noqa: SIM105 - see above
                _wait(self.pid, 0)
            except ChildProcessError:
                pass

    def __del__(self) -> None:
        self.close()


def _sent(files: dict[str, list[Any]], stats: Stats) -> tuple[dict[str, Any], bytes, bytes, int]:
    """The inputs' states (packed as the snapshot keeps them: ``pack``) and stats as a worker
    sends them (``Taking``): each stat-ed file by its place among the inputs' paths (every
    file stat-ed is one of them: ``recordtool.snapshot.walk``), and their numbers in one array.
    At 100,000 files, pickling the dicts took a tenth of a second, and as long again to make
    them back; sending the stat-ed files' paths a second time, as one string, 9 MB more through
    the pipe and 30 ms more to join and split, while this process waited. ``_received`` makes
    them back."""
    place = dict(zip(files, itertools.count()))
    places = array("q", map(place.__getitem__, stats.files))
    full = array("q", itertools.chain.from_iterable(stats.files.values()))
    return pack(files), places.tobytes(), full.tobytes(), stats.taken


def _received(sent: tuple[dict[str, Any], bytes, bytes, int]) -> tuple[dict[str, Any], Stats]:
    """What ``_sent`` sent, made back (the files' states left packed, their form checked);
    ValueError when it is not whole."""
    packed, places_sent, full, taken = sent
    got = _stats(packed)
    places, stat_packed = array("q"), array("q")
    places.frombytes(places_sent)
    stat_packed.frombytes(full)
    if got is None or len(stat_packed) != 4 * len(places) or (places and not 0 <= min(places) <= max(places) < len(got[0])):
        raise ValueError("not whole")
    stat_paths = map(got[0].__getitem__, places)  # (the inputs' own strings: not held twice)
    fours = iter(stat_packed)  # (the length checked above: each path its four numbers)
    return packed, Stats(dict(zip(stat_paths, zip(fours, fours, fours, fours, strict=False), strict=False)), taken)


def pack(files: dict[str, list[Any]]) -> dict[str, Any]:
    """Files' states (path -> [size, mtime_ns], + a content hash when racy) in a form that is
    cheap to write, read and compare at 100,000 files: the paths in a list, the sizes and times
    as one array of 64-bit integers (base64), the hashes by path. ``unpack`` gives them back."""
    stats = array("q", _sizes_and_times(files))
    racy = itertools.compress(files, map(operator.gt, map(len, files.values()), itertools.repeat(2)))
    hashes = {path: files[path][2] for path in racy}  # (few: the files changed just before)
    return {"paths": list(files), "stats": base64.b64encode(stats.tobytes()).decode("ascii"), "hashes": hashes}


def _sizes_and_times(files: dict[str, list[Any]]) -> Iterator[int]:
    """Each file's size and time, one after the other, as ``pack`` keeps them, with no line of
    Python per file: the worker that render waits for compares 100,000 of them with the last
    snapshot's in under a millisecond (22 ms with a loop; packing them costs the same either
    way, 70 to 77 ms with ``_sent``'s other arrays: reaching each file's list is what costs)."""
    return itertools.chain.from_iterable(map(_SIZE_AND_TIME, files.values()))


_SIZE_AND_TIME = operator.itemgetter(0, 1)


def _stats(packed: Any) -> tuple[list[str], array[int], dict[str, str]] | None:
    """The paths, sizes and times, and hashes of ``pack``'s form; None when it is not that."""
    if not isinstance(packed, dict):
        return None
    paths, text, hashes = packed.get("paths"), packed.get("stats"), packed.get("hashes")
    if not (isinstance(paths, list) and isinstance(text, str) and isinstance(hashes, dict)):
        return None
    stats = array("q")
    try:
        stats.frombytes(base64.b64decode(text, validate=True))
    except ValueError:
        return None
    if len(stats) != 2 * len(paths) or not set(map(type, paths)) <= {str}:  # (no line of Python per path)
        return None
    return paths, stats, hashes


def unpack(packed: Any) -> dict[str, list[Any]] | None:
    """The files' states ``pack`` packed; None when ``packed`` is not in that form."""
    got = _stats(packed)
    if got is None:
        return None
    paths, stats, hashes = got
    pairs = [[size, mtime] for size, mtime in zip(stats[0::2], stats[1::2], strict=True)]
    files: dict[str, list[Any]] = dict(zip(paths, pairs, strict=True))
    for path, digest in hashes.items():
        if path in files:
            files[path].append(digest)
    return files


def as_left(inputs: Inputs, root: Path, sources: Iterable[str]) -> set[str]:
    """Those of ``sources`` (files of the project, paths relative to ``root``) that are as the
    last render into the same folder, by the same code, found them: the same size and
    modification time now as in its snapshot, and neither time so recent that the file may
    have changed since unseen (racy). What that render made of them (a figure's copy) still
    holds, as a render with nothing changed trusts (``last_report``). A file changed between
    that render's snapshot and its reading it has another time now, and is read again."""
    sources = list(sources)
    if not sources:
        return set()
    now = inputs.files
    under = _under(root)
    wanted: dict[str, str] = {}  # path as the snapshot keeps it -> the source
    for source in sources:
        path = under(source)
        if path in now:
            wanted[path] = source
    last = inputs.last()
    if (not wanted or not last or last.get("root") != inputs.root or last.get("out") != inputs.out
            or last.get("code") != inputs.code):
        return set()
    got = _stats(last.get("files"))
    if got is None:
        return set()
    paths, stats, hashes = got
    found: set[str] = set()
    for n, path in enumerate(paths):  # (a file racy now has its hash too: never equal to a size and time)
        if path in wanted and path not in hashes and now[path] == [stats[2 * n], stats[2 * n + 1]]:
            found.add(wanted[path])
    return found


def _under(root: Path) -> Callable[[str], str]:
    """The path of a file of the project (given relative to ``root``, with '/') as the snapshot
    names it, made without a ``Path`` (a record's figures are thousands)."""
    base = os.path.join(str(root), "")
    if os.sep == "/":
        return lambda rel: base + rel
    return lambda rel: base + rel.replace("/", os.sep)


def kept_captions(inputs: Inputs, figures: Iterable[str], left: Collection[str]) -> dict[str, tuple[str, str]]:
    """The title and caption of each of ``figures`` whose sidecar (``<figure>.json``) is as the
    last render found it (in ``left``: ``as_left``), as that render read them (``keep``)."""
    from recordtool.verify.context import SIDECAR

    kept = inputs.last().get("captions")
    if not isinstance(kept, dict):
        return {}
    said: dict[str, tuple[str, str]] = {}
    for figure in figures:
        words = kept.get(figure)
        if (figure + SIDECAR in left and isinstance(words, list) and len(words) == 2
                and all(type(w) is str for w in words)):
            said[figure] = (words[0], words[1])
    return said


def _files_hold(then: Any, now: dict[str, list[Any]]) -> bool:
    """``recordtool.snapshot.files_hold`` for files packed by ``pack``: when the paths are in the
    same order, the packed sizes and times are compared whole, and then only the files racy
    then are compared one by one (by content). After an edit the file edited is often racy in
    the last snapshot (rendered right after it was saved): unpacking every file to compare them
    one by one took a worker 0.1 s at 100,000 entries, while this process waited for its answer."""
    got = _stats(then)
    if got is None:
        return False
    paths, stats, hashes = got
    if len(paths) == len(now) and paths == list(now):
        if array("q", _sizes_and_times(now)) != stats:
            return False
        racy = [path for path in hashes if path in now]  # (as ``unpack`` keeps a hash: only of a file listed)
        return files_hold({path: [*now[path][:2], hashes[path]] for path in racy}, {path: now[path] for path in racy})
    return files_hold(unpack(then), now)


def outputs(last: dict[str, Any]) -> Outputs | None:
    """The files the last render wrote, as its snapshot ``last`` keeps them (``write.Outputs``);
    None when it keeps none, or not in ``pack``'s form."""
    got = _stats(last.get("outputs"))
    if got is None or got[2]:
        return None
    manifest = last.get("manifest")
    as_written = manifest if isinstance(manifest, list) and len(manifest) == 2 else None
    return Outputs(got[0], got[1], as_written)


def outputs_hold(base: str, then: Any) -> bool:
    """Whether every file written (packed by ``pack``, paths relative to ``base``) is as written."""
    got = _stats(then)
    if got is None or got[2]:
        return False
    paths, stats, _hashes = got
    current = array("q")
    join, stat = os.path.join, os.stat
    for rel in paths:
        try:
            st = stat(join(base, *rel.split("/")))
        except OSError:
            return False
        current.append(st.st_size)
        current.append(st.st_mtime_ns)
    return current == stats


def read_snapshot(base: str) -> dict[str, Any]:
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


def keep(project: Project, inputs: Inputs, report: WriteReport, summary: dict[str, Any],
         sources: list[str], captions: dict[str, tuple[str, str]] | None = None) -> None:
    """Keep what this render read and wrote (``summary``: what it reported), for ``last_report``;
    ``captions``: the title and caption of each figure, as read from its sidecar, for the next
    render (``kept_captions``)."""
    from recordtool.verify.snapshot import fingerprint_inputs

    config = project.config
    packages, extra = fingerprint_inputs(project)
    under = _under(config.root)
    for source in sources:  # figures named by verdicts, wherever they are
        path = under(source)
        if path not in inputs.files:
            extra[path] = stat_file(path)
    base = inputs.out
    written = report.outputs()
    packed = {"paths": written.paths, "stats": base64.b64encode(written.stats.tobytes()).decode("ascii"), "hashes": {}}
    manifest = stat_file(os.path.join(base, MANIFEST))
    if manifest is None:
        return
    data = {
        "format": SNAPSHOT_FORMAT,
        **inputs.as_json(),
        "extra": extra,
        "versions": _versions(sorted(packages)),
        "outputs": packed,
        "manifest": manifest,
        "report": summary,
        "captions": {figure: list(words) for figure, words in sorted((captions or {}).items())},
    }
    replace_file(os.path.join(base, SNAPSHOT), json.dumps(data, separators=(",", ":")).encode("utf-8"))


def last_report(inputs: Inputs) -> dict[str, Any] | None:
    """What the last render reported, when its snapshot still holds (every input and every
    file written as it was, the same code and versions): nothing to write. None when anything
    differs; then render."""
    last = inputs.last()
    if not last or last.get("root") != inputs.root or last.get("out") != inputs.out:
        return None
    if last.get("code") != inputs.code:
        return None
    if not _files_hold(last.get("files"), inputs.files) or not stats_hold(last.get("extra") or {}):
        return None
    if stat_file(os.path.join(inputs.out, MANIFEST)) != last.get("manifest"):
        return None
    if not outputs_hold(inputs.out, last.get("outputs")):
        return None
    versions = last.get("versions")
    if not isinstance(versions, dict):
        return None
    packages = [k for k in versions if k != "python" and not k.startswith("dist:")]
    if _versions(packages) != versions:
        return None
    info = last.get("report")
    return info if isinstance(info, dict) else {}
