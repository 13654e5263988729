"""Loading: every kind of bad input gives one clear problem with its place."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from recordtool.record.load import id_sort_key
from recordtool.record.problems import Problem
from recordtool.record.project import open_project
from tests.conftest import EveryWorker, ProjectBuilder, share_with_a_pool


def errors_of(root: Path) -> list[str]:
    project = open_project(root=root)
    return [str(p) for p in project.problems if p.severity == "error"]


GOOD_NOTE = "title: T\n"

# (file id, folder or None, file content after "id: ..." or raw bytes, the exact problem)
CASES: list[tuple[str, str | None, str | bytes, str]] = [
    ("NOTE-1", None, b"id: [NOTE-1\n",
     "record/notes/NOTE-1.yaml:2:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"),
    ("NOTE-1", None, b"",
     "record/notes/NOTE-1.yaml:1:1: error: file is empty; an entry is a YAML mapping that starts with 'id: ...'"),
    ("NOTE-1", None, b"# only a comment\n\n",
     "record/notes/NOTE-1.yaml:1:1: error: file is empty; an entry is a YAML mapping that starts with 'id: ...'"),
    ("NOTE-1", None, b"- id: NOTE-1\n- title: T\n",
     "record/notes/NOTE-1.yaml:1:1: error: expected a mapping of fields (id: ..., title: ...) but found a list"),
    ("NOTE-1", None, b"just words\n",
     "record/notes/NOTE-1.yaml:1:1: error: expected a mapping of fields (id: ..., title: ...) but found a single value ('just words')"),
    ("NOTE-1", None, "title: T\ntitel: U\n",
     "record/notes/NOTE-1.yaml:3:1: error: titel: unknown field 'titel'; did you mean 'title'?"),
    ("NOTE-1", None, "status: active\n",
     "record/notes/NOTE-1.yaml:1:1: error: title: missing required field 'title'"),
    ("LIT-1", None, "title: T\nreference: {authors: [\"A, B.\"], title: T}\n",
     "record/literature/LIT-1.yaml:3:12: error: reference.year: missing required field 'year' in reference"),
    ("NOTE-1", None, "title: T\nversion: two\n",
     "record/notes/NOTE-1.yaml:3:10: error: version: input should be a valid integer, unable to parse string as an integer (got 'two')"),
    ("NOTE-1", None, "title: T\ntags: induction\n",
     "record/notes/NOTE-1.yaml:3:7: error: tags: input should be a valid list (got 'induction')"),
    ("NOTE-1", None, "title: T\nstatus: actve\n",
     "record/notes/NOTE-1.yaml:3:9: error: status: 'actve' is not one of: active, superseded, retracted, draft; did you mean 'active'?"),
    ("NOTE-2", None, b"id: NOTE-3\ntitle: T\n",
     "record/notes/NOTE-2.yaml:1:5: error: id: id NOTE-3 does not match the file name NOTE-2.yaml; rename the file to NOTE-3.yaml or set id: NOTE-2"),
    ("LIT-5", "notes", GOOD_NOTE,
     "record/notes/LIT-5.yaml:1:5: error: id: LIT-5 has prefix LIT, but notes/ holds note entries (NOTE-...); move it to record/literature/ or give it a NOTE- id"),
    ("NOTE-1", None, "title: T\nkind: theory\n",
     "record/notes/NOTE-1.yaml:3:7: error: kind: kind 'theory' does not match the folder notes/; write kind: note (or leave it out), or move the file to record/theory/ with a THEORY- id"),
    ("NOTE-1", None, "title: T\ncites:\n  - {id: LIT-1, as: sorce}\n",
     "record/notes/NOTE-1.yaml:4:21: error: cites[0].as: unknown relation 'sorce'; did you mean 'source'?"),
    ("NOTE-1", None, "title: T\ncites:\n  - {id: LIT-404, as: paper}\n",
     "record/notes/NOTE-1.yaml:4:5: error: cites[0].id: cites LIT-404, which is not in the record"),
    ("NOTE-1", None, "title: T\ncites:\n  - {id: NOTE-1, as: paper}\n",
     "record/notes/NOTE-1.yaml:4:10: error: cites[0].id: NOTE-1 cites itself; remove this citation"),
    ("NOTE-1", None, "title: T\ncreated: 2026-13-40\n",
     "record/notes/NOTE-1.yaml:3:10: error: created: '2026-13-40' is not a date; write YYYY-MM-DD, e.g. 2026-10-26"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: checks.m:f\n    expect: {err: \"=< 1e-9\"}\n",
     "record/theory/THEORY-1.yaml:6:19: error: checks[0].expect.err: '=< 1e-9' is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', '== 21' or 'between 0.2 and 0.6' (did you mean '<='?)"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: checks.m:f\n    expect: {err: \"between 3 and 1\"}\n",
     "record/theory/THEORY-1.yaml:6:19: error: checks[0].expect.err: 'between 3 and 1': the lower bound is above the upper; write 'between 1 and 3'"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: ../x:y\n    expect: {err: \"< 1\"}\n",
     "record/theory/THEORY-1.yaml:5:10: error: checks[0].run: '../x:y' is a path; name a function in a module inside checks/ as 'checks.module:function'"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: /tmp/evil.py:f\n    expect: {err: \"< 1\"}\n",
     "record/theory/THEORY-1.yaml:5:10: error: checks[0].run: '/tmp/evil.py:f' is a path; name a function in a module inside checks/ as 'checks.module:function'"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: os:system\n    expect: {err: \"< 1\"}\n",
     "record/theory/THEORY-1.yaml:5:10: error: checks[0].run: 'os:system' is outside checks/; checks run only code inside the record's checks package: write 'checks.module:function'"),
    ("THEORY-1", None,
     "statement: S\nchecks:\n  - name: c\n    run: checks.m:f\n    expect: {}\n",
     "record/theory/THEORY-1.yaml:6:13: error: checks[0].expect: is empty; give at least 1"),
    ("NOTE-1", None, b"id: NOTE-1\ntitle: caf\xe9\n",
     "record/notes/NOTE-1.yaml:2:11: error: byte 0xe9 is not UTF-8; save the file as UTF-8"),
    ("NOTE-1", None, b"id: NOTE-1\ntitle: T\ntitle: U\n",
     "record/notes/NOTE-1.yaml:3:1: error: 'title' appears twice in the same mapping; keep one"),
    ("NOTE-1", None, b"id: NOTE-1\ntitle: !!python/object:os.system T\n",
     "record/notes/NOTE-1.yaml:2:8: error: explicit tag !!python/object:os.system on a value is not allowed; "
     "remove it (the schema types every field; quote a value to keep it as text)"),
    ("NOTE-1", None, "title: T\ntags: [Bad Tag]\n",
     "record/notes/NOTE-1.yaml:3:7: error: tags: 'Bad Tag' is not a tag; use lowercase words joined by dashes, e.g. induction-heads"),
]


@pytest.mark.parametrize(("entry_id", "folder", "content", "expected"), CASES,
                         ids=[f"{i}-{c[3].split(': ', 2)[-1][:30]}" for i, c in enumerate(CASES)])
def test_bad_input_gives_one_problem_with_its_place(
    project: ProjectBuilder, entry_id: str, folder: str | None, content: str | bytes, expected: str
) -> None:
    project.add("LIT-1", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}')
    if isinstance(content, bytes):
        project.add(entry_id, folder=folder, raw=content)
    else:
        project.add(entry_id, content, folder=folder)
    assert errors_of(project.root) == [expected]


def test_at_least_twenty_bad_inputs_are_covered() -> None:
    assert len(CASES) >= 20


def test_duplicate_ids_are_reported_once_with_both_files(project: ProjectBuilder) -> None:
    project.add("NOTE-1", GOOD_NOTE)
    project.add("NOTE-1", GOOD_NOTE, folder="notes/old")
    assert errors_of(project.root) == [
        "record/notes/old/NOTE-1.yaml:1:5: error: id: duplicate id NOTE-1, also in record/notes/NOTE-1.yaml; "
        "ids are unique: rename one file and its id"
    ]


def test_alias_bomb_is_refused_fast(project: ProjectBuilder) -> None:
    levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    project.add("NOTE-1", raw=("\n".join(levels) + "\n").encode())
    start = time.perf_counter()
    found = errors_of(project.root)
    # expanded, it would be 9**9 values (minutes and gigabytes): a bound far above a refusal on a busy
    # machine still tells them apart (how fast loading is, is the benchmarks' to say)
    assert time.perf_counter() - start < 30.0
    assert found == [
        "record/notes/NOTE-1.yaml:1:8: error: refused: the file expands to more than 50000 values "
        "(an alias bomb?); entries are small, write values out instead of multiplying aliases"
    ]


def test_a_file_of_several_megabytes_is_refused_without_parsing(project: ProjectBuilder) -> None:
    project.add("NOTE-1", raw=b"id: NOTE-1\ntitle: T\nbody: |\n" + b"  words words words\n" * 300_000)
    assert errors_of(project.root) == [
        "record/notes/NOTE-1.yaml: error: file is 6.0 MB, over the 1 MB limit for one entry; "
        "keep data out of the record and link to it instead"
    ]


def test_an_id_that_does_not_match_its_file_gets_only_fixes_that_are_right(project: ProjectBuilder) -> None:
    """Renaming the file is offered only for an id of the folder's kind, setting the id only
    for a file named after one: never 'set id: NOTE-5 copy' or a rename to another kind's id."""
    project.add("NOTE-2", raw=b"id: LIT-3\ntitle: T\n")
    (project.root / "record" / "notes" / "NOTE-5 copy.yaml").write_text("id: NOTE-5\ntitle: T\n", encoding="utf-8")
    (project.root / "record" / "notes" / "draft.yaml").write_text("id: NOTE-6\ntitle: T\n", encoding="utf-8")
    (project.root / "record" / "notes" / "copy.yaml").write_text("id: LIT-7\ntitle: T\n", encoding="utf-8")
    mismatched = [e.split(": error: id: ")[1] for e in errors_of(project.root) if "does not match" in e]
    assert mismatched == [
        "id LIT-3 does not match the file name NOTE-2.yaml; set id: NOTE-2",
        "id NOTE-5 does not match the file name NOTE-5 copy.yaml; rename the file to NOTE-5.yaml",
        "id LIT-7 does not match the file name copy.yaml; give the entry an id such as NOTE-1 and name its file "
        "after it",
        "id NOTE-6 does not match the file name draft.yaml; rename the file to NOTE-6.yaml",
    ]


def test_every_problem_of_a_record_is_collected(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\ntitel: U\n")
    project.add("NOTE-2", raw=b"")
    project.add("NOTE-3", "title: T\ncites: [{id: NOTE-9, as: paper}]\n")
    assert [p.split(": error: ")[0] for p in errors_of(project.root)] == [
        "record/notes/NOTE-1.yaml:3:1",
        "record/notes/NOTE-2.yaml:1:1",
        "record/notes/NOTE-3.yaml:3:9",
    ]


def test_stray_files_are_warned_about_and_ignored(project: ProjectBuilder) -> None:
    project.add("NOTE-1", GOOD_NOTE)
    (project.root / "record" / "notes" / "README.md").write_text("hi", encoding="utf-8")
    (project.root / "record" / "notes" / "NOTE-2.Yml").write_text(GOOD_NOTE, encoding="utf-8")
    (project.root / "record" / "misc").mkdir()
    result = open_project(root=project.root)
    assert [str(p) for p in result.problems] == [
        "record/misc: warning: not a kind folder of the record (literature, notes, theory); it is ignored",
        "record/notes/NOTE-2.Yml: warning: not a YAML entry (.yaml or .yml, in lower case); it is ignored: rename "
        "it NOTE-2.yml",
        "record/notes/README.md: warning: not a YAML entry (.yaml or .yml); it is ignored",
    ]
    assert list(result.record.entries) == ["NOTE-1"]


@pytest.mark.parametrize(("pages", "cache", "stray"), [
    ("record/pages", None, ["record/misc", "record/site.txt"]),
    ("record/pages", "record/cache", ["record/misc", "record/site.txt"]),  # the cache in the record folder too
    ("record/site/out", None, ["record/misc"]),
    ("out/pages", None, ["record/misc"]),
    ("out/pages", "record/notes/cache", ["record/misc"]),  # in a kind folder (read all the same)
])
def test_what_recordtool_writes_into_the_record_folder_is_not_stray(project: ProjectBuilder, pages: str,
                                                                    cache: str | None, stray: list[str]) -> None:
    """The verdicts, the pages, the cache and, beside the pages, the site's configuration and
    the folder MkDocs builds into are recordtool's own, wherever they go: never read as entries
    or warned about as stray (nor the folder that holds them); anything else beside them is."""
    pyproject = project.root / "pyproject.toml"
    cached = f'\ncache = "{cache}"' if cache else ""
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + f'pages = "{pages}"{cached}\n', encoding="utf-8")
    project.add("NOTE-1", GOOD_NOTE)
    config = open_project(root=project.root).config
    beside = config.pages.parent
    for folder in (config.verdicts, config.pages, config.cache, beside / f"{config.pages.name}-site"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "x.md").write_text("x", encoding="utf-8")
    (beside / "mkdocs.yml").write_text("# Written by `recordtool render --site`\n", encoding="utf-8")
    (beside / "site.txt").write_text("not ours", encoding="utf-8")
    (project.root / "record" / "misc").mkdir()
    opened = open_project(root=project.root)
    assert [str(p).split(": warning: ")[0] for p in opened.problems] == stray
    assert list(opened.record.entries) == ["NOTE-1"]


def test_places_are_where_each_part_is(project: ProjectBuilder) -> None:
    """An entry's places say where its id, each citation and each prose field start."""
    for n in (1, 2):
        project.add(f"NOTE-{n}", "title: T\ncites: [{id: NOTE-3, as: see}]\nbody: |\n  Text.\n")
    project.add("NOTE-3", "title: Other\n\nbody: Text.\n")
    places = open_project(root=project.root).record.places
    one, three = places["NOTE-1"], places["NOTE-3"]
    assert (one.path, one.id, one.cites, one.prose) == ("record/notes/NOTE-1.yaml", (1, 5), ((3, 9),), (("body", 5),))
    assert three.prose == (("body", 4),) and three.cites == ()
    assert one.digest == hashlib.blake2b(project.path("NOTE-1").read_bytes(), digest_size=16).hexdigest()


def test_ids_sort_by_prefix_then_number() -> None:
    assert sorted(["THEORY-1342", "THEORY-988", "LIT-2", "LIT-10"], key=id_sort_key) == [
        "LIT-2", "LIT-10", "THEORY-988", "THEORY-1342"]


def test_problem_formats_place_and_field() -> None:
    problem = Problem("record/theory/THEORY-988.yaml", 12, 5, "unknown relation 'x'", field="cites[0].as")
    assert str(problem) == "record/theory/THEORY-988.yaml:12:5: error: cites[0].as: unknown relation 'x'"


@pytest.mark.parametrize("jobs", [2, 3])
def test_reading_with_a_pool_gives_the_same_record(project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, jobs: int) -> None:
    import recordtool.record.load as load

    for n in range(1, 9):
        project.add(f"NOTE-{n}", f"title: Note {n}\nbody: |\n  Line one.\n  Mentions NOTE-{n + 1}.\n")
    project.add("NOTE-20", "title: T\ntitel: U\n")
    project.add("NOTE-21", raw=b"id: [unclosed\n")
    project.add("NOTE-22", raw=b"\xff\xfe")
    serial = open_project(root=project.root, jobs=1)
    share_with_a_pool(monkeypatch, load)
    reader = EveryWorker(load.load_file, jobs, tmp_path / "calls")
    monkeypatch.setattr(load, "load_file", reader)
    shared = open_project(root=project.root, jobs=jobs)
    assert len(reader.pids()) == jobs and os.getpid() not in reader.pids()  # every worker read files
    assert shared.record.entries == serial.record.entries
    assert shared.record.places == serial.record.places
    assert [str(p) for p in shared.problems] == [str(p) for p in serial.problems]
    assert len(serial.errors) == 3


def test_a_named_pipe_in_the_record_is_reported_not_waited_on(project: ProjectBuilder) -> None:
    project.add("NOTE-1", GOOD_NOTE)
    os.mkfifo(project.root / "record" / "notes" / "NOTE-2.yaml")
    result = open_project(root=project.root)
    assert [str(p) for p in result.errors] == [
        "record/notes/NOTE-2.yaml: error: not a regular file; an entry is a YAML file"]
    assert list(result.record.entries) == ["NOTE-1"]


CLAUSED = """\
statement: A and B and C.
clauses:
  first-part: A holds.
  second-part: B holds.
  third: C holds.
checks:
  - name: c
    run: checks.m:f
    expect:
      a: {is: "> 1", clause: frist-part}
      b: "< 2"
      c: {is: "> 1", clause: [second-part, zzz], null: c}
      d: {is: "> 1"}
    observe:
      e: second-prt
      a: first-part
"""


def test_clause_problems_have_places_and_hints(project: ProjectBuilder) -> None:
    project.add("THEORY-1", CLAUSED)
    problems = [str(p) for p in open_project(root=project.root).problems if "THEORY-1" in p.path]
    assert problems == [  # the errors first, then the warnings, each in file order
        "record/theory/THEORY-1.yaml:11:30: error: checks[0].expect.a.clause: unknown clause 'frist-part'; "
        "did you mean 'first-part'?",
        "record/theory/THEORY-1.yaml:12:10: error: checks[0].expect.b: a plain comparison in a claim of 3 clauses; "
        'say which clause it tests: b: {is: "< 2", clause: first-part} (clauses: first-part, second-part, third)',
        "record/theory/THEORY-1.yaml:13:30: error: checks[0].expect.c.clause: unknown clause 'zzz'; "
        "the claim's clauses: first-part, second-part, third",
        "record/theory/THEORY-1.yaml:13:56: error: checks[0].expect.c.null: 'c' is its own null; name the metric "
        "the check returns for the null hypothesis, e.g. c_null",
        "record/theory/THEORY-1.yaml:14:10: error: checks[0].expect.d: an expectation without 'clause:' in a claim "
        'of 3 clauses; say which clause it tests: d: {is: "> 1", clause: first-part} (clauses: first-part, '
        "second-part, third)",
        "record/theory/THEORY-1.yaml:16:10: error: checks[0].observe.e: unknown clause 'second-prt'; "
        "did you mean 'second-part'?",
        "record/theory/THEORY-1.yaml:17:10: error: checks[0].observe.a: 'a' is both expected and observed; keep one",
        "record/theory/THEORY-1.yaml:6:10: warning: clauses.third: clause 'third' is tested by no expectation and "
        "observed by no check: it stays untested and the claim cannot be verified; name it in an expectation's "
        "'clause:' or under 'observe:'",
    ]


def test_clauses_with_no_check_are_warned_about(project: ProjectBuilder) -> None:
    """Issue 65: a claim with clauses and ``checks: []`` says that none of them can be verified."""
    project.add("THEORY-1", "statement: A. B.\nclauses:\n  a: A.\n  b: B.\nchecks: []\n")
    project.add("THEORY-2", "statement: A. B.\nclauses:\n  a: A.\n  b: B.\n")
    project.add("THEORY-3", "statement: A.\nchecks: []\n")  # a draft of one clause, as `new` writes it: no warning
    problems = [str(p) for p in open_project(root=project.root).problems if "no check" in p.message]
    assert problems == [
        "record/theory/THEORY-1.yaml:6:9: warning: checks: the claim has 2 clauses and no check: none of them can "
        "be verified; add a check that tests them (docs/checks.md)",
        "record/theory/THEORY-2.yaml:4:3: warning: checks: the claim has 2 clauses and no check: none of them can "
        "be verified; add a check that tests them (docs/checks.md)",
    ]


def test_quorum_above_seeds_is_an_error_at_the_quorum(project: ProjectBuilder) -> None:
    project.add("THEORY-1", "statement: S\nchecks:\n  - name: c\n    run: checks.m:f\n    seeds: 2\n    quorum: 3\n"
                            "    expect: {err: \"< 1\"}\n")
    assert errors_of(project.root) == [
        "record/theory/THEORY-1.yaml:7:13: error: checks[0].quorum: quorum 3 is more than the 2 seeds the check "
        "runs on; give seeds: 3 or more, or a quorum of at most 2"]


def test_plain_expectations_in_a_one_clause_claim_stay_valid(project: ProjectBuilder) -> None:
    project.add("THEORY-1", "statement: S\nchecks:\n  - name: c\n    run: checks.m:f\n"
                            "    expect: {err: \"< 1\", n: {is: \">= 2\", clause: statement}}\n"
                            "    observe: {curve: statement}\n")
    assert [str(p) for p in open_project(root=project.root).problems if "THEORY-1" in p.path] == []


def test_a_claim_with_clauses_and_no_checks_gets_one_warning_not_one_per_clause(project: ProjectBuilder) -> None:
    project.add("THEORY-1", "statement: S\nclauses: {a: A., b: B.}\n")
    assert [p.code for p in open_project(root=project.root).problems if "THEORY-1" in p.path] == ["unchecked-clauses"]


@pytest.mark.parametrize("cache", [False, True])
def test_an_id_whose_own_file_fails_but_that_another_file_holds_has_not_failed(project: ProjectBuilder,
                                                                               cache: bool) -> None:
    """NOTE-5.yaml cannot be loaded, but NOTE-6.yaml holds NOTE-5 (a misnamed file): NOTE-5 is
    in the record, so a citation of it is neither missing nor of an entry that failed."""
    project.add("NOTE-5", raw=b"id: NOTE-5\ntitle: [unclosed\n")
    project.add("NOTE-6", raw=b"id: NOTE-5\ntitle: Misnamed\n")
    project.add("NOTE-7", "title: Citing\ncites: [{id: NOTE-5, as: extends}]\n")
    for _ in range(2 if cache else 1):
        loaded = open_project(root=project.root, cache=cache)
    assert loaded.record.failed == {}
    assert "NOTE-5" in loaded.record.entries
    assert sorted(p.code for p in loaded.problems) == ["id-mismatch", "yaml"]


def test_an_entry_is_named_by_its_title_on_one_line(project: ProjectBuilder) -> None:
    """``Record.title`` gives an entry's title on one line (a claim without a title: its
    statement), the same whether the entry was read now or kept in the store."""
    project.add("LIT-1", 'title: "A  paper\\n  on heads"\nreference: {authors: ["Doe, J."], year: 2021, title: P}\n')
    project.add("NOTE-1", "title: Notes\ncites: [{id: LIT-1, as: paper}]\n")
    project.add("THEORY-1", "statement: >\n  Heads   copy\n  tokens.\ncites: [{id: LIT-1, as: source}]\n")
    for cache in (False, True, True):
        record = open_project(project.root, cache=cache).record
        assert [record.title(i) for i in record.entries] == ["A paper on heads", "Notes", "Heads copy tokens."]
        assert record.claim_ids() == ["THEORY-1"]
        assert record.entries["THEORY-1"].statement == "Heads   copy tokens.\n"
