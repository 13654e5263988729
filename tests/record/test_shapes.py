"""YAML of any shape: every file loads into a valid entry or into problems with their places.

A corpus of bad shapes run through the command line (each case: exit code, the first line on
stderr with its place, no traceback, nothing changed on disk), the cascade of one failed file
(one cause, one message), ``uses`` cycles, and a property test: random YAML, mutated at
random, never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordtool.record.config import load_config
from recordtool.record.entry import load_entry
from recordtool.record.project import open_project
from recordtool.record.source import SourceError, read_source
from tests.conftest import ProjectBuilder
from tests.corpus import changed, invoke, snapshot

LIT = 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}\nbody: The paper.\n'
TAG_HINT = "is not allowed; remove it (the schema types every field; quote a value to keep it as text)"


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str | bytes]  # entry id -> YAML after its id line, or the whole file as bytes
    first: str  # the first line on stderr, exactly ("" when there is nothing to say)
    code: int = 1
    argv: tuple[str, ...] = ("validate",)
    folders: dict[str, str] = field(default_factory=dict)  # entry id -> folder, when not its prefix's


def deep(n: int, open_: str = "[", close: str = "]") -> str:
    return open_ * n + close * n


N2 = "record/notes/NOTE-2.yaml"
T2 = "record/theory/THEORY-2.yaml"
CHECK = "checks:\n  - name: c\n    run: checks.m:f\n    expect: {x: '< 1'}\n    params: {p: %s}\n"

SHAPES = [
    # empty and null values
    Case("empty-status-note", {"NOTE-2": "title: T\nstatus_note:\n"}, "", 0),
    Case("empty-status-note-list", {"NOTE-2": "title: T\nstatus_note:\n"}, "", 0, ("list",)),
    Case("empty-status-note-show", {"NOTE-2": "title: T\nstatus_note:\n"}, "", 0, ("show", "NOTE-2")),
    Case("empty-status-note-status", {"NOTE-2": "title: T\nstatus_note:\n"}, "", 0, ("status",)),
    Case("empty-title", {"NOTE-2": "title:\n"},
         f"{N2}:2:7: error: title: has no value (it is empty or null); write one"),
    Case("null-title", {"NOTE-2": "title: ~\n"}, f"{N2}:2:8: error: title: has no value (it is empty or null); write one"),
    Case("empty-list-item", {"NOTE-2": "title: T\ntags:\n  -\n"},
         f"{N2}:4:4: error: tags[0]: has no value (it is empty or null); write one"),
    Case("empty-title-list", {"NOTE-2": "title:\n"},
         f"{N2}:2:7: error: title: has no value (it is empty or null); write one", 0, ("list",)),
    Case("empty-key", {"NOTE-2": "title: T\n: x\n"},
         f"{N2}:3:1: error: invalid YAML: did not find expected key (while parsing a block mapping)"),
    Case("empty-key-explicit", {"NOTE-2": "title: T\n?\n: x\n"}, f"{N2}:3:2: error: a key is missing before ':'; write 'name: value'"),
    # flow mappings and lists where scalars are expected, and the reverse
    Case("flow-map-tags", {"NOTE-2": "title: T\ntags: {x}\n"},
         f"{N2}:3:7: error: tags: input should be a valid list (got dict)"),
    Case("flow-map-title", {"NOTE-2": "title: {x}\n"}, f"{N2}:2:8: error: title: input should be a valid string (got dict)"),
    Case("list-title", {"NOTE-2": "title: [a, b]\n"}, f"{N2}:2:8: error: title: input should be a valid string (got list)"),
    Case("map-in-tags", {"NOTE-2": "title: T\ntags: [{a: b}]\n"},
         f"{N2}:3:8: error: tags[0]: input should be a valid string (got dict)"),
    Case("complex-key", {"NOTE-2": "title: T\n? [a]\n: 1\n"},
         f"{N2}:3:3: error: keys must be plain words (no lists, mappings or '<<' merges as keys)"),
    # explicit tags, of every kind, on every kind of node
    Case("tag-int", {"NOTE-2": "title: T\nversion: !!int abc\n"}, f"{N2}:3:10: error: explicit tag !!int on a value {TAG_HINT}"),
    Case("tag-int-good", {"NOTE-2": "title: T\nversion: !!int 3\n"}, f"{N2}:3:10: error: explicit tag !!int on a value {TAG_HINT}"),
    Case("tag-bool", {"NOTE-2": "title: T\nstatus_note: !!bool maybe\n"},
         f"{N2}:3:14: error: explicit tag !!bool on a value {TAG_HINT}"),
    Case("tag-str", {"NOTE-2": "title: !!str T\n"}, f"{N2}:2:8: error: explicit tag !!str on a value {TAG_HINT}"),
    Case("tag-float", {"NOTE-2": "title: T\nversion: !!float x\n"}, f"{N2}:3:10: error: explicit tag !!float on a value {TAG_HINT}"),
    Case("tag-null", {"NOTE-2": "title: T\nstatus_note: !!null x\n"},
         f"{N2}:3:14: error: explicit tag !!null on a value {TAG_HINT}"),
    Case("tag-timestamp", {"NOTE-2": "title: T\ncreated: !!timestamp 2026-01-01\n"},
         f"{N2}:3:10: error: explicit tag !!timestamp on a value {TAG_HINT}"),
    Case("tag-binary", {"NOTE-2": "title: !!binary aGVsbG8=\n"}, f"{N2}:2:8: error: explicit tag !!binary on a value {TAG_HINT}"),
    Case("tag-custom", {"NOTE-2": "title: !foo T\n"}, f"{N2}:2:8: error: explicit tag !foo on a value {TAG_HINT}"),
    Case("tag-verbatim", {"NOTE-2": "title: !<tag:x.org,2000:y> T\n"},
         f"{N2}:2:8: error: explicit tag !<tag:x.org,2000:y> on a value {TAG_HINT}"),
    Case("tag-bare", {"NOTE-2": "title: ! T\n"}, f"{N2}:2:8: error: explicit tag ! on a value {TAG_HINT}"),
    Case("tag-bare-quoted", {"NOTE-2": "title: &t ! 'T'\n"}, f"{N2}:2:8: error: explicit tag ! on a value {TAG_HINT}"),
    Case("tag-bare-list", {"NOTE-2": "title: T\ntags: ! [a]\n"}, f"{N2}:3:7: error: explicit tag ! on a list {TAG_HINT}"),
    Case("tag-on-list", {"NOTE-2": "title: T\ntags: !!set [a]\n"}, f"{N2}:3:7: error: explicit tag !!set on a list {TAG_HINT}"),
    Case("tag-on-block-list", {"NOTE-2": "title: T\ntags: !!seq\n  - a\n"},
         f"{N2}:3:7: error: explicit tag !!seq on a list {TAG_HINT}"),
    Case("tag-on-map", {"LIT-2": 'title: P\nreference: !!omap {authors: ["A"], year: 2021, title: P}\n'},
         f"record/literature/LIT-2.yaml:3:12: error: explicit tag !!omap on a mapping {TAG_HINT}"),
    Case("tag-on-key", {"NOTE-2": "!!str title: T\n"}, f"{N2}:2:1: error: explicit tag !!str on a value {TAG_HINT}"),
    Case("tag-python", {"NOTE-2": "title: !!python/object/apply:os.system [echo]\n"},
         f"{N2}:2:8: error: explicit tag !!python/object/apply:os.system on a list {TAG_HINT}"),
    Case("tag-behind-alias", {"NOTE-2": "title: T\nstatus_note: &a !!int 1\nbody: *a\n"},
         f"{N2}:3:14: error: explicit tag !!int on a value {TAG_HINT}"),
    # numbers of any size
    Case("int-5000-digits", {"NOTE-2": "title: T\nversion: " + "9" * 5000 + "\n"},
         f"{N2}:3:10: error: an integer of 5000 digits is over the limit of 100 digits; quote it if it is text"),
    Case("hex-5000-digits", {"NOTE-2": "title: T\nversion: 0x" + "f" * 5000 + "\n"},
         f"{N2}:3:10: error: an integer of 5002 digits is over the limit of 100 digits; quote it if it is text"),
    Case("int-in-params", {"THEORY-2": "statement: S\n" + CHECK % ("1" * 4400)},
         f"{T2}:7:17: error: an integer of 4400 digits is over the limit of 100 digits; quote it if it is text"),
    Case("hex-empty-digits", {"NOTE-2": "title: T\nversion: 0x_\n"},
         f"{N2}:3:10: error: '0x_' is not a valid number; quote it if it is text"),
    Case("binary-no-digits", {"NOTE-2": "title: T\nversion: 0b__\n"}, f"{N2}:3:10: error: '0b__' is not a valid number; quote it if it is text"),
    Case("float-huge", {"NOTE-2": "title: T\nversion: 1.0e+99999\n"},
         f"{N2}:3:10: error: version: input should be a finite number (got inf)"),
    # nesting of any depth
    Case("nested-500-flow", {"NOTE-2": "title: T\ntags: " + deep(500) + "\n"},
         f"{N2}:3:107: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    Case("nested-500-params", {"THEORY-2": "statement: S\n" + CHECK % deep(500, "{a: ", "}")},
         f"{T2}:7:405: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    Case("nested-200k", {"NOTE-2": "title: T\ntags: " + deep(200_000) + "\n"},
         f"{N2}:3:107: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    # ... past the thousand levels some libyaml refuses by itself (PyYAML 6.0.4's), in either style
    Case("nested-1200-flow", {"NOTE-2": "title: T\ntags: " + deep(1200) + "\n"},
         f"{N2}:3:107: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    Case("nested-1200-block", {"NOTE-2": "title: T\ntags:\n" + "- " * 1200 + "x\n"},
         f"{N2}:4:201: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    Case("nested-block", {"NOTE-2": "title: T\nbody:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 120)) + "\n"},
         f"{N2}:104:203: error: values are nested more than 100 levels deep here; an entry's data is shallow, flatten it"),
    Case("nested-aliases", {"NOTE-2": "title: T\na: &a [[[[[[[[[[x]]]]]]]]]]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True))},
         f"{N2}:3:14: error: refused: the file expands to more than 50000 values (an alias bomb?); entries are small, "
         "write values out instead of multiplying aliases"),
    # any Unicode; ids are ASCII
    Case("unicode-title", {"NOTE-2": "title: \"Größe \\u202e 🧪 \\u0000 𝟏\"\n"}, "", 0),
    Case("math-digits-id", {"NOTE-𝟏𝟏𝟖𝟗": "title: T\n"},
         "record/notes/NOTE-𝟏𝟏𝟖𝟗.yaml:1:5: error: id: 'NOTE-\\U0001d7cf\\U0001d7cf\\U0001d7d6\\U0001d7d7' is not an id; "
         "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9, e.g. NOTE-1"),
    Case("arabic-indic-id", {"NOTE-١٢": "title: T\n"},
         "record/notes/NOTE-١٢.yaml:1:5: error: id: 'NOTE-\\u0661\\u0662' is not an id; "
         "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9, e.g. NOTE-1"),
    Case("fullwidth-id", {"ＮＯＴＥ-3": "title: T\n"},
         "record/notes/ＮＯＴＥ-3.yaml:1:5: error: id: '\\uff2e\\uff2f\\uff34\\uff25-3' is not an id; "
         "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9, e.g. NOTE-1"),
    Case("escape-in-id", {"NOTE-2": b'id: "NOTE-2\\e[31m"\ntitle: T\n'},
         f"{N2}:1:5: error: id: 'NOTE-2\\x1b[31m' is not an id; "
         "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9, e.g. NOTE-1"),
    Case("nul-byte", {"NOTE-2": b"id: NOTE-2\ntitle: T\x00\n"},
         f"{N2}:2:9: error: invalid YAML: the control character '\\x00' is not allowed in YAML; remove it or write it "
         "as an escape in a double-quoted string"),
    Case("del-byte-crlf", {"NOTE-2": b"id: NOTE-2\r\ntitle: \xc3\xa9\x7f\r\n"},
         f"{N2}:2:9: error: invalid YAML: the control character '\\x7f' is not allowed in YAML; remove it or write it "
         "as an escape in a double-quoted string"),
    Case("not-utf8", {"NOTE-2": b"id: NOTE-2\ntitle: caf\xe9\n"}, f"{N2}:2:11: error: byte 0xe9 is not UTF-8; save the file as UTF-8"),
    Case("lone-surrogate-escape", {"NOTE-2": 'title: "a\\ud800b"\n'},
         f"{N2}:2:12: error: invalid YAML: found invalid Unicode character escape code (while parsing a quoted scalar)"),
    Case("escape-in-field-name", {"NOTE-2": 'title: T\n"x\\e]8;;http://e\\a": 1\n'},
         f"{N2}:3:1: error: x\\x1b]8;;http://e\\x07: unknown field 'x\\x1b]8;;http://e\\x07'; known fields: id, kind, "
         "title, status, status_note, version, tags, created, updated, cites, body"),
]


CASCADE = [
    Case("failed-entry-cited", {"THEORY-2": "statement: [S\n", "NOTE-2": "title: T\ncites: [{id: THEORY-2, as: source}]\n"},
         f"{T2}:3:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"),
    Case("failed-entry-mentioned", {"THEORY-2": "statement: [S\n", "NOTE-2": "title: T\nbody: See THEORY-2.\n"},
         f"{T2}:3:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"),
    Case("failed-schema-cited", {"NOTE-3": "titel: T\n", "NOTE-2": "title: T\ncites: [{id: NOTE-3, as: paper}]\n"},
         "record/notes/NOTE-3.yaml:1:1: error: title: missing required field 'title'"),
    Case("error-before-warning", {"LIT-2": LIT.replace("The paper.", "See NOTE-99."), "NOTE-2": "title: {x}\n"},
         f"{N2}:2:8: error: title: input should be a valid string (got dict)"),
    Case("failed-entry-list", {"THEORY-2": "statement: [S\n", "NOTE-2": "title: T\ncites: [{id: THEORY-2, as: source}]\n"},
         f"{T2}:3:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)", 0, ("list",)),
]

USES = "cites: [{id: %s, as: uses}]\n"
CYCLES = [
    Case("uses-cycle-two", {"THEORY-2": "statement: S\n" + USES % "THEORY-3", "THEORY-3": "statement: S\n" + USES % "THEORY-2"},
         f"{T2}:3:9: error: cites[0].id: 'uses' cycle: THEORY-2 -> THEORY-3 -> THEORY-2; a claim cannot rely on itself, "
         "remove one of these citations or make it another relation"),
    Case("uses-cycle-three", {"THEORY-988": "statement: S\n" + USES % "THEORY-1342",
                              "THEORY-1342": "statement: S\n" + USES % "THEORY-977",
                              "THEORY-977": "statement: S\ncites: [{id: LIT-1, as: source}, {id: THEORY-988, as: uses}]\n"},
         "record/theory/THEORY-977.yaml:3:34: error: cites[1].id: 'uses' cycle: THEORY-977 -> THEORY-988 -> "
         "THEORY-1342 -> THEORY-977; a claim cannot rely on itself, remove one of these citations or make it another "
         "relation"),
    Case("uses-cycle-status", {"THEORY-2": "statement: S\n" + USES % "THEORY-3", "THEORY-3": "statement: S\n" + USES % "THEORY-2"},
         f"{T2}:3:9: error: cites[0].id: 'uses' cycle: THEORY-2 -> THEORY-3 -> THEORY-2; a claim cannot rely on itself, "
         "remove one of these citations or make it another relation", 0, ("status",)),
    Case("uses-cycle-verify", {"THEORY-2": "statement: S\n" + USES % "THEORY-3", "THEORY-3": "statement: S\n" + USES % "THEORY-2"},
         f"{T2}:3:9: error: cites[0].id: 'uses' cycle: THEORY-2 -> THEORY-3 -> THEORY-2; a claim cannot rely on itself, "
         "remove one of these citations or make it another relation", 1, ("verify",)),
]

CASES = SHAPES + CASCADE + CYCLES


def build(root: Path, case: Case) -> ProjectBuilder:
    project = ProjectBuilder(root)
    project.add("LIT-1", LIT)
    for entry_id, content in case.files.items():
        folder = case.folders.get(entry_id)
        if isinstance(content, bytes):
            project.add(entry_id, raw=content, folder=folder)
        else:
            project.add(entry_id, content, folder=folder)
    return project


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_any_shape_gives_one_clear_message_and_changes_nothing(tmp_path: Path, case: Case) -> None:
    project = build(tmp_path, case)
    before = snapshot(tmp_path)
    outcome = invoke(*case.argv, "--root", str(tmp_path))
    assert (outcome.code, outcome.first) == (case.code, case.first)
    # the record, the checks and the pages as they were; only the local cache (not committed)
    # may hold what loading each entry file gave, and what a clean status or verify found, to
    # give it again while nothing changes
    assert [p for p in changed(before, snapshot(tmp_path)) if not p.startswith(".recordtool-cache")] == []
    kept = {p.relative_to(tmp_path / ".recordtool-cache").parts[0] for p in tmp_path.glob(".recordtool-cache/*")}
    assert kept <= {"store.sqlite", "store.sqlite-wal", "store.sqlite-shm"} or case.argv[0] in ("status", "verify")
    assert project.root == tmp_path


def test_a_failed_entry_is_reported_once_with_its_consequences_after_it(project: ProjectBuilder) -> None:
    project.add("LIT-1", LIT)
    project.add("THEORY-2", "statement: [S\n")
    project.add("NOTE-2", "title: T\ncites: [{id: THEORY-2, as: source}]\nbody: |\n  THEORY-2 again, and THEORY-2.\n")
    project.add("NOTE-3", "title: T\nbody: After THEORY-2, see NOTE-99.\n")
    outcome = invoke("validate", "--root", str(project.root))
    assert outcome.err.splitlines() == [
        f"{T2}:3:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)",
        f"{N2}:3:9: warning: cites[0].id: THEORY-2 could not be loaded, see above ({T2}) "
        "(cited or mentioned in 3 more places)",
        "record/notes/NOTE-3.yaml:3:1: warning: body: NOTE-99 is mentioned but not in the record; add it or write it "
        "without its id",
    ]
    assert "not in the record" not in outcome.err.replace("NOTE-99 is mentioned but not in the record", "")
    graph = open_project(root=project.root).graph
    assert "THEORY-2" not in graph.dangling  # it exists: not a wanted entry


# Random YAML of any shape, then broken at random: loading gives an entry or located problems.
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**90, max_value=10**200),
    st.floats(allow_nan=True), st.text(max_size=20), st.sampled_from(["", "~", "NOTE-1", "THEORY-2", "2026-10-26",
                                                                      "< 1e-9", "checks.m:f", "yes", "0x1f"]))
_KEYS = st.sampled_from(["id", "kind", "title", "status", "status_note", "version", "tags", "created", "updated",
                         "cites", "body", "reference", "statement", "checks", "as", "name", "run", "expect",
                         "params", "controls", "authors", "year"]) | st.text(max_size=8)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
                       max_leaves=25)
_INSERTS = st.sampled_from(["!!int ", "!!str ", "!foo ", "! ", "!!set ", "&a ", "*a", "[", "]", "{", "}", ": ", "- ",
                            "\n  ", "\n", "? ", "#", "'", '"', "|", ">", "%", "@", "\t", "\x1b[31m", "\u202e", "\x00",
                            "<<: ", "9" * 200, "[" * 150])


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.dictionaries(_KEYS, _VALUES, max_size=8), flow=st.booleans(),
       edits=st.lists(st.tuples(st.integers(min_value=0), _INSERTS, st.integers(0, 3)), max_size=4),
       folder=st.sampled_from(["literature", "notes", "theory"]))
def test_random_yaml_loads_or_gives_located_problems(tmp_path_factory: pytest.TempPathFactory, data: dict[str, object],
                                                    flow: bool, edits: list[tuple[int, str, int]], folder: str) -> None:
    root = tmp_path_factory.mktemp("shape")
    ProjectBuilder(root)
    prefix = {"literature": "LIT", "notes": "NOTE", "theory": "THEORY"}[folder]
    text = yaml.safe_dump({"id": f"{prefix}-1", **data}, default_flow_style=flow, allow_unicode=True)
    for at, insert, cut in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut:]
    path = root / "record" / folder / f"{prefix}-1.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    config = load_config(root)
    kind = config.kinds[prefix]
    try:
        source = read_source(path)
    except SourceError as exc:
        assert exc.line >= 1 and exc.col >= 1 and exc.message
        return
    entry, _places, problems = load_entry(path, kind, config, config.relative(path), source)
    assert entry is not None or problems
    for problem in problems:
        assert problem.line >= 1 and problem.col >= 1 and problem.message, problem
    if entry is not None:  # a valid entry loads again and shows in the terminal
        project = open_project(root=root)
        assert entry.id in project.record.entries or project.errors
