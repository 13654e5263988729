"""Verdicts kept read and judged between commands (``status``, ``render``, ``verify``).

Reading a verdict file (its JSON made into the verdict's data classes) and judging it again
from its own numbers (``judge.unsupported``) cost about half a millisecond each for a verdict of
nine runs, more for larger ones: on a record with hundreds of verified claims, every ``status``
and every ``render`` after an edit paid it for every claim (411 such claims of a 10,000-entry
record: 0.43 to 0.6 s of a render that should answer in under one; with them kept, 0.35 s, and
a ``render -j 2`` after one body edit took 1.28 to 1.77 s, median 1.37, against 1.63 to 2.85 s,
median 1.87, the code before interleaved, on 1 December 2026). So what each gave is kept
in one file of the cache folder, ``verdicts.bin``: per claim, the hash of its verdict file's
bytes with the verdict (pickled), and the hash of the claim's entry file with what judging the
verdict under that claim gave. The same bytes give the same verdict, and the same verdict under
the same claim the same judgement: a verdict edited by hand has other bytes, and is read and
judged afresh. Under the claim's hash too, the keys of its fingerprint that its entry gives
(``fingerprint.claim_parts``): the same entry file gives the same keys, so a claim whose verdict
and entry are as they were is not made from the entry cache at all (making the 411 claims'
entries was most of what ``assess`` had left: in a ``render -j 2`` after one title edit of that
record, 580-594 entries made and ``assess`` 0.24-0.26 s, against 225-293 and 0.11-0.14 s with
the keys kept, on a slow afternoon). ``verify`` reads them too (not under ``--seeds``): after
an edit that leaves every claim fresh, it makes no claim's entry (that record, ``verify -j 2``
after one body edit: median 1.42 s -> 0.90 s, interleaved).

The file is keyed as the entry cache is (``cache.cache_key``: recordtool's code and version,
Python, the parsing packages, the configuration), so other code never reads it; the verdicts
in it are made back by an unpickler that makes the verdict's own classes only; a file that is
damaged, foreign or for another key is ignored (every verdict read and judged afresh). It is
written atomically, and only when something was read or judged afresh. Our own small format
rather than the entry cache's: that one is sharded per entry file and kept beside a record of
100,000 entries; this one holds a few hundred verdicts, read whole.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.record.cache import cache_key, read_plain, write_plain
from recordtool.verify.judge import unsupported

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.schema import Theory
    from recordtool.verify.fingerprint import ClaimParts
    from recordtool.verify.verdict import ClaimVerdict

NAME = "verdicts.bin"  # in the cache folder
FORMAT = b"recordtool-verdicts 2\n"

# claim id -> [hash of the verdict file's bytes, the verdict pickled, the claim's entry file's
# hash when judged (or None), the judgement (``unsupported``: None, or why), and (the claim's
# entry file's hash, the fingerprint's keys that the entry gives: ``fingerprint.claim_parts``)
# or None]
Item = list[Any]


class KeptVerdicts:
    """The verdicts of one project read and judged before, and those read or judged now."""

    def __init__(self, path: Path, key: bytes, items: dict[str, Item]) -> None:
        self.path, self.key = path, key
        self._items = items
        self._now: dict[str, Item] = {}  # what this command read (kept ones and new ones)
        self._read: dict[str, ClaimVerdict] = {}  # ... and the verdict it gave for each
        self._changed = False

    def verdict(self, claim_id: str, data: bytes, parse: Callable[[bytes], ClaimVerdict]) -> ClaimVerdict:
        """The verdict whose file holds ``data``: the one kept for those bytes, or ``parse(data)``
        (which raises for a damaged file: nothing is kept then)."""
        digest = hashlib.blake2b(data, digest_size=16).digest()
        item = self._items.get(claim_id)
        if item is not None and item[0] == digest:
            verdict = _made_back(item[1])
            if verdict is not None:
                self._now[claim_id], self._read[claim_id] = item, verdict
                return verdict
        self._now.pop(claim_id, None)
        self._read.pop(claim_id, None)
        verdict = parse(data)
        try:
            pickled = _dumps(verdict)
        except Exception:  # (a verdict always pickles; one that did not would just not be kept)
            return verdict
        # (what the claim's entry gives its fingerprint does not depend on the verdict)
        self._now[claim_id] = [digest, pickled, None, None, item[4] if item is not None else None]
        self._read[claim_id] = verdict
        self._changed = True
        return verdict

    def unsupported(self, claim_id: str, claim: Callable[[], Theory], verdict: ClaimVerdict,
                    claim_digest: str | None) -> str | None:
        """``judge.unsupported(claim(), verdict)``, as judged before when ``verdict`` was read
        here from the same bytes and the claim's entry file is the same (``claim_digest``, the
        hash of its bytes; None: not known, judged afresh). ``claim`` makes the claim's entry,
        only when it is judged afresh."""
        item = self._now.get(claim_id)
        if item is None or claim_digest is None or self._read.get(claim_id) is not verdict:  # judged, not kept
            return unsupported(claim(), verdict)
        if item[2] == claim_digest:
            why: str | None = item[3]
            return why
        why = unsupported(claim(), verdict)
        item[2], item[3] = claim_digest, why
        self._changed = True
        return why

    def parts(self, claim_id: str, claim_digest: str | None) -> ClaimParts | None:
        """The keys of the claim's fingerprint that its entry gives (``fingerprint.claim_parts``,
        with the checks' own seeds), as worked out before from an entry file of hash
        ``claim_digest``; None when not kept for that file, or the claim's verdict was not read
        here."""
        item = self._now.get(claim_id)
        if item is None or claim_digest is None or item[4] is None or item[4][0] != claim_digest:
            return None
        parts: ClaimParts = item[4][1]
        return parts

    def keep_parts(self, claim_id: str, claim_digest: str | None, parts: ClaimParts) -> None:
        """Keep ``parts`` for the claim's entry file of hash ``claim_digest`` (for ``parts`` to
        give back), when the claim's verdict was read here."""
        item = self._now.get(claim_id)
        if item is not None and claim_digest is not None:
            item[4] = (claim_digest, parts)
            self._changed = True

    def save(self) -> None:
        """Keep what this command read and judged (the verdicts it did not read are left out:
        ``status.assess`` reads every verdict of the record), when anything was new."""
        if self._changed or self._now.keys() != self._items.keys():
            write_plain(self.path, self.key, FORMAT, self._now)


def open_kept(config: Config) -> KeptVerdicts:
    """The verdicts kept in ``config``'s cache folder (none when there is no valid file)."""
    path = config.cache / NAME
    key = cache_key(config)
    items = read_plain(path, key, FORMAT)
    if not isinstance(items, dict) or not all(_valid(claim_id, item) for claim_id, item in items.items()):
        items = {}
    return KeptVerdicts(path, key, items)


def _valid(claim_id: object, item: object) -> bool:
    return (isinstance(claim_id, str) and isinstance(item, list) and len(item) == 5
            and isinstance(item[0], bytes) and isinstance(item[1], bytes)
            and (item[2] is None or isinstance(item[2], str)) and (item[3] is None or isinstance(item[3], str))
            and (item[4] is None or _valid_parts(item[4])))


def _valid_parts(kept: object) -> bool:
    """Whether ``kept`` is (a hash, ``ClaimParts``) as ``keep_parts`` keeps it."""
    if not (isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], str) and isinstance(kept[1], tuple)):
        return False
    return all(isinstance(segment, tuple) and len(segment) == 2 and isinstance(segment[0], dict)
               and all(isinstance(k, str) and isinstance(v, str) for k, v in segment[0].items())
               and (segment[1] is None or isinstance(segment[1], str))
               for segment in kept[1])


def _dumps(verdict: ClaimVerdict) -> bytes:
    """``verdict`` pickled, each of its data classes as its class and its fields in order."""
    out = io.BytesIO()
    _VerdictPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(verdict)
    return out.getvalue()


class _VerdictPickler(pickle.Pickler):
    """Pickles each data class of a verdict as its class and its fields, made back by one call
    (``cls(*fields)``): as a data class is by default (a bare object, then its ``__dict__`` set),
    the 411 verdicts of a 10,000-entry record took twice as long to make back (17.2 ms against
    8.5, medians of 7, turn about) and a third more bytes. Only where that call gives the same
    object back: every field given to ``__init__``, no ``__post_init__``."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        fields = _FIELDS.get(cls)
        if fields is None:
            if cls.__module__ != "recordtool.verify.verdict" or not dataclasses.is_dataclass(cls):
                return NotImplemented
            found = dataclasses.fields(cls)
            plain = all(f.init for f in found) and not hasattr(cls, "__post_init__")
            fields = _FIELDS[cls] = tuple(f.name for f in found) if plain else ()
        if not fields:
            return NotImplemented
        return (cls, tuple(getattr(obj, name) for name in fields))


_FIELDS: dict[type, tuple[str, ...]] = {}  # a verdict's data class -> its fields, () where it pickles by default


def _made_back(pickled: bytes) -> ClaimVerdict | None:
    """The verdict pickled in ``pickled``, made of the verdict's classes only; None when it is
    not one."""
    from recordtool.verify.verdict import ClaimVerdict

    try:
        verdict = _VerdictUnpickler(io.BytesIO(pickled)).load()
    except Exception:  # anything a damaged or foreign pickle raises: read the file afresh
        return None
    return verdict if isinstance(verdict, ClaimVerdict) else None


class _VerdictUnpickler(pickle.Unpickler):
    """Makes the classes of ``recordtool.verify.verdict`` only (no function to call)."""

    def find_class(self, module: str, name: str) -> Any:
        found = _CLASSES.get((module, name))
        if found is not None:
            return found
        if module == "recordtool.verify.verdict" and not name.startswith("_"):
            from recordtool.verify import verdict

            found = getattr(verdict, name, None)
            if isinstance(found, type) and found.__module__ == module:
                _CLASSES[(module, name)] = found
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a class of a verdict")


# The classes found allowed so far: each verdict is pickled on its own, so its unpickler asks
# for every class it holds again (for 411 verdicts, thousands of asks, each an import statement
# and a lookup: a fifth of the time they took to make back).
_CLASSES: dict[tuple[str, str], type] = {}
