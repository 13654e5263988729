"""The verdict store: one JSON file per claim in ``record/verdicts/``, meant to be committed.

Writes are atomic. One ``recordtool verify`` at a time holds the store's lock (``LOCK`` at the
project root, outside the cache folder that users may delete; released by the kernel when the
process dies). A file that cannot be read back is reported and, before a new verdict replaces
it, moved aside to ``<ID>.json.damaged-<timestamp>``: never silently overwritten.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from recordtool.atomic import exclusive, sweep, write_atomic
from recordtool.record.config import Config
from recordtool.record.confine import Refused, read_inside
from recordtool.verify.verdict import ClaimVerdict, VerdictError

if TYPE_CHECKING:
    from recordtool.verify.kept import KeptVerdicts

SUFFIX = ".json"


class StoreError(Exception):
    """The verdict store cannot be used (locked by another run, unwritable)."""


class StoreBusy(StoreError):
    """Another run holds the store's lock: wait and run again."""


@dataclass
class Store:
    """What the verdict folder holds: readable verdicts and damaged files (id -> why)."""

    verdicts: dict[str, ClaimVerdict] = field(default_factory=dict)
    damaged: dict[str, str] = field(default_factory=dict)


def verdict_path(config: Config, claim_id: str) -> Path:
    return config.verdicts / f"{claim_id}{SUFFIX}"


def figures_dir(config: Config, claim_id: str) -> Path:
    return config.verdicts / "figures" / claim_id


def read_verdict(config: Config, claim_id: str, kept: KeptVerdicts | None = None) -> ClaimVerdict | None:
    """The claim's verdict, None when it has none; raises VerdictError for a damaged file
    (``kept``: the verdicts read before, given back for the same bytes)."""
    path = verdict_path(config, claim_id)
    if not os.path.lexists(path):
        return None
    try:  # a regular file of the store, checked as it is opened: a link out is not read
        data = read_inside(path, config.verdicts)
    except Refused as exc:
        raise VerdictError(f"{exc.why}; a verdict must be a file inside {config.relative(config.verdicts)}/") from None
    except OSError as exc:
        raise VerdictError(f"cannot be read ({exc})") from None

    def parse(data: bytes) -> ClaimVerdict:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise VerdictError(f"cannot be read ({exc})") from None
        verdict = ClaimVerdict.from_json(text)
        if verdict.claim != claim_id:
            raise VerdictError(f"holds the verdict of {verdict.claim}, not of {claim_id}")
        return verdict

    return parse(data) if kept is None else kept.verdict(claim_id, data, parse)


def read_store(config: Config, claim_ids: list[str], kept: KeptVerdicts | None = None) -> Store:
    """The verdicts of ``claim_ids`` in the store, damaged files set apart (``kept``: as
    ``read_verdict``'s)."""
    store = Store()
    for claim_id in claim_ids:
        try:
            verdict = read_verdict(config, claim_id, kept)
        except VerdictError as exc:
            store.damaged[claim_id] = str(exc)
            continue
        if verdict is not None:
            store.verdicts[claim_id] = verdict
    return store


def set_aside(config: Config, claim_id: str) -> Path | None:
    """Move a damaged verdict file to ``<ID>.json.damaged-<timestamp>``; returns the new path."""
    path = verdict_path(config, claim_id)
    if not path.exists():
        return None
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    os.replace(path, target)
    return target


def write_verdict(config: Config, verdict: ClaimVerdict) -> None:
    """Write the claim's verdict atomically; the caller holds the lock."""
    write_atomic(verdict_path(config, verdict.claim), verdict.to_json())


def figures_id(staged: Path) -> str | None:
    """The name of the folder a run's figures are kept in: a digest of their names and bytes
    (None when the run made none). The same figures keep the same folder."""
    files = files_under(staged)
    if not files:
        return None
    digest = hashlib.blake2b(digest_size=6)
    for path in files:
        digest.update(path.relative_to(staged).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def files_under(folder: Path) -> list[Path]:
    """The files under ``folder``, sorted (none when it is not a folder)."""
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def keep_verdict(config: Config, verdict: ClaimVerdict, staged: Path) -> None:
    """Keep a new verdict and its figures: the figures go into a folder of their own
    (``figures/<ID>/<figures_id>/``), then the verdict replaces the old one atomically, then the
    old figures go. Whatever stops this, the verdict on disk names figures that exist."""
    folder = figures_dir(config, verdict.claim)
    name = figures_id(staged)
    made: Path | None = None
    if name is not None and not (folder / name).is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.recordtool-{os.getpid()}.tmp"
        try:
            for path in files_under(staged):
                target = tmp / path.relative_to(staged)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
            os.rename(tmp, folder / name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        made = folder / name
    try:
        write_verdict(config, verdict)
    except BaseException:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise
    _remove_other_figures(folder, name)


def _remove_other_figures(folder: Path, keep: str | None) -> None:
    """Remove what ``folder`` holds but the figures the verdict names (``keep``)."""
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if child.name == keep:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when empty


def sweep_store(config: Config) -> None:
    """Remove what a verify that died left half-written: temporary verdict files, and figure
    folders that no verdict names (written, then the verdict was not)."""
    sweep(config.verdicts)
    figures = config.verdicts / "figures"
    if not figures.is_dir():
        return
    for folder in figures.iterdir():
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            verdict = read_verdict(config, folder.name)
        except VerdictError:
            continue  # damaged: its figures are left as they are
        prefix = config.relative(folder) + "/"
        named = {f[len(prefix):].split("/", 1)[0] for f in (verdict.figures if verdict is not None else [])
                 if f.startswith(prefix)}
        for child in folder.iterdir():
            if child.name not in named and child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)


LOCK = ".recordtool.lock"  # at the project root: outside the cache folder, which users may delete


def locked(config: Config) -> contextlib.AbstractContextManager[None]:
    """Hold the store's lock for a whole verify run; StoreBusy when another run holds it."""

    def busy(holder: str) -> StoreError:
        return StoreBusy(f"another `recordtool verify` ({holder}) is writing {config.relative(config.verdicts)}; "
                         "wait for it to finish")

    return exclusive(config.root / LOCK, busy)
