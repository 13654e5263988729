"""Problems found in a record, each with its place; collected, then reported once."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the record, where it is (``line`` 0: no place inside the file),
    and how to fix it; ``field`` is the field path (``cites[0].as``)."""

    path: str
    line: int
    col: int
    message: str
    field: str = ""
    severity: Severity = "error"
    code: str = "invalid"

    def __str__(self) -> str:
        place = f"{self.path}:{self.line}:{self.col}" if self.line > 0 else self.path
        field = f"{self.field}: " if self.field else ""
        return f"{place}: {self.severity}: {field}{self.message}"

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.message)

    def as_dict(self) -> dict[str, object]:
        """The problem for ``validate --format json``, its keys in this order."""
        return {key: getattr(self, key) for key in ("path", "line", "col", "severity", "code", "field", "message")}


class RecordError(Exception):
    """Raised by the library when a record (or a part of it) cannot be used; carries problems."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems, key=Problem.sort_key)
        super().__init__("\n".join(str(p) for p in self.problems))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'source'?"`` when a choice is close to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def field_path(loc: Iterable[object]) -> str:
    """``('cites', 0, 'as')`` -> ``'cites[0].as'``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean_id(entry_id: str, ids: Iterable[str]) -> str:
    """A hint for a mistyped id: one digit changed, added, dropped or swapped, same prefix
    (short numbers get none: NOTE-7 for NOTE-1 would be a guess, not a correction)."""
    prefix, _, number = entry_id.partition("-")
    if len(number) < 3:
        return ""
    close = (other for other in ids if other.startswith(f"{prefix}-") and _one_edit(number, other[len(prefix) + 1:]))
    return next((f"; did you mean '{other}'?" for other in close), "")


def _one_edit(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
