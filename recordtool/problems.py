"""Problems found in a record, each with its place; collected, then reported once."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the record, where it is, and how to fix it.

    ``path`` is relative to the project root; ``line`` and ``col`` count from 1 (0 when the
    problem has no place inside the file). ``field`` is the field path (``cites[0].as``).
    """

    path: str
    line: int
    col: int
    message: str
    field: str = ""
    severity: Severity = "error"
    code: str = "invalid"

    @property
    def place(self) -> str:
        if self.line <= 0:
            return self.path
        return f"{self.path}:{self.line}:{self.col}"

    def __str__(self) -> str:
        field = f"{self.field}: " if self.field else ""
        return f"{self.place}: {self.severity}: {field}{self.message}"

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.message)

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "severity": self.severity,
            "code": self.code,
            "field": self.field,
            "message": self.message,
        }


class RecordError(Exception):
    """Raised by the library when a record (or a part of it) cannot be used; carries problems."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems, key=Problem.sort_key)
        super().__init__("\n".join(str(p) for p in self.problems))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'source'?"`` when a choice is close to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
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
