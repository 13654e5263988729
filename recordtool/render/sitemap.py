"""The map of a rendered site: where every page lives, how pages link, what a page knows.

Layout of the output folder (flat, so ``[ID](ID.md)`` works on GitHub and in Obsidian)::

    index.md                    the dashboard
    <ID>.md                     one page per entry
    kinds/<kind>.md             the entries of one kind
    tags/<tag>.md               the entries with one tag (a tag a/b is tags/a/b.md)
    wanted.md                   ids mentioned but not in the record
    graph.md                    every claim and what it cites and uses, as one graph
    figures/<ID>/<check>/...    the figures of the checks, copied from the verdict store
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from recordtool.record.schema import Theory
from recordtool.render import escape

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.verify.verdict import ClaimStatus

INDEX = "index.md"
WANTED = "wanted.md"
GRAPH = "graph.md"
FIGURES = "figures"
TITLE_WIDTH = 160  # characters of a title in a listing's cell

BADGES: dict[str, str] = {
    "verified": "✅ verified",
    "partly-verified": "🟡 partly verified",
    "contradicted": "❌ contradicted",
    "not-reproduced": "❔ not reproduced",  # neither ✅ nor ❌: the test was never shown able to pass
    "no-power": "➖ no power",
    "error": "💥 error",
    "timeout": "⏱️ timeout",
    "skipped": "⏭️ skipped",
    "stale": "⚠️ stale",
    "unchecked": "⚪ unchecked",
}
STATE_ORDER = tuple(BADGES)


def badge(state: str) -> str:
    """The badge of a claim's state: an emoji and the state's name."""
    return BADGES.get(state) or escape.line(state)


def outcome_badge(outcome: str) -> str:
    """The badge of a check's outcome (one that is also a claim's state: as ``badge``)."""
    return {"pass": "✅ pass", "fail": "❌ fail"}.get(outcome) or badge(outcome)


def entry_page(entry_id: str) -> str:
    return f"{entry_id}.md"


def wanted_link(from_page: str, entry_id: str) -> str:
    """The link to a missing id's heading on the wanted page (its anchor: the id, lowercase)."""
    return f"{relative(from_page, WANTED)}#{entry_id.lower()}"


def kind_page(kind: str) -> str:
    return f"kinds/{kind}.md"


def tag_page(tag: str) -> str:
    return f"tags/{tag}.md"


def relative(from_page: str, to: str) -> str:
    """The link from ``from_page`` to ``to`` (both relative to the output folder, POSIX)."""
    return posixpath.relpath(to, posixpath.dirname(from_page)) if "/" in from_page else to


def figure_file(figure: str, verdicts: str, claim: str) -> str | None:
    """Where a figure of ``claim`` is copied in the output folder; None for any path but one
    inside the claim's own figure folder: a verdict never makes a page publish another file."""
    parts = figure.split("/")
    if "\\" in figure or any(p in ("", ".", "..") for p in parts):
        return None
    prefix = [p for p in f"{verdicts}/{FIGURES}/{claim}".split("/") if p not in ("", ".")]
    if parts[: len(prefix)] != prefix or len(parts) == len(prefix):
        return None
    return "/".join([FIGURES, *parts[len(prefix) - 1:]])


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
        if len(value) <= 4 and all(not isinstance(v, (list, tuple, dict)) for v in value):
            return "[" + ", ".join(number(v) for v in value) + "]"
        numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(value):
            finite = [float(v) for v in numbers if not math.isnan(float(v))]
            if finite:
                return f"{len(value)} values, {number(min(finite))} … {number(max(finite))}"
        return f"{len(value)} values"
    if isinstance(value, dict) and value.get("summary") == "list" and "count" in value:  # a long list, summarized
        if "median" in value:
            return (f"{value['count']:,} values, {number(value['min'])} / {number(value['median'])} / "
                    f"{number(value['max'])} (min / median / max)")
        return f"{value['count']:,} values"
    if isinstance(value, dict):
        return f"{len(value)} entries"
    return escape.short(str(value), 40)


class Row(NamedTuple):
    """An entry as the index pages and the whole graph show it: its kind, status, whether
    it is a claim, its tags, and its title as a listing's cell shows it."""

    kind: str
    status: str
    claim: bool
    tags: tuple[str, ...]
    title: str


@dataclass
class Context:
    """What composing a page needs: the project, each claim's status, and where the output
    folder is relative to the project root (None when outside it)."""

    project: Project
    statuses: Mapping[str, ClaimStatus]
    out: str | None = "record/pages"
    verdicts: str = "record/verdicts"
    # entries whose file is there but does not load, and whose page is kept as the last render
    # wrote it: id -> the file's first error (the dashboard marks their pages stale)
    stale: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return self.project.config.id_pattern

    @cached_property
    def states(self) -> dict[str, str | None]:
        """The state of every entry: a claim's ('unchecked' without a status), None for others."""
        entries = self.project.record.entries
        states = {i: "unchecked" if isinstance(e, Theory) else None for i, e in entries.items()}
        states.update((i, status.state) for i, status in self.statuses.items())
        return states

    @cached_property
    def rows(self) -> dict[str, Row]:
        """Every entry's row, by id, in the record's order, worked out on first use."""
        return {i: Row(e.kind, e.status, isinstance(e, Theory), tuple(e.tags),
                       escape.line(escape.short(self.title(i), TITLE_WIDTH)))
                for i, e in self.project.record.entries.items()}

    @cached_property
    def members(self) -> dict[str, list[str]]:
        """The entries each kind's and tag's page lists, in the record's order, by page."""
        found: dict[str, list[str]] = {}
        for entry_id, row in self.rows.items():
            for page in (kind_page(row.kind), *(tag_page(t) for t in row.tags)):
                found.setdefault(page, []).append(entry_id)
        return found

    def tags_in_use(self) -> list[str]:
        """Every tag in use, sorted."""
        return sorted({tag for row in self.rows.values() for tag in row.tags})

    def title(self, entry_id: str) -> str:
        """An entry's title on one line (a claim without a title: its statement)."""
        return self.project.record.title(entry_id)

    def link(self, from_page: str, entry_id: str) -> str:
        """A Markdown link to ``entry_id``'s page, or to the wanted page when not in the record."""
        if entry_id in self.project.record.entries:
            return f"[{entry_id}]({relative(from_page, entry_page(entry_id))})"
        return f'[{entry_id}]({wanted_link(from_page, entry_id)} "not in the record")'
