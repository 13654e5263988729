"""`verify` and `status` with nothing changed give the last answer again without opening the
project, and every kind of input they read, changed once, makes them open it again."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_fakes import CHECKS, POWER, check, claim_yaml, make_project

import recordtool
from recordtool.cli import cli
from recordtool.cli import common as cli_common
from recordtool.verify import fingerprint
from recordtool.verify import snapshot as verify_snapshot

REPO = Path(__file__).resolve().parents[2]
# The check module imports a package (never run: the scan reads imports) whose version the
# fingerprint compares, installed in a folder of our own.
FAKE = "rtfakepkg"
CHECKS_WITH_PACKAGE = CHECKS + f"\n\ndef _unused():\n    import {FAKE}\n"

Result = tuple[int, str, str]


class Opened:
    """Counts the commands that opened the project (the full path)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = cli_common.open_record

        def counting(*args: object, **kwargs: object) -> object:
            self.count += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(cli_common, "open_record", counting)


def invoke(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, [*args[:1], "--root", str(root), *args[1:]])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def install(site: Path, version: str) -> None:
    """``rtfakepkg`` at ``version`` in ``site``, as pip leaves a distribution (its old one removed)."""
    for old in site.glob(f"{FAKE}-*.dist-info"):
        (old / "METADATA").unlink()
        old.rmdir()
    info = site / f"{FAKE}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {FAKE}\nVersion: {version}\n", encoding="utf-8")
    fingerprint.package_version.cache_clear()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    install(site, "1.0")
    monkeypatch.syspath_prepend(str(site))
    claims = {"THEORY-1": claim_yaml("THEORY-1", check("small", "ok", more=POWER)),
              "THEORY-2": claim_yaml("THEORY-2", check("other", "noop", more=POWER))}
    root = make_project(tmp_path, claims, checks=CHECKS_WITH_PACKAGE)
    (root / "record" / "notes").mkdir()
    (root / "record" / "notes" / "NOTE-1.yaml").write_text(
        "id: NOTE-1\nkind: note\ntitle: A note\nbody: On THEORY-1.\n", encoding="utf-8")
    return root


def settle(root: Path, opened: Opened) -> dict[str, Result]:
    """Verify everything again (new verdicts: nothing kept holds); then each no-op command
    opens the project once, and gives the same answer again without opening it."""
    invoke(root, "verify", "--force")
    answers: dict[str, Result] = {}
    for command in (("verify",), ("status",), ("status", "--why")):
        before = opened.count
        first = invoke(root, *command)
        assert opened.count == before + 1
        again = invoke(root, *command)
        assert opened.count == before + 1, f"{command} opened the project with nothing changed"
        assert again == first
        answers[" ".join(command)] = first
    return answers


def opens_again(root: Path, opened: Opened) -> dict[str, Result]:
    """Each command after a change: the full path runs (the project is opened)."""
    out = {}
    for command in (("status",), ("verify",)):
        before = opened.count
        out[command[0]] = invoke(root, *command)
        assert opened.count == before + 1, f"{command} gave a kept answer after a change"
    return out


def timeless(result: Result) -> Result:
    """A command's result with the time verify took left out (``ran N check runs in T s``)."""
    code, out, err = result
    return code, re.sub(r"(check runs? in )\d+\.\d s$", r"\1T s", out, flags=re.MULTILINE), err


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_each_kind_of_input_changed_runs_the_full_path(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project
    opened = Opened(monkeypatch)
    answers = settle(root, opened)
    assert answers["verify"][0] == 0
    assert "verified 2 of 2 selected claims; ran 0 check runs" in answers["verify"][1]
    assert answers["status"][1].endswith("verified 2 of 2 claims; checks of fresh verdicts: 2 of 2 pass\n")

    changes: list[tuple[str, Callable[[], None], str | None]] = [
        ("an entry", lambda: edit(root / "record" / "theory" / "THEORY-2.yaml", "The error is small.",
                                  "The error is very small."), "statement changed"),
        ("a note (no claim stale)", lambda: edit(root / "record" / "notes" / "NOTE-1.yaml", "A note",
                                                 "A longer note"), None),
        ("a check module", lambda: edit(root / "checks" / "fake.py", "def always(", "def always_("),
         "checks/fake.py changed"),
        ("a module a check imports", lambda: edit(root / "checks" / "helper.py", "0.001", "0.002"),
         "checks/helper.py changed"),
        ("a package version", lambda: install(root.parent / "lib" / "site-packages", "2.0"),
         f"{FAKE} 1.0 -> 2.0"),
    ]
    for what, change, reason in changes:
        change()
        out = opens_again(root, opened)
        if reason is not None:
            assert reason in out["status"][1], what
        settle(root, opened)

    # a verdict: what status says comes from it
    path = root / "record" / "verdicts" / "THEORY-2.json"
    verdict = json.loads(path.read_text(encoding="utf-8"))
    verdict["since"] = "2001-01-01T00:00:00Z"
    path.write_text(json.dumps(verdict, indent=2), encoding="utf-8")
    out = opens_again(root, opened)
    assert "THEORY-2  verified   since 2001-01-01T00:00:00Z" in out["status"][1]
    settle(root, opened)

    # recordtool's own code
    monkeypatch.setattr(recordtool, "__version__", "99.0")
    opens_again(root, opened)
    settle(root, opened)


def test_options_are_part_of_the_key_and_running_ones_bypass_it(project: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = project
    opened = Opened(monkeypatch)
    answers = settle(root, opened)
    before = opened.count
    assert invoke(root, "status", "THEORY-1")[1].startswith("THEORY-1 ")  # other options: another answer
    assert invoke(root, "verify", "--format", "json")[0] == 0
    assert opened.count == before + 2
    for command in (("verify", "--force"), ("verify", "--try", "THEORY-1"),
                    ("verify", "--junit-xml", str(root.parent / "junit.xml"))):
        n = opened.count
        invoke(root, *command)
        invoke(root, *command)
        assert opened.count == n + 2, command  # these run or write something: never kept
    assert (root.parent / "junit.xml").is_file()
    # --force wrote new verdicts (their runs' durations): the full path answers, as before but
    # for the time it took (0.0 s then, more on a busy machine)
    assert timeless(invoke(root, "verify")) == timeless(answers["verify"])


def test_a_verify_that_ran_is_not_kept(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = Opened(monkeypatch)
    first = invoke(project, "verify")
    assert "ran 4 check runs" in first[1]
    second = invoke(project, "verify")
    assert "ran 0 check runs" in second[1]
    assert opened.count == 2


def test_the_kept_answer_loads_neither_pydantic_nor_yaml(project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(project.parent / "lib" / "site-packages")])}
    script = ("import sys\nfrom recordtool.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n"
              "    code = exc.code\nheavy = sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml', "
              "'markdown_it', 'torch'})\nprint('LOADED', code, heavy, file=sys.stderr)\n")
    runs = []
    for command in (["verify"], ["verify"], ["verify"], ["status", "--why"], ["status", "--why"]):
        done = subprocess.run([sys.executable, "-c", script, *command], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        *said, loaded = done.stderr.splitlines()
        runs.append((done.stdout, said, loaded))
    assert "ran 4 check runs" in runs[0][0]
    assert "pydantic" in runs[1][2]  # the full path opens the project
    assert runs[2][2] == "LOADED 0 []"  # the kept answer
    assert runs[2][:2] == runs[1][:2]
    assert runs[4][2] == "LOADED 0 []"
    assert runs[4][:2] == runs[3][:2]


def test_racy_files_are_compared_by_content(tmp_path: Path) -> None:
    path = tmp_path / "entry.yaml"
    path.write_text("one", encoding="utf-8")
    # just written: a time within RACY_NS of the snapshot's, or after it, however long a busy
    # machine takes between writing and taking it
    soon = time.time_ns() + 30 * verify_snapshot.RACY_NS
    os.utime(path, ns=(soon, soon))
    then = verify_snapshot.take_files([str(path)])
    assert len(then[str(path)]) == 3  # its content is kept too
    path.write_text("two", encoding="utf-8")  # the same size, and (as on a coarse clock) the same time
    os.utime(path, ns=(soon, soon))
    old = time.time_ns() - 10 * verify_snapshot.RACY_NS
    assert not verify_snapshot.files_hold(then, verify_snapshot.take_files([str(path)]))
    os.utime(path, ns=(old, old))  # older now: compared by content with what was kept
    then[str(path)][1] = old
    assert not verify_snapshot.files_hold(then, verify_snapshot.take_files([str(path)]))
    path.write_text("one", encoding="utf-8")
    os.utime(path, ns=(old, old))
    assert verify_snapshot.files_hold(then, verify_snapshot.take_files([str(path)]))


def test_no_project_no_snapshot(tmp_path: Path) -> None:
    assert verify_snapshot.take(tmp_path / "nowhere", "status", {}) is None


def test_what_fingerprints_read_is_the_same_with_the_store(project: Path) -> None:
    """The modules of the claims' checks, read from entries kept in the store, are those a
    cold read gives."""
    from recordtool.record.project import open_project

    open_project(root=project, cache=True)
    edited = project / "record" / "theory" / "THEORY-2.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("name: other", "name: another"), encoding="utf-8")
    kept = verify_snapshot.fingerprint_inputs(open_project(root=project, cache=True))
    assert kept == verify_snapshot.fingerprint_inputs(open_project(root=project))
    assert FAKE in kept[0]  # THEORY-1's module imports it
