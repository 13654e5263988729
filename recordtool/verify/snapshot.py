"""The answers of ``verify`` and ``status`` when nothing was to be done, kept to be given again.

Both load the whole record to say that nothing changed. So what they printed is kept in the
cache folder (``verify-snapshot.json``) with the state of what they read: the project's files,
the verdicts, the checks and any module a check runs, recordtool's code, and the versions the
fingerprints compare. While all of it is as it was, the same command with the same options
prints the same thing without opening the project. Only a "nothing to do" answer is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import recordtool
from recordtool.atomic import sweep, sweep_runs, write_atomic
from recordtool.record.config import Config, ConfigError, find_root, load_config

if TYPE_CHECKING:
    from recordtool.record.project import Project

SNAPSHOT = "verify-snapshot.json"  # in the cache folder
RUNS = "verify-runs"  # in the cache folder: one folder for each verify that runs checks, ``<pid>-<ms>``
PACKAGE = Path(recordtool.__file__).resolve().parent  # recordtool's own code: its modules' files are inputs too
SNAPSHOT_FORMAT = 1
KEPT = 16  # answers kept for one state of the inputs (commands and options)
ALWAYS = ("recordtool", "torch")  # packages whose versions every verdict keeps

Said = list[tuple[str, bool]]  # what was printed: (text, on stderr)


class Inputs(NamedTuple):
    """What ``verify`` and ``status`` read, as found on disk before the project is opened."""

    path: str  # the snapshot file
    key: str  # the command and its options
    state: dict[str, Any]  # root, code, where its folders lead, files


class Answer(NamedTuple):
    """What a command printed, in order, and its exit code."""

    said: Said
    code: int


def take(root: Path | None, command: str, options: dict[str, Any]) -> Inputs | None:
    """The inputs of ``command`` with ``options`` for the project at ``root`` (or found above
    the current folder); None when it cannot be found or configured (opening it says why)."""
    try:
        base = root.resolve() if root is not None else find_root(Path.cwd())
        config = load_config(base)
    except (ConfigError, OSError):
        return None
    if not config.record.is_dir():  # opening it says so
        return None
    if command == "verify":
        leftovers(config)
    folders = [str(config.record / kind.folder) for kind in config.kinds.values()]
    # where the record and its folders lead (a folder replaced by a link is another input)
    places = [os.path.realpath(path) for path in (str(config.record), *folders, str(config.verdicts),
                                                 str(config.root / config.checks))]
    # recordtool's own code is its modules' files (their states: cheaper than hashing them),
    # its version and Python's
    files = take_files([str(config.root / "pyproject.toml")],
                       [*folders, str(config.verdicts), str(config.root / config.checks), str(PACKAGE)])
    state = {"root": str(base), "code": f"{recordtool.__version__} {sys.version}", "places": places, "files": files}
    key = json.dumps([command, options], sort_keys=True)
    return Inputs(str(config.cache / SNAPSHOT), key, state)


def leftovers(config: Config) -> None:
    """Remove what killed verify runs left: temporary files and their runs' folders (only those
    of processes that are gone). Done by every verify, the one that replays an answer too."""
    sweep(config.verdicts)
    sweep(config.cache)
    sweep_runs(config.cache / RUNS)


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == SNAPSHOT_FORMAT else {}


def _versions(packages: list[str]) -> dict[str, str | None]:
    """The installed versions of ``packages`` (import names), read from their metadata."""
    from recordtool.verify import fingerprint  # imports importlib.metadata: only when needed

    return {name: fingerprint.package_version(name) for name in packages}


def _installed(packages: list[str]) -> dict[str, list[int] | None]:
    """Where the versions of ``packages`` are read from, as file states (their metadata files and
    the folders of installed distributions): while they hold, the versions need not be read."""
    from importlib import metadata

    from recordtool.verify import fingerprint

    folders = {path for path in sys.path if path.endswith(("site-packages", "dist-packages"))}
    files: list[str] = []
    for name in packages:
        if fingerprint.package_version(name) is None:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:  # an import name that is not its distribution's
            dists = metadata.packages_distributions().get(name, [])
            if not dists:
                continue
            dist = metadata.distribution(dists[0])
        found = getattr(dist, "_path", None)  # where a distribution on disk keeps its metadata
        if found is None:
            return {}  # no file to watch: read the versions every time
        meta = os.path.join(str(found), "METADATA")
        files.append(meta if os.path.exists(meta) else os.path.join(str(found), "PKG-INFO"))
        folders.add(os.path.dirname(str(found)))
    return {path: stat_file(path) for path in sorted({*files, *folders})}


def _holds(last: dict[str, Any], inputs: Inputs) -> bool:
    """Whether what the kept answers read is all as it is now."""
    state = inputs.state
    if any(last.get(name) != state[name] for name in ("root", "code", "places")):
        return False
    if not files_hold(last.get("files"), state["files"]) or not stats_hold(last.get("extra")):
        return False
    versions = last.get("versions")
    if not isinstance(versions, dict):
        return False
    installed = last.get("installed")
    return (bool(installed) and stats_hold(installed)) or _versions(sorted(versions)) == versions


def kept_answer(inputs: Inputs) -> Answer | None:
    """What the same command printed last time, when nothing it read has changed since; None
    when anything differs (or it was never kept): then run it."""
    last = _read(inputs.path)
    answer = (last.get("answers") or {}).get(inputs.key)
    if not isinstance(answer, dict) or not _holds(last, inputs):
        return None
    said, code = answer.get("said"), answer.get("code")
    if not isinstance(said, list) or not isinstance(code, int):
        return None
    return Answer([(str(text), bool(err)) for text, err in said], code)


def fingerprint_inputs(project: Project) -> tuple[set[str], dict[str, list[int] | None]]:
    """What the claims' fingerprints read besides the record and the checks package: the
    packages whose versions they compare, and the state of each module outside the package."""
    from recordtool.verify.fingerprint import Scanner

    config = project.config
    scanner = Scanner(config)
    package = str(config.root / config.checks) + os.sep
    packages: set[str] = set()
    extra: dict[str, list[int] | None] = {}
    record = project.record
    if record.modules is not None:  # as loading found them
        modules = set().union(*record.modules.values())
    else:
        modules = {check.module for claim in record.claims() for check in claim.checks}
    for module in sorted(modules):
        scan = scanner.scan(module)
        packages |= scan.packages
        parts = module.split(".")
        paths = [str(config.root / rel) for rel in [*scan.files, *scan.missing]]
        for i in range(1, len(parts) + 1):  # the module and its packages, where they would be
            stem = config.root.joinpath(*parts[:i])
            paths += [str(stem.with_suffix(".py")), str(stem / "__init__.py")]
        for path in paths:
            if not path.startswith(package):  # the checks package is in the snapshot whole
                extra[path] = stat_file(path)
    return packages, extra


def keep(project: Project, inputs: Inputs, answer: Answer) -> None:
    """Keep ``answer``, what the command printed having found nothing to do, for ``kept_answer``."""
    packages, extra = fingerprint_inputs(project)
    last = _read(inputs.path)
    answers = last.get("answers") if _holds(last, inputs) else None
    answers = {k: v for k, v in answers.items() if k != inputs.key} if isinstance(answers, dict) else {}
    answers = dict(list(answers.items())[-(KEPT - 1):])
    answers[inputs.key] = {"said": answer.said, "code": answer.code}
    names = sorted(packages | set(ALWAYS))
    data = {"format": SNAPSHOT_FORMAT, **inputs.state, "extra": extra, "versions": _versions(names),
            "installed": _installed(names), "answers": answers}
    with contextlib.suppress(OSError):  # a cache that cannot be written costs speed, never the answer
        os.makedirs(os.path.dirname(inputs.path), exist_ok=True)
        write_atomic(Path(inputs.path), json.dumps(data, separators=(",", ":")))

# The state of files: sizes and modification times, and the content hash of a file written within
# ``RACY_NS`` of the snapshot, which may change again within its mtime's tick ("racy", as git says).

RACY_NS = 2_000_000_000  # a file changed this recently may change again within its mtime's tick
Files = dict[str, list[Any]]  # path -> [size, mtime_ns] (+ content hash when changed just now)


def content_hash(data: bytes) -> str:
    import hashlib  # loads OpenSSL: only when a hash is wanted

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_file(path: str) -> list[int] | None:
    """[size, mtime_ns] of a file, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def take_files(files: Iterable[str] = (), folders: Iterable[str] = ()) -> Files:
    """The state of ``files`` (those that exist) and of every file under ``folders`` (links to
    folders not followed, ``__pycache__`` left out), with the content hash of each racy file."""
    start = time.time_ns()
    state: Files = {}
    for path in files:
        stat = stat_file(path)
        if stat is not None:
            state[path] = stat
    stack = list(folders)
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
                    state[item.path] = [-1, -1]
                    continue
                state[item.path] = [st.st_size, st.st_mtime_ns]
    for path, value in state.items():
        if value[1] >= start - RACY_NS:
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                value.append(content_hash(handle.read()))
    return state


def files_hold(then: Any, now: Files) -> bool:
    """Whether the files are as they were: the same paths, sizes and times (and, for a file
    that was racy then, the same content)."""
    if not isinstance(then, dict) or len(then) != len(now):
        return False
    for path, value in now.items():
        old = then.get(path)
        if not isinstance(old, list) or old[:2] != value[:2]:
            return False
        if len(old) > 2 and (len(value) < 3 or value[2] != old[2]):
            if len(value) > 2:
                return False
            try:  # it was racy then, and is old now: check its content
                with open(path, "rb") as handle:
                    if content_hash(handle.read()) != old[2]:
                        return False
            except OSError:
                return False
    return True


def stats_hold(then: Any) -> bool:
    """Whether every file of ``then`` (path -> [size, mtime_ns], or None for none) is as it was."""
    return isinstance(then, dict) and all(stat_file(path) == old for path, old in then.items())
