"""The verdict store: one JSON file per claim in ``record/verdicts/``, meant to be committed.

Writes are atomic (a reader sees the old verdict or the new one). One ``recordtool verify``
at a time holds the store's lock (``<cache>/verify.lock``, an ``fcntl`` lock released by the
kernel when the process dies, so a crash never leaves it stuck). A file that cannot be read
back is reported and, before a new verdict replaces it, moved aside to
``<ID>.json.damaged-<timestamp>``: never silently overwritten.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from recordtool.atomic import write_atomic
from recordtool.record.config import Config
from recordtool.verify.verdict import ClaimVerdict, VerdictError

SUFFIX = ".json"


class StoreError(Exception):
    """The verdict store cannot be used (locked by another run, unwritable)."""


@dataclass
class Store:
    """What the verdict folder holds: readable verdicts and damaged files (id -> why)."""

    verdicts: dict[str, ClaimVerdict] = field(default_factory=dict)
    damaged: dict[str, str] = field(default_factory=dict)


def verdict_path(config: Config, claim_id: str) -> Path:
    return config.verdicts / f"{claim_id}{SUFFIX}"


def figures_dir(config: Config, claim_id: str) -> Path:
    return config.verdicts / "figures" / claim_id


def read_verdict(config: Config, claim_id: str) -> ClaimVerdict | None:
    """The claim's verdict, None when it has none; raises VerdictError for a damaged file."""
    path = verdict_path(config, claim_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise VerdictError(f"cannot be read ({exc})") from None
    verdict = ClaimVerdict.from_json(text)
    if verdict.claim != claim_id:
        raise VerdictError(f"holds the verdict of {verdict.claim}, not of {claim_id}")
    return verdict


def read_store(config: Config, claim_ids: list[str] | None = None) -> Store:
    """Every verdict in the store (or those of ``claim_ids``), damaged files set apart."""
    store = Store()
    if claim_ids is None:
        if not config.verdicts.is_dir():
            return store
        claim_ids = sorted(p.name[: -len(SUFFIX)] for p in config.verdicts.glob(f"*{SUFFIX}"))
    for claim_id in claim_ids:
        try:
            verdict = read_verdict(config, claim_id)
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


def write_verdict(config: Config, verdict: ClaimVerdict) -> Path:
    """Write the claim's verdict atomically; the caller holds the lock."""
    path = verdict_path(config, verdict.claim)
    write_atomic(path, verdict.to_json())
    return path


def replace_figures(config: Config, claim_id: str, staged: Path | None) -> None:
    """Make ``staged`` (a folder of this run's figures) the claim's figures folder."""
    target = figures_dir(config, claim_id)
    if target.exists():
        shutil.rmtree(target)
    if staged is not None and staged.is_dir() and any(p.is_file() for p in staged.rglob("*")):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), str(target))


@contextlib.contextmanager
def locked(config: Config) -> Iterator[None]:
    """Hold the store's lock for a whole verify run; StoreError when another run holds it."""
    import fcntl

    config.cache.mkdir(parents=True, exist_ok=True)
    lock_path = config.cache / "verify.lock"
    handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise StoreError(
                f"another `recordtool verify` ({holder}) is writing {config.relative(config.verdicts)}; "
                "wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
    finally:
        handle.close()
