"""The map of a rendered site: where every page lives, how pages link, what a page knows.

Layout of the output folder (flat, so ``[ID](ID.md)`` works on GitHub and in Obsidian)::

    index.md                    the dashboard
    <ID>.md                     one page per entry
    kinds/<kind>.md             the entries of one kind
    tags/<tag>.md               the entries with one tag (a tag a/b is tags/a/b.md)
    wanted.md                   ids mentioned but not in the record
    figures/<ID>/<check>/...    the figures of the checks, copied from the verdict store
"""

from __future__ import annotations

import math
import posixpath
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recordtool import escape
from recordtool.schema import Theory

if TYPE_CHECKING:
    from recordtool.project import Project
    from recordtool.verdict import ClaimStatus

INDEX = "index.md"
WANTED = "wanted.md"
FIGURES = "figures"
MANIFEST = ".recordtool-manifest.json"

BADGES: dict[str, str] = {
    "verified": "✅ verified",
    "failed": "❌ failed",
    "no-power": "➖ no power",
    "error": "💥 error",
    "timeout": "⏱️ timeout",
    "skipped": "⏭️ skipped",
    "stale": "⚠️ stale",
    "unchecked": "⚪ unchecked",
}
STATE_ORDER = ("verified", "failed", "no-power", "error", "timeout", "skipped", "stale", "unchecked")
OUTCOME_BADGES: dict[str, str] = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "no-power": "➖ no power",
    "error": "💥 error",
    "timeout": "⏱️ timeout",
    "skipped": "⏭️ skipped",
}


def badge(state: str) -> str:
    """The badge of a claim's state: an emoji and the state's name."""
    return BADGES.get(state, escape.line(state))


def outcome_badge(outcome: str) -> str:
    return OUTCOME_BADGES.get(outcome, escape.line(outcome))


def entry_page(entry_id: str) -> str:
    return f"{entry_id}.md"


def kind_page(kind: str) -> str:
    return f"kinds/{kind}.md"


def tag_page(tag: str) -> str:
    return f"tags/{tag}.md"


def relative(from_page: str, to: str) -> str:
    """The link from ``from_page`` to ``to`` (both relative to the output folder, POSIX)."""
    if "/" not in from_page:
        return to
    base = posixpath.dirname(from_page)
    return posixpath.relpath(to, base)


def figure_file(figure: str, verdicts: str) -> str | None:
    """Where a check's figure (relative to the project root) is copied in the output folder;
    None for a path that would leave it (absolute, or with ``..``)."""
    path = figure.replace("\\", "/")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    prefix = [p for p in f"{verdicts}/{FIGURES}".split("/") if p not in ("", ".")]
    if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
        parts = parts[len(prefix):]
    return "/".join([FIGURES, *parts])


def reading_time(words: int) -> str:
    """Minutes at 200 words a minute, rounded, at least ``"1 min read"``."""
    return f"{max(1, math.floor(words / 200 + 0.5))} min read"


def number(value: Any) -> str:
    """A measured value, compactly and always the same way: 3 significant digits,
    scientific when small or large (``2.3e-15``); a list as its length and range."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == 0:
            return "0"
        magnitude = abs(value)
        if 1e-3 <= magnitude < 1e3:
            return f"{value:.3g}"
        if 1e3 <= magnitude < 1e6:
            return f"{value:.0f}"
        mantissa, exponent = f"{value:.2e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if len(value) <= 4 and all(not isinstance(v, (list, tuple, dict)) for v in value):
            return "[" + ", ".join(number(v) for v in value) + "]"
        numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(value):
            finite = [float(v) for v in numbers if not math.isnan(float(v))]
            if finite:
                return f"{len(value)} values, {number(min(finite))} … {number(max(finite))}"
        return f"{len(value)} values"
    if isinstance(value, dict):
        return f"{len(value)} entries"
    return escape.short(str(value), 40)


@dataclass
class Context:
    """What composing a page needs: the project, each claim's status, and where the output
    folder is relative to the project root (None when outside it)."""

    project: Project
    statuses: dict[str, ClaimStatus]
    out: str | None = "record/pages"
    verdicts: str = "record/verdicts"
    _titles: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def pattern(self) -> re.Pattern[str]:
        return self.project.config.id_pattern

    def has(self, entry_id: str) -> bool:
        return entry_id in self.project.record.entries

    def state(self, entry_id: str) -> str | None:
        """The state of a claim ('unchecked' without a status); None for other entries."""
        status = self.statuses.get(entry_id)
        if status is not None:
            return status.state
        entry = self.project.record.entries.get(entry_id)
        if isinstance(entry, Theory):
            return "unchecked"
        return None

    def title(self, entry_id: str) -> str:
        """An entry's title on one line (a claim without a title: its statement)."""
        title = self._titles.get(entry_id)
        if title is None:
            entry = self.project.record.entries[entry_id]
            title = " ".join(entry.display_title.split())
            self._titles[entry_id] = title
        return title

    def link(self, from_page: str, entry_id: str, text: str | None = None) -> str:
        """A Markdown link to ``entry_id``'s page, or to the wanted page when not in the record."""
        label = escape.line(text) if text is not None else entry_id
        if self.has(entry_id):
            return f"[{label}]({relative(from_page, entry_page(entry_id))})"
        return f'[{label}]({relative(from_page, WANTED)} "not in the record")'
