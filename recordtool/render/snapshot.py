"""The snapshot: deciding "nothing changed" without opening the project.

A snapshot (``.recordtool-snapshot.json``, next to the manifest; local state, not meant to be
committed) keeps what the last ``recordtool render`` read and wrote: the size and modification
time of every input file (entries, verdicts and figures, the checks package, pyproject.toml),
the versions the claims' fingerprints compare, recordtool's own code, and every file written.
When all of it is as it was, ``last_report`` says so without opening the project: the site is
already what a render would write. The taking and comparing of files is ``recordtool.snapshot``'s,
shared with ``verify`` and ``status``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.record.config import ConfigError, find_root, load_config
from recordtool.render import plan
from recordtool.render.manifest import MANIFEST
from recordtool.render.write import RenderError, check_output_folder, replace_file
from recordtool.snapshot import files_hold, stat_file, stats_hold
from recordtool.snapshot import take as files_state

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.render.write import WriteReport

SNAPSHOT = ".recordtool-snapshot.json"
SNAPSHOT_FORMAT = 1


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
    pyproject = str(config.root / "pyproject.toml")
    folders = [str(config.record / kind.folder) for kind in config.kinds.values()]
    files = files_state([pyproject], [*folders, str(config.verdicts), str(config.root / config.checks)])
    return Inputs(str(base), os.path.realpath(target), plan.code_version(), files)


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
    if not files_hold(last.get("files"), inputs.files) or not stats_hold(last.get("extra") or {}):
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
