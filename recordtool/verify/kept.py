"""Verdicts kept read and judged between commands (``status``, ``render``, ``verify``).

Reading a verdict and judging it again (``judge.unsupported``) costs each claim a little, for
every claim on every command. So the store (table ``verdicts``) keeps each verdict under the
hash of its file's bytes, and its judgement under the hash of the claim's entry file too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recordtool.record.project import open_store
from recordtool.record.source import bytes_digest
from recordtool.verify.judge import unsupported
from recordtool.verify.verdict import ClaimVerdict

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.schema import Theory

VERDICTS = "verdicts"  # the store's table: claim id -> (hash of its verdict file's bytes, ``Kept``)


@dataclass(slots=True)
class Kept:
    """What one claim's verdict file gave, and what was worked out from it and the claim."""

    verdict: ClaimVerdict
    judged: tuple[str, str | None] | None = None  # (the claim's entry file's hash, ``unsupported``'s answer)


class KeptVerdicts:
    """The verdicts of one project read and judged before, and those read or judged now."""

    def __init__(self, config: Config) -> None:
        self._store = open_store(config)
        # claim id -> (digest, what was kept): a ``Kept``, as a store of other code is empty
        self._before: dict[str, tuple[str, Kept]] = self._store.items(VERDICTS)
        self._now: dict[str, tuple[str, Kept]] = {}  # what this command read: kept ones and new ones
        self._changed: set[str] = set()

    def verdict(self, claim_id: str, data: bytes, parse: Callable[[bytes], ClaimVerdict]) -> ClaimVerdict:
        """The verdict whose file holds ``data``: the one kept for those bytes, or ``parse(data)``
        (which raises for a damaged file: nothing is kept then)."""
        digest = bytes_digest(data)
        before = self._before.get(claim_id)
        if before is not None and before[0] == digest:
            self._now[claim_id] = before
            return before[1].verdict
        verdict = parse(data)
        self._now[claim_id] = (digest, Kept(verdict))
        self._changed.add(claim_id)
        return verdict

    def unsupported(self, claim: Theory, verdict: ClaimVerdict, claim_digest: str | None) -> str | None:
        """``judge.unsupported(claim, verdict)``, as judged before when ``verdict`` was read from
        the same bytes and the claim's entry file has the same hash (``claim_digest``)."""
        now = self._now.get(claim.id)
        if now is None or claim_digest is None or now[1].verdict is not verdict:  # judged, not kept
            return unsupported(claim, verdict)
        kept = now[1]
        if kept.judged is not None and kept.judged[0] == claim_digest:
            return kept.judged[1]
        why = unsupported(claim, verdict)
        kept.judged = (claim_digest, why)
        self._changed.add(claim.id)
        return why

    def save(self) -> None:
        """Keep what this command read and judged (the verdicts it did not read are forgotten:
        ``status.assess`` reads every verdict of the record), and close the store."""
        self._store.put_many(VERDICTS, [(claim_id, *self._now[claim_id]) for claim_id in self._changed],
                             drop=self._before.keys() - self._now.keys())
        self._store.close()

