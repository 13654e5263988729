"""Index pages: the dashboard, one list per kind, one page per tag, and the wanted entries.

The functions that compose them return Markdown and are pure. What they show of each entry
comes from its row (``recordtool.render.rows``: kept between renders), so that composing them
makes no entry whose file is unchanged; each page's key (``index_keys``) comes from the tally
of the entries it lists, kept with the rows, so that after an edit only the pages that list the
edited entry are made again: from the page as written, the edited entries' lines replaced, when
that gives what composing gives (``spliced``; a list of 40,000 entries is about 0.1 s to
compose), else composed.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Generator

from recordtool import parallel
from recordtool.record.load import id_sort_key
from recordtool.render import escape, mermaid
from recordtool.render.page import sentence
from recordtool.render.rows import (
    CLAIM,
    KIND,
    SEP,
    STATUS,
    TAGS,
    TITLE,
    Listed,
    Row,
    Tally,
    listed,
    listed_in_steps,
    rows,
    tags_in_use,
)
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
        lines.extend(_claim_line(ctx, claim, shown[claim], state) for claim, state in zip(claims, states, strict=True))

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


def _claim_line(ctx: Context, claim: str, row: Row, state: str) -> str:
    """A claim's line in the dashboard's table of claims (``state``: its state, 'unchecked'
    without one)."""
    status = ctx.statuses.get(claim)
    verdict = status.verdict if status is not None else None
    since = escape.cell(verdict.since[:10]) if verdict is not None and state != "stale" else "—"
    last = escape.cell(verdict.verified_at[:10]) if verdict is not None else "—"
    return f"{_claim_start(ctx, claim)} {_status(row[STATUS])} | {badge(state)} | {since} | {last} | {row[TITLE]} |"


def _claim_start(ctx: Context, claim: str) -> str:
    """How a claim's line in the dashboard's table begins: its link, in its own cell."""
    return f"| {ctx.link(INDEX, claim)} |"


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
    """Every tag in use, sorted, with how many entries have it (from the tallies)."""
    tallies = listed(ctx).tallies
    return {t: tallies[tag_page(t)][0] for t in sorted(listed(ctx).tags())}


def _members(ctx: Context) -> dict[str, list[str]]:
    """The entries each kind and tag page lists, in the record's order, by page (one pass over
    the rows, once per context)."""
    memo: dict[str, dict[str, list[str]]] = ctx.memo("index.members")
    found = memo.get("")
    if found is None:
        shown = listed(ctx)
        kinds: dict[str, list[str]] = {}
        tags: dict[str, list[str]] = {}
        for entry_id, row in zip(shown.ids, shown.rows(), strict=True):
            kind = kinds.get(row[KIND])
            if kind is None:
                kind = kinds[row[KIND]] = []
            kind.append(entry_id)
            for tag in row[TAGS]:
                members = tags.get(tag)
                if members is None:
                    members = tags[tag] = []
                members.append(entry_id)
        found = memo[""] = {kind_page(k): members for k, members in kinds.items()}
        found.update((tag_page(t), members) for t, members in tags.items())
    return found


def kind_pages(ctx: Context) -> dict[str, str]:
    """``kinds/<kind>.md`` for every configured kind: its entries, in id order."""
    return {kind_page(kind.name): _kind_page(ctx, kind.name) for kind in ctx.project.config.kinds.values()}


def _kind_page(ctx: Context, kind: str) -> str:
    page = kind_page(kind)
    return _listing(ctx, page, f"Kind: {kind}", _members(ctx).get(page, []), rows(ctx))


def tag_pages(ctx: Context) -> dict[str, str]:
    """``tags/<tag>.md`` for every tag in use."""
    return {tag_page(t): _tag_page(ctx, t) for t in sorted(listed(ctx).tags())}


def _tag_page(ctx: Context, tag: str) -> str:
    page = tag_page(tag)
    return _listing(ctx, page, f"Tag: {tag}", _members(ctx).get(page, []), rows(ctx))


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
    folder = _entries_folder(page)
    states = ctx.states
    for entry_id in ids:
        line = made.get(entry_id)
        if line is None:
            line = made[entry_id] = _listed_line(folder, claims, entry_id, shown[entry_id], states.get(entry_id))
        lines.append(line)
    return "\n".join(lines) + "\n"


def _listed_line(folder: str, claims: bool, entry_id: str, row: Row, state: str | None) -> str:
    """An entry's line on a kind's or a tag's page (``claims``: the page's table has a column
    of verdicts; ``folder``: where the entries' pages are, from the page)."""
    start = _listed_start(folder, entry_id)
    if claims:
        return f"{start} {_status(row[STATUS])} | {badge(state) if state else '—'} | {row[TITLE]} |"
    return f"{start} {_status(row[STATUS])} | {row[TITLE]} |"


def _entries_folder(page: str) -> str:
    """Where the entries' pages are, from the kind's or tag's page ``page`` (beside the
    dashboard, at the top of the output folder): what each of its lines links to."""
    return relative(page, INDEX)[: -len(INDEX)]


def _listed_start(folder: str, entry_id: str) -> str:
    """How an entry's line on a kind's or a tag's page begins: its link, in its own cell."""
    return f"| [{entry_id}]({folder}{entry_page(entry_id)}) |"


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
    claims = listed(ctx).tallies.get(GRAPH, [0, 0, 0])[1]
    lines = ["# The record as a graph", "", f"[Back to the record]({relative(page, INDEX)}) · Every claim "
             f"({claims}) and what it cites and uses; a claim is coloured by its verdict.", ""]
    lines.append(mermaid.whole_graph(ctx, page) if claims else "The record holds no claims.")
    return "\n".join(lines) + "\n"


def _key(parts: list[str]) -> str:
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def index_keys(ctx: Context, shared: str, paths: list[str]) -> dict[str, str]:
    """The key of each index page in ``paths``: a hash of what it shows. A kind's or a tag's
    page shows its entries' rows and states, in the record's order: its tally stands for them
    (``rows.Tally``). The dashboard shows how many entries each kind and tag has, the claims'
    rows, states and verdicts' dates (its tally) and how many ids are wanted; the wanted page
    each id mentioned but not in the record, with where and how, and whether each id its
    sentences name is in the record; ``graph.md``: ``graph_key``. ``shared``: what every page
    depends on (the output folder, the configuration's relations and kinds).

    After an edit of an entry's body, no tally changes; of its title, only those of the pages
    that list it."""
    return parallel.finished(index_keys_in_steps(ctx, shared, paths))


def index_keys_in_steps(ctx: Context, shared: str, paths: list[str]) -> Generator[None, None, dict[str, str]]:
    """``index_keys``, given when this generator is done, in steps of about
    ``parallel.STEP_SECONDS`` (this process's own work between two looks at its workers)."""
    clock = time.perf_counter
    found = yield from listed_in_steps(ctx)
    due = clock() + parallel.STEP_SECONDS
    keys: dict[str, str] = {}
    for path in paths:
        if clock() >= due:
            yield
            due = clock() + parallel.STEP_SECONDS
        if path == WANTED:
            keys[path] = _wanted_key(ctx, shared)
        elif path == GRAPH:
            keys[path] = graph_key(ctx, shared, found)
        else:
            keys[path] = _tallied_key(ctx, shared, path, found.tallies)
    return keys


def _tallied_key(ctx: Context, shared: str, path: str, tallies: dict[str, Tally]) -> str:
    """The key of the dashboard or of a kind's or a tag's page (``index_keys``), from ``tallies``."""
    if path == INDEX:
        counts = sorted((name, tally[0]) for name, tally in tallies.items() if name.startswith(("kinds/", "tags/")))
        return _key([shared, path, str(len(listed(ctx).ids)), repr(counts), repr(tallies.get(INDEX)),
                     str(len(ctx.project.graph.dangling))])
    return _key([shared, path, repr(tallies.get(path, [0, 0, 0]))])


# At most this many lines replaced in a page: each is found by a search of the whole page and
# the page copied around it (at 100,000 entries, 3 to 6 ms a line on the dashboard, 4.9 MB),
# so past a few, composing the page (about 0.1 s) costs less.
SPLICE_MAX = 8


def spliced(ctx: Context, shared: str, path: str, written: str, key: str) -> str | None:
    """The dashboard or a kind's or a tag's page ``path``, made from ``written``, the page as
    the last render into this folder wrote it with the key ``key``, by replacing the lines of
    the entries whose line changed since; None when that would not give what composing the page
    gives (then compose it). Composing a listing of every claim, or of every entry of a kind,
    takes about 0.1 s at 100,000 entries, after the rows are made back; this took 2 to 23 ms a
    page there (reading the page and checking its hash included: ``write._spliced``).

    What the page shows is fixed by its tally and its key is made from it (``index_keys``): so
    when ``key`` is the one the tallies kept by the last render give (``rows.Listed.before``),
    ``written`` shows what those rows show. The entries whose row or state changed since are
    then the only ones whose line can differ, and their lines alone are made again, provided the
    rest of the page stays as it is: the same entries listed (no id came or went; each changed
    entry listed on the page before as now), the same columns, and on the dashboard, the same
    counts (a changed claim keeps its state, status, kind and tags). Each line replaced is found
    by how it begins (the entry's link, in its own cell), once, or nothing is spliced; and at
    most ``SPLICE_MAX`` lines are."""
    if path in (WANTED, GRAPH):
        return None
    found = listed(ctx)
    before = found.before
    if before is None or _tallied_key(ctx, shared, path, before.tallies) != key:
        return None
    lines: dict[str, str] = {}  # how a line to replace begins -> the line now
    if path == INDEX:
        for entry_id, (n, was, was_look) in before.was.items():
            row, look = found.row(n), found.looks[n]
            if (row[KIND], row[TAGS], row[CLAIM]) != (was[KIND], was[TAGS], was[CLAIM]):
                return None  # (the counts of a kind, of a tag or of the claims change)
            if row[CLAIM]:
                if row[STATUS] != was[STATUS] or _state_of(look) != _state_of(was_look):
                    return None  # (the claims by verdict, or those not active, change)
                lines[_claim_start(ctx, entry_id)] = _claim_line(ctx, entry_id, row, ctx.state(entry_id) or "unchecked")
    else:
        then, now = before.tallies.get(path), found.tallies.get(path)
        if then is None or now is None or (then[1] > 0) != (now[1] > 0):
            return None  # (listed nothing, or lists nothing now; a verdicts' column comes or goes)
        folder = _entries_folder(path)
        for entry_id, (n, was, _was_look) in before.was.items():
            row = found.row(n)
            on_then, on_now = path in _pages_of(was), path in _pages_of(row)
            if on_then != on_now:
                return None
            if on_now:
                lines[_listed_start(folder, entry_id)] = _listed_line(folder, now[1] > 0, entry_id, row,
                                                                      ctx.states.get(entry_id))
    return _replaced(written, lines) if len(lines) <= SPLICE_MAX else None


def _state_of(look: str | None) -> str | None:
    """The state part of a ``rows.looks`` value."""
    return look.partition(SEP)[0] if look is not None else None


def _pages_of(row: Row) -> tuple[str, ...]:
    """The kind's and the tags' pages that list an entry of ``row``."""
    return (kind_page(row[KIND]), *(tag_page(t) for t in row[TAGS]))


def _replaced(text: str, lines: dict[str, str]) -> str | None:
    """``text`` with each line that begins with a key of ``lines`` replaced by its value; None
    when a key does not begin exactly one line of it (after the first)."""
    for start, line in lines.items():
        at = text.find("\n" + start)
        if at < 0 or text.find("\n" + start, at + 1) >= 0:
            return None
        end = text.find("\n", at + 1)
        if end < 0:
            return None
        text = f"{text[:at + 1]}{line}{text[end:]}"
    return text


def _wanted_key(ctx: Context, shared: str) -> str:
    """A hash of what ``wanted`` shows: each id mentioned but not in the record, each mention
    of it (who, where, the sentence), and whether each id of the sentences is in the record."""
    entries = ctx.project.record.entries
    findall = ctx.pattern.findall
    parts = [shared, WANTED]
    for target, mentions in ctx.project.graph.dangling.items():
        parts.append(repr((target, [(m.source, m.field, m.sentence) for m in mentions])))
        for mention in mentions:
            parts += [i if i in entries else f"!{i}" for i in findall(mention.sentence)]
    return _key(parts)


GRAPH_KEY_FORM = b"recordtool-graph-key 2\n"


def graph_key(ctx: Context, shared: str, found: Listed) -> str:
    """The key of ``graph.md``: a hash of what ``mermaid.whole_graph`` draws (``_graph_key``),
    so that an edit of a title, a status or a statement leaves it as it is while the graph is
    summarised by tag (then it shows no title). The graph's tally (``rows.graph_hash`` of every
    entry: what the summary draws of it) covers all the summary draws: while it is the one the
    last render into the same folder kept beside its graph key (in the cache folder:
    ``plan.graph_key_file``), the key is that one, not worked out again (at 100,000 entries,
    0.3 s). A graph drawn node by node (small: at most ``WHOLE_MAX`` nodes) shows titles, and
    its key is worked out every time."""
    from recordtool.record.cache import cache_key, read_plain, write_plain
    from recordtool.render.plan import graph_key_file

    project = ctx.project
    config = project.config
    token = _key([shared, repr(found.tallies.get(GRAPH))])
    kept_file = graph_key_file(config, ctx.out)
    if project.cached:
        kept = read_plain(kept_file, cache_key(config), GRAPH_KEY_FORM)
        if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == token and isinstance(kept[1], str):
            return kept[1]
    key, summarised = _graph_key(ctx, shared, found)
    if project.cached:
        write_plain(kept_file, cache_key(config), GRAPH_KEY_FORM, (token if summarised else None, key))
    return key


def _graph_key(ctx: Context, shared: str, found: Listed) -> tuple[str, bool]:
    """A hash of what ``whole_graph`` draws, and whether it summarises the claims by tag. The
    claims (in the record's order) and the entries of the record they cite, as its nodes; when
    they are more than ``WHOLE_MAX``, each claim with its first tag, the entries it cites and
    its state, and each other entry cited with its kind as the summary names it; else each node
    with its state and its file (which fixes its label), and each claim's citations with their
    relations."""
    record = ctx.project.record
    entries, states, config = record.entries, ctx.states, ctx.project.config
    claims = record.claim_ids()
    shown: dict[str, None] = dict.fromkeys(claims)
    cited: dict[str, list[str]] = {}
    for claim in claims:
        cited[claim] = [i for i, _relation in record.cites(claim) if i in entries]
        shown.update(dict.fromkeys(cited[claim]))
    if len(shown) <= mermaid.WHOLE_MAX:  # node by node (a node's file stands for its label: no entry made)
        from recordtool.render.plan import listed_file

        places = record.places
        parts = [shared, GRAPH, "nodes"]
        parts += [f"{entry_id} {states.get(entry_id)} {listed_file(places[entry_id])}" for entry_id in shown]
        parts += [f"{claim} {record.cites(claim)!r}" for claim in claims]
        return _key(parts), False
    shown_rows: dict[str, Row] = rows(ctx)
    parts = [shared, GRAPH]
    for claim in claims:
        tags = shown_rows[claim][TAGS]
        parts.append(f"{claim} {tags[0] if tags else ''} {' '.join(cited[claim])} {states.get(claim)}")
    claimed = set(claims)
    for entry_id in shown:  # in order: the key is the same in every run
        if entry_id not in claimed:
            kind = config.kind_of(entry_id)
            parts.append(f"{entry_id} {kind.name if kind is not None else shown_rows[entry_id][KIND]}")
    return _key(parts), True


def index_page(ctx: Context, path: str) -> str:
    """The index page ``path`` (one of ``index_paths``), composed."""
    if path == INDEX:
        return dashboard(ctx)
    if path == WANTED:
        return wanted(ctx)
    if path == GRAPH:
        return graph_page(ctx)
    if path.startswith("tags/"):
        return _tag_page(ctx, path[len("tags/"):-len(".md")])
    kind = next(k.name for k in ctx.project.config.kinds.values() if kind_page(k.name) == path)
    return _kind_page(ctx, kind)


def index_pages(ctx: Context) -> dict[str, str]:
    """Every index page, by path."""
    out = {INDEX: dashboard(ctx), WANTED: wanted(ctx), GRAPH: graph_page(ctx)}
    out.update(kind_pages(ctx))
    out.update(tag_pages(ctx))
    return out


def index_paths(ctx: Context) -> list[str]:
    """The paths of ``index_pages`` without composing them."""
    return [INDEX, WANTED, GRAPH, *(kind_page(k.name) for k in ctx.project.config.kinds.values()),
            *(tag_page(t) for t in sorted(tags_in_use(ctx)))]


__all__ = ["dashboard", "graph_key", "graph_page", "index_keys", "index_keys_in_steps", "index_page", "index_pages", "index_paths", "kind_pages",
           "spliced", "tag_pages", "wanted"]
