"""Configuration: ``[tool.recordtool]`` in the project's pyproject.toml, with defaults.

The folders, the kinds of entry (by id prefix) and the relation vocabulary of typed citations
are configuration, not code; every key is described in docs/record.md.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCHEMAS = ("literature", "note", "theory")

DEFAULT_KINDS: dict[str, dict[str, str]] = {
    "LIT": {"kind": "literature", "folder": "literature"},
    "NOTE": {"kind": "note", "folder": "notes"},
    "THEORY": {"kind": "theory", "folder": "theory"},
}

DEFAULT_RELATIONS: dict[str, str] = {
    "paper": "Cited as 'paper' by",
    "source": "Cited as 'source' by",
    "uses": "Used by",
    "extends": "Extended by",
    "contradicts": "Contradicted by",
    "supports": "Supported by",
    "refines": "Refined by",
    "replicates": "Replicated by",
    "supersedes": "Superseded by",
}

_PREFIX = re.compile(r"^[A-Z][A-Z0-9]*$")
_RELATION = re.compile(r"^[a-z][a-z0-9-]*$")
_KIND = _RELATION  # a kind's name: one lowercase word, as a relation's
DEFAULT_PLACES = {"pages": "record/pages", "verdicts": "record/verdicts", "cache": ".recordtool-cache"}


class ConfigError(Exception):
    """``[tool.recordtool]`` is malformed; the message says where and how to fix it."""


def id_regex(prefixes: list[str]) -> re.Pattern[str]:
    """The ids with one of ``prefixes``: ``PREFIX-NUMBER``, not preceded by a letter, digit or
    ``_`` and not followed by a word character."""
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{'|'.join(sorted(prefixes, key=len, reverse=True))})-\d+\b")


@dataclass(frozen=True)
class Kind:
    """A kind of entry: ids ``PREFIX-<number>`` in ``record/<folder>``, validated by ``schema``."""

    prefix: str
    name: str
    folder: str
    schema: str


SITE_CONFIG = "mkdocs.yml"  # written by ``render --site`` beside the pages folder


def site_dir(pages: Path) -> str:
    """The folder MkDocs builds the site into, beside the pages: ``pages-site`` for ``pages``."""
    return f"{pages.name}-site"


@dataclass(frozen=True)
class Config:
    root: Path
    record: Path
    checks: str
    verdicts: Path
    pages: Path
    cache: Path
    timeout: float = 600.0
    scheduler: str | None = None  # a Dask scheduler's address, or local:N (docs/cluster.md)
    kinds: dict[str, Kind] = field(default_factory=dict)
    relations: dict[str, str] = field(default_factory=dict)

    @property
    def id_pattern(self) -> re.Pattern[str]:
        """Matches any id of a configured kind, e.g. ``THEORY-988``."""
        return id_regex(list(self.kinds))

    def kind_of(self, entry_id: str) -> Kind | None:
        prefix = entry_id.split("-", 1)[0]
        return self.kinds.get(prefix)

    def kind_named(self, name: str) -> Kind | None:
        return next((kind for kind in self.kinds.values() if name in (kind.name, kind.prefix, kind.folder)), None)

    def written_here(self) -> list[Path]:
        """What recordtool writes into the project besides entries: the verdicts, the pages,
        its cache and, beside the pages, the site's configuration and the folder built from it."""
        return [self.verdicts, self.pages, self.cache, self.pages.parent / SITE_CONFIG,
                self.pages.parent / site_dir(self.pages)]

    def module_file(self, module: str) -> Path | None:
        """``checks.model`` -> ``root/checks/model.py`` (or its package's ``__init__.py``)."""
        base = self.root.joinpath(*module.split("."))
        return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)

    def relative(self, path: Path | str) -> str:
        """``path`` relative to the project root, for messages."""
        text, base = os.fspath(path), os.fspath(self.root)
        if text.startswith(base + os.sep):  # the common case, and cheap
            return text[len(base) + 1:].replace(os.sep, "/")
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        return Path(path).as_posix() if rel.startswith("..") else Path(rel).as_posix()


def find_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` with a pyproject.toml that configures
    recordtool, else the nearest with a ``record`` folder, else ``start`` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.recordtool" in pyproject.read_text(encoding="utf-8", errors="replace"):
            return folder
    for folder in (start, *start.parents):
        if (folder / "record").is_dir():
            return folder
    return start


def load_config(root: Path) -> Config:
    """Read ``root/pyproject.toml``'s ``[tool.recordtool]`` (all of it optional)."""
    pyproject = root / "pyproject.toml"
    table: dict[str, Any] = {}
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{pyproject}: not valid TOML: {exc}") from exc
        tool = data.get("tool", {})
        table = tool.get("recordtool", {}) if isinstance(tool, dict) else {}
    return config_from_table(root, table, where=f"{pyproject.name} [tool.recordtool]")


def config_from_table(root: Path, table: dict[str, Any], where: str = "[tool.recordtool]") -> Config:
    """The configuration ``table`` (``[tool.recordtool]``, read from ``where``) gives for ``root``."""
    _check_keys(table, where)

    def folder(key: str, default: str) -> Path:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}: '{key}' must be a folder path, not {value!r}")
        return root / value

    checks = table.get("checks", "checks")
    if not isinstance(checks, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", checks):
        raise ConfigError(f"{where}: 'checks' must be a package name such as \"checks\", not {checks!r}")
    timeout = table.get("timeout", 600)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise ConfigError(f"{where}: 'timeout' must be a positive number of seconds, not {timeout!r}")
    scheduler = table.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise ConfigError(f"{where}: 'scheduler' must be a Dask scheduler's address such as "
                          f"\"tcp://host:8786\" or \"local:4\", not {scheduler!r}")
    kinds = _kinds(table.get("kinds", DEFAULT_KINDS), where)
    relations = _relations(table.get("relations", DEFAULT_RELATIONS), where)
    config = Config(
        root=root,
        record=folder("record", "record"),
        checks=checks,
        verdicts=folder("verdicts", DEFAULT_PLACES["verdicts"]),
        pages=folder("pages", DEFAULT_PLACES["pages"]),
        cache=folder("cache", DEFAULT_PLACES["cache"]),
        timeout=float(timeout),
        scheduler=scheduler.strip() if scheduler is not None else None,
        kinds=kinds,
        relations=relations,
    )
    _check_places(config, table, where)
    return config


def _check_keys(table: Any, where: str) -> None:
    """The table and its tables are tables, and hold only keys that are known."""
    known = {"record", "checks", "verdicts", "pages", "cache", "timeout", "scheduler", "kinds", "relations"}
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of settings (record = \"record\", ...), not {table!r}")
    for name, example in (("kinds", 'NOTE = { kind = "note", folder = "notes" }'), ("relations", 'uses = "Used by"')):
        if not isinstance(table.get(name, {}), dict):
            raise ConfigError(f"{where}: '{name}' must be a table ([tool.recordtool.{name}], with lines such as "
                              f"{example}), not {table[name]!r}")
    if table.get("kinds") == {}:
        raise ConfigError(f"{where}.kinds: no kind of entry; give at least one, such as "
                          'NOTE = { kind = "note", folder = "notes" }')
    for key in table:
        if key not in known:
            raise ConfigError(f"{where}: unknown key '{key}'; known keys: {', '.join(sorted(known))}")


def _kinds(table: dict[str, Any], where: str) -> dict[str, Kind]:
    """The kinds of entry ``[tool.recordtool.kinds]`` names, each with a name and folder of its own."""
    kinds: dict[str, Kind] = {}
    for prefix, spec in table.items():
        if not _PREFIX.match(prefix):
            raise ConfigError(f"{where}.kinds: '{prefix}' is not an id prefix; use capitals, e.g. LIT")
        if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
            raise ConfigError(f"{where}.kinds.{prefix}: write {{ kind = \"name\", folder = \"folder\" }}")
        for key in spec:
            if key not in ("kind", "folder", "schema"):
                raise ConfigError(f"{where}.kinds.{prefix}: unknown key '{key}'; known keys: folder, kind, schema")
        name = spec["kind"]
        if not _KIND.match(name):  # written in the entries' ``kind:``, and the name of the page kinds/<kind>.md
            raise ConfigError(f"{where}.kinds.{prefix}: kind must be one lowercase word, such as \"note\", not {name!r}")
        schema = spec.get("schema", name if name in SCHEMAS else "note")
        if schema not in SCHEMAS:
            raise ConfigError(f"{where}.kinds.{prefix}: schema must be one of {', '.join(SCHEMAS)}, not {schema!r}")
        folder_name = spec.get("folder", name)
        if (not isinstance(folder_name, str) or folder_name.startswith(".") or not folder_name
                or any(c in folder_name for c in "/\\\0")):
            # (the record folder's own folders are read, those starting with '.' never)
            raise ConfigError(f"{where}.kinds.{prefix}: folder must be the name of a folder in the record folder, "
                              f"such as \"{name}\", not {folder_name!r}")
        for other in kinds.values():
            if other.name == name:
                raise ConfigError(f"{where}.kinds: {other.prefix} and {prefix} are both kind '{name}'; "
                                  "give each kind a name of its own")
            if other.folder == folder_name:
                raise ConfigError(f"{where}.kinds: {other.prefix} and {prefix} both keep their entries in "
                                  f"'{folder_name}'; give each kind a folder of its own")
        kinds[prefix] = Kind(prefix, name, folder_name, schema)
    return kinds


def _relations(table: dict[str, Any], where: str) -> dict[str, str]:
    """The relations ``[tool.recordtool.relations]`` names, each with its inverse label."""
    relations: dict[str, str] = {}
    for name, inverse in table.items():
        if not _RELATION.match(name):
            raise ConfigError(f"{where}.relations: '{name}' must be one lowercase word")
        if not isinstance(inverse, str) or not inverse:
            raise ConfigError(f"{where}.relations.{name}: give the inverse label, e.g. \"Cited as '{name}' by\"")
        relations[name] = inverse
    return relations


def _check_places(config: Config, table: dict[str, Any], where: str) -> None:
    """What recordtool writes is never a kind's folder, and the pages (each render rewrites and
    removes them) never inside one; the verdicts and the cache may be (never read as entries)."""
    for kind in config.kinds.values():
        entries = os.path.normpath(config.record / kind.folder)
        for key, path in (("pages", config.pages), ("verdicts", config.verdicts), ("cache", config.cache)):
            place = os.path.normpath(path)
            if place == entries or (key == "pages" and place.startswith(entries + os.sep)):
                default = DEFAULT_PLACES[key]
                instead = default if os.path.normpath(config.root / default) != entries else key
                raise ConfigError(f"{where}: '{key}' ({table.get(key, default)}) is "
                                  f"{'' if place == entries else 'inside '}the folder of kind {kind.prefix} "
                                  f"({kind.name}), which holds entries; give the {key} a folder of "
                                  f"{'its' if key == 'cache' else 'their'} own, such as \"{instead}\"")
