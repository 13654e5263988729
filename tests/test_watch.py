"""``verify --try --watch`` and ``render --watch`` (recordtool/cli/watch.py), driven as a user
drives them: the command runs in its own process, a file is saved, and the rerun must start
within 2 s of the save; Ctrl-C ends the watch with 130 and no traceback."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ProjectBuilder, ctrl_c_reaches_child, minimal_record
from tests.verify_fakes import check, one_claim

RERUN_S = 2.0  # a saved change starts the rerun within this
START_S = 120.0  # the first run (a busy machine, torch imported by no one here)


class Watching:
    """A ``recordtool ... --watch`` process, its output (stdout and stderr) read line by line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "recordtool", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, preexec_fn=ctrl_c_reaches_child)
        self.lines: queue.Queue[str] = queue.Queue()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, start: str, within: float) -> str:
        """The next line that starts with ``start``, read within ``within`` seconds."""
        deadline = time.monotonic() + within
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no line starting {start!r} within {within} s; the output:\n" + "\n".join(self.said))
            self.said.append(line)
            if line.startswith(start):
                return line

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: the exit code and what the process said in all."""
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=30)
        time.sleep(0.1)  # the reader's last lines
        while not self.lines.empty():
            self.said.append(self.lines.get())
        return code, "\n".join(self.said)


@pytest.fixture
def started() -> Iterator[list[Watching]]:
    """The watches a test starts, killed at its end whatever happened."""
    watches: list[Watching] = []
    yield watches
    for watch in watches:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()


def test_verify_watch_reruns_when_a_module_the_check_imports_is_saved(tmp_path: Path,
                                                                        started: list[Watching]) -> None:
    root = one_claim(tmp_path, check("fit", "ok", more="control: {params: {broken: true}}"))
    watch = Watching("verify", "--root", str(root), "--try", "--watch", "THEORY-1")
    started.append(watch)
    assert "verified" in watch.until("THEORY-1  ", START_S)
    # the claim's entry, the check's module, the module it imports, the package's __init__.py
    assert watch.until("watching", START_S) == "watching 4 files for changes; Ctrl-C to stop"
    (root / "checks" / "unrelated.py").write_text("X = 1\n", encoding="utf-8")  # imported by no check
    (root / "checks" / "helper.py").write_text(
        (root / "checks" / "helper.py").read_text(encoding="utf-8").replace("return 0.001", "return 0.9"),
        encoding="utf-8")
    assert watch.until("changed", RERUN_S) == "changed: checks/helper.py; running again"
    assert "verified" not in watch.until("THEORY-1  ", START_S)  # err 0.9 is not < 0.5 now
    watch.until("watching", START_S)
    claim = root / "record" / "theory" / "THEORY-1.yaml"
    claim.write_text(claim.read_text(encoding="utf-8") + "statement: [\n", encoding="utf-8")  # half-edited
    assert watch.until("changed", RERUN_S) == "changed: record/theory/THEORY-1.yaml; running again"
    watch.until("the record has 1 error", START_S)
    assert watch.until("watching", START_S) == "watching 4 files for changes; Ctrl-C to stop"  # it goes on
    code, said = watch.interrupt()
    assert code == 130, said
    assert said.endswith("interrupted: nothing half-written is left") and "Traceback" not in said
    assert not (root / "record" / "verdicts").exists()  # a try keeps no verdict


def test_ctrl_c_during_a_run_ends_the_watch(tmp_path: Path, started: list[Watching]) -> None:
    root = one_claim(tmp_path, check("fit", "hang"))
    watch = Watching("verify", "--root", str(root), "--try", "--watch", "THEORY-1")
    started.append(watch)
    watch.until("THEORY-1 fit seed 0: started", START_S)
    code, said = watch.interrupt()  # the run stops as a plain verify's does, and the watch with it
    assert code == 130 and "Traceback" not in said and "watching" not in said, said
    assert said.endswith("interrupted: kept 0 finished verdicts")


def test_render_watch_rewrites_the_page_of_a_saved_entry_and_not_its_own_pages(project: ProjectBuilder,
                                                                              started: list[Watching]) -> None:
    minimal_record(project)
    watch = Watching("render", "--root", str(project.root), "--watch")
    started.append(watch)
    assert watch.until("watching", START_S) == "watching record/ for changes; Ctrl-C to stop"
    project.add("NOTE-1", """
        title: Notes on the paper
        cites: [{id: LIT-1, as: paper}]
        body: Read LIT-1 twice.
    """)
    # the first run's pages, written before the save, start no run of their own
    assert watch.until("changed", RERUN_S) == "changed: record/notes/NOTE-1.yaml; running again"
    watch.until("watching", START_S)
    assert "twice." in (project.root / "record" / "pages" / "NOTE-1.md").read_text(encoding="utf-8")
    code, said = watch.interrupt()
    assert code == 130 and "Traceback" not in said, said


def test_watch_needs_try(tmp_path: Path) -> None:
    root = one_claim(tmp_path, check("fit", "ok"))
    done = subprocess.run([sys.executable, "-m", "recordtool", "verify", "--root", str(root), "--watch"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Error: --watch needs --try: a watch shows each result and keeps no verdict" in done.stderr
