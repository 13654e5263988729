"""Front matter: an entry's properties as YAML at the top of its page, for Obsidian and
Dataview (docs/record.md, "The pages"). Every string is double-quoted, so no title can end the
block or read as a number, a date or ``null``; dates, timestamps and versions are bare.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from recordtool.record.schema import Entry
from recordtool.render.sitemap import Context

# Characters YAML does not allow raw in a double-quoted scalar, or reads as line breaks
# (NEL, the line and paragraph separators), or drops (the byte-order mark); json.dumps with
# ensure_ascii=False escapes only the C0 controls, quotes and backslashes.
_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
_NUMERIC_TAG = re.compile(r"^[0-9/-]+$")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")  # (YAML's, narrowed)


def quoted(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (also a JSON string): it reads back as itself."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(value, ensure_ascii=False))


def obsidian_tag(tag: str) -> str:
    """A record tag as an Obsidian tag: the same, except that a tag of digits only (which
    Obsidian does not take as a tag) gets a leading underscore."""
    return "_" + tag if _NUMERIC_TAG.match(tag) else tag


def timestamp(value: str) -> str:
    """``value`` bare when it is a valid time in the form a verdict writes (which YAML reads as a
    timestamp); quoted otherwise."""
    if _TIMESTAMP.fullmatch(value):
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    return quoted(value)


def _listed(key: str, values: list[str]) -> list[str]:
    return [f"{key}:", *(f"  - {quoted(v)}" for v in values)] if values else []


def front_matter(ctx: Context, entry: Entry) -> list[str]:
    """The lines of ``entry``'s front matter, ``---`` to ``---``."""
    kind = ctx.project.config.kind_of(entry.id)
    title = ctx.title(entry.id)
    lines = ["---", f"id: {quoted(entry.id)}", f"title: {quoted(title)}", *_listed("aliases", [title] if title else []),
             f"kind: {quoted(kind.name if kind is not None else entry.kind)}",
             f"status: {quoted(entry.status)}", f"version: {entry.version}",
             *_listed("tags", [obsidian_tag(t) for t in entry.tags])]
    lines += _listed("cites", list(dict.fromkeys(f"[[{c.id}]]" for c in entry.cites)))
    lines += _listed("uses", [f"[[{c.id}]]" for c in entry.cites if c.as_ == "uses"])
    lines += _listed("used_by", [f"[[{s}]]" for rel, _label, sources in ctx.project.graph.inverse(entry.id)
                                 if rel == "uses" for s in sources])
    if entry.created:
        lines.append(f"created: {entry.created.isoformat()}")
    if entry.updated:
        lines.append(f"updated: {entry.updated.isoformat()}")
    state = ctx.states.get(entry.id)
    if state is not None:
        lines.append(f"verdict: {quoted(state)}")
        status = ctx.statuses.get(entry.id)
        verdict = status.verdict if status is not None else None
        if verdict is not None and state != "stale":  # a stale verdict's outcome no longer holds
            lines.append(f"since: {timestamp(verdict.since)}")
        if verdict is not None:
            lines.append(f"last_verified: {timestamp(verdict.verified_at)}")
    lines.append("---")
    return lines


def blanked(page: str) -> str:
    """``page`` with its front matter's lines left empty (the same line numbers): the Markdown
    that viewers render, which is what a parser must see (a title in the front matter is a
    YAML string, never a link or HTML)."""
    if not page.startswith("---\n"):
        return page
    end = page.find("\n---\n", 3)
    if end == -1:
        return page
    return "\n" * page.count("\n", 0, end + 5) + page[end + 5:]
