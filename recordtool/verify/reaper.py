"""The reaper: every process a check starts ends when its run ends, or when ``verify`` dies.

On Linux the check process, the fork server and a fresh run's reaper are each a *subreaper*
(``PR_SET_CHILD_SUBREAPER``): what a process below them leaves behind becomes their child and
is killed (``end_children``). Killing the process group alone would miss a process that a
check starts in a session of its own. Elsewhere these functions do nothing and say so by their
result (docs/checks.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PARENT_ENV = "RECORDTOOL_PARENT_PID"  # the pid of the process that starts the server or a fresh run
ROUNDS = 1000  # bounds the kill loops (each round kills a generation at least)
DEATH_S = 5.0  # how long end_tree waits for what it killed to be dead


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def adopt_orphans() -> bool:
    """Make this process the subreaper of everything below it; False where it cannot be."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent (pid ``parent``, one thread) ends;
    leave at once if it has ended already."""
    if _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) and os.getppid() != parent:
        os._exit(1)


def watch_parent(parent: int, before_leaving: Callable[[], None] = lambda: None) -> None:
    """When the process ``parent`` dies (SIGTERM is the parent-death signal): kill every child
    (after ``before_leaving``) and leave; a SIGTERM while the parent lives is the check's."""
    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getppid() != parent:
            leave()

    def leave() -> NoReturn:
        with contextlib.suppress(BaseException):
            before_leaving()
        end_children()
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)
    if _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM)) and os.getppid() != parent:
        leave()


def parent_pid() -> int:
    """The pid of the process that started this one on purpose (``PARENT_ENV``), else the
    parent's now."""
    try:
        return int(os.environ[PARENT_ENV])
    except (KeyError, ValueError):
        return os.getppid()


def signal_group(pid: int, sig: int) -> None:
    """Signal the process group led by ``pid``; a process not yet in a group of its own (a
    forked run before its ``setsid``): the process."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    except PermissionError:
        pass


def children(pid: int | str = "self") -> list[int]:
    """The children of ``pid`` (every thread's); [] when it is gone or /proc cannot say."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                out += [int(child) for child in handle.read().split()]
    return out


def end_children(keep: frozenset[int] = frozenset(), wait: bool = True) -> None:
    """Kill this process's children but ``keep``, again and again: in a subreaper, what they
    started comes to it as each one dies (``wait``: reap each; else kill this generation only)."""
    for _ in range(ROUNDS if wait else 1):
        doomed = [pid for pid in children() if pid not in keep]
        if not doomed:
            return
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if wait:
            for pid in doomed:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)


def end_tree(pid: int, parent: int | None = None) -> bool:
    """Kill ``pid`` and every process below it, stopping them all first so that none forks or
    leaves while the tree is walked; with ``parent``, only if ``pid`` is still its child (a pid
    may have been reused). False where /proc cannot show the tree."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/task"):
        return False
    if parent is not None and _stat(pid)[1:2] != [str(parent)]:
        return True  # gone already (or its pid is another process's now)
    seen: list[int] = []
    found = [pid]
    for _ in range(ROUNDS):
        for each in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(each, signal.SIGSTOP)
        seen += found
        known = set(seen)
        found = [child for each in seen for child in children(each) if child not in known]
        if not found:
            break
    for each in seen:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGKILL)
    deadline = time.monotonic() + DEATH_S
    while any(running(each) for each in seen) and time.monotonic() < deadline:
        time.sleep(0.005)
    return True


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the process's name: its state, its parent, ...
    ([] when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def running(pid: int) -> bool:
    """Whether ``pid`` runs still (a zombie has ended: only its reaping is left)."""
    return _stat(pid)[:1] not in ([], ["Z"], ["X"])


def supervise(parent: int) -> None:
    """Split a fresh run in two (Linux): the check runs in the child, where this returns, and
    this process stays its reaper, then leaves as the check did."""
    if not adopt_orphans():
        return
    watch_parent(parent)
    sys.stdout.flush()
    sys.stderr.flush()
    me = os.getpid()
    # SIGTERM is blocked across the fork, so that one meant for the check (its timeout) never
    # runs this process's handler in the child before the child has set the default.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        die_with_parent(me)
        return
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    status: int | None = None
    with contextlib.suppress(ChildProcessError):
        status = os.waitpid(pid, 0)[1]
    end_children()
    code = os.waitstatus_to_exitcode(status) if status is not None else 1
    if code < 0:  # leave as the check did: killed by the same signal
        import resource

        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # its core, if any, is the check's
        with contextlib.suppress(OSError, ValueError):
            signal.signal(-code, signal.SIG_DFL)
            os.kill(me, -code)
        code = 128 - code
    os._exit(code)
