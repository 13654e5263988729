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
import json
import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.record.config import ConfigError, find_root, load_config
from recordtool.render import plan
from recordtool.render.manifest import MANIFEST
from recordtool.render.write import Outputs, RenderError, check_output_folder, replace_file
from recordtool.snapshot import Stats, files_hold, stat_file, stats_hold
from recordtool.snapshot import take as files_state

if TYPE_CHECKING:
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
    files: dict[str, list[Any]]  # path -> [size, mtime_ns] (+ content hash when changed just now)
    _last: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    # The input files' size, times and inode as stat-ed here, until handed to the entry cache (``stats``)
    _stats: Stats | None = field(default=None, repr=False, compare=False)
    _outputs: tuple[Outputs | None] | None = field(default=None, repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "out": self.out, "code": self.code, "files": pack(self.files)}

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
    try:
        base = root.resolve() if root is not None else find_root(Path.cwd())
        config = load_config(base)
        target = check_output_folder(config, out if out is not None else config.pages)
    except (ConfigError, RenderError, OSError):
        return None
    pyproject = str(config.root / "pyproject.toml")
    folders = [str(config.record / kind.folder) for kind in config.kinds.values()]
    stats = Stats({}, 0)
    files = files_state([pyproject], [*folders, str(config.verdicts), str(config.root / config.checks)], stats)
    return Inputs(str(base), os.path.realpath(target), plan.code_version(), files, _stats=stats)


def pack(files: dict[str, list[Any]]) -> dict[str, Any]:
    """Files' states (path -> [size, mtime_ns], + a content hash when racy) in a form that is
    cheap to write, read and compare at 100,000 files: the paths in a list, the sizes and times
    as one array of 64-bit integers (base64), the hashes by path. ``unpack`` gives them back."""
    stats = array("q")
    hashes: dict[str, str] = {}
    for path, value in files.items():
        stats.append(value[0])
        stats.append(value[1])
        if len(value) > 2:
            hashes[path] = value[2]
    return {"paths": list(files), "stats": base64.b64encode(stats.tobytes()).decode("ascii"), "hashes": hashes}


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
    if len(stats) != 2 * len(paths) or not all(isinstance(p, str) for p in paths):
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


def _files_hold(then: Any, now: dict[str, list[Any]]) -> bool:
    """``recordtool.snapshot.files_hold`` for files packed by ``pack``: when the paths are in the
    same order and none was racy then, the packed sizes and times are compared whole."""
    got = _stats(then)
    if got is None:
        return False
    paths, stats, hashes = got
    if not hashes and len(paths) == len(now) and paths == list(now):
        current = array("q")
        for value in now.values():
            current.append(value[0])
            current.append(value[1])
        return current == stats
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
         sources: list[str]) -> None:
    """Keep what this render read and wrote (``summary``: what it reported), for ``last_report``."""
    from recordtool.verify.snapshot import fingerprint_inputs

    config = project.config
    packages, extra = fingerprint_inputs(project)
    for source in sources:  # figures named by verdicts, wherever they are
        path = str(config.root / source)
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
