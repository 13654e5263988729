"""The graph view: node names from ids, a stable diff, a bound on nodes and columns, a legend."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from recordtool.record.project import open_project
from recordtool.render.mermaid import MAX_NEIGHBOURS, MAX_RANKS, _longest_path, graph_view, node
from recordtool.render.plan import context
from tests.conftest import ProjectBuilder
from tests.render.composed import render_site
from tests.render_record import small_record, statuses

EDGE = re.compile(r"^  (\S+) (<?-\.->|-->\|[^|]*\|) (\S+)$")
NODE = re.compile(r'^  (\S+)\["')


def _block(page: str) -> list[str]:
    start = page.index("```mermaid\n")
    return page[start:page.index("\n```", start)].split("\n")[1:]


def test_node_names_come_from_the_id_alone() -> None:
    assert node("THEORY-977") == "THEORY_977"
    assert node("LIT-1") == "LIT_1"
    assert node("end") == "_end"  # never a Mermaid keyword
    names = [node(i) for i in ["A-1", "A1", "a-1", "A_1", "A-1-2", "A-12", "é-1", "end", "_end"]]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"\w+", n) for n in names)


def test_adding_an_entry_changes_only_the_pages_that_show_it(project: ProjectBuilder) -> None:
    record = small_record(project)
    before = render_site(record, statuses(record))
    project.add("NOTE-2", """
        title: A second note
        tags: [alpha]
        cites: [{id: LIT-1, as: paper}]
        body: On LIT-1 and THEORY-2.
    """)
    record = open_project(root=project.root)
    after = render_site(record, statuses(record))
    changed = {p for p in after if before.get(p) != after[p]}
    # its own page, the pages of what it cites and mentions, and the lists it is in
    assert changed == {"NOTE-2.md", "LIT-1.md", "THEORY-2.md", "index.md", "kinds/note.md", "tags/alpha.md"}
    # on a neighbour's page, the graph view gains lines about the new entry and loses none
    old, new = _block(before["LIT-1.md"].decode()), _block(after["LIT-1.md"].decode())
    assert [line for line in old if line not in new] == []
    added = [line for line in new if line not in old]
    assert added and all("NOTE_2" in line for line in added)


def _hub(project: ProjectBuilder, citing: int, mentioning: int, missing: int) -> str:
    """LIT-1 cited by ``citing`` notes (each citing the one before it too), mentioned by
    ``mentioning`` others, and mentioning ``missing`` ids not in the record; its page."""
    ids = " ".join(f"THEORY-{900 + i}" for i in range(missing))
    project.add("LIT-1", f"title: The hub\nreference: {{authors: [A], year: 2020, title: T}}\nbody: Mentions {ids}.\n")
    for i in range(citing):
        cites = "[{id: LIT-1, as: paper}" + (f", {{id: NOTE-{i - 1}, as: paper}}" if i else "") + "]"
        project.add(f"NOTE-{i}", f"title: Note {i} with a long title that must be cut short\ncites: {cites}\n")
    for i in range(mentioning):
        project.add(f"NOTE-{1000 + i}", f"title: Mentioning {i}\nbody: See LIT-1.\n")
    record = open_project(root=project.root)
    return graph_view(context(record, statuses(record)), "LIT-1", "LIT-1.md")


@pytest.mark.parametrize("neighbours", [30, 100])
def test_a_large_neighbourhood_stays_legible(project: ProjectBuilder, neighbours: int) -> None:
    view = _hub(project, citing=neighbours - 5, mentioning=5, missing=7)
    lines = _block(view)
    nodes = [m.group(1) for line in lines if (m := NODE.match(line))]
    # the entry, the nearest neighbours, one node for the ids not in the record, one for the rest
    assert len(nodes) == MAX_NEIGHBOURS + 3
    assert "wanted_" in nodes and "more_" in nodes
    assert f'  more_["{neighbours - MAX_NEIGHBOURS} more linked<br/>entries: see Backlinks"]' in lines
    assert '  wanted_["7 ids<br/>not in the record"]' in lines
    # nearest first: the citing notes, not the ones that only mention it
    assert not [n for n in nodes if re.fullmatch(r"NOTE_1\d\d\d", n)]
    # at most three columns: the longest chain of arrows has two
    after: dict[str, set[str]] = {n: set() for n in nodes}
    for line in lines:
        m = EDGE.match(line)
        if m:
            after[m.group(1)].add(m.group(3))
    assert _longest_path(after) == MAX_RANKS - 1
    # labels: the id over at most two lines of at most 26 characters
    for line in lines:
        m = NODE.match(line)
        if m and m.group(1) not in ("wanted_", "more_"):
            parts = line.split('["', 1)[1].rstrip('"]').split("<br/>")
            assert len(parts) <= 3 and all(len(p) <= 26 for p in parts[1:])
    assert f"The graph shows the {MAX_NEIGHBOURS} nearest of {neighbours} linked entries" in view
    assert len(view) < 4_000  # the same size at 30 and at 100 neighbours


def test_the_legend_says_what_is_drawn(project: ProjectBuilder) -> None:
    view = _hub(project, citing=2, mentioning=1, missing=1)
    assert '  wanted_["THEORY-900<br/>not in the record"]' in _block(view)
    legend = view.split("```\n\n", 1)[1]
    assert legend.startswith("*Legend* — solid arrow: a citation, labelled with its relation; dotted arrow: "
                             "a mention in prose; not a claim: blue; not in the record: white, dashed border.")
    assert "more linked" not in view


def test_mentions_both_ways_are_one_arrow(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: One\nbody: See NOTE-2.\n")
    project.add("NOTE-2", "title: Two\nbody: See NOTE-1.\n")
    record = open_project(root=project.root)
    lines = _block(graph_view(context(record, statuses(record)), "NOTE-1", "NOTE-1.md"))
    assert [line for line in lines if EDGE.match(line)] == ["  NOTE_1 <-.-> NOTE_2"]


def test_every_state_has_a_colour_and_a_rank() -> None:
    from recordtool.render.mermaid import CLASSES, COLOURS, STATE_WORSE
    from recordtool.render.sitemap import STATE_ORDER

    assert set(STATE_ORDER) <= set(CLASSES) & set(COLOURS)
    assert sorted(STATE_WORSE) == sorted(STATE_ORDER)


def test_graph_md_draws_every_claim_and_what_it_cites(project: ProjectBuilder) -> None:
    from recordtool.render.index import dashboard, graph_page
    from recordtool.verify.verdict import ClaimStatus
    from tests.render_record import verdict

    record = small_record(project)
    ctx = context(record, statuses(record, THEORY_1=ClaimStatus("THEORY-1", "contradicted", verdict(outcome="fail"))))
    page = graph_page(ctx)
    lines = _block(page)
    assert lines[0] == "graph LR"  # (shrunk to the page's width where it is wider)
    assert [m.group(1) for line in lines if (m := NODE.match(line))] == ["THEORY_1", "THEORY_2", "LIT_1"]
    assert [line for line in lines if EDGE.match(line)] == ["  THEORY_1 -->|source| LIT_1", "  THEORY_2 -->|uses| THEORY_1"]
    assert "  class THEORY_1 contradicted" in lines and "  class THEORY_2 unchecked" in lines
    assert '  click THEORY_1 "THEORY-1.md"' in lines
    assert "❌ contradicted: red" in page and "⚪ unchecked: light grey" in page
    assert "[Every claim and what it cites, as one graph](graph.md)." in dashboard(ctx)


def _whole(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> str:
    """graph.md drawn claim by claim (``WHOLE_MAX`` lowered): six claims, THEORY-3 verified
    and THEORY-5 contradicted, citing LIT-1 (tag a), LIT-2 (tag b), NOTE-1 (no tag) and
    THEORY-3; at most two tags get a node of their own (``MAX_GROUPS``)."""
    from recordtool.render import mermaid
    from recordtool.render.index import graph_page
    from recordtool.verify.verdict import ClaimStatus
    from tests.render_record import verdict

    monkeypatch.setattr(mermaid, "WHOLE_MAX", 3)
    monkeypatch.setattr(mermaid, "MAX_GROUPS", 1)
    for i, tag in [(1, "a"), (2, "b"), (3, "a")]:
        project.add(f"LIT-{i}", f"title: P{i}\ntags: [{tag}]\nreference: {{authors: [A], year: 2020, title: P}}\n")
    project.add("NOTE-1", "title: N\n")
    for i in range(6):
        project.add(f"THEORY-{i}", f"statement: S{i}.\ntags: [t{i}]\ncites: [{{id: LIT-{1 + i % 3}, as: source}}"
                    + (", {id: THEORY-3, as: uses}, {id: NOTE-1, as: note}, {id: LIT-2, as: data}" if i < 2 else "")
                    + "]\n")
    record = open_project(root=project.root)
    return graph_page(context(record, statuses(record, THEORY_3=ClaimStatus("THEORY-3", "verified", verdict("THEORY-3")),
                                                  THEORY_5=ClaimStatus("THEORY-5", "contradicted", verdict("THEORY-5", "fail")))))


def test_graph_md_above_its_size_keeps_every_claim_and_groups_the_rest_by_tag(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    page = _whole(project, monkeypatch)
    lines = _block(page)
    assert lines[:2] == ['%%{init: {"flowchart": {"useMaxWidth": false}}}%%', "graph LR"]  # full size: it scrolls
    # every claim a node of its own, labelled with its id, coloured by its verdict
    assert [line for line in lines if line.startswith("  THEORY_") and "[" in line] == [
        '  THEORY_0["THEORY-0"]:::unchecked', '  THEORY_1["THEORY-1"]:::unchecked', '  THEORY_2["THEORY-2"]:::unchecked',
        '  THEORY_3["THEORY-3"]:::verified', '  THEORY_4["THEORY-4"]:::unchecked', '  THEORY_5["THEORY-5"]:::contradicted']
    # the literature and notes: the tag with most entries, then the rest by kind
    assert [line for line in lines if line.startswith("  g")] == [
        '  g0_["#35;a<br/>2 entries"]:::entry', '  g1_["literature<br/>1 entry"]:::entry',
        '  g2_["note<br/>1 entry"]:::entry']
    assert '  click g0_ "tags/a.md"' in lines and '  click g1_ "kinds/literature.md"' in lines
    assert '  click THEORY_5 "THEORY-5.md"' in lines
    # citations between claims, then each claim's first group, then its second, ...
    assert [line for line in lines if "->" in line] == [
        "  THEORY_0 --> THEORY_3", "  THEORY_1 --> THEORY_3", "  THEORY_0 -.-> g0_", "  THEORY_1 -.-> g1_",
        "  THEORY_2 -.-> g0_", "  THEORY_3 -.-> g0_", "  THEORY_4 -.-> g1_", "  THEORY_5 -.-> g0_",
        "  THEORY_0 -.-> g2_", "  THEORY_1 -.-> g2_", "  THEORY_0 -.-> g1_"]
    assert "  classDef contradicted fill:#f8d7da,stroke:#c62828,color:#5c1414" in lines
    assert ("*Legend* — solid arrow: a claim citing another claim; dotted arrow: a claim citing literature or notes "
            "of that group; ✅ verified: green; ❌ contradicted: red; ⚪ unchecked: light grey; not a claim: blue.") in page
    assert "6 claims and what they cite are more than 3 nodes" in page
    assert "tags beyond the 1 with most entries are one node per kind" in page


def test_graph_md_keeps_the_worst_claims_and_the_arrows_mermaid_draws(
        project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    from recordtool.render import mermaid

    monkeypatch.setattr(mermaid, "MAX_CLAIMS", 2)
    monkeypatch.setattr(mermaid, "MAX_ARROWS", 2)
    page = _whole(project, monkeypatch)
    lines = _block(page)
    assert [line for line in lines if line.startswith("  THEORY_") and "[" in line] == [
        '  THEORY_0["THEORY-0"]:::unchecked', '  THEORY_5["THEORY-5"]:::contradicted']
    assert [line for line in lines if "->" in line] == ["  THEORY_0 -.-> g0_", "  THEORY_5 -.-> g0_"]
    assert "The 2 claims drawn are those with the worst verdicts; the [index](index.md) lists all 6." in page
    assert "2 citations are left out, to keep within the 2 arrows Mermaid draws" in page


@pytest.mark.parametrize(("title", "lines"), [
    ("A paper", ["A paper"]),
    ("In-context Learning and Induction Heads", ["In-context Learning and", "Induction Heads"]),
    ("In the two-layer attention-only transformer that Elhage et al. reverse-engineer",
     ["In the two-layer", "attention-only …"]),
    ("x" * 60 + " tail", ["x" * 26, "x" * 24 + " …"]),
    ("word " * 11, ["word word word word word", "word word word word word …"]),
    ("word " * 10, ["word word word word word", "word word word word word"]),
])
def test_titles_are_cut_into_two_short_lines(title: str, lines: list[str]) -> None:
    from recordtool.render.mermaid import title_lines

    assert title_lines(title) == lines
    assert all(len(line) <= 26 for line in title_lines(title))


@pytest.mark.parametrize("whole_max", [60, 3])
def test_graph_md_from_the_entry_cache_is_graph_md_afresh(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch,
                                                           whole_max: int) -> None:
    """``graph.md`` (node by node, and summarised by tag above ``WHOLE_MAX`` nodes) of a record
    opened with the store draws what a record read afresh draws."""
    from recordtool.render import mermaid
    from recordtool.render.index import graph_page
    from tests.corpus import invoke

    monkeypatch.setattr(mermaid, "WHOLE_MAX", whole_max)
    project.add("LIT-1", "title: A paper\nreference: {authors: [A], year: 2020, title: P}\n")
    project.add("NOTE-1", "title: A note\ncites: [{id: LIT-1, as: paper}]\n")
    for i, tag in enumerate(["a", "a", "b", "c"]):
        project.add(f"THEORY-{i}", f"title: Claim {i}\nstatement: S{i}.\ntags: [{tag}]\ncites: [{{id: LIT-1, as: source}}"
                    + (", {id: THEORY-3, as: uses}, {id: NOTE-1, as: note}" if i < 2 else "") + "]\n")
    assert invoke("render", "--root", str(project.root)).code == 0  # (the store kept)
    kept = open_project(root=project.root, cache=True)
    page = graph_page(context(kept, {}))
    afresh = open_project(root=project.root)
    assert page == graph_page(context(afresh, {}))
    assert ("Claim 1" in page) == (whole_max == 60) and ('-->|uses|' in page) == (whole_max == 60)



# The hues (degrees) and the most colour (0-1) each name of the legend allows
HUES = {"green": (100, 160), "light green": (60, 140), "red": (340, 375), "yellow": (40, 65), "pale yellow": (40, 65),
        "pale teal": (160, 200), "purple": (260, 320), "orange": (20, 40), "blue": (200, 250)}
GREYS = ("grey", "light grey", "white")


def test_the_legend_names_the_colour_each_fill_is() -> None:
    """A legend that says "light green" for a yellow fill misleads: each name matches its fill's hue."""
    import colorsys

    from recordtool.render.mermaid import CLASSES, COLOURS

    for state, name in COLOURS.items():
        fill = CLASSES[state].split("fill:#", 1)[1][:6]
        red, green, blue = (int(fill[i:i + 2], 16) / 255 for i in (0, 2, 4))
        hue, _saturation, _value = colorsys.rgb_to_hsv(red, green, blue)
        colour, chroma = name.split(",")[0], max(red, green, blue) - min(red, green, blue)
        if colour in GREYS:
            assert chroma < 0.05, (state, fill)
        else:
            low, high = HUES[colour]
            assert chroma >= 0.05 and (low <= hue * 360 <= high or low <= hue * 360 + 360 <= high), (state, fill, hue * 360)


def test_claims_that_use_the_entry_or_are_contradicted_are_drawn_before_notes(project: ProjectBuilder) -> None:
    """In a crowded neighbourhood the claims that matter keep their nodes: one that uses the
    entry, and a contradicted one that only mentions it, before the many notes that cite it."""
    from recordtool.verify.verdict import ClaimStatus

    project.add("THEORY-1", "statement: The hub.\n")
    for i in range(MAX_NEIGHBOURS + 5):
        project.add(f"NOTE-{i}", f"title: Note {i}\ncites: [{{id: THEORY-1, as: paper}}]\n")
    project.add("THEORY-50", "statement: Built on it.\ncites: [{id: THEORY-1, as: uses}]\n")
    project.add("THEORY-60", "statement: Against THEORY-1, and false.\n")
    record = open_project(root=project.root)
    states = statuses(record, THEORY_60=ClaimStatus("THEORY-60", "contradicted", None))
    nodes = [m.group(1) for line in _block(graph_view(context(record, states), "THEORY-1", "THEORY-1.md"))
             if (m := NODE.match(line))]
    assert "THEORY_50" in nodes and "THEORY_60" in nodes and "more_" in nodes


# At scale, and in a browser -----------------------------------------------------------------

MERMAID_JS = Path(__file__).resolve().parents[2] / "recordtool" / "render" / "assets" / "mermaid.min.js"
GRAPH_NODE = re.compile(r'<g class="node default ?([\w ]*)" id="[^"]*-flowchart-(\w+)-\d+"')


@pytest.fixture(scope="module")
def scale(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str], dict[str, str]]:
    """A synthetic record of 760 entries (``benchmarks/bench_scale.py``), 301 of them claims,
    some contradicted, not reproduced or verified: its graph.md, each claim's state, and the
    page of its most linked entry."""
    from benchmarks.bench_scale import generate_record
    from recordtool.render.index import graph_page
    from recordtool.verify.verdict import ClaimStatus

    root = tmp_path_factory.mktemp("scale")
    generate_record(root, 760)
    record = open_project(root=root)
    claims = record.record.claim_ids()
    states = {c: ("contradicted", "not-reproduced", "verified", "unchecked")[i % 4] for i, c in enumerate(claims)}
    ctx = context(record, {c: ClaimStatus(c, state, None) for c, state in states.items()})
    hub = max(record.record.entries, key=lambda e: len(record.graph.neighbours(e)))
    return graph_page(ctx), states, {hub: graph_view(ctx, hub, f"{hub}.md")}


def test_graph_md_draws_every_claim_of_300_in_what_mermaid_draws(
        scale: tuple[str, dict[str, str], dict[str, str]]) -> None:
    page, states, _hub = scale
    lines = _block(page)
    assert len(states) >= 300
    drawn = {m.group(1): m.group(2) for line in lines if (m := re.match(r'^  (\w+)\["[^"]*"\]:::(\w+)$', line))}
    assert {n: c for n, c in drawn.items() if not n.startswith("g")} == \
        {node(c): state.replace("-", "_") for c, state in states.items()}
    assert len("\n".join(lines)) < 50_000 and sum("->" in line for line in lines) <= 500  # Mermaid's limits


# In the page _draw makes: of a drawn diagram of at most 40 nodes, how many edge labels overlap a
# node's box, and how many edges run under a box other than their ends' (sampled along the path,
# 2 px inside); null for a larger diagram (it would take a minute)
OVERLAPS = """
function inside(p, r) { return p.x > r.left + 2 && p.x < r.right - 2 && p.y > r.top + 2 && p.y < r.bottom - 2; }
function hit(a, b) { return a.left < b.right - 2 && b.left < a.right - 2 && a.top < b.bottom - 2 && b.top < a.bottom - 2; }
function overlaps(svg) {
  if (svg.querySelectorAll("g.node").length > 40) return null;
  const boxes = [...svg.querySelectorAll("g.node")].map(n => n.getBoundingClientRect());
  const labels = [...svg.querySelectorAll("g.edgeLabel")].map(l => l.getBoundingClientRect()).filter(r => r.width > 0);
  let under = 0;
  for (const path of svg.querySelectorAll("path.flowchart-link")) {
    const length = path.getTotalLength(), matrix = path.getScreenCTM();
    const at = t => { const q = path.getPointAtLength(t * length); return new DOMPoint(q.x, q.y).matrixTransform(matrix); };
    const ends = [at(0), at(1)];
    const near = (e, r) => e.x > r.left - 6 && e.x < r.right + 6 && e.y > r.top - 6 && e.y < r.bottom + 6;
    const others = boxes.filter(r => !ends.some(e => near(e, r)));
    under += [...Array(39).keys()].some(i => others.some(r => inside(at((i + 1) / 40), r)));
  }
  return [labels.filter(l => boxes.some(b => hit(l, b))).length, under];
}
"""


def _draw(blocks: list[str], folder: Path) -> tuple[str, list[list[int] | None]]:
    """The page Chromium makes of ``blocks``, each drawn by the package's Mermaid, and each
    diagram's ``OVERLAPS`` (the test skipped where no Chromium is installed)."""
    browser = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
                   None)
    if browser is None:
        pytest.skip("no headless browser installed: apt-get install chromium")
    script = "".join(f"await draw({json.dumps(b).replace('</', '<' + chr(92) + '/')});" for b in blocks)
    (folder / "draw.html").write_text(f"""<!doctype html><meta charset="utf-8"><body>
<script src="{MERMAID_JS.as_uri()}"></script><script>
mermaid.initialize({{startOnLoad: false}});
{OVERLAPS}
let n = 0, found = [];
async function draw(text) {{
  const out = document.body.appendChild(document.createElement("div"));
  try {{ out.innerHTML = (await mermaid.render("m" + n++, text)).svg; found.push(overlaps(out.firstChild)); }}
  catch (e) {{ out.className = "failed"; out.textContent = e.message; }}
}}
(async () => {{ {script} document.title = JSON.stringify(found); }})();
</script>""", encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                              f"--user-data-dir={profile}", "--window-size=1200,900", "--virtual-time-budget=120000",
                              "--dump-dom", (folder / "draw.html").as_uri()], capture_output=True, text=True,
                             timeout=300).stdout
    title = re.search(r"<title>(.*?)</title>", dom)
    assert title is not None and 'class="failed"' not in dom, dom[-2000:]
    return dom, json.loads(title.group(1))


def test_mermaid_11_draws_graph_md_at_300_claims_and_a_hub_page(
        scale: tuple[str, dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    page, states, hub = scale
    dom, _overlaps = _draw(["\n".join(_block(page)), *("\n".join(_block(view)) for view in hub.values())], tmp_path)
    graph = dom[:dom.index("</svg>")]
    drawn = {name: classes for classes, name in GRAPH_NODE.findall(graph) if not name.startswith("g")}
    assert drawn == {node(c): state.replace("-", "_") + " clickable" for c, state in states.items()}  # (a link each)


def test_no_label_is_hidden_under_a_node(project: ProjectBuilder, tmp_path: Path) -> None:
    """THEORY-988's neighbourhood in the shipped record: its "source" arrow to LIT-1534 ran
    under THEORY-1342's box, which hid the label but "sou"."""
    project.add("LIT-1534", "title: A Mathematical Framework for Transformer Circuits\n"
                            "reference: {authors: [A], year: 2021, title: P}\n")
    project.add("NOTE-1189", "title: Elhage, Nanda, Olsson et al. — A mathematical framework for transformer circuits\n"
                             "cites: [{id: LIT-1534, as: paper}]\nbody: On THEORY-988.\n")
    project.add("THEORY-1342", "statement: For a fixed input, what a head selects and what it transports are separate.\n"
                               "cites: [{id: LIT-1534, as: source}]\n")
    project.add("THEORY-988", "statement: An attention-only transformer's logits are exactly a sum of path terms.\n"
                              "cites: [{id: LIT-1534, as: source}, {id: THEORY-1342, as: uses}]\n")
    project.add("THEORY-977", "statement: Induction heads form by K-composition with a previous-token head.\n"
                              "cites: [{id: LIT-1534, as: source}, {id: THEORY-988, as: uses}]\n")
    record = open_project(root=project.root)
    ctx = context(record, statuses(record))
    pages = [graph_view(ctx, e, f"{e}.md") for e in record.record.entries]
    _dom, overlaps = _draw(["\n".join(_block(view)) for view in pages], tmp_path)
    assert overlaps == [[0, 0]] * len(pages)
