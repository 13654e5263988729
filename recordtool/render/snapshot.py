"""The snapshot: deciding "nothing changed" without opening the project.

A snapshot (``.recordtool-snapshot.json``, next to the manifest; local state, not meant to be
committed) keeps what the last ``recordtool render`` read and wrote: the size and modification
time of every input file (entries, verdicts and figures, the checks package, pyproject.toml),
the versions the claims' fingerprints compare, recordtool's own code, and every file written.
When all of it is as it was, ``last_report`` says so without opening the project: the site is
already what a render would write.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.record.config import ConfigError, find_root, load_config
from recordtool.render import plan
from recordtool.render.manifest import MANIFEST, content_hash
from recordtool.render.write import RenderError, check_output_folder, replace_file, stat_file

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.render.write import WriteReport

SNAPSHOT = ".recordtool-snapshot.json"
SNAPSHOT_FORMAT = 1
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its mtime's tick


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
    stat = stat_file(pyproject)
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
    return Inputs(str(base), os.path.realpath(target), plan.code_version(), files)


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
                    extra[path] = stat_file(path)
    for source in sources:  # figures named by verdicts, wherever they are
        path = str(config.root / source)
        if path not in inputs.files:
            extra[path] = stat_file(path)
    base = inputs.out
    outputs = dict(report.stats)
    manifest = stat_file(os.path.join(base, MANIFEST))
    if manifest is None:
        return
    data = {
        "format": SNAPSHOT_FORMAT,
        **inputs.as_json(),
        "extra": extra,
        "versions": _versions(sorted(packages)),
        "outputs": outputs,
        "manifest": manifest,
        "report": summary,
    }
    replace_file(os.path.join(base, SNAPSHOT), json.dumps(data, separators=(",", ":")).encode("utf-8"))


def last_report(inputs: Inputs) -> dict[str, Any] | None:
    """What the last render reported, when its snapshot still holds (every input and every
    file written as it was, the same code and versions): nothing to write. None when anything
    differs; then render."""
    last = read_snapshot(inputs.out)
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
        if stat_file(path) != then:
            return None
    outputs = last.get("outputs")
    if not isinstance(outputs, dict) or stat_file(os.path.join(inputs.out, MANIFEST)) != last.get("manifest"):
        return None
    for rel, then in outputs.items():
        if stat_file(os.path.join(inputs.out, *rel.split("/"))) != then:
            return None
    versions = last.get("versions")
    if not isinstance(versions, dict):
        return None
    packages = [k for k in versions if k != "python" and not k.startswith("dist:")]
    if _versions(packages) != versions:
        return None
    info = last.get("report")
    return info if isinstance(info, dict) else {}
