"""Bad input from outside and faults of the machine: one clear message, nothing lost, nothing leaked.

Each case builds a small project, runs one command and asserts the exit code, the first line
on stderr (with its place), no traceback, and that nothing changed on disk but what the case
allows (the output folder of a render, the file ``new`` writes). The classes: nothing from
outside (links, figures, reference links, terminal output, ``new --title``), faults of the
machine (read-only and full folders, a missing output folder, signals, temporary files, modes;
a real full disk, a small tmpfs, where this machine lets the tests mount one), limits on what a
check returns, and no stray processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from recordtool.verify.reaper import running
from tests.conftest import ProjectBuilder
from tests.corpus import changed, invoke, snapshot
from tests.verify_fakes import CHECKS, POWER, check, claim_yaml, make_project

# Ctrl-C (SIGINT) raises KeyboardInterrupt here whatever this process inherited: a shell's
# background job starts with SIGINT ignored, and the "new-ctrl-c" case then ran to the end.
pytestmark = pytest.mark.usefixtures("ctrl_c")

LIT = 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}\n'
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


@dataclass
class Setup:
    """What a case runs, in a project it has built: the command, and what it may change."""

    root: Path
    argv: list[str]
    allowed: tuple[str, ...] = ()  # paths (relative to the root) under which changes are expected
    outside: list[Path] = field(default_factory=list)  # files outside the project that must stay as they are


@dataclass(frozen=True)
class Fault:
    name: str
    build: Callable[[Path], Setup]
    code: int
    first: str  # the first line on stderr; {root} and {tmp} stand for the project's and the test's folder
    out_has: str = ""  # something stdout must hold (escaped output)
    patch: Callable[[pytest.MonkeyPatch, Path], None] | None = None  # the fault, made once the project is built


def record(tmp: Path) -> ProjectBuilder:
    (tmp / "project").mkdir()
    project = ProjectBuilder(tmp / "project")
    project.add("LIT-1", LIT)
    project.add("NOTE-1", "title: T\ncites: [{id: LIT-1, as: paper}]\n")
    return project


def secret(tmp: Path, name: str = "secret.yaml", text: str = "id: NOTE-2\ntitle: the secret\n") -> Path:
    path = tmp / "outside" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# Nothing from outside ------------------------------------------------------------------------

def entry_link_out(tmp: Path) -> Setup:
    project = record(tmp)
    target = secret(tmp)
    (project.root / "record" / "notes" / "NOTE-2.yaml").symlink_to(target)
    return Setup(project.root, ["validate"], outside=[target])


def entry_link_out_list(tmp: Path) -> Setup:
    setup = entry_link_out(tmp)
    return Setup(setup.root, ["list"], outside=setup.outside)


def entry_link_out_render(tmp: Path) -> Setup:
    setup = entry_link_out(tmp)
    return Setup(setup.root, ["render"], allowed=("record/pages",), outside=setup.outside)


def folder_link_out(tmp: Path) -> Setup:
    project = record(tmp)
    target = secret(tmp).parent
    (project.root / "record" / "notes" / "more").symlink_to(target, target_is_directory=True)
    return Setup(project.root, ["validate"])


def kind_folder_link_out(tmp: Path) -> Setup:
    project = record(tmp)
    secret(tmp)
    notes = project.root / "record" / "notes"
    for child in notes.iterdir():
        child.unlink()
    notes.rmdir()
    notes.symlink_to(tmp / "outside", target_is_directory=True)
    return Setup(project.root, ["validate"])


def record_link_out(tmp: Path) -> Setup:
    project = record(tmp)
    (tmp / "elsewhere").mkdir()
    os.rename(project.root / "record", tmp / "elsewhere" / "record")
    (project.root / "record").symlink_to(tmp / "elsewhere" / "record", target_is_directory=True)
    return Setup(project.root, ["validate"])


def entry_dangling_link(tmp: Path) -> Setup:
    project = record(tmp)
    (project.root / "record" / "notes" / "NOTE-2.yaml").symlink_to(project.root / "record" / "notes" / "gone.yaml")
    return Setup(project.root, ["validate"])


def entry_fifo(tmp: Path) -> Setup:
    project = record(tmp)
    os.mkfifo(project.root / "record" / "notes" / "NOTE-2.yaml")
    return Setup(project.root, ["validate"])


MARK = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n\ndef f(ctx):\n    return {{'err': 0.0}}\n"


def check_module_link_out(tmp: Path, command: str = "validate") -> Setup:
    marker = tmp / "outside" / "it-ran"
    evil = secret(tmp, "evil.py", MARK.format(marker=str(marker)))
    root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", "- {name: c, run: 'checks.evil:f', expect: {err: '< 1'}}")})
    (root / "checks" / "evil.py").symlink_to(evil)
    return Setup(root, [command], outside=[evil, marker])


def check_package_link_out(tmp: Path) -> Setup:
    marker = tmp / "outside" / "it-ran"
    secret(tmp, "evil.py", MARK.format(marker=str(marker)))
    root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", "- {name: c, run: 'checks.sub.evil:f', expect: {err: '< 1'}}")})
    (root / "checks" / "sub").symlink_to(tmp / "outside", target_is_directory=True)
    return Setup(root, ["verify"], outside=[marker])


def not_a_link(url: str) -> str:
    """The one message a reference link that a page may not carry gets."""
    return (f"record/literature/LIT-2.yaml:3:54: error: reference.url: '{url}' is not a link a page may carry; write "
            "an http(s) address, a doi: or a path relative to the record (no javascript:, data:, file: or spaces)")


def reference(url: str) -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        project = record(tmp)
        project.add("LIT-2", f"title: P\nreference: {{authors: [A], year: 2021, title: P, {url}}}\n")
        return Setup(project.root, ["validate"])
    return build


def shown(title: str, command: list[str]) -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        project = record(tmp)
        project.add("NOTE-2", f"title: {json.dumps(title)}\nstatus_note: {json.dumps(title)}\n")
        return Setup(project.root, command)
    return build


def new_title(title: str) -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        return Setup(record(tmp).root, ["new", "note", "--title", title])
    return build


def figures(names: dict[str, bytes | str], listed: list[str]) -> Callable[[Path], Setup]:
    """A claim whose verdict names ``listed`` figures; ``names``: files to make (bytes) or
    links to make (str: the target, relative to the test's folder)."""
    def build(tmp: Path) -> Setup:
        root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", check("small", "noop", more=POWER))})
        (root / ".git").mkdir()
        (root / ".git" / "config").write_text("[remote]\ntoken = hunter2\n", encoding="utf-8")
        secret(tmp, "photo.png", "not really")
        assert invoke("verify", "--root", str(root)).code == 0
        verdict_file = root / "record" / "verdicts" / "THEORY-1.json"
        data = json.loads(verdict_file.read_text(encoding="utf-8"))
        data["checks"][0]["figures"] = listed
        verdict_file.write_text(json.dumps(data), encoding="utf-8")
        for name, content in names.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.symlink_to(tmp / content)
        return Setup(root, ["render"], allowed=("record/pages",))
    return build


OWN = "record/verdicts/figures/THEORY-1/small/"
OTHER = "record/verdicts/figures/THEORY-1/other/"


def swapped_after(module: str, name: str, rel: str, target: str, text: bytes) -> Callable[[pytest.MonkeyPatch, Path], None]:
    """After the first call of ``module.name`` that checks ``rel`` (or, when its first argument is
    no path, after its first call), ``rel`` becomes a link to ``target`` outside the project
    (holding ``text``, where ``{outside}`` stands for that folder): the race between a check and a read."""
    def patch(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        where = importlib.import_module(module)
        real = getattr(where, name)
        calls = [0]

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if not isinstance(args[0], (str, Path)) or os.fspath(args[0]).endswith(rel):  # a check of that file
                calls[0] += 1
            if calls[0] == 1:
                outside = root.parent / "outside" / target
                outside.parent.mkdir(exist_ok=True)
                outside.write_bytes(text.replace(b"{outside}", os.fsencode(outside.parent)))
                (root / rel).unlink()
                (root / rel).symlink_to(outside)
            return result
        monkeypatch.setattr(where, name, wrapped)
    return patch


def entry_swapped(command: str) -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        project = record(tmp)
        project.add("NOTE-2", "title: mine\n")
        return Setup(project.root, [command], allowed=("record/notes/NOTE-2.yaml", ".recordtool-cache", "record/pages"))
    return build


SWAPPED_ENTRY = ("record/notes/NOTE-2.yaml: error: is a link to {tmp}/outside/s.yaml, outside record/; an entry must "
                 "be a file inside the record (copy it in instead of linking): it is not read")
def check_module_swapped(tmp: Path) -> Setup:
    root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", "- {name: c, run: 'checks.evil:f', expect: {err: '< 1'}}")})
    (root / "checks" / "evil.py").write_text("def f(ctx):\n    return {'err': 0.0}\n", encoding="utf-8")
    return Setup(root, ["verify"], allowed=("checks/evil.py", ".recordtool-cache", "record/verdicts"),
                 outside=[tmp / "outside" / "it-ran"])


def verdict_link_out(command: str) -> Callable[[Path], Setup]:
    """A claim's verdict file is a link to a verdict kept outside (the same claim's, saying more)."""
    def build(tmp: Path) -> Setup:
        root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", check("small", "noop", more=POWER))})
        assert invoke("verify", "--root", str(root)).code == 0
        verdict = root / "record" / "verdicts" / "THEORY-1.json"
        text = verdict.read_text(encoding="utf-8")
        assert '"cpu"' in text
        outside = secret(tmp, "THEORY-1.json", text.replace('"cpu"', '"the secret"'))  # the device the page names
        verdict.unlink()
        verdict.symlink_to(outside)
        return Setup(root, [command], allowed=("record/pages", ".recordtool-cache"), outside=[outside])
    return build


def caption_through_a_link(tmp: Path) -> Setup:
    """A figure folder that is a link out, holding an image and its caption."""
    build = figures({}, [OWN + "a.png"])
    setup = build(tmp)
    folder = tmp / "outside" / "fig"
    folder.mkdir(parents=True)
    (folder / "a.png").write_bytes(PNG)
    (folder / "a.png.json").write_text(json.dumps({"title": "the secret", "caption": "the secret"}), encoding="utf-8")
    (setup.root / OWN).parent.mkdir(parents=True, exist_ok=True)
    (setup.root / OWN.rstrip("/")).symlink_to(folder, target_is_directory=True)
    return setup


def swappable(build: Callable[[Path], Setup]) -> Callable[[Path], Setup]:
    """The figure the case swaps for a link may change."""
    return lambda tmp: dataclasses.replace(build(tmp), allowed=("record/pages", OWN + "a.png"))


SECRET = b"id: NOTE-2\ntitle: the secret\n"
SECRET_PNG = PNG + b"the secret"

OUTSIDE_CASES = [
    Fault("entry-link-out", entry_link_out, 1,
          "record/notes/NOTE-2.yaml: error: is a link to {tmp}/outside/secret.yaml, outside record/; an entry must be a "
          "file inside the record (copy it in instead of linking): it is not read"),
    Fault("entry-link-out-list", entry_link_out_list, 0,
          "record/notes/NOTE-2.yaml: error: is a link to {tmp}/outside/secret.yaml, outside record/; an entry must be a "
          "file inside the record (copy it in instead of linking): it is not read"),
    Fault("entry-link-out-render", entry_link_out_render, 1,  # (an entry file that does not load: exit 1)
          "record/notes/NOTE-2.yaml: error: is a link to {tmp}/outside/secret.yaml, outside record/; an entry must be a "
          "file inside the record (copy it in instead of linking): it is not read"),
    Fault("folder-link-out", folder_link_out, 1,
          "record/notes/more: error: is a link to {tmp}/outside, outside record/; an entry must be a file inside the "
          "record (copy it in instead of linking): it is not read"),
    Fault("kind-folder-link-out", kind_folder_link_out, 1,
          "record/notes: error: the folder is a link to {tmp}/outside, outside record/; entries must be files inside "
          "the record: it is not read"),
    Fault("record-link-out", record_link_out, 1,
          "record: error: the record folder is a link to {tmp}/elsewhere/record, outside the project; it is not read"),
    Fault("entry-dangling-link", entry_dangling_link, 1,
          "record/notes/NOTE-2.yaml: error: cannot be read: No such file or directory; an entry must be a file inside "
          "the record (copy it in instead of linking): it is not read"),
    Fault("entry-fifo", entry_fifo, 1, "record/notes/NOTE-2.yaml: error: not a regular file; an entry is a YAML file"),
    Fault("check-module-link-out-validate", check_module_link_out, 1,
          "checks/evil.py: error: is a link to {tmp}/outside/evil.py, outside checks/; check modules must be files "
          "inside checks/ (copy it in instead)"),
    Fault("check-module-link-out-verify", lambda tmp: check_module_link_out(tmp, "verify"), 1,
          "checks/evil.py: error: is a link to {tmp}/outside/evil.py, outside checks/; check modules must be files "
          "inside checks/ (copy it in instead)"),
    Fault("check-package-link-out-verify", check_package_link_out, 1,
          "checks/sub: error: is a link to {tmp}/outside, outside checks/; check modules must be files inside checks/ "
          "(copy it in instead)"),
    Fault("url-javascript", reference("url: 'javascript:alert(1)'"), 1, not_a_link("javascript:alert(1)")),
    Fault("url-javascript-spaced", reference("url: ' JavaScript:alert(1)'"), 1, not_a_link(" JavaScript:alert(1)")),
    Fault("url-data", reference("url: 'data:text/html,<script>x</script>'"), 1, not_a_link("data:text/html,<script>x</script>")),
    Fault("url-file", reference("url: 'file:///etc/passwd'"), 1, not_a_link("file:///etc/passwd")),
    Fault("url-other-host", reference("url: '//evil.example/x'"), 1, not_a_link("//evil.example/x")),
    Fault("doi-not-a-doi", reference("doi: 'javascript:alert(1)'"), 1,
          "record/literature/LIT-2.yaml:3:54: error: reference.doi: 'javascript:alert(1)' is not a DOI; write it as "
          "10.NNNN/suffix (doi:10.NNNN/... and https://doi.org/10.NNNN/... are fine too)"),
    Fault("title-ansi-list", shown("T\x1b[2J\x1b]0;pwned\x07", ["list"]), 0, "", out_has="T\\x1b[2J\\x1b]0;pwned\\x07"),
    Fault("title-ansi-show", shown("T\x1b]8;;http://e\x1b\\link", ["show", "NOTE-2"]), 0, "",
          out_has="NOTE-2: T\\x1b]8;;http://e\\x1b\\link"),
    Fault("title-bidi-show", shown("abc\u202edcba", ["show", "NOTE-2"]), 0, "", out_has="abc\\u202edcba"),
    Fault("new-title-escape", new_title("T\x1b[31m"), 1,
          "Error: the title holds the control character '\\x1b' at character 2; a title is one line of printable text"),
    Fault("new-title-newline", new_title("two\nlines"), 1,
          "Error: the title holds the control character '\\n' at character 4; a title is one line of printable text"),
    Fault("new-title-line-separator", new_title("a\u2028b"), 1,
          "Error: the title holds the control character '\\u2028' at character 2; a title is one line of printable text"),
    Fault("new-title-not-utf8", new_title("caf\udce9"), 1,
          "Error: the title is not valid text (character 4 is a byte that is not UTF-8); write it in UTF-8"),
    Fault("new-title-nul", new_title("a\x00b"), 1,
          "Error: the title holds the control character '\\x00' at character 2; a title is one line of printable text"),
    Fault("figure-outside-own-folder", figures({}, [".git/config", "../outside/photo.png", "/etc/passwd"]), 0, ""),
    Fault("figure-link-out", figures({OWN + "a.png": "outside/photo.png"}, [OWN + "a.png"]), 0,
          f"warning: figure {OWN}a.png is a link to {{tmp}}/outside/photo.png, outside THEORY-1/; it is not copied"),
    Fault("figure-not-an-image", figures({OWN + "a.png": b"[remote]\ntoken = x\n"}, [OWN + "a.png"]), 0,
          f"warning: figure {OWN}a.png does not hold the image its name says; it is not copied"),
    Fault("figure-svg", figures({OWN + "a.svg": b"<svg onload='alert(1)'/>"}, [OWN + "a.svg"]), 0,
          f"warning: figure {OWN}a.svg is not an image file (.png, .jpg, .gif, .webp); it is not copied"),
    Fault("figure-good-beside-bad", figures({OWN + "a.png": PNG, OWN + "b.txt": b"x"}, [OWN + "a.png", OWN + "b.txt"]),
          0, f"warning: figure {OWN}b.txt is not an image file (.png, .jpg, .gif, .webp); it is not copied"),
    Fault("entry-swapped-for-a-link-validate", entry_swapped("validate"), 1, SWAPPED_ENTRY,
          patch=swapped_after("recordtool.record.load", "entry_files", "record/notes/NOTE-2.yaml", "s.yaml", SECRET)),
    Fault("entry-swapped-for-a-link-render", entry_swapped("render"), 1, SWAPPED_ENTRY,
          patch=swapped_after("recordtool.record.load", "entry_files", "record/notes/NOTE-2.yaml", "s.yaml", SECRET)),
    Fault("verdict-link-out-render", verdict_link_out("render"), 0, ""),
    Fault("verdict-link-out-status", verdict_link_out("status"), 0, "",
          out_has="THEORY-1  unchecked  — verdict file record/verdicts/THEORY-1.json is damaged: is a link to "),
    Fault("figure-caption-through-a-folder-link-out", caption_through_a_link, 0,
          f"warning: figure {OWN}a.png is a link to {{tmp}}/outside/fig/a.png, outside THEORY-1/; it is not copied"),
    Fault("check-module-swapped-for-a-link-verify", check_module_swapped, 1, "",
          out_has="outside checks/; check modules must be files inside checks/ (copy it in instead): it is not run",
          patch=swapped_after("recordtool.record.load", "checks_problems", "checks/evil.py", "evil.py",
                              MARK.format(marker="{outside}/it-ran").encode())),
    Fault("figure-swapped-for-a-link", swappable(figures({OWN + "a.png": PNG}, [OWN + "a.png"])), 0,
          f"warning: figure {OWN}a.png is a symbolic link; it is not copied",
          patch=swapped_after("recordtool.render.write", "refused", OWN + "a.png", "s.png", SECRET_PNG)),
    # (through a folder link that stays inside: a path with none on the way is opened at once, one
    # name at a time, with no check before it to race; see recordtool.record.confine)
    Fault("figure-swapped-for-a-link-as-opened",
          swappable(figures({OWN + "a.png": PNG, OTHER.rstrip("/"): "project/" + OWN.rstrip("/")}, [OTHER + "a.png"])),
          0, f"warning: figure {OTHER}a.png changed while it was read (it or a folder on its way is a link now, "
          "outside THEORY-1/ or not); it is not copied",
          patch=swapped_after("recordtool.record.confine", "refused", OWN + "a.png", "s.png", SECRET_PNG)),
    # Issue 66, class 2: a kept figure is a plain file, never a link, even one that stays inside
    Fault("class-2-figure-link-inside", figures({OWN + "a.png": PNG, OWN + "b.png": "project/" + OWN + "a.png"},
                                                [OWN + "b.png"]), 0,
          f"warning: figure {OWN}b.png is a symbolic link; it is not copied"),
]

# Faults of the machine ------------------------------------------------------------------------

def rendered(tmp: Path, *, new: bool = False) -> Setup:
    """A record rendered once, then changed (so that a render has pages to write; ``new``: an
    entry added, so that it has a manifest to write)."""
    project = record(tmp)
    assert invoke("render", "--root", str(project.root)).code == 0
    project.add("NOTE-1", "title: Changed\ncites: [{id: LIT-1, as: paper}]\n")
    if new:
        project.add("NOTE-7", "title: New\n")
    return Setup(project.root, ["render"], allowed=("record/pages/.recordtool-snapshot.json",))


def render_to(where: str) -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        project = record(tmp)
        return Setup(project.root, ["render", "-o", where.format(root=project.root)])
    return build


FRESH = CHECKS + """

def fresh(ctx, broken=False):
    ctx.figure("plot.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + os.urandom(8))  # new figures each run
    return {"err": 1.0 if broken else 0.0}
"""


def verified(tmp: Path) -> Setup:
    """A claim verified once (a verdict and its figures), then rerun with --force (new figures)."""
    root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", check("small", "fresh", more=POWER))}, checks=FRESH)
    assert invoke("verify", "--root", str(root)).code == 0
    return Setup(root, ["verify", "--force"], allowed=(".recordtool-cache",))


def unverified(tmp: Path) -> Setup:
    root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", check("small", "fresh", more=POWER))}, checks=FRESH)
    return Setup(root, ["verify"])


def failing(what: str, errno_: int, under: str = "record") -> Callable[[pytest.MonkeyPatch, Path], None]:
    """Make ``what`` (os.open with O_CREAT, os.write, os.mkdir, shutil.copy2) fail with ``errno_`` under ``under``."""
    def patch(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        folder = str((root / under).resolve()) if not under.startswith("/") else under

        def hit(path: str) -> bool:
            return os.path.realpath(path).startswith(folder)

        if what == "open":
            real_open = os.open

            def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
                if flags & os.O_CREAT and hit(os.fspath(path)):
                    raise OSError(errno_, os.strerror(errno_), os.fspath(path))
                return real_open(path, flags, *args, **kwargs)
            monkeypatch.setattr(os, "open", fake_open)
        elif what == "write":
            real_write = os.write

            def fake_write(fd: int, data: Any) -> int:
                if hit(os.readlink(f"/proc/self/fd/{fd}")):
                    raise OSError(errno_, os.strerror(errno_))
                return real_write(fd, data)
            monkeypatch.setattr(os, "write", fake_write)
        elif what == "mkdir":
            real_mkdir = os.mkdir

            def fake_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
                if hit(os.fspath(path)):
                    raise OSError(errno_, os.strerror(errno_), os.fspath(path))
                real_mkdir(path, *args, **kwargs)
            monkeypatch.setattr(os, "mkdir", fake_mkdir)
            if sys.version_info < (3, 11):  # (Path.mkdir calls the os.mkdir its accessor took at import)
                import pathlib
                monkeypatch.setattr(pathlib._NormalAccessor, "mkdir", staticmethod(fake_mkdir))
        elif what == "copy":
            def fake_copy(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
                raise OSError(errno_, os.strerror(errno_), os.fspath(dst))
            monkeypatch.setattr(shutil, "copy2", fake_copy)
    return patch


def terminate_at(module: str, name: str, call: int = 1, sig: int = signal.SIGTERM) -> Callable[[pytest.MonkeyPatch, Path], None]:
    """SIGTERM (or ``sig``: SIGINT is Ctrl-C) to this process during the ``call``-th call of
    ``module.name`` (as a CI timeout would)."""
    def patch(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        target = importlib.import_module(module)
        real = getattr(target, name)
        calls = [0]

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] == call:
                os.kill(os.getpid(), sig)
            return real(*args, **kwargs)
        monkeypatch.setattr(target, name, wrapped)
    return patch


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def leftovers_in_verdicts(tmp: Path) -> Setup:
    setup = verified(tmp)
    verdicts = setup.root / "record" / "verdicts"
    (verdicts / f".THEORY-1.json.recordtool-{dead_pid()}-0a1b2c3d.tmp").write_text("{half", encoding="utf-8")
    (verdicts / "figures" / "THEORY-1" / "0123456789ab" / "small").mkdir(parents=True)  # figures no verdict names
    (verdicts / "figures" / "THEORY-1" / "0123456789ab" / "small" / "plot.png").write_bytes(PNG)
    return Setup(setup.root, ["verify"], allowed=(".recordtool-cache", "record/verdicts/.THEORY-1.json.recordtool-",
                                                  "record/verdicts/figures/THEORY-1/0123456789ab"))


def leftovers_in_pages(tmp: Path) -> Setup:
    setup = rendered(tmp)
    pages = setup.root / "record" / "pages"
    (pages / f".recordtool-{dead_pid()}.tmp").write_text("# half a pa", encoding="utf-8")
    (pages / "kinds" / f".note.md.recordtool-{dead_pid()}-0a1b2c3d.tmp").write_text("half", encoding="utf-8")
    (pages / ".recordtool-snapshot.json").unlink(missing_ok=True)  # as a render killed half-way leaves it
    return Setup(setup.root, ["render"], allowed=("record/pages",))


ENOSPC, EROFS, EACCES = errno.ENOSPC, errno.EROFS, errno.EACCES
INTERRUPTED = "interrupted: nothing half-written is left"
KEPT = "its previous verdict and figures are kept as they were"

MACHINE_CASES = [
    Fault("render-output-missing", render_to("/proc/nope"), 1,
          "error: cannot write the pages: /proc/nope: No such file or directory; nothing half-written is left"),
    Fault("render-output-under-a-file", render_to("{root}/pyproject.toml/pages"), 1,
          "error: cannot write the pages: {root}/pyproject.toml/pages: Not a directory; "
          "nothing half-written is left"),
    Fault("render-pages-read-only", rendered, 1,
          "error: cannot write the pages: {root}/record/pages/LIT-1.md: Read-only file system; nothing "
          "half-written is left", patch=failing("open", EROFS, "record/pages")),
    Fault("render-disk-full", rendered, 1,
          "error: cannot write the pages: {root}/record/pages/LIT-1.md: No space left on device; nothing "
          "half-written is left", patch=failing("write", ENOSPC, "record/pages")),
    Fault("render-manifest-disk-full", lambda tmp: dataclasses.replace(rendered(tmp, new=True), allowed=("record/pages",)), 1,
          "error: cannot write the pages: {root}/record/pages/.recordtool-manifest.json: No space left on device; "
          "nothing half-written is left", patch=failing("open", ENOSPC, "record/pages/..recordtool-manifest")),
    Fault("render-sigterm", lambda tmp: dataclasses.replace(rendered(tmp), allowed=("record/pages",)), 143,
          "interrupted: the pages written so far are whole, the others as they were; render again to finish",
          patch=terminate_at("recordtool.render.write", "replace_file")),
    Fault("render-leftovers-removed", leftovers_in_pages, 0, ""),
    Fault("verify-verdicts-disk-full", verified, 1,
          f"Error: cannot keep the verdict of THEORY-1 in record/verdicts/: No space left on device; {KEPT}",
          patch=failing("open", ENOSPC, "record/verdicts/.THEORY-1.json")),
    Fault("verify-verdicts-read-only", verified, 1,
          f"Error: cannot keep the verdict of THEORY-1 in record/verdicts/: Read-only file system; {KEPT}",
          patch=failing("open", EROFS, "record/verdicts/.THEORY-1")),
    Fault("verify-figures-disk-full", verified, 1,
          f"Error: cannot keep the verdict of THEORY-1 in record/verdicts/: No space left on device; {KEPT}",
          patch=failing("copy", ENOSPC)),
    Fault("verify-figures-folder-read-only", verified, 1,
          f"Error: cannot keep the verdict of THEORY-1 in record/verdicts/: Read-only file system; {KEPT}",
          patch=failing("mkdir", EROFS, "record/verdicts/figures")),
    Fault("verify-cache-unwritable", unverified, 1,
          "error: cannot verify: {root}/.recordtool-cache: Permission denied; nothing half-written is left",
          patch=failing("mkdir", EACCES, ".recordtool-cache")),
    Fault("verify-sigterm-while-keeping", verified, 143, "", patch=terminate_at("recordtool.verify.session", "keep_verdict")),
    Fault("verify-leftovers-removed", leftovers_in_verdicts, 0, ""),
    Fault("new-sigterm-before-linking", new_title("T"), 143, INTERRUPTED, patch=terminate_at("os", "link")),
    Fault("new-sigterm-while-writing", new_title("T"), 143, INTERRUPTED, patch=terminate_at("os", "fsync")),
    Fault("new-ctrl-c", new_title("T"), 130, INTERRUPTED, patch=terminate_at("os", "link", sig=signal.SIGINT)),
    Fault("status-sigterm-while-keeping", lambda tmp: dataclasses.replace(unverified(tmp), argv=["status"]), 143,
          INTERRUPTED, patch=terminate_at("recordtool.verify.snapshot", "keep")),
    Fault("validate-sigterm", lambda tmp: Setup(record(tmp).root, ["validate"]), 143, INTERRUPTED,
          patch=terminate_at("recordtool.cli.common", "open_record")),
]


# Limits on what a check returns -----------------------------------------------------------------

BIG = CHECKS + """

def many(ctx, broken=False):
    return {"err": 1.0 if broken else 0.0, **{f"m{i}": float(i) for i in range(1000)}}


def long_list(ctx, broken=False, n=1_000_000):
    return {"err": 1.0 if broken else 0.0, "curve": [float(i) for i in range(n)]}


def long_text(ctx, broken=False):
    return {"err": 1.0 if broken else 0.0, "note": "x" * 1_000_000}


def long_error(ctx):
    raise ValueError("y" * 1_000_000)
"""


def returning(run: str, more: str = "") -> Callable[[Path], Setup]:
    def build(tmp: Path) -> Setup:
        root = make_project(tmp, {"THEORY-1": claim_yaml("THEORY-1", check("big", run, more=more or POWER))},
                            checks=BIG)
        return Setup(root, ["verify"], allowed=(".recordtool-cache", "record/verdicts"))
    return build


LIMIT_CASES = [
    Fault("limit-many-metrics", returning("many"), 1, "",
          out_has="big: error: the check returned 1,001 metrics, over the 100 a verdict keeps; return the few the "
          "claim is about, and summarize the rest"),
    Fault("limit-long-list-summarized", returning("long_list"), 0, "", out_has="THEORY-1  verified"),
    Fault("limit-long-list-kept-too-long", returning("long_list", POWER + "\nkeep: [curve]"), 1, "",
          out_has="big: error: metric 'curve' has 1,000,000 values, over the 10,000 a check may keep in full (keep:)"),
    Fault("limit-long-text", returning("long_text"), 0, "", out_has="THEORY-1  verified"),
    Fault("limit-long-error", returning("long_error", "timeout: 30"), 1, "", out_has="big: error: raised …yyy"),
]


CASES = OUTSIDE_CASES + MACHINE_CASES + LIMIT_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_one_clear_message_and_nothing_else_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    case: Fault) -> None:
    setup = case.build(tmp_path)
    before = snapshot(setup.root)
    outside = {p: p.read_bytes() if p.exists() else None for p in setup.outside}
    if case.patch is not None:
        case.patch(monkeypatch, setup.root)
    outcome = invoke(*setup.argv[:1], "--root", str(setup.root), *setup.argv[1:]) if setup.argv[0] != "new" else \
        invoke("new", "--root", str(setup.root), *setup.argv[1:])
    expected = case.first.format(root=setup.root, tmp=os.path.realpath(tmp_path))
    assert (outcome.code, outcome.first) == (case.code, expected), outcome.err
    assert case.out_has in outcome.out
    assert not any(c in outcome.out + outcome.err for c in "\x1b\x07\u202e"), "a control character reached the terminal"
    monkeypatch.undo()
    # any command may keep what loading gave, the verdicts it read and judged, and what render
    # kept of its pages: all in the store
    kept = [".recordtool-cache/store.sqlite", ".recordtool-cache/store.sqlite-wal", ".recordtool-cache/store.sqlite-shm"]
    assert [p for p in changed(before, snapshot(setup.root))
            if not p.startswith(setup.allowed) and p != ".recordtool-cache"
            and not any(p == k or p.startswith(k + "/") for k in kept)] == []
    assert [p for p in snapshot(setup.root) if ".recordtool-" in p and p.endswith(".tmp")] == []  # no temporary file left
    assert {p: p.read_bytes() if p.exists() else None for p in setup.outside} == outside  # never run, never written
    verdict = setup.root / "record" / "verdicts" / "THEORY-1.json"
    if verdict.is_file():  # small enough to commit, whatever the check returned
        assert verdict.stat().st_size < 100_000
    pages = setup.root / "record" / "pages"
    if pages.is_dir():  # nothing from outside reached the pages
        published = b"".join(p.read_bytes() for p in pages.rglob("*") if p.is_file())
        assert b"hunter2" not in published and b"the secret" not in published and b"not really" not in published


def test_a_title_new_accepts_makes_a_file_that_loads(tmp_path: Path) -> None:
    project = record(tmp_path)
    for title in ["Größe: 🧪 «quoted» \"x\" | y # z", "'single' & <b>", "a: b", "- dash", "!bang", "%percent", "@at"]:
        outcome = invoke("new", "--root", str(project.root), "note", "--title", title)
        assert outcome.code == 0, outcome.err
    assert invoke("validate", "--root", str(project.root)).code == 0
    titles = [line.split(None, 3)[3] for line in invoke("list", "--root", str(project.root)).out.splitlines()]
    assert "'single' & <b>" in titles and "!bang" in titles


def test_a_pipe_in_a_table_cell_never_splits_the_row() -> None:
    from recordtool.record.mentions import markdown
    from recordtool.render import escape
    from recordtool.render.evidence import _table

    rows = _table(["Control", "Params", "Outcome"], [[escape.code("a|b"), escape.code("x=1|2\nz"), "ok"]])
    tokens = markdown().parse("\n".join(rows))
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 3
    assert textwrap.dedent("\n".join(rows)).count("\n") == 2


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_written_follow_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        setup = verified(tmp_path)
        assert invoke("render", "--root", str(setup.root)).code == 0
        assert invoke("new", "--root", str(setup.root), "note", "--title", "T").code == 0
    finally:
        os.umask(old)
    files = [setup.root / "record" / "verdicts" / "THEORY-1.json", setup.root / "record" / "pages" / "THEORY-1.md",
             setup.root / "record" / "pages" / ".recordtool-manifest.json", setup.root / "record" / "notes" / "NOTE-1.yaml"]
    assert {str(p.relative_to(setup.root)): oct(p.stat().st_mode & 0o777) for p in files} == {
        str(p.relative_to(setup.root)): oct(0o666 & ~umask) for p in files}


def test_verify_killed_keeps_the_previous_verdict_and_its_figures(tmp_path: Path) -> None:
    checks = FRESH + "\n\ndef slow(ctx, broken=False):\n    fresh(ctx, broken)\n    import time\n    time.sleep(60)\n"
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check("small", "fresh", more=POWER))}, checks=checks)
    assert invoke("verify", "--root", str(root)).code == 0
    verdicts = root / "record" / "verdicts"
    before = snapshot(verdicts)
    claim = root / "record" / "theory" / "THEORY-1.yaml"
    claim.write_text(claim_yaml("THEORY-1", check("small", "slow", more=POWER)), encoding="utf-8")
    _kill_verify_while_a_check_runs(root)
    assert snapshot(verdicts) == before  # the previous verdict and its figures, as they were
    status = invoke("status", "--root", str(root))
    assert status.code == 0 and "stale" in status.out


def test_a_long_list_is_kept_as_a_summary_the_page_shows(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check("big", "long_list", more=POWER))},
                        checks=BIG)
    assert invoke("verify", "--root", str(root)).code == 0
    verdict = json.loads((root / "record" / "verdicts" / "THEORY-1.json").read_text(encoding="utf-8"))
    run = verdict["checks"][0]["runs"][0]
    assert run["metrics"]["curve"] == {"summary": "list", "count": 1_000_000, "min": 0.0, "median": 499999.5,
                                       "max": 999999.0}
    assert invoke("render", "--root", str(root)).code == 0
    page = (root / "record" / "pages" / "THEORY-1.md").read_text(encoding="utf-8")
    assert "| `curve` | 1,000,000 values, 0 / 500000 / 999999 (min / median / max) |" in page


def test_a_list_the_check_keeps_is_kept_in_full(tmp_path: Path) -> None:
    more = POWER + "\nkeep: [curve]\nparams: {n: 500}"
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check("big", "long_list", more=more))},
                        checks=BIG)
    assert invoke("verify", "--root", str(root)).code == 0
    verdict = json.loads((root / "record" / "verdicts" / "THEORY-1.json").read_text(encoding="utf-8"))
    assert verdict["checks"][0]["runs"][0]["metrics"]["curve"] == [float(i) for i in range(500)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("fork_server", ["1", "0"])
def test_a_check_ends_when_verify_is_killed(tmp_path: Path, fork_server: str) -> None:
    pidfile = tmp_path / "check.pid"
    checks = CHECKS + f"\n\ndef sleeper(ctx):\n    open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n    time.sleep(60)\n"
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check("slow", "sleeper"))}, checks=checks)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "RECORDTOOL_FORK_SERVER": fork_server}
    child = subprocess.Popen([sys.executable, "-m", "recordtool", "verify", "--root", str(root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    child.kill()
    child.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the check's process {pid} outlived verify")


# No stray processes ---------------------------------------------------------------------------

def stray(pidfile: Path, how: str) -> str:
    """Python that starts a process that writes its pid to ``pidfile`` and sleeps: ``session``
    in a session of its own, ``daemon`` by a double fork (it is nobody's child then)."""
    script = f"echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile} && exec sleep 60"
    start = {
        "session": f"subprocess.Popen(['/bin/sh', '-c', {script!r}], start_new_session=True)",
        "daemon": textwrap.dedent(f"""\
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv('/bin/sh', ['/bin/sh', '-c', {script!r}])
                os._exit(0)
            os.wait()"""),
    }[how]
    return f"import subprocess\n{start}\nwhile not os.path.exists({str(pidfile)!r}):\n    time.sleep(0.01)\n"


def gone_soon(pid: int, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"{what} ({pid}) outlived its run")
        time.sleep(0.02)


ENDS = {  # how the run ends: the check's last lines, and the outcome verify reports
    "done": ("return {'err': 0.0}", "ok"),
    "crash": ("os._exit(3)", "error"),
    "timeout": ("time.sleep(60)", "timeout"),
    "verify-killed": ("time.sleep(60)", ""),
    "verify-terminated": ("time.sleep(60)", ""),
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper and the parent-death signal are Linux's")
@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["forked", "fresh"])
@pytest.mark.parametrize(("end", "how"), [(end, "session") for end in ENDS] + [("done", "daemon"), ("verify-killed", "daemon")])
def test_what_a_check_starts_ends_with_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork_server: str,
                                               end: str, how: str) -> None:
    pidfile = tmp_path / "stray.pid"
    body = stray(pidfile, how) + ENDS[end][0]
    checks = CHECKS + "\n\ndef spawner(ctx):\n" + textwrap.indent(body, "    ") + "\n"
    # the timeout must end the run, after the check has started its process: 10 s is room for a fresh
    # interpreter and a shell to start on a busy machine (3 s was not always) and keeps the test short
    timeout = 10 if end == "timeout" else 60
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check("spawn", "spawner", more=f"timeout: {timeout}"))},
                        checks=checks)
    monkeypatch.setenv("RECORDTOOL_FORK_SERVER", fork_server)
    if not end.startswith("verify-"):
        invoke("verify", "--root", str(root))
        verdict = json.loads((root / "record" / "verdicts" / "THEORY-1.json").read_text(encoding="utf-8"))
        assert pidfile.exists(), "the check did not start its process before its run ended (a very busy machine?)"
        assert verdict["checks"][0]["runs"][0]["outcome"] == ENDS[end][1]
        gone_soon(int(pidfile.read_text()), f"what the check started in a {how}")
        return
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    verify = subprocess.Popen([sys.executable, "-m", "recordtool", "verify", "--root", str(root)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not pidfile.exists():
        assert verify.poll() is None and time.monotonic() < deadline, "the check never started its process"
        time.sleep(0.02)
    verify.send_signal(signal.SIGKILL if end == "verify-killed" else signal.SIGTERM)
    assert verify.wait(timeout=60) in (-signal.SIGKILL, 128 + signal.SIGTERM)
    gone_soon(int(pidfile.read_text()), f"what the check started in a {how}, once verify was {end[7:]}")


# A real full disk (a small tmpfs) --------------------------------------------------------------

Mount = Callable[[Path], Path]


@pytest.fixture
def small_disk() -> Iterator[Mount]:
    """Mount a 256 KiB tmpfs on a folder (made empty first); unmounted after the test. Skips
    where mounting is not permitted (it needs root and the right to mount: many CI
    containers lack it; the cases with a simulated full disk above run everywhere)."""
    mounted: list[Path] = []

    def mount(where: Path) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        if shutil.which("mount") is None:
            pytest.skip("a real full disk needs `mount` (a small tmpfs); none here")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=755", "tmpfs", str(where)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"a real full disk needs the right to mount a small tmpfs (root, CAP_SYS_ADMIN): "
                        f"{done.stderr.strip() or done.returncode}")
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill(disk: Path) -> None:
    """Leave not one free byte on ``disk`` (creating an empty file still works there)."""
    fd = os.open(disk / ".filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


def moved_onto(disk: Mount, folder: Path) -> None:
    """Put ``folder``'s files on a small disk mounted in its place."""
    keep = folder.with_name(folder.name + ".before")
    os.rename(folder, keep)
    disk(folder)
    for child in keep.iterdir():
        shutil.move(str(child), folder / child.name)
    keep.rmdir()


def full_new(tmp: Path, disk: Mount) -> Setup:
    project = record(tmp)
    moved_onto(disk, project.root / "record" / "notes")
    fill(project.root / "record" / "notes")
    return Setup(project.root, ["new", "note", "--title", "T"], allowed=(".recordtool-cache",))


# A page that grows by more than the room a render frees by replacing the pages (a page
# each): the disk must be full for the render's own writes, not only for a new file.
LONGER = "title: Changed\ncites: [{id: LIT-1, as: paper}]\nbody: |\n" + "  A longer body.\n" * 2000


def full_render(tmp: Path, disk: Mount) -> Setup:
    project = record(tmp)
    assert invoke("render", "--root", str(project.root)).code == 0
    moved_onto(disk, project.root / "record" / "pages")
    project.add("NOTE-1", LONGER)
    fill(project.root / "record" / "pages")
    return Setup(project.root, ["render"], allowed=(".recordtool-cache", "record/pages"))


def full_render_elsewhere(tmp: Path, disk: Mount) -> Setup:
    project = record(tmp)
    out = disk(tmp / "disk") / "pages"
    assert invoke("render", "--root", str(project.root), "-o", str(out)).code == 0
    project.add("NOTE-1", LONGER)
    fill(tmp / "disk")
    return Setup(project.root, ["render", "-o", str(out)], allowed=(".recordtool-cache",))


def full_verdicts(tmp: Path, disk: Mount) -> Setup:
    setup = verified(tmp)
    moved_onto(disk, setup.root / "record" / "verdicts")
    fill(setup.root / "record" / "verdicts")
    return setup


def full_cache(tmp: Path, disk: Mount) -> Setup:
    setup = unverified(tmp)
    disk(setup.root / ".recordtool-cache")
    fill(setup.root / ".recordtool-cache")
    return dataclasses.replace(setup, allowed=(".recordtool-cache",))


@dataclass(frozen=True)
class FullDisk:
    name: str
    build: Callable[[Path, Mount], Setup]
    code: int
    first: str
    pages: str = ""  # a folder of pages (under the test's folder): each page in it must be whole, old or new


FULL_DISK_CASES = [
    FullDisk("new", full_new, 1, "error: cannot write the entry: {root}/record/notes/NOTE-2.yaml: No space left on "
             "device; nothing half-written is left"),
    FullDisk("render", full_render, 1, "error: cannot write the pages: {root}/record/pages/LIT-1.md: No space "
             "left on device; nothing half-written is left", pages="project/record/pages"),
    FullDisk("render-elsewhere", full_render_elsewhere, 1, "error: cannot write the pages: {tmp}/disk/pages/"
             "LIT-1.md: No space left on device; nothing half-written is left", pages="disk/pages"),
    FullDisk("verify-verdicts", full_verdicts, 1, f"Error: cannot keep the verdict of THEORY-1 in record/verdicts/: "
             f"No space left on device; {KEPT}"),
    FullDisk("verify-cache", full_cache, 1, "error: cannot verify: {root}/.recordtool-cache/verify-runs: No space "
             "left on device; nothing half-written is left"),
]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a small tmpfs is Linux's")
@pytest.mark.parametrize("case", FULL_DISK_CASES, ids=[c.name for c in FULL_DISK_CASES])
def test_a_real_full_disk_loses_nothing(tmp_path: Path, small_disk: Mount, case: FullDisk) -> None:
    setup = case.build(tmp_path, small_disk)
    before = snapshot(setup.root)
    pages = tmp_path / case.pages
    skip = (".filler", ".recordtool-snapshot.json")  # the snapshot goes first: "nothing changed" is no longer known
    old = {p: p.read_bytes() for p in pages.rglob("*") if p.is_file() and p.name not in skip} if case.pages else {}
    outcome = invoke(*setup.argv[:1], "--root", str(setup.root), *setup.argv[1:])
    expected = case.first.format(root=setup.root, tmp=tmp_path)
    assert (outcome.code, outcome.first) == (case.code, expected), outcome.err
    assert [p for p in changed(before, snapshot(setup.root)) if not p.startswith(setup.allowed)] == []
    assert [p for p in snapshot(tmp_path) if ".recordtool-" in p and p.endswith(".tmp")] == []
    if case.pages:  # every page whole: as it was, or as a render with room writes it
        assert invoke("render", "--root", str(setup.root), "-o", str(tmp_path / "fresh")).code == 0
        for path, data in old.items():
            new = path.read_bytes() if path.exists() else None
            assert new in (data, (tmp_path / "fresh" / path.relative_to(pages)).read_bytes()), path


# Issue 66: the classes a new adversarial hunt found ---------------------------------------------

LEAVES_A_LINK = CHECKS + '''

def leaves_a_link(ctx, secret="", broken=False):
    ctx.figure("plot.png", title="A plot").write_bytes(b"\\\\x89PNG\\\\r\\\\n\\\\x1a\\\\n")
    os.symlink(secret, ctx.figures_dir / "leak.png")
    return {"err": 1.0 if broken else 0.0}
'''


def test_class_2_a_figure_left_as_a_link_out_is_neither_kept_nor_published(tmp_path: Path) -> None:
    """Issue 66, class 2 (something from outside is still published): a check wrote its figure as
    a link to a file outside the project; verify kept the target's content under
    record/verdicts/figures/ and render published it. Now the run is an error naming the file and
    the check, and nothing of it is kept or published."""
    target = tmp_path / "outside" / "photo.png"
    target.parent.mkdir()
    target.write_bytes(SECRET_PNG)
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check(
        "small", "leaves_a_link", more=f"params: {{secret: '{target}'}}\n{POWER}"))}, checks=LEAVES_A_LINK)
    verified = invoke("verify", "--root", str(root))
    assert verified.code == 1
    refused = ("check 'small' left 'leak.png', which is a symbolic link; what a check leaves (figures, captions, "
               "artefacts) must be regular files in its run's folder: nothing of it is kept")
    assert "THEORY-1 small seed 0: error (" in verified.err and refused in verified.err, verified.err
    assert invoke("render", "--root", str(root)).code == 0
    kept = [p for p in (root / "record").rglob("*") if p.is_file() or p.is_symlink()]
    assert not [p for p in kept if p.is_symlink()]
    assert not [p for p in kept if b"the secret" in p.read_bytes()]
    assert target.read_bytes() == SECRET_PNG


def _dead_pid() -> int:
    """The id of a process that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


@pytest.mark.parametrize("replayed", [False, True], ids=["opened", "replayed"])
def test_class_4_a_killed_runs_files_are_swept_by_the_next_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  replayed: bool) -> None:
    """Issue 66, class 4 (a killed run's files are left behind): after ``kill -9`` of verify, its
    folder under .recordtool-cache/verify-runs/ (logs, requests, figures, temporary files) stayed
    through every later run. The next verify removes it, and the temporary files of processes
    that are gone, whether it runs checks or replays a kept answer; never a folder of a run still
    going, nor a file that is not the tool's."""
    go = tmp_path / "go"
    root = make_project(tmp_path, {"THEORY-1": claim_yaml("THEORY-1", check(
        "small", "waitfor", more=f"params: {{path: '{go}'}}"))})
    child_pid = _kill_verify_while_a_check_runs(root)
    runs = root / ".recordtool-cache" / "verify-runs"
    assert [p.name.split("-")[0] for p in runs.iterdir()] == [str(child_pid)]
    go.touch()
    if replayed:  # a verify with nothing to do, kept to be replayed: the next one opens nothing
        assert invoke("verify", "--root", str(root)).code == 1  # (no power: worse than no verdict)
        assert invoke("verify", "--root", str(root)).code == 0
        assert [p.name for p in runs.iterdir()] == []
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a run still going
    dead, alive = _dead_pid(), sleeper.pid
    (runs / f"{dead}-1").mkdir(parents=True, exist_ok=True)
    (runs / f"{dead}-1" / f".job-1.result.recordtool-{dead}-0a1b.tmp").write_text("{")
    (runs / f"{alive}-2").mkdir()
    leftovers = [root / "record" / "verdicts" / f".THEORY-1.json.recordtool-{dead}-0a1b.tmp",
                 root / ".recordtool-cache" / f".verify-snapshot.json.recordtool-{dead}-0a1b.tmp"]
    mine = [root / ".recordtool-cache" / "notes.recordtool-1.tmp", root / ".recordtool-cache" / f".{dead}-mine.tmp",
            runs / "notes"]
    for path in leftovers + mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    if replayed:  # (the answer is replayed: the project is not opened)
        monkeypatch.setattr("recordtool.cli.common.open_record", lambda *a, **k: pytest.fail("opened"))
    try:
        assert invoke("verify", "--root", str(root)).code == int(not replayed)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sorted(p.name for p in runs.iterdir()) == [f"{alive}-2", "notes"]
    assert [p for p in leftovers if p.exists()] == [] and all(p.exists() for p in mine)


def _kill_verify_while_a_check_runs(root: Path) -> int:
    """Start ``verify`` on ``root``, ``kill -9`` it once its first check has started; its pid."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    child = subprocess.Popen([sys.executable, "-m", "recordtool", "verify", "--root", str(root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    assert "started" in child.stderr.readline()  # the check runs: kill verify now
    child.kill()
    child.wait()
    return child.pid
