"""The reaper: a run's whole tree is killed, a fresh run's reaper leaves as its check did, and
the end of the thread that started a reaper is not taken for the end of ``verify``.

The runs of real checks (a process left in a session of its own, a double fork; the run done,
crashed, timed out, ``verify`` killed) are in tests/test_faults.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from recordtool.verify import reaper

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")

ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def wait_for(path: Path, proc: subprocess.Popen[bytes], seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the process never got ready"
        time.sleep(0.01)
    return [int(pid) for pid in path.read_text().split()]


def test_end_tree_kills_what_left_for_a_session_of_its_own_or_by_a_double_fork(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    code = textwrap.dedent(f"""
        import os, subprocess, time
        from recordtool.verify import reaper
        reaper.adopt_orphans()
        child = subprocess.Popen(["sleep", "60"], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "60"])
            os._exit(0)
        os.wait()
        while len(reaper.children()) < 2:  # the daemon, adopted
            time.sleep(0.01)
        daemons = [str(p) for p in reaper.children() if p != child.pid]
        open({str(pids)!r} + ".tmp", "w").write(" ".join([str(child.pid), *daemons]))
        os.rename({str(pids)!r} + ".tmp", {str(pids)!r})
        time.sleep(60)
    """)
    top = subprocess.Popen([sys.executable, "-c", code], env=ENV)
    below = wait_for(pids, top)
    assert len(below) == 2  # the one in its own session, and the daemon (adopted)
    assert reaper.end_tree(top.pid)
    assert [pid for pid in [top.pid, *below] if reaper.running(pid)] == []
    top.wait(timeout=10)


@pytest.mark.parametrize(("ending", "code"), [("os._exit(3)", 3), ("os.kill(os.getpid(), signal.SIGSEGV)", -11),
                                              ("os.kill(os.getpid(), signal.SIGTERM)", -15)])
def test_a_fresh_runs_reaper_leaves_as_its_check_did(tmp_path: Path, ending: str, code: int) -> None:
    script = (f"import os, signal\nfrom recordtool.verify import reaper\nreaper.supervise(os.getppid())\n"
              f"assert os.getppid() != {os.getpid()}  # below the reaper\n{ending}\n")
    proc = subprocess.run([sys.executable, "-c", script], env=ENV, cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == code
    assert not list(tmp_path.glob("core*"))  # a core, if any, is the check's alone


def test_a_sigterm_that_reaches_a_fresh_check_as_it_is_forked_ends_it_as_the_default_does(tmp_path: Path) -> None:
    """The reaper's handler (for the end of verify) is never run by the check's process, even
    for a SIGTERM that reaches it the moment it is forked (a timeout on a busy machine)."""
    script = textwrap.dedent("""
        import os, signal
        from recordtool.verify import reaper
        real = os.fork

        def fork():
            pid = real()
            if pid == 0:
                os.kill(os.getpid(), signal.SIGTERM)
            return pid

        os.fork = fork
        reaper.supervise(os.getppid())
        os._exit(0)
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=ENV, cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == -signal.SIGTERM


def test_the_end_of_the_thread_that_started_a_reaper_is_not_the_end_of_verify(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import os, sys
        from recordtool.verify import reaper
        reaper.watch_parent({os.getpid()})
        open({str(ready)!r}, "w").write(str(os.getpid()))
        for line in sys.stdin:
            print(line.strip(), flush=True)
    """)
    started: list[subprocess.Popen[str]] = []
    ident: list[int] = []

    def start() -> None:
        ident.append(threading.get_native_id())
        started.append(subprocess.Popen([sys.executable, "-c", script], env=ENV, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True))
        wait_for(ready, started[0])  # type: ignore[arg-type]  # it watches: now this thread ends

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    proc = started[0]
    deadline = time.monotonic() + 10
    while str(ident[0]) in os.listdir("/proc/self/task"):  # the thread is gone: the signal was sent
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("still here\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "still here\n"
    finally:
        proc.kill()
        proc.wait()


def test_a_reaper_whose_parent_died_before_it_watched_leaves_at_once(tmp_path: Path) -> None:
    script = "from recordtool.verify import reaper\nreaper.watch_parent(1)\nimport time\ntime.sleep(60)\n"
    proc = subprocess.run([sys.executable, "-c", script], env=ENV, timeout=60, check=False)
    assert proc.returncode == 128 + signal.SIGTERM
