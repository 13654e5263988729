"""Index pages: the dashboard, one list per kind, one page per tag, and the wanted entries.

Each function returns ``{page path: Markdown}``; all pure. What they show of each entry comes
from its row (``recordtool.render.rows``: kept between renders), so that composing them makes
no entry whose file is unchanged.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping

from recordtool.record.load import id_sort_key
from recordtool.record.schema import Theory
from recordtool.render import escape, mermaid
from recordtool.render.page import sentence
from recordtool.render.rows import CLAIM, KIND, STATUS, TAGS, TITLE, Row, rows
from recordtool.render.sitemap import (
    GRAPH,
    INDEX,
    STATE_ORDER,
    WANTED,
    Context,
    badge,
    entry_page,
    kind_page,
    relative,
    tag_page,
)


def dashboard(ctx: Context) -> str:
    """``index.md``: counts per verdict, every claim with its badge, the kinds, tags, wanted."""
    shown = rows(ctx)
    claims = [i for i, row in shown.items() if row[CLAIM]]
    page = INDEX
    states = [ctx.state(c) or "unchecked" for c in claims]
    counts = Counter(states)
    total = len(claims)
    lines = ["# The record", ""]
    kinds = Counter(row[KIND] for row in shown.values())
    summary = ", ".join(f"{kinds[k.name]} {escape.line(k.name)}" for k in ctx.project.config.kinds.values())
    lines += [f"{len(shown)} entries: {summary}.", ""]

    lines += ["## Claims by verdict", ""]
    if total:
        lines += ["| Verdict | Claims | Share |", "| --- | ---: | ---: |"]
        for state in STATE_ORDER:
            if counts[state] or state in ("verified", "unchecked"):
                share = f"{100 * counts[state] / total:.0f}%"
                lines.append(f"| {badge(state)} | {counts[state]} of {total} | {share} |")
    else:
        lines.append("The record holds no claims.")

    unsettled: Counter[str] = Counter(shown[c][STATUS] for c in claims if shown[c][STATUS] != "active")
    if unsettled:
        lines += ["", f"Of these, {_not_active(unsettled)}: its verdict is on the statement as it stands."
                  if sum(unsettled.values()) == 1 else
                  f"Of these, {_not_active(unsettled)}: their verdicts are on the statements as they stand."]

    if claims:
        lines += ["", "## Claims", "", "| Claim | Status | Verdict | Since | Last verified | Statement |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for claim, state in zip(claims, states, strict=True):
            status = ctx.statuses.get(claim)
            verdict = status.verdict if status is not None else None
            since = escape.cell(verdict.since[:10]) if verdict is not None and state != "stale" else "—"
            last = escape.cell(verdict.verified_at[:10]) if verdict is not None else "—"
            row = shown[claim]
            lines.append(f"| {ctx.link(page, claim)} | {_status(row[STATUS])} | {badge(state)} | {since} | {last} "
                         f"| {row[TITLE]} |")

    if claims:
        lines += ["", f"[Every claim and what it cites, as one graph]({relative(page, GRAPH)})."]

    lines += ["", "## Kinds", ""]
    for kind in ctx.project.config.kinds.values():
        lines.append(f"- [{escape.line(kind.name)}]({relative(page, kind_page(kind.name))}) ({kinds[kind.name]})")
    tags = tag_counts(ctx)
    if tags:
        lines += ["", "## Tags", ""]
        lines.append(", ".join(f"[{escape.line(t)}]({relative(page, tag_page(t))}) ({n})" for t, n in tags.items()))
    wanted = ctx.project.graph.dangling
    lines += ["", "## Wanted", ""]
    lines.append(f"[{len(wanted)} ids]({relative(page, WANTED)}) are mentioned but not in the record."
                 if wanted else f"Every id mentioned is in the record ([wanted]({relative(page, WANTED)})).")
    return "\n".join(lines) + "\n"


def _not_active(counts: Counter[str]) -> str:
    """``1 is a draft, 2 are retracted``: how many claims are in each status but active."""
    parts = []
    for status in sorted(counts):
        n = counts[status]
        what = ("a draft" if n == 1 else "drafts") if status == "draft" else escape.line(status)
        parts.append(f"{n} {'is' if n == 1 else 'are'} {what}")
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _status(status: str) -> str:
    """An entry's status in a listing: plain when active, in bold when not (a draft's
    verdict is on a statement still being written)."""
    return status if status == "active" else f"**{escape.cell(status)}**"


def tag_counts(ctx: Context) -> dict[str, int]:
    counts: Counter[str] = Counter(t for row in rows(ctx).values() for t in row[TAGS])
    return {t: counts[t] for t in sorted(counts)}


def kind_pages(ctx: Context) -> dict[str, str]:
    """``kinds/<kind>.md`` for every configured kind: its entries, in id order."""
    out: dict[str, str] = {}
    shown = rows(ctx)
    for kind in ctx.project.config.kinds.values():
        page = kind_page(kind.name)
        members = [i for i, row in shown.items() if row[KIND] == kind.name]
        out[page] = _listing(ctx, page, f"Kind: {kind.name}", members, shown)
    return out


def tag_pages(ctx: Context) -> dict[str, str]:
    """``tags/<tag>.md`` for every tag in use."""
    members: dict[str, list[str]] = {}
    shown = rows(ctx)
    for entry_id, row in shown.items():
        for tag in row[TAGS]:
            members.setdefault(tag, []).append(entry_id)
    return {tag_page(t): _listing(ctx, tag_page(t), f"Tag: {t}", members[t], shown) for t in sorted(members)}


def _listing(ctx: Context, page: str, heading: str, ids: list[str], shown: dict[str, Row]) -> str:
    up = relative(page, INDEX)
    lines = [f"# {escape.line(heading)}", "", f"[Back to the record]({up}) · {len(ids)} "
             f"entr{'y' if len(ids) == 1 else 'ies'}", ""]
    if not ids:
        return "\n".join([*lines, "None yet."]) + "\n"
    claims = any(shown[i][CLAIM] for i in ids)
    if claims:
        lines += ["| Entry | Status | Verdict | Title |", "| --- | --- | --- | --- |"]
    else:
        lines += ["| Entry | Status | Title |", "| --- | --- | --- |"]
    # An entry's line is the same on every list of a table of the same columns whose link up
    # to the dashboard is the same (entries' pages are beside it, at the top of the output
    # folder): worked out once (an entry is listed on its kind's page and each of its tags').
    made: dict[str, str] = ctx.memo(f"index.lines {up} {claims}")
    folder = up[: -len(INDEX)]
    states = ctx.states
    for entry_id in ids:
        line = made.get(entry_id)
        if line is None:
            row = shown[entry_id]
            link = f"[{entry_id}]({folder}{entry_page(entry_id)})"
            if claims:
                state = states.get(entry_id)
                line = f"| {link} | {_status(row[STATUS])} | {badge(state) if state else '—'} | {row[TITLE]} |"
            else:
                line = f"| {link} | {_status(row[STATUS])} | {row[TITLE]} |"
            made[entry_id] = line
        lines.append(line)
    return "\n".join(lines) + "\n"


def wanted(ctx: Context) -> str:
    """``wanted.md``: every id mentioned but not in the record, with who mentions it and how."""
    page = WANTED
    dangling = ctx.project.graph.dangling
    lines = ["# Wanted", "", f"[Back to the record]({relative(page, INDEX)}) · Ids mentioned in the record's "
             "prose that are not in the record: add them, or write them without their id.", ""]
    if not dangling:
        lines.append("None: every id mentioned is in the record.")
    for target in sorted(dangling, key=id_sort_key):
        mentions = dangling[target]
        sources = sorted({m.source for m in mentions}, key=id_sort_key)
        lines += [f"## {target}", "", f"Mentioned by {len(sources)} entr{'y' if len(sources) == 1 else 'ies'}:", ""]
        for mention in mentions:
            where = escape.line(mention.field.replace("_", " "))
            lines.append(f"- {ctx.link(page, mention.source)} ({where}): “{sentence(ctx, mention.sentence, page)}”")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def graph_page(ctx: Context) -> str:
    """``graph.md``: every claim and what it cites and uses, coloured by verdict (summarised by
    tag above ``WHOLE_MAX`` nodes)."""
    page = GRAPH
    claims = sum(row[CLAIM] for row in rows(ctx).values())
    lines = ["# The record as a graph", "", f"[Back to the record]({relative(page, INDEX)}) · Every claim "
             f"({claims}) and what it cites and uses; a claim is coloured by its verdict.", ""]
    lines.append(mermaid.whole_graph(ctx, page) if claims else "The record holds no claims.")
    return "\n".join(lines) + "\n"


GRAPH_KEY_FILE = "pages/graph-key.bin"  # under the cache folder: the last render's graph key, with what it was of
GRAPH_KEY_FORM = b"recordtool-graph-key 1\n"
Listings = Mapping[str, tuple[str, str, tuple[str, ...]]]  # ``plan.Listing``: file, what the lists show, tags


def graph_key(ctx: Context, shared: str, listings: Listings, listed: str) -> str:
    """The key of ``graph.md``: a hash of what ``mermaid.whole_graph`` draws (``_graph_key``),
    so that an edit of a title, a status or a statement leaves it as it is while the graph is
    summarised by tag (then it shows no title). ``listed``: the hash of what the index pages
    show of every entry and of every state (``plan.index_keys``), which covers all the graph
    draws: while it is the one the last render kept beside its graph key (in the cache folder),
    the key is that one, not worked out again (after a body edit, at 100,000 entries, 0.3 s)."""
    from recordtool.record.cache import cache_key, read_plain, write_plain

    project = ctx.project
    config = project.config
    if project.cached:
        kept = read_plain(config.cache / GRAPH_KEY_FILE, cache_key(config), GRAPH_KEY_FORM)
        if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == listed and isinstance(kept[1], str):
            return kept[1]
    key = _graph_key(ctx, shared, listings)
    if project.cached:
        write_plain(config.cache / GRAPH_KEY_FILE, cache_key(config), GRAPH_KEY_FORM, (listed, key))
    return key


def _graph_key(ctx: Context, shared: str, listings: Listings) -> str:
    """A hash of what ``whole_graph`` draws: the claims (in the record's order) with their
    first tag, the entries of the record they cite and their states, and the other entries
    they cite with their states (and kind, when their id's prefix does not say it); when the
    graph is drawn node by node, what the lists show of every node too (its title, tags and
    citations with their relations). ``listings``: each entry's tags and what the lists show of
    it, as the index pages' key has them, so that no entry kept unmade in the entry cache is
    made for them."""
    record = ctx.project.record
    entries, states, config = record.entries, ctx.states, ctx.project.config
    theories = record.theories
    claims = ([i for i in entries if i in theories] if theories is not None
              else [i for i, e in entries.items() if isinstance(e, Theory)])
    parts = [shared, GRAPH]
    shown: dict[str, None] = dict.fromkeys(claims)
    for claim in claims:
        cited = [i for i, _relation in record.cites(claim) if i in entries]
        tags = listings[claim][2]
        parts.append(f"{claim} {tags[0] if tags else ''} {' '.join(cited)} {states.get(claim)}")
        shown.update(dict.fromkeys(cited))
    claimed = set(claims)
    for entry_id in shown:  # in order: the key is the same in every run
        if entry_id not in claimed:
            parts.append(f"{entry_id} {states.get(entry_id)}" if config.kind_of(entry_id) is not None
                         else f"{entry_id} {states.get(entry_id)} {listings[entry_id][1]}")
    if len(shown) <= mermaid.WHOLE_MAX:
        parts += [listings[entry_id][1] for entry_id in shown]
    return hashlib.blake2b("\0".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def index_pages(ctx: Context) -> dict[str, str]:
    """Every index page, by path."""
    out = {INDEX: dashboard(ctx), WANTED: wanted(ctx), GRAPH: graph_page(ctx)}
    out.update(kind_pages(ctx))
    out.update(tag_pages(ctx))
    return out


def index_paths(ctx: Context, tags: set[str] | None = None) -> list[str]:
    """The paths of ``index_pages`` without composing them (``tags``: every tag of the record,
    when known without making every entry)."""
    if tags is None:
        tags = {t for e in ctx.project.record.entries.values() for t in e.tags}
    return [INDEX, WANTED, GRAPH, *(kind_page(k.name) for k in ctx.project.config.kinds.values()),
            *(tag_page(t) for t in sorted(tags))]


__all__ = ["dashboard", "graph_key", "graph_page", "index_pages", "index_paths", "kind_pages", "tag_pages", "wanted"]
