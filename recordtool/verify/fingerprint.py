"""Fingerprints: what produced a verdict, hashed, so a change makes it stale with a reason.

A claim's fingerprint maps one key per thing that produced its verdict: its ``statement`` and
``clauses``, each part of each check's spec (``check:<name>:params``), each source file its
check modules run (``source:checks/circuits.py``, found by reading imports with ``ast``), and
the versions of Python and the packages they import (``version:torch``, from metadata).
``diff`` turns two fingerprints into reasons: "statement changed", "torch 2.13.0 -> 2.14.0".
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.record.config import Config

if TYPE_CHECKING:  # annotations only: the render's "nothing changed" test must not load pydantic
    from recordtool.record.schema import CheckSpec, Theory

MISSING = "missing"


def digest(data: bytes | str) -> str:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(payload).hexdigest()[:16]


def canonical(value: Any) -> str:
    """Stable JSON of params and the like (sorted keys), for hashing and messages."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


@dataclass
class SourceScan:
    """The local files and third-party packages a check module runs, found by reading it."""

    files: dict[str, Path] = field(default_factory=dict)  # relative POSIX path -> file
    missing: set[str] = field(default_factory=set)  # relative paths of modules not found
    packages: set[str] = field(default_factory=set)  # top-level third-party import names


class Scanner:
    """Follows imports inside the checks package, caching each file's parse."""

    def __init__(self, config: Config) -> None:
        self.root = config.root
        self.package = config.checks
        self.module_file = config.module_file
        self._imports: dict[Path, tuple[list[str], set[str]]] = {}
        self._digests: dict[Path, str] = {}  # of each file read, so one run reads it once
        self._scans: dict[str, SourceScan] = {}

    def digest(self, path: Path) -> str:
        """The digest of a file that ``scan`` listed (read once per scanner)."""
        if path not in self._digests:
            self._digests[path] = digest(path.read_bytes())
        return self._digests[path]

    def scan(self, module: str) -> SourceScan:
        """What ``module`` runs (found once per scanner)."""
        if module in self._scans:
            return self._scans[module]
        out = self._scans[module] = SourceScan()
        seen: set[str] = set()
        todo = [module]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            parts = name.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # a.b.c runs a/ and a/b/__init__.py first
            path = self.module_file(name)
            if path is None:
                out.missing.add(name.replace(".", "/") + ".py")
                continue
            out.files[path.relative_to(self.root).as_posix()] = path
            local, third = self._read(path, name)
            out.packages |= third
            todo.extend(local)
        return out

    def _read(self, path: Path, module: str) -> tuple[list[str], set[str]]:
        if path in self._imports:
            return self._imports[path]
        data = path.read_bytes()
        self._digests[path] = digest(data)
        try:
            tree = ast.parse(data, filename=str(path))
        except (SyntaxError, ValueError):
            self._imports[path] = ([], set())
            return self._imports[path]
        is_package = path.name == "__init__.py"
        current = module if is_package else module.rpartition(".")[0]
        local: list[str] = []
        third: set[str] = set()

        def add(name: str) -> None:
            top = name.split(".", 1)[0]
            if top == self.package:
                local.append(name)
            elif top and top not in sys.stdlib_module_names and top != "__future__":
                third.add(top)

        for node in _statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = current.split(".") if current else []
                    if node.level > 1:
                        base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join([*base_parts, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                if not base:
                    continue
                add(base)
                if base.split(".", 1)[0] == self.package:
                    # ``from checks import model``: model may be a submodule
                    for alias in node.names:
                        if alias.name != "*" and self.module_file(f"{base}.{alias.name}") is not None:
                            local.append(f"{base}.{alias.name}")
        self._imports[path] = (local, third)
        return self._imports[path]


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones too (imports inside functions, ``if``, ``try``), without
    walking expressions: imports are statements, and this is several times faster."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements([n for n in inner if isinstance(n, ast.stmt)])
        for handler in getattr(node, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _statements(case.body)


@cache
def package_version(import_name: str) -> str | None:
    """The installed version of the distribution that provides ``import_name``, or None."""
    # (importing it imports email, zipfile and csv: only when a version is read)
    from importlib import metadata

    with contextlib.suppress(metadata.PackageNotFoundError):
        return metadata.version(import_name)
    try:
        dists = metadata.packages_distributions().get(import_name, [])
        return metadata.version(dists[0]) if dists else None
    except Exception:  # pragma: no cover - broken metadata
        return None


def environment(packages: Iterable[str]) -> dict[str, str]:
    """Python's version and those of ``packages`` that are installed; read from package
    metadata, never by importing them (``platform``: only when a fingerprint is made)."""
    import platform

    versions = {"python": platform.python_version()}
    for name in sorted(set(packages)):
        version = package_version(name)
        if version is not None:
            versions[name] = version
    return versions


def check_parts(check: CheckSpec, seeds: int | None = None) -> dict[str, str]:
    """The spec of one check, as the fingerprint keys of its parts; ``seeds`` and ``threads``
    are kept as numbers (``seeds``: how many it runs on, the check's own unless given)."""
    parts = {
        f"check:{check.name}:run": digest(check.run),
        f"check:{check.name}:params": digest(canonical(check.params)),
        f"check:{check.name}:expect": digest(canonical({m: e.key() for m, e in check.expect.items()})),
        f"check:{check.name}:controls": digest(canonical([[c.name, c.params] for c in check.all_controls])),
        f"check:{check.name}:seeds": str(seeds if seeds is not None else check.seeds),
        f"check:{check.name}:threads": str(check.threads),
    }
    # set only when given, so that adding none of them changes no fingerprint
    if check.observe:
        parts[f"check:{check.name}:observe"] = digest(canonical(check.observe))
    if check.degenerate:
        parts[f"check:{check.name}:degenerate"] = digest(canonical({m: str(e) for m, e in check.degenerate.items()}))
    if check.quorum is not None:
        parts[f"check:{check.name}:quorum"] = str(check.quorum)
    if check.positives:
        parts[f"check:{check.name}:positives"] = digest(canonical([[c.name, c.params] for c in check.all_positives]))
    if check.setting:  # shown beside the verdict, and held to it when the verdict is read
        parts[f"check:{check.name}:setting"] = digest(check.setting)
    if check.analogue:
        parts[f"check:{check.name}:analogue"] = "true"
    if check.keep:
        parts[f"check:{check.name}:keep"] = digest(canonical(sorted(check.keep)))
    if "tolerance" in check.model_fields_set:
        parts[f"check:{check.name}:tolerance"] = digest(canonical(check.tolerance.model_dump()))
    return parts


def claim_fingerprint(claim: Theory, scanner: Scanner, seeds: int | None = None) -> tuple[dict[str, str], set[str]]:
    """The claim's fingerprint and the third-party packages its checks import (``seeds``:
    ``verify --seeds``, which overrides the checks' own)."""
    keys = {"statement": digest(" ".join(claim.statement.split()))}
    if claim.clauses:
        keys["clauses"] = digest(canonical({k: " ".join(v.split()) for k, v in claim.clauses.items()}))
    for check in claim.checks:
        keys.update(check_parts(check, seeds))
    return with_sources(keys, [check.module for check in claim.checks], scanner)


def with_sources(keys: dict[str, str], modules: list[str], scanner: Scanner) -> tuple[dict[str, str], set[str]]:
    """``keys`` with the sources that ``modules`` run and the versions of Python and of the
    packages they import added, and those packages."""
    out = dict(keys)
    packages: set[str] = set()
    for module in modules:
        scan = scanner.scan(module)
        for rel, path in scan.files.items():
            out[f"source:{rel}"] = scanner.digest(path)
        for rel in scan.missing:
            out[f"source:{rel}"] = MISSING
        packages |= scan.packages
    out |= {f"version:{name}": version for name, version in environment(packages).items()}
    return out, packages


def diff(old: dict[str, str], new: dict[str, str], old_params: dict[str, dict[str, Any]] | None = None,
         new_params: dict[str, dict[str, Any]] | None = None, *, seeds_given: bool = False) -> list[str]:
    """Why ``old`` is no longer ``new``, one short reason per change, in a stable order.
    ``seeds_given``: ``new`` holds the seeds of ``verify --seeds``, not those the checks declare."""
    reasons: list[str] = []
    old_checks = _check_names(old)
    new_checks = _check_names(new)
    for key in sorted(set(old) | set(new), key=_order):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        kind, _, rest = key.partition(":")
        if kind == "check":
            name, _, part = rest.rpartition(":")
            if name not in old_checks:
                if part == "run":
                    reasons.append(f"check '{name}' added")
            elif name not in new_checks:
                if part == "run":
                    reasons.append(f"check '{name}' removed")
            elif part == "params":
                reasons.append(f"check '{name}': " + _params_change((old_params or {}).get(name),
                                                                    (new_params or {}).get(name)))
            elif part in ("seeds", "threads") and before is None:
                reasons.append(f"check '{name}': {part} {after} (not recorded before)")
            elif part == "seeds" and after is not None:
                asks = "--seeds gives" if seeds_given else "declares"
                reasons.append(f"check '{name}': ran on {before} seed{'s' if before != '1' else ''}, {asks} {after}")
            elif part in ("threads", "quorum") and before is not None and after is not None:
                reasons.append(f"check '{name}': {part} {before} -> {after}")
            else:
                reasons.append(f"check '{name}': {part} changed")
        elif kind == "source":
            if before is None:
                reasons.append(f"{rest} now imported")
            elif after is None:
                reasons.append(f"{rest} no longer imported")
            elif after == MISSING:
                reasons.append(f"{rest} is missing")
            else:
                reasons.append(f"{rest} changed")
        elif kind == "version":
            reasons.append(f"{rest} {before or 'absent'} -> {after or 'absent'}")
        else:  # "statement changed", "clauses changed"
            reasons.append(f"{key} changed")
    return reasons


def _check_names(fp: dict[str, str]) -> set[str]:
    return {key[len("check:"):].rpartition(":")[0] for key in fp if key.startswith("check:")}


def _order(key: str) -> tuple[int, str]:
    kind = key.partition(":")[0]
    return ({"statement": 0, "clauses": 0, "check": 1, "source": 2, "version": 3}.get(kind, 4), key)


def _params_change(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if before is None or after is None:
        return "params changed"
    changes = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            changes.append(f"{key} removed")
        elif key not in before:
            changes.append(f"{key}={canonical(after[key])} added")
        elif canonical(before[key]) != canonical(after[key]):
            changes.append(f"{key} {canonical(before[key])} -> {canonical(after[key])}")
    return "param " + ", ".join(changes) if changes else "params changed"


def git_commit(root: Path) -> str | None:
    """The commit checked out at ``root`` (None: no git)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit or None


def git_dirty(root: Path, paths: Iterable[str]) -> bool | None:
    """Whether any of ``paths`` (relative to ``root``) differs from the commit: modified,
    staged, deleted or untracked (None: no git)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", *sorted(set(paths))],
                             cwd=root, capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out)


def covered_paths(claim_file: str, fingerprint: dict[str, str]) -> list[str]:
    """The files a claim's fingerprint covers: the claim's own file and every source file."""
    return [claim_file, *(key[len("source:"):] for key in fingerprint if key.startswith("source:"))]
