"""Shared fixtures: small projects written into a temporary folder; and the guard that keeps
every test off the shipped record (``record/`` of this repository), so that no test can depend
on what it contains: a user adding an entry must never turn the suite red."""

from __future__ import annotations

import gc
import importlib.util
import itertools
import os
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
# For tests of what recordtool does with a check that uses torch (the checks extra installs it;
# CI always has it): without torch they skip, found without importing it.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason='torch is not installed: python3 -m pip install -e ".[checks]"')
SHIPPED = str(REPO / "record")

# audit events (sys.addaudithook) whose first argument is a path the process reads or lists
_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.chdir",
                          "shutil.copytree", "shutil.copyfile", "shutil.copymode", "shutil.copystat"})


def _shipped(path: object) -> bool:
    """Whether ``path`` (absolute, or relative to the working folder) is the shipped record or in it."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False  # a file descriptor
    try:
        text = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError, OSError):
        return False
    return text == SHIPPED or text.startswith(SHIPPED + os.sep)


class ShippedRecordGuard:
    """An audit hook that notes each time the running test reads or lists the shipped record
    in this process (``open``, ``os.scandir``, ``glob``, copying it, ...) or starts a process
    that would: one given a path in it, one started in it, or one given ``--root`` the
    repository, or ``recordtool`` started in the repository without ``--root``. Only tests
    marked ``shipped_record`` may (``tests/test_contribution.py`` shows that adding an entry
    keeps CI green). Tests run in an empty folder, so that a path relative to
    an open folder (``dir_fd``) is not taken for one in the repository. Work in forked
    children is not seen (the parent opens the project first). Reading the repository's code
    (``recordtool/``, ``checks/``) is fine."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.touched: list[str] = []

    def start(self, test: str) -> None:
        self.test, self.touched = test, []

    def stop(self) -> list[str]:
        touched, self.test, self.touched = self.touched, None, []
        return touched

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if self.test is None:
            return
        try:
            if event in _PATH_EVENTS:
                if args and _shipped(args[0]):
                    self.touched.append(f"{event} {os.fsdecode(args[0])}")
            elif event == "subprocess.Popen":
                self._popen(args[1], args[2])
        except Exception as error:  # (a hook that raises would break the call it watches)
            self.touched.append(f"{event}: the guard failed ({error!r})")

    def _popen(self, argv: Any, cwd: Any) -> None:
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or [])
        words = [os.fsdecode(a) for a in argv if isinstance(a, (str, bytes, os.PathLike))]
        try:
            where = os.path.abspath(os.fsdecode(cwd) if cwd is not None else os.getcwd())
        except OSError:  # the working folder was removed: not the repository
            where = ""
        if _shipped(where) or any(_shipped(w) for w in words if os.sep in w):
            self.touched.append(f"subprocess {' '.join(words)} (in {where})")
        elif roots := [w[7:] for w in words if w.startswith("--root=")] + [
                b for a, b in itertools.pairwise(words) if a == "--root"]:
            if any(os.path.abspath(os.path.join(where, r)) == str(REPO) for r in roots):
                self.touched.append(f"subprocess {' '.join(words)}")
        elif where == str(REPO) and any("recordtool" in w for w in words):
            self.touched.append(f"subprocess {' '.join(words)} (in {where}, no --root)")


GUARD = ShippedRecordGuard()


def pytest_configure(config: pytest.Config) -> None:
    # here, not at import: test modules import this file again as ``tests.conftest``
    sys.addaudithook(GUARD)


@pytest.fixture
def shipped_record_guard() -> ShippedRecordGuard:
    """The guard that the running session hooked (``tests.conftest.GUARD`` is another one)."""
    return GUARD


@pytest.fixture(scope="session")
def _elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cwd")


@pytest.fixture(autouse=True)
def _no_thread_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that leaves a thread running fails: recordtool forks no pool while other threads
    run (``recordtool.parallel``), so a thread left behind changes what the later tests in the
    same process see (a test of pools then fails, far from the cause)."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5.0  # (threads that are ending get a moment)
    left = [t for t in threading.enumerate() if t not in before]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [t for t in left if t.is_alive()]
    if left:
        pytest.fail(f"{request.node.nodeid} left threads running: {', '.join(t.name for t in left)}", pytrace=False)


@pytest.fixture(autouse=True)
def _off_the_shipped_record(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                            _elsewhere: Path) -> Iterator[None]:
    """Each test runs in an empty folder (never the repository: a relative path, or a command
    without ``--root``, reaches no record), and fails if it read the shipped record without
    being marked ``shipped_record``."""
    monkeypatch.chdir(_elsewhere)
    if request.node.get_closest_marker("shipped_record") is not None:
        yield
        return
    GUARD.start(request.node.nodeid)
    try:
        yield
    finally:
        touched = GUARD.stop()
    if touched:
        more = f" (and {len(touched) - 1} more)" if len(touched) > 1 else ""
        pytest.fail(f"{request.node.nodeid} read the shipped record: {touched[0]}{more}. Tests build "
                    f"their own records in tmp_path (the `project` fixture); the few that must read "
                    f"this repository's record/ are marked @pytest.mark.shipped_record.", pytrace=False)


PYPROJECT = """\
[tool.recordtool]
record = "record"
checks = "checks"
"""

FOLDERS = {"LIT": "literature", "NOTE": "notes", "THEORY": "theory"}


class ProjectBuilder:
    """A project in a temporary folder: ``add("NOTE-1", "title: T")`` writes an entry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        for folder in FOLDERS.values():
            (root / "record" / folder).mkdir(parents=True, exist_ok=True)

    def path(self, entry_id: str, folder: str | None = None) -> Path:
        prefix = entry_id.split("-", 1)[0]
        return self.root / "record" / (folder or FOLDERS.get(prefix, "notes")) / f"{entry_id}.yaml"

    def add(self, entry_id: str, text: str = "", *, folder: str | None = None, raw: bytes | None = None) -> Path:
        """Write an entry; ``text`` is YAML after the id line (dedented), ``raw`` the whole file."""
        path = self.path(entry_id, folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
        else:
            body = textwrap.dedent(text).strip("\n")
            path.write_text(f"id: {entry_id}\n{body}\n" if body else f"id: {entry_id}\n", encoding="utf-8")
        return path


def count_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time recordtool starts a process pool (it imports
    ``concurrent.futures.ProcessPoolExecutor`` where it starts one)."""
    import concurrent.futures

    pools: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def counted(*args: Any, **kwargs: Any) -> Any:
        pools.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counted)
    return pools


@pytest.fixture
def project(tmp_path: Path) -> ProjectBuilder:
    return ProjectBuilder(tmp_path)


def minimal_record(project: ProjectBuilder) -> ProjectBuilder:
    """A valid three-entry record in ``project``: a paper, a note on it, a claim from it."""
    project.add("LIT-1", """
        title: A paper
        reference: {authors: ["Doe, J."], year: 2021, title: A paper}
        body: The paper. See NOTE-1.
    """)
    project.add("NOTE-1", """
        title: Notes on the paper
        cites: [{id: LIT-1, as: paper}]
        body: Read LIT-1 in full.
    """)
    project.add("THEORY-1", """
        statement: The paper's claim, drawn from LIT-1.
        cites: [{id: LIT-1, as: source}]
    """)
    return project


@pytest.fixture
def minimal(project: ProjectBuilder) -> Callable[..., ProjectBuilder]:
    """``minimal_record``, written when called."""
    return lambda: minimal_record(project)


def share_with_a_pool(monkeypatch: pytest.MonkeyPatch, module: Any, *, forked: bool = False) -> None:
    """Make ``module`` hand even a tiny record to the pool: from one item, one item a chunk, as
    on a machine with 8 cores (the pool's size is then ``-j``'s). Pages are composed by fresh
    interpreters given slices of the project, or with ``forked`` by workers forked from this
    process (``parallel.fork_fits``: which one would otherwise depend on this process's memory)."""
    from recordtool import parallel

    monkeypatch.setattr(parallel, "FORK_BUDGET", 1 << 62 if forked else 0, raising=False)
    monkeypatch.setattr(module, "PARALLEL_MIN", 1, raising=False)
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setattr(parallel, "CHUNK", 1)
    monkeypatch.setattr(parallel, "cores", lambda: 8)


class EveryWorker:
    """Wraps a function that work shared by a pool calls (``recordtool.parallel``), so that
    each of ``workers`` processes surely does some of it, however busy the machine: each
    process notes itself in ``folder`` at its first call, and waits there until ``workers``
    processes have (``WAIT_S`` at most: a worker forked from a large tests' process, torch
    loaded, on a busy machine can take seconds to start). ``pids()``: the processes that made
    calls so far."""

    WAIT_S = 120.0

    def __init__(self, func: Callable[..., Any], workers: int, folder: Path) -> None:
        # recordtool.parallel does not fork while other threads run (a test left one behind?)
        assert threading.active_count() == 1, f"threads running: {threading.enumerate()}"
        self.func = func
        self.workers = workers
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        marker = self.folder / str(os.getpid())
        if not marker.exists():
            marker.touch()
            deadline = time.monotonic() + self.WAIT_S
            while len(self.pids()) < self.workers and time.monotonic() < deadline:
                time.sleep(0.01)
        return self.func(*args, **kwargs)

    def pids(self) -> set[int]:
        """The processes that made calls so far."""
        return {int(p.name) for p in self.folder.iterdir()}


def dropped_at_exit(monkeypatch: pytest.MonkeyPatch, module: Any, held: list[Any]) -> list[Any]:
    """Drop the object ``held`` holds (its last reference) as at the interpreter's exit, when a
    module's globals may be gone before the objects that use them: with ``module.os`` None. What
    its ``__del__`` raised (errors Python would only print as ignored)."""
    errors: list[Any] = []
    with monkeypatch.context() as patch:
        patch.setattr("sys.unraisablehook", errors.append)
        patch.setattr(module, "os", None)
        held.clear()
        gc.collect()
    return errors


def no_children_left() -> bool:
    """Whether every child process of this one has ended and been reaped, leaving aside the
    standard library's resource tracker: a pool of fresh interpreters
    (``parallel.map_shipped``) starts it, and it lives as long as this process."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():  # not Linux
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        return False
    children = []
    for task in tasks.iterdir():
        try:
            children += (task / "children").read_text().split()
        except FileNotFoundError:  # a thread (a pool's) that ended meanwhile: its children went to another
            continue
    for pid in children:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if b"multiprocessing.resource_tracker" not in command:
            return False  # running, or ended and not reaped (no command line left)
    return True


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process for the test, whatever it inherited
    (a shell's background job, ``cmd &``, starts with SIGINT ignored, and so does every
    process it starts) or an earlier test left behind."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_reaches_child() -> None:
    """``preexec_fn`` for a child that a test sends SIGINT: the default disposition, which
    Python turns into KeyboardInterrupt (an ignored SIGINT would be inherited as ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
