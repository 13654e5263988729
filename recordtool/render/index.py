"""Index pages: the dashboard, one list per kind, one page per tag, the wanted entries, and
the whole record as a graph.

The functions that compose them return Markdown and are pure. What they show of each entry
comes from its row (``Context.rows``).
"""

from __future__ import annotations

from collections import Counter

from recordtool.record.load import id_sort_key
from recordtool.render import escape, mermaid
from recordtool.render.evidence import CLAUSES, verdict_line
from recordtool.render.page import sentence
from recordtool.render.sitemap import (
    GRAPH,
    INDEX,
    STATE_ORDER,
    WANTED,
    Context,
    Row,
    badge,
    entry_page,
    kind_page,
    relative,
    tag_page,
)


def dashboard(ctx: Context) -> str:
    """``index.md``: counts per verdict, every claim with its badge, the kinds, tags, wanted."""
    shown = ctx.rows
    claims = [i for i, row in shown.items() if row.claim]
    page = INDEX
    states = [ctx.states.get(c) or "unchecked" for c in claims]
    counts = Counter(states)
    total = len(claims)
    kinds = Counter(row.kind for row in shown.values())
    summary = ", ".join(f"{kinds[k.name]} {escape.line(k.name)}" for k in ctx.project.config.kinds.values())
    lines = ["# The record", "", f"{len(shown)} entries: {summary}.", ""]

    lines += ["## Claims by verdict", ""]
    if total:
        lines += ["| Verdict | Claims | Share |", "| --- | ---: | ---: |"]
        for state in STATE_ORDER:
            if counts[state] or state in ("verified", "unchecked"):
                share = f"{100 * counts[state] / total:.0f}%"
                lines.append(f"| {badge(state)} | {counts[state]} of {total} | {share} |")
    else:
        lines.append("The record holds no claims.")

    unsettled: Counter[str] = Counter(shown[c].status for c in claims if shown[c].status != "active")
    if unsettled:
        lines += ["", f"Of these, {_not_active(unsettled)}: its verdict is on the statement as it stands."
                  if sum(unsettled.values()) == 1 else
                  f"Of these, {_not_active(unsettled)}: their verdicts are on the statements as they stand."]

    if claims:
        lines += ["", "## Claims", "", "| Claim | Status | Verdict | Since | Last verified | Title |",
                  "| --- | --- | --- | --- | --- | --- |"]
        lines.extend(_claim_line(ctx, claim, shown[claim], state) for claim, state in zip(claims, states, strict=True))
        lines += ["", f"[Every claim and what it cites, as one graph]({relative(page, GRAPH)})."]

    lines += ["", "## Kinds", ""]
    for kind in ctx.project.config.kinds.values():
        lines.append(f"- [{escape.line(kind.name)}]({relative(page, kind_page(kind.name))}) ({kinds[kind.name]})")
    tags = {t: len(ctx.members[tag_page(t)]) for t in ctx.tags_in_use()}
    if tags:
        lines += ["", "## Tags", ""]
        lines.append(", ".join(f"[{escape.line(t)}]({relative(page, tag_page(t))}) ({n})" for t, n in tags.items()))
    wanted = ctx.project.graph.dangling
    lines += ["", "## Wanted", ""]
    lines.append(f"[{len(wanted)} ids]({relative(page, WANTED)}) are mentioned but not in the record."
                 if wanted else f"Every id mentioned is in the record ([wanted]({relative(page, WANTED)})).")
    lines += _stale(ctx)
    return "\n".join(lines) + "\n"


def _stale(ctx: Context) -> list[str]:
    """The dashboard's list of the pages kept stale: their entries' files do not load now."""
    if not ctx.stale:
        return []
    lines = ["", "## Stale pages", "", "The files of these entries do not load now: their pages are as the last render "
             "that could read them wrote them. Fix each file and render again.", ""]
    lines += [f"- [{entry_id}]({relative(INDEX, entry_page(entry_id))}) ⚠️ stale: {escape.line(why)}"
              for entry_id, why in sorted(ctx.stale.items(), key=lambda item: id_sort_key(item[0]))]
    return lines


def _claim_line(ctx: Context, claim: str, row: Row, state: str) -> str:
    """A claim's line in the dashboard's table of claims (``state``: its state, 'unchecked'
    without one)."""
    status = ctx.statuses.get(claim)
    verdict = status.verdict if status is not None else None
    since = escape.line(verdict.since[:10]) if verdict is not None and state != "stale" else "—"
    last = escape.line(verdict.verified_at[:10]) if verdict is not None else "—"
    shown = verdict_line(ctx, claim, f"{relative(INDEX, entry_page(claim))}#{CLAUSES}") if state != "unchecked" else badge(state)
    return f"| {ctx.link(INDEX, claim)} | {_status(row.status)} | {escape.in_row(shown)} | {since} | {last} | {row.title} |"


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
    return status if status == "active" else f"**{escape.line(status)}**"


def _listing(ctx: Context, page: str, heading: str) -> str:
    """A kind's or a tag's page: its entries, in the record's order."""
    ids, shown = ctx.members.get(page, []), ctx.rows
    up = relative(page, INDEX)
    lines = [f"# {escape.line(heading)}", "", f"[Back to the record]({up}) · {len(ids)} "
             f"entr{'y' if len(ids) == 1 else 'ies'}", ""]
    if not ids:
        return "\n".join([*lines, "None yet."]) + "\n"
    claims = any(shown[i].claim for i in ids)
    if claims:
        lines += ["| Entry | Status | Verdict | Title |", "| --- | --- | --- | --- |"]
    else:
        lines += ["| Entry | Status | Title |", "| --- | --- | --- |"]
    folder = up[: -len(INDEX)]  # the entries' pages are beside the dashboard
    for entry_id in ids:
        row, state = shown[entry_id], ctx.states.get(entry_id)
        verdict = f" {badge(state) if state else '—'} |" if claims else ""
        lines.append(f"| [{entry_id}]({folder}{entry_page(entry_id)}) | {_status(row.status)} |{verdict} {row.title} |")
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
        sources = len({m.source for m in mentions})
        lines += [f"## {target}", "", f"Mentioned by {sources} entr{'y' if sources == 1 else 'ies'}:", ""]
        for mention in mentions:
            where = escape.line(mention.field.replace("_", " "))
            lines.append(f"- {ctx.link(page, mention.source)} ({where}): “{sentence(ctx, mention.sentence, page)}”")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def graph_page(ctx: Context) -> str:
    """``graph.md``: every claim and what it cites and uses, coloured by verdict (above
    ``WHOLE_MAX`` nodes, the literature and notes grouped by tag)."""
    page = GRAPH
    claims = len(ctx.project.record.claim_ids())
    lines = ["# The record as a graph", "", f"[Back to the record]({relative(page, INDEX)}) · Every claim "
             f"({claims}) and what it cites and uses; a claim is coloured by its verdict.", ""]
    lines.append(mermaid.whole_graph(ctx, page) if claims else "The record holds no claims.")
    return "\n".join(lines) + "\n"


def index_page(ctx: Context, path: str) -> str:
    """The index page ``path`` (one of ``index_paths``), composed."""
    compose = {INDEX: dashboard, WANTED: wanted, GRAPH: graph_page}.get(path)
    if compose is not None:
        return compose(ctx)
    folder, _, name = path.removesuffix(".md").partition("/")  # tags/<tag>.md, kinds/<kind>.md
    return _listing(ctx, path, f"{'Tag' if folder == 'tags' else 'Kind'}: {name}")


def index_paths(ctx: Context) -> list[str]:
    """The index pages' paths: the dashboard, wanted, the graph, a page per kind and per tag."""
    return [INDEX, WANTED, GRAPH, *(kind_page(k.name) for k in ctx.project.config.kinds.values()),
            *(tag_page(t) for t in ctx.tags_in_use())]
