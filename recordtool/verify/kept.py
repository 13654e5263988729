"""Verdicts kept read and judged between commands (``status``, ``render``, ``verify``).

Reading a verdict file (its JSON made into the verdict's data classes) and judging it again
from its own numbers (``judge.unsupported``) costs each claim a little, and every ``status``
and every ``render`` after an edit paid it for every verified claim. So what each gave is kept
in the store (``recordtool.store``, table ``verdicts``): per claim, under the hash of its
verdict file's bytes, the verdict, what judging it under the claim gave with the hash of the
claim's entry file it was judged under, and the keys of the claim's fingerprint that its entry
gives (``fingerprint.claim_parts``) with that hash too. The same bytes give the same verdict,
and the same verdict under the same claim the same judgement: a verdict edited by hand has
other bytes, and is read and judged afresh.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recordtool.record.project import open_store
from recordtool.verify.judge import unsupported
from recordtool.verify.verdict import ClaimVerdict

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.schema import Theory
    from recordtool.store import Store
    from recordtool.verify.fingerprint import ClaimParts

VERDICTS = "verdicts"  # the store's table: claim id -> (hash of its verdict file's bytes, ``Kept``)


@dataclass(slots=True)
class Kept:
    """What one claim's verdict file gave, and what was worked out from it and the claim."""

    verdict: ClaimVerdict
    judged: tuple[str, str | None] | None = None  # (the claim's entry file's hash, ``unsupported``'s answer)
    parts: tuple[str, ClaimParts] | None = None  # (the claim's entry file's hash, ``claim_parts``)


class KeptVerdicts:
    """The verdicts of one project read and judged before, and those read or judged now."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._before = store.items(VERDICTS)  # claim id -> (digest, what was kept)
        self._now: dict[str, tuple[str, Kept]] = {}  # what this command read: kept ones and new ones
        self._changed: set[str] = set()

    def verdict(self, claim_id: str, data: bytes, parse: Callable[[bytes], ClaimVerdict]) -> ClaimVerdict:
        """The verdict whose file holds ``data``: the one kept for those bytes, or ``parse(data)``
        (which raises for a damaged file: nothing is kept then)."""
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        before = self._before.get(claim_id)
        if before is not None and before[0] == digest and isinstance(before[1], Kept) \
                and isinstance(before[1].verdict, ClaimVerdict):
            self._now[claim_id] = before
            return before[1].verdict
        verdict = parse(data)
        # (what the claim's entry gives its fingerprint does not depend on the verdict)
        parts = before[1].parts if before is not None and isinstance(before[1], Kept) else None
        self._now[claim_id] = (digest, Kept(verdict, None, parts))
        self._changed.add(claim_id)
        return verdict

    def unsupported(self, claim_id: str, claim: Callable[[], Theory], verdict: ClaimVerdict,
                    claim_digest: str | None) -> str | None:
        """``judge.unsupported(claim(), verdict)``, as judged before when ``verdict`` was read
        here from the same bytes and the claim's entry file is the same (``claim_digest``, the
        hash of its bytes; None: not known, judged afresh). ``claim`` makes the claim's entry,
        only when it is judged afresh."""
        now = self._now.get(claim_id)
        if now is None or claim_digest is None or now[1].verdict is not verdict:  # judged, not kept
            return unsupported(claim(), verdict)
        kept = now[1]
        if kept.judged is not None and kept.judged[0] == claim_digest:
            return kept.judged[1]
        why = unsupported(claim(), verdict)
        kept.judged = (claim_digest, why)
        self._changed.add(claim_id)
        return why

    def parts(self, claim_id: str, claim_digest: str | None) -> ClaimParts | None:
        """The keys of the claim's fingerprint that its entry gives (``fingerprint.claim_parts``,
        with the checks' own seeds), as worked out before from an entry file of hash
        ``claim_digest``; None when not kept for that file, or the claim's verdict was not read
        here."""
        now = self._now.get(claim_id)
        if now is None or claim_digest is None or now[1].parts is None or now[1].parts[0] != claim_digest:
            return None
        return now[1].parts[1]

    def keep_parts(self, claim_id: str, claim_digest: str | None, parts: ClaimParts) -> None:
        """Keep ``parts`` for the claim's entry file of hash ``claim_digest`` (for ``parts`` to
        give back), when the claim's verdict was read here."""
        now = self._now.get(claim_id)
        if now is not None and claim_digest is not None:
            now[1].parts = (claim_digest, parts)
            self._changed.add(claim_id)

    def save(self) -> None:
        """Keep what this command read and judged (the verdicts it did not read are forgotten:
        ``status.assess`` reads every verdict of the record), and close the store."""
        self._store.put_many(VERDICTS, [(claim_id, *self._now[claim_id]) for claim_id in self._changed],
                             drop=self._before.keys() - self._now.keys())
        self._store.close()


def open_kept(config: Config) -> KeptVerdicts:
    """The verdicts kept in ``config``'s store."""
    return KeptVerdicts(open_store(config))
