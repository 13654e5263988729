"""The record commands: exit codes and exact messages."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from recordtool.cli import cli
from tests.conftest import ProjectBuilder


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def clean(project: ProjectBuilder) -> str:
    """What ``validate`` says of the fixture record ``project`` when nothing is wrong: its own
    entry files counted (conftest.minimal_record writes three), never the shipped record's."""
    entries = sorted((project.root / "record").rglob("*.yaml"))
    assert len(entries) == 3, entries
    return f"{len(entries)} entries: 0 errors, 0 warnings\n"


def test_validate_clean_record(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    assert run("validate", "--root", str(project.root)) == (0, clean(project), "")


def test_validate_reports_errors_with_places_and_exits_1(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\ncites: [{id: NOTE-7, as: paper}]\n")
    code, out, err = run("validate", "--root", str(project.root))
    assert code == 1
    assert err == "record/notes/NOTE-1.yaml:3:9: error: cites[0].id: cites NOTE-7, which is not in the record\n"
    assert out == "orphans (nothing links to or from them): NOTE-1\n1 entry: 1 error, 0 warnings\n"


def test_validate_names_the_first_orphans_and_counts_the_rest(project: ProjectBuilder) -> None:
    """A large record has thousands of orphans: one line names the first 20 and counts the others."""
    written = 23  # entries of this fixture record, not of the shipped one
    for n in range(1, written + 1):
        project.add(f"NOTE-{n}", "title: T\n")
    code, out, _ = run("validate", "--root", str(project.root))
    named = ", ".join(f"NOTE-{n}" for n in range(1, 21))
    assert (code, out) == (0, f"orphans (nothing links to or from them): {named} and {written - 20} more\n"
                              f"{written} entries: 0 errors, 0 warnings\n")


def test_validate_strict_makes_warnings_fatal(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\nbody: See THEORY-9.\n")
    warning = ("record/notes/NOTE-1.yaml:3:1: warning: body: THEORY-9 is mentioned but not in the record; "
               "add it or write it without its id\n")
    orphans = "orphans (nothing links to or from them): NOTE-1\n"
    summary = "1 entry: 0 errors, 1 warning\n"
    assert run("validate", "--root", str(project.root)) == (0, orphans + summary, warning)
    assert run("validate", "--strict", "--root", str(project.root)) == (1, orphans + summary, warning)


@pytest.mark.parametrize("command", [["validate"], ["list"], ["show", "NOTE-1"], ["status"], ["verify"]])
def test_a_command_that_reads_the_record_erases_its_progress_line_on_a_terminal(
        command: list[str], project: ProjectBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    from recordtool import meter

    project.add("NOTE-1", "title: T\nbody: See THEORY-9.\n")
    said = run(*command, "--root", str(project.root))  # off a terminal
    shutil.rmtree(project.root / ".recordtool-cache")  # (every entry file read again)
    monkeypatch.setattr(meter, "_is_terminal", lambda _stream: True)
    monkeypatch.setattr(meter, "DELAY_S", 0.0)
    monkeypatch.setattr(meter, "EVERY_S", 0.0)
    code, out, err = run(*command, "--root", str(project.root))
    *drawn, left = err.split(meter.ERASE)
    timeless = re.compile(r"\b\d+(?:\.\d+)? s\b")  # verify's summary says how long it took
    assert (code, timeless.sub("_ s", out), left) == (said[0], timeless.sub("_ s", said[1]), said[2])
    assert [line for line in drawn if line] == [
        "reading the entry files: 0 of 1", "reading the entry files: 1 of 1", "linking the record…"]


def test_validate_json(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\ntitel: x\n")
    code, out, _ = run("validate", "--format", "json", "--root", str(project.root))
    assert code == 1
    assert json.loads(out) == {
        "ok": False, "entries": 0, "errors": 1, "warnings": 0, "orphans": [],
        "problems": [{"path": "record/notes/NOTE-1.yaml", "line": 3, "col": 1, "severity": "error",
                      "code": "unknown-field", "field": "titel", "message": "unknown field 'titel'; did you mean 'title'?"}],
    }


def test_usage_error_exits_2(tmp_path: Path) -> None:
    code, _out, err = run("validate", "--root", str(tmp_path), "--format", "xml")  # (never the shipped record)
    assert code == 2
    assert "Invalid value for '--format': 'xml' is not one of 'text', 'json'." in err


def test_bad_configuration_is_a_usage_error(project: ProjectBuilder) -> None:
    (project.root / "pyproject.toml").write_text("[tool.recordtool]\nrecords = 'x'\n", encoding="utf-8")
    code, _out, err = run("validate", "--root", str(project.root))
    assert code == 2
    assert ("Error: pyproject.toml [tool.recordtool]: unknown key 'records'; known keys: cache, checks, kinds, "
            "pages, record, relations, scheduler, timeout, verdicts") in err


def test_list_filters_by_kind_and_tag(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    code, out, _ = run("list", "--root", str(project.root), "--kind", "theory")
    assert (code, out) == (0, "THEORY-1     theory     active     The paper's claim, drawn from LIT-1.\n")
    code, _out, err = run("list", "--root", str(project.root), "--kind", "poem")
    assert code == 2 and "unknown kind 'poem'; known kinds: literature, note, theory" in err
    project.add("NOTE-2", "title: Tagged\ntags: [attention]\nbody: On heads.\n")
    assert run("list", "--root", str(project.root), "--tag", "attention") == (
        0, "NOTE-2       note       active     Tagged\n", "")
    # a tag no entry has selects nothing, and says so (a typo, most likely); an empty one is no tag
    assert run("list", "--root", str(project.root), "--tag", "atention") == (
        0, "", "no entry has tag 'atention'; did you mean 'attention'?\n")
    assert run("list", "--root", str(project.root), "--tag", "nothing") == (0, "", "no entry has tag 'nothing'\n")
    code, _out, err = run("list", "--root", str(project.root), "--tag", " ")
    assert code == 2 and "Invalid value for --tag: give a tag, e.g. --tag attention" in err


def test_show_prints_inverse_citations_and_backlinks(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    code, out, _ = run("show", "--root", str(project.root), "LIT-1")
    assert code == 0
    assert "  Cited as 'paper' by: NOTE-1 — Notes on the paper\n" in out
    assert "  Cited as 'source' by: THEORY-1 — The paper's claim, drawn from LIT-1.\n" in out
    assert out.endswith("Backlinks (2)\n  NOTE-1 (cites as paper, mentions) — Notes on the paper\n"
                        "  THEORY-1 (cites as source, mentions) — The paper's claim, drawn from LIT-1.\n")


def test_show_a_claim_gives_its_verdict_and_its_title_once(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    code, out, _ = run("show", "--root", str(project.root), "THEORY-1")
    assert code == 0 and out.startswith("THEORY-1\n  verdict:  unchecked\n  file:     record/theory/THEORY-1.yaml\n")
    path = project.path("THEORY-1")
    path.write_text(path.read_text(encoding="utf-8") + "title: The claim, short\n", encoding="utf-8")
    assert run("show", "--root", str(project.root), "THEORY-1")[1].startswith(
        "THEORY-1: The claim, short\n  verdict:  unchecked\n")


def test_show_unknown_id(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    assert run("show", "--root", str(project.root), "NOTE-2") == (1, "", "Error: no entry NOTE-2 in the record\n")
    project.add("LIT-2718", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}')
    assert run("show", "--root", str(project.root), "lit-2781") == (
        1, "", "Error: no entry lit-2781 in the record; did you mean 'LIT-2718'?\n")
    code, out, err = run("show", "--root", str(project.root), " ")
    assert (code, out, err.splitlines()[-1]) == (2, "", "Error: Invalid value for ID: give an entry's id, e.g. LIT-1")


def test_show_hints_at_an_id_of_the_projects_own_kinds(project: ProjectBuilder) -> None:
    """The hint for a blank id names the shape of this project's ids (its first kind), not an
    id of some other record."""
    (project.root / "pyproject.toml").write_text(
        '[tool.recordtool]\n[tool.recordtool.kinds]\nPAPER = { kind = "literature", folder = "papers" }\n',
        encoding="utf-8")
    code, out, err = run("show", "--root", str(project.root), "")
    assert (code, out, err.splitlines()[-1]) == (2, "", "Error: Invalid value for ID: give an entry's id, e.g. PAPER-1")


def test_new_writes_a_valid_entry_with_the_next_id(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    for kind, expected in [("theory", "record/theory/THEORY-2.yaml"), ("literature", "record/literature/LIT-2.yaml"),
                           ("note", "record/notes/NOTE-2.yaml")]:
        assert run("new", "--root", str(project.root), kind, "--title", 'A "quoted" | title') == (0, expected + "\n", "")
        data = yaml.safe_load((project.root / expected).read_text(encoding="utf-8"))
        assert data["title"] == 'A "quoted" | title'
    code, _, err = run("validate", "--root", str(project.root))
    assert code == 0  # valid, but its placeholders are pointed out until replaced
    assert [line.split(": warning: ")[1] for line in err.splitlines() if ": warning: " in line] == [
        "reference.authors[0]: 'Surname, I.' is still the template's placeholder; replace it with your own "
        "(see docs/record.md)",
        "body: still the template's placeholder; replace it with your own (see docs/record.md)",
        "body: still the template's placeholder; replace it with your own (see docs/record.md)",
        "statement: still the template's placeholder; replace it with your own (see docs/record.md)",
        "body: still the template's placeholder; replace it with your own (see docs/record.md)",
    ]
    assert "#    controls:\n#      - {name: untrained, params: {train: false}}\n" in (
        project.root / "record/theory/THEORY-2.yaml").read_text(encoding="utf-8")


def test_new_names_the_records_json_schema_which_schema_prints(minimal: Callable[[], ProjectBuilder]) -> None:
    import jsonschema

    project = minimal()
    assert run("new", "--root", str(project.root), "theory", "--title", "T")[0] == 0
    text = (project.root / "record" / "theory" / "THEORY-2.yaml").read_text(encoding="utf-8")
    assert text.splitlines()[0] == "# yaml-language-server: $schema=../.schema.json"
    code, out, err = run("schema", "--root", str(project.root))
    assert (code, err) == (0, "")
    assert (project.root / "record" / ".schema.json").read_text(encoding="utf-8") == out
    data = json.loads(json.dumps(yaml.safe_load(text), default=str))
    assert list(jsonschema.Draft7Validator(json.loads(out)).iter_errors(data)) == []
    assert run("validate", "--root", str(project.root))[0] == 0  # the schema file is no entry


def test_new_never_overwrites(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\n")
    (project.root / "record" / "notes" / "NOTE-1.yaml").rename(project.root / "record" / "notes" / "NOTE-1.yml")
    project.add("NOTE-1", "title: T\n")  # both NOTE-1.yaml and NOTE-1.yml: next is NOTE-2
    assert run("new", "--root", str(project.root), "note", "--title", "X")[1] == "record/notes/NOTE-2.yaml\n"


def test_new_takes_the_next_id_when_another_process_took_its_own(project: ProjectBuilder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another ``new`` wrote NOTE-1 between this one's choice and its write: NOTE-1 is kept as it
    was, and this one writes NOTE-2."""
    import recordtool.record.template as template

    project.add("NOTE-1", "title: T\n")
    before = project.path("NOTE-1").read_bytes()
    monkeypatch.setattr(template, "next_id", lambda config, kind: "NOTE-1")
    assert run("new", "--root", str(project.root), "note", "--title", "X") == (0, "record/notes/NOTE-2.yaml\n", "")
    assert project.path("NOTE-1").read_bytes() == before


def test_class_9_concurrent_new_makes_one_entry_each(project: ProjectBuilder) -> None:
    """Issue 66, concurrent ``new``: ten at once make ten entries, none overwritten."""
    project.add("NOTE-1", "title: T\n")
    command = [sys.executable, "-m", "recordtool", "new", "--root", str(project.root), "note", "--title"]
    procs = [subprocess.Popen([*command, f"import {n}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(10)]
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 10, outs
    assert sorted(out.strip() for out, _err in outs) == sorted(f"record/notes/NOTE-{n}.yaml" for n in range(2, 12))
    titles = sorted(path.read_text(encoding="utf-8").split("title: ")[1].split("\n")[0]
                    for path in (project.root / "record" / "notes").glob("NOTE-*.yaml") if path.stem != "NOTE-1")
    assert titles == sorted(f'"import {n}"' for n in range(10))


BIBTEX = r"""@article{olsson2022,
  title = {In-context {L}earning and {I}nduction {H}eads},
  author = {Olsson, Catherine and Elhage, Nelson and others},
  journal = {Transformer Circuits Thread},
  year = {2022},
  doi = {10.1234/induction.2022},
  url = {https://transformer-circuits.pub/2022/in-context/}
}
@article{elhage2021, title = {A Mathematical Framework}, author = {Elhage, Nelson}, year = 2021}
"""


def test_new_literature_from_bibtex_then_refused_as_a_duplicate_unless_forced(project: ProjectBuilder) -> None:
    """Issue 65: a BibTeX import makes an entry with its DOI; the same paper again is refused,
    and with --force made, after which ``validate`` names both places."""
    refs = project.root / "refs.bib"
    refs.write_text(BIBTEX, encoding="utf-8")
    new = ["new", "--root", str(project.root), "literature", "--bibtex", str(refs)]
    assert run(*new, "--key", "olsson2022") == (0, "record/literature/LIT-1.yaml\n", "")
    data = yaml.safe_load(project.path("LIT-1").read_text(encoding="utf-8"))
    assert (data["title"], data["reference"]) == ("In-context Learning and Induction Heads", {
        "authors": ["Olsson, C.", "Elhage, N."], "et_al": True, "year": 2022,
        "title": "In-context Learning and Induction Heads", "venue": "Transformer Circuits Thread",
        "url": "https://transformer-circuits.pub/2022/in-context/", "doi": "10.1234/induction.2022"})
    code, out, err = run("validate", "--root", str(project.root))
    assert (code, out) == (0, "orphans (nothing links to or from them): LIT-1\n1 entry: 0 errors, 1 warning\n")
    assert err == ("record/literature/LIT-1.yaml:20:7: warning: body: still the template's placeholder; "
                   "replace it with your own (see docs/record.md)\n")
    refused = (1, "", "Error: LIT-1 (record/literature/LIT-1.yaml) has the same DOI: the work is in the record "
                      "already; cite LIT-1, or give --force to add another entry\n")
    assert run(*new, "--doi", "https://doi.org/10.1234/INDUCTION.2022") == refused
    assert run("new", "--root", str(project.root), "literature", "--title", "In-context learning and induction "
               "heads!") == (refused[0], "", refused[2].replace("same DOI", "same title"))
    assert not project.path("LIT-2").exists()
    assert run(*new, "--key", "olsson2022", "--force") == (0, "record/literature/LIT-2.yaml\n", "")
    code, out, err = run("validate", "--root", str(project.root))
    assert (code, out.splitlines()[-1]) == (0, "2 entries: 0 errors, 3 warnings")
    assert err.splitlines()[1] == ("record/literature/LIT-2.yaml:19:8: warning: reference.doi: the same DOI, URL and "
                                   "title as LIT-1 (record/literature/LIT-1.yaml:19:8); if both are one work, keep "
                                   "one entry and cite it")


def test_new_literature_says_what_bibtex_it_cannot_use(project: ProjectBuilder) -> None:
    refs = project.root / "refs.bib"
    refs.write_text(BIBTEX, encoding="utf-8")
    new = ["new", "--root", str(project.root), "literature"]
    said = {
        (*new, "--bibtex", str(refs)): f"{refs} holds 2 entries; choose one with --key: olsson2022, elhage2021",
        (*new, "--doi", "10.1234/x"): "looking up DOI 10.1234/x needs the network, and recordtool fetches nothing: "
                                      "export the work's BibTeX from your reference manager and give it with "
                                      "--bibtex FILE",
        ("new", "--root", str(project.root), "note", "--bibtex", str(refs)):
            "Invalid value for KIND: only literature has a reference to read from BibTeX, not note",
        tuple(new): 'give the entry a title: --title "..." (or, for literature, --bibtex FILE)',
        (*new, "--key", "olsson2022"): "--key names an entry of a BibTeX file: give the file with --bibtex FILE",
    }
    for args, message in said.items():
        code, out, err = run(*args)
        assert (code, out, err.splitlines()[-1]) == (2, "", f"Error: {message}")
    refs.write_text("@article{broken, title = {In-context\n", encoding="utf-8")
    code, out, err = run(*new, "--bibtex", str(refs))
    assert (code, out, err.splitlines()[-1]) == (
        2, "", f"Error: {refs}:1: not valid BibTeX (Unexpectedly reached end of file); fix it or export it again")
    assert not list((project.root / "record" / "literature").iterdir())


def test_validate_never_imports_torch_or_a_check(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    (project.root / "checks").mkdir()
    (project.root / "checks" / "__init__.py").write_text("", encoding="utf-8")
    (project.root / "checks" / "demo.py").write_text(
        "import torch\nraise SystemExit('imported')\n\ndef measure(ctx): return {'x': 1.0}\n", encoding="utf-8")
    path = project.path("THEORY-1")
    path.write_text(path.read_text(encoding="utf-8") + "checks:\n  - name: c\n    run: checks.demo:measure\n"
                    "    expect: {x: '> 0'}\n    controls: [{name: untrained, params: {}}]\n", encoding="utf-8")
    code = ("import sys; from recordtool.cli import main\n"
            "try:\n main(['validate', '--root', sys.argv[1]])\nexcept SystemExit as e:\n"
            " assert 'torch' not in sys.modules, 'torch imported'; print('rc', e.code)")
    result = subprocess.run([sys.executable, "-c", code, str(project.root)], capture_output=True, text=True,
                            check=False, cwd=project.root)
    assert result.stdout.strip().endswith("rc 0"), result.stdout + result.stderr


def test_the_cli_imports_neither_torch_nor_dask(tmp_path: Path) -> None:
    code = ("import sys; from recordtool.cli import main\n"
            "try:\n main(['verify', '--help'])\nexcept SystemExit as e:\n"
            " heavy = [m for m in ('torch', 'distributed', 'dask') if m in sys.modules]; print('rc', e.code, heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert result.stdout.strip().endswith("rc 0 []"), result.stderr
    assert "--scheduler ADDRESS" in result.stdout


def test_commands_that_start_no_pool_import_no_pool(minimal: Callable[[], ProjectBuilder]) -> None:
    """``validate`` and ``render`` of a small record (too few files for workers) import
    neither ``multiprocessing`` nor ``concurrent.futures``: they are imported where a pool starts.
    What a library imports is its own (typing_extensions 4.15's ``deprecated``, which pydantic's
    core uses, imports asyncio and with it ``concurrent.futures``): the test names the modules
    that first imported either, and none may be recordtool's."""
    project = minimal()
    code = ("import sys\n"
            "first = []  # (module imported, the module whose code imported it first)\n"
            "class Spy:\n"
            " def find_spec(self, name, path=None, target=None):\n"
            "  if name in ('multiprocessing', 'concurrent.futures'):\n"
            "   frame = sys._getframe(1)\n"
            "   while frame is not None and frame.f_code.co_filename.startswith('<frozen'):\n"
            "    frame = frame.f_back\n"
            "   first.append((name, frame.f_globals.get('__name__', '') if frame is not None else ''))\n"
            "sys.meta_path.insert(0, Spy())\n"
            "from recordtool.cli import main\n"
            "for args in (['validate'], ['render'], ['render']):\n"
            " try:\n  main([*args, '--root', sys.argv[1], '-j', '2'])\n except SystemExit as e:\n  print('rc', e.code)\n"
            "print([(name, by) for name, by in first if by.split('.')[0] in ('recordtool', 'checks', '__main__')])")
    result = subprocess.run([sys.executable, "-c", code, str(project.root)], capture_output=True, text=True,
                            check=False, cwd=project.root)
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("rc ")] == ["rc 0"] * 3, result.stdout + result.stderr
    assert lines[-1] == "[]", result.stdout


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "recordtool", "--version"], capture_output=True, text=True,
                            check=False, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "recordtool, version 0.1.0\n")


def test_the_main_module_imported_again_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # A fresh worker interpreter (multiprocessing's "spawn": render's page workers on a large
    # record) imports the main module again, as __mp_main__. It leaves out a package's
    # __main__ run with -m, not one run by its path (by a debugger, a profiler, a wrapper):
    # unguarded, that one would run the whole command again in every worker.
    import runpy

    import recordtool

    runpy.run_path(str(Path(recordtool.__file__).parent / "__main__.py"), run_name="__mp_main__")
    assert capsys.readouterr() == ("", "")


def test_validate_jobs_reach_reading(minimal: Callable[[], ProjectBuilder], monkeypatch: pytest.MonkeyPatch) -> None:
    import recordtool.record.project

    project = minimal()
    seen: list[int | None] = []
    real = recordtool.record.project.open_project

    def open_project(*args: object, jobs: int | None = None, **kwargs: object) -> object:
        seen.append(jobs)
        return real(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recordtool.record.project, "open_project", open_project)
    assert run("validate", "--root", str(project.root), "-j", "2") == (0, clean(project), "")
    assert run("validate", "--root", str(project.root)) == (0, clean(project), "")
    assert seen == [2, None]
    code, _out, err = run("validate", "--root", str(project.root), "--jobs", "0")
    assert code == 2 and "0 is not in the range x>=1" in err


@pytest.mark.parametrize("args", [["validate"], ["validate", "--format", "json"], ["render"], ["render", "--check"]])
def test_the_program_says_and_exits_as_the_command_does(minimal: Callable[[], ProjectBuilder],
                                                                       args: list[str]) -> None:
    """``python -m recordtool`` (``cli.run``): the same output, flushed to pipes, and the same
    exit code as in process."""
    project = minimal()
    project.add("NOTE-2", "title: Dangling\nbody: See LIT-99.\n")  # a warning
    project.add("NOTE-3", "title: Broken\ncites: [{id: LIT-98, as: paper}]\n")  # an error
    expected = CliRunner().invoke(cli, [*args, "--root", str(project.root)])
    for path in (project.root / "record" / "pages").rglob("*"):  # render again from nothing
        if path.is_file():
            path.unlink()
    result = subprocess.run([sys.executable, "-m", "recordtool", *args, "--root", str(project.root)],
                            capture_output=True, text=True, check=False, cwd=project.root)
    assert (result.returncode, result.stdout, result.stderr) == (expected.exit_code, expected.stdout,
                                                                 expected.stderr)
    assert expected.exit_code == (1 if args[0] == "validate" else 0)


@pytest.mark.parametrize(("value", "said"), [("nan", "nan is not a finite number; give one such as 600"),
                                             ("inf", "inf is not a finite number; give one such as 600"),
                                             ("0", "0.0 is not in the range x>0.")])
def test_a_timeout_is_a_finite_positive_number(minimal: Callable[[], ProjectBuilder], value: str, said: str) -> None:
    project = minimal()
    code, out, err = run("verify", "--root", str(project.root), "--timeout", value)
    assert (code, out, err.splitlines()[-1]) == (2, "", f"Error: Invalid value for '--timeout': {said}")
