"""Running checks in child processes: isolation, timeouts, parallel workers.

Every run of a check (each seed, each control) is one ``Job``, run in a process and a session
of its own, forked from the warm server of ``recordtool.verify.child`` (or, when the server
cannot take it, in a fresh interpreter). The parent keeps the timeouts and kills a run with all
it started (``recordtool.verify.reaper``); a hang ends in ``timeout``, a crash in ``error``, and
neither stops the others. Up to ``jobs`` run at once, the slowest first. The parent never
imports the check's code.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from recordtool.record.confine import not_plain
from recordtool.safetext import one_line
from recordtool.verify import reaper
from recordtool.verify.child import FIXED_THREADS, THREAD_COUNTS, ServerProcess
from recordtool.verify.rules import short_error
from recordtool.verify.verdict import RunOutcome

LOG_TAIL = 4000
KILL_GRACE_S = 1.0
POLL_S = 0.01
HASH_SEED = "0"


@dataclass
class Job:
    """One call of a check function, in a child process."""

    claim: str
    check: str
    variant: str  # "" for the check itself, else the name of the control or positive control
    seed: int
    module: str
    function: str
    params: dict[str, Any]
    timeout: float
    figures_dir: Path
    expected_s: float = math.inf  # last duration, for ordering (unknown first)
    threads: int = 1  # the check's ``threads:``, fixed whatever -j is
    needs: tuple[str, ...] = ()  # what the run needs from where it runs ("gpu")
    positive: bool = False  # the variant is a positive control
    memory_mb: int | None = None  # the run's address space (RLIMIT_AS), None: not limited
    cpu_s: float | None = None  # the run's CPU time (RLIMIT_CPU), None: not limited

    @property
    def label(self) -> str:
        control = f" [{'positive' if self.positive else 'control'} {self.variant}]" if self.variant else ""
        return f"{self.claim} {self.check}{control} seed {self.seed}"


@dataclass
class JobResult:
    job: Job
    outcome: RunOutcome
    metrics: dict[str, Any]
    duration_s: float
    error: str | None = None
    log: str = ""
    device: str = ""
    host: str = ""  # the machine that ran it, when not this one (a cluster's worker)
    figures: dict[str, bytes] = field(default_factory=dict)  # from a worker: relative path -> bytes
    models: dict[str, bytes] = field(default_factory=dict)  # from a worker: new in a cache the client does not see

    @property
    def line(self) -> str:
        """How the run ended, as the progress display says it: "THEORY-1 small seed 0: done (0.1 s)"."""
        line = f"{self.job.label}: {'done' if self.outcome == 'ok' else self.outcome} ({self.duration_s:.1f} s)"
        if self.error and self.outcome != "ok":
            line += f" — {one_line(short_error(self.error)[:160])}"
        return line


class Executor(Protocol):
    """Runs jobs and yields each one's result as it finishes: ``Runner`` here, or
    ``recordtool.verify.cluster.ClusterRunner`` on a Dask cluster."""

    def run(self, jobs: list[Job]) -> Generator[JobResult, None, None]: ...
    def close(self) -> None: ...


class Display(Protocol):
    def started(self, job: Job) -> None: ...
    def finished(self, result: JobResult) -> None: ...
    def tick(self, running: list[tuple[Job, float, str]]) -> None: ...


class NoDisplay:
    def started(self, job: Job) -> None:
        pass

    def finished(self, result: JobResult) -> None:
        pass

    def tick(self, running: list[tuple[Job, float, str]]) -> None:
        pass


@dataclass(eq=False)
class _Live:
    """A running job: a fresh child (``proc``) or a run on the server, ``pid`` once started."""

    job: Job
    number: int
    files: dict[str, Path]
    started: float  # for the display and the duration
    clock: float  # for the timeout: since the start, or since the fork
    proc: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None
    on_server: bool = False
    pid: int | None = None
    code: int | None = None  # a forked run's exit status, once reported
    ended: bool = False
    killed_at: float | None = None
    timed_out: bool = False
    last_progress: str = ""
    progress_size: int = 0

    def poll(self) -> bool:
        """Whether the run has ended (its exit status is then in ``code``)."""
        if not self.ended and self.proc is not None and self.proc.poll() is not None:
            self.code, self.ended = self.proc.returncode, True
        return self.ended

    def signal(self, sig: int) -> None:
        """Signal the run's process group (a forked child not yet in its own: the child)."""
        if self.pid is not None:
            reaper.signal_group(self.pid, sig)

    def end(self, server: int | None) -> None:
        """Kill the run and every process below it (``recordtool.verify.reaper``); a forked
        run only while it is still the server's child (``server``: the server's pid)."""
        if self.pid is None or self.ended:
            return
        if not reaper.end_tree(self.pid, parent=None if self.proc is not None else server):
            self.signal(signal.SIGKILL)


@dataclass
class Runner:
    """Runs jobs in child processes, ``jobs`` at a time."""

    root: Path
    package: str
    workdir: Path
    cache_dir: Path
    device: str = "cpu"
    jobs: int = 1
    display: Display = field(default_factory=NoDisplay)
    serve: bool = field(default_factory=lambda: os.environ.get("RECORDTOOL_FORK_SERVER", "1") != "0")  # fork runs from a warm server
    kernels: dict[str, str] = field(default_factory=dict)  # CPU descriptions runs made, passed to the next

    def run(self, jobs: list[Job]) -> Generator[JobResult, None, None]:
        """Yield each job's result as it finishes. On KeyboardInterrupt (or when the
        generator is closed), every running child is stopped before it propagates."""
        pending = sorted(jobs, key=lambda j: -j.expected_s)
        folders = {j.figures_dir for j in jobs}  # (a run's folder may hold those of its other seeds and controls)
        live: list[_Live] = []
        counter = 0
        self.workdir.mkdir(parents=True, exist_ok=True)
        server = ServerProcess.start(self.root, self._env(), self.workdir / "server.log") \
            if jobs and self.serve else None
        try:
            while pending or live:
                while pending and len(live) < max(1, self.jobs):
                    job = self._next(pending, live)
                    if job is None:
                        break
                    counter += 1
                    item = self._prepare(job, counter)
                    if server is not None and server.alive and server.submit(item.number, item.files):
                        item.on_server = True
                    else:
                        self._spawn(item)
                    live.append(item)
                    self.display.started(job)
                if server is not None and server.alive:
                    server.wait(POLL_S)
                else:
                    time.sleep(POLL_S)
                if server is not None and (server.alive or any(i.on_server and not i.ended for i in live)):
                    self._listen(server, live)
                now = time.monotonic()
                waiting = [i for i in live if i.on_server and i.pid is None and not i.ended]
                still: list[_Live] = []
                for item in live:
                    if item.poll():
                        item.signal(signal.SIGKILL)  # any stray grandchildren
                        result = self._confined(self._finish(item, now), folders - {item.job.figures_dir})
                        self.display.finished(result)
                        yield result
                        continue
                    if not any(item is other for other in waiting[1:]):  # (else queued behind an import)
                        _enforce_timeout(item, now, server)
                    still.append(item)
                live = still
                self.display.tick([(i.job, now - i.started, self._progress(i)) for i in live])
        finally:
            for item in live:
                item.end(server.proc.pid if server is not None else None)
            for item in live:
                if item.proc is not None:
                    with contextlib.suppress(Exception):
                        item.proc.wait(timeout=5)
                if item.log is not None:
                    item.log.close()
            if server is not None:
                server.stop()

    def close(self) -> None:
        """Nothing to release: ``run`` stops what it started."""

    def _confined(self, result: JobResult, others: set[Path]) -> JobResult:
        """``result``, or an error when the run left in its folder (but the folders of ``others``)
        anything but regular files and folders (``confine.not_plain``), which is then removed."""
        job, folder, stop = result.job, result.job.figures_dir, self.workdir.parent
        chain = [folder, *folder.parents]
        bad = [(p, "is a symbolic link") for p in (chain[:chain.index(stop)] if stop in chain else chain[:1])
               if p.is_symlink()]
        if not bad and os.path.lexists(folder):
            bad = _strays(folder, others) if folder.is_dir() else [(folder, "is a file where a folder is expected")]
        if not bad:
            return result
        for path, _why in bad:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
        path, why = bad[0]
        name = path.relative_to(folder).as_posix() if folder in path.parents else os.path.relpath(path, stop)
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return JobResult(job, "error", {}, result.duration_s,
                         f"check '{job.check}' left '{name}', which {why}{more}; what a check leaves (figures, "
                         "captions, artefacts) must be regular files in its run's folder: nothing of it is kept",
                         result.log)

    def _next(self, pending: list[Job], live: list[_Live]) -> Job | None:
        """The first pending job whose threads fit beside the runs going: their threads add up
        to at most ``jobs`` (a job wider than that runs alone), so -j N never oversubscribes N cores."""
        busy = sum(item.job.threads for item in live)
        for index, job in enumerate(pending):
            if not live or busy + job.threads <= max(1, self.jobs):
                return pending.pop(index)
        return None

    def _listen(self, server: ServerProcess, live: list[_Live]) -> None:
        """Apply the server's news; when it is gone, move its runs to fresh children."""
        by_number = {item.number: item for item in live if item.on_server}
        for message in server.messages():
            item = by_number.get(int(message.get("id", -1)))
            if item is None or item.ended:
                continue
            if "exit" in message:
                code = message["exit"]
                item.code, item.ended = (int(code) if code is not None else None), True
                continue
            if "pid" in message:
                item.pid = int(message["pid"])
            elif "fresh" in message:
                self._spawn(item)
            now = time.monotonic()
            item.clock = now
            for other in by_number.values():  # the server turns to the next in its queue
                if other.on_server and other.pid is None:
                    other.clock = now
        if server.alive and server.proc.poll() is None:
            return
        server.alive = False
        server.kill()
        for item in by_number.values():
            if item.ended or not item.on_server:
                continue
            item.signal(signal.SIGKILL)
            if item.timed_out:
                item.ended = True  # the run, or its module's import, ran past the timeout
            elif item.pid is not None and "status" in (_result(item.files["result"]) or {}):
                item.code, item.ended = 0, True
            else:
                self._spawn(item)

    def _env(self, threads_per_run: int = 1) -> dict[str, str]:
        """The environment of a run (or of the server: one thread; each forked run sets
        torch's thread count to its job's, see ``recordtool.verify.child``)."""
        env = {**os.environ, **dict.fromkeys(THREAD_COUNTS, str(threads_per_run)), **FIXED_THREADS,
               "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": HASH_SEED, reaper.PARENT_ENV: str(os.getpid())}
        if self.device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        return env

    def _prepare(self, job: Job, number: int) -> _Live:
        stem = self.workdir / f"job-{number}"
        files = {name: stem.with_suffix(f".{name}") for name in ("request", "result", "log", "progress")}
        # the job as it is (``recordtool.verify.child`` reads what it needs), and where it runs
        request = {**asdict(job), "root": str(self.root), "package": self.package, "device": self.device,
                   "cache_dir": str(self.cache_dir), "progress": str(files["progress"]), "kernels": self.kernels}
        try:
            files["request"].write_text(json.dumps(request, default=str), encoding="utf-8")
        except OSError as exc:  # (a full disk: named by the folder of the runs; its own name is the run's pid)
            raise OSError(exc.errno, exc.strerror, str(self.workdir.parent)) from None
        now = time.monotonic()
        return _Live(job, number, files, now, now)

    def _spawn(self, item: _Live) -> None:
        """Run ``item`` in a fresh interpreter (from the start, if it was on the server)."""
        for name in ("result", "progress"):
            with contextlib.suppress(OSError):
                item.files[name].unlink()
        item.on_server, item.code = False, None
        item.last_progress, item.progress_size = "", 0
        item.log = open(item.files["log"], "wb")  # noqa: SIM115 - closed in _finish
        item.proc = subprocess.Popen(
            [sys.executable, "-m", "recordtool.verify.child", str(item.files["request"]), str(item.files["result"])],
            cwd=self.root, env=self._env(item.job.threads), stdin=subprocess.DEVNULL, stdout=item.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        item.pid = item.proc.pid
        item.started = item.clock = time.monotonic()

    def _progress(self, item: _Live) -> str:
        path = item.files["progress"]
        try:
            size = path.stat().st_size
        except OSError:
            return item.last_progress
        if size != item.progress_size:
            item.progress_size = size
            with open(path, "rb") as handle:
                handle.seek(max(0, size - 400))
                lines = handle.read().decode("utf-8", "replace").strip().splitlines()
            if lines:
                item.last_progress = lines[-1]
        return item.last_progress

    def _finish(self, item: _Live, now: float) -> JobResult:
        if item.log is not None:
            item.log.close()
        job, code = item.job, item.code
        elapsed = now - item.started
        log = _tail(item.files["log"])
        if item.timed_out:
            return JobResult(job, "timeout", {}, elapsed, f"ran past its {job.timeout:g} s timeout and was stopped", log)
        result = _result(item.files["result"])
        if result is not None and result.get("status") == "ok":
            if isinstance(result.get("kernels"), dict):
                self.kernels.update({str(k): str(v) for k, v in result["kernels"].items()})
            metrics = result.get("metrics")
            return JobResult(job, "ok", metrics if isinstance(metrics, dict) else {},
                             float(result.get("duration_s", elapsed)), None, log, str(result.get("device", "")))
        if result is not None and result.get("status") == "error":
            return JobResult(job, "error", {}, float(result.get("duration_s", elapsed)), str(result.get("error")), log)
        return JobResult(job, "error", {}, elapsed, exit_message(code, log), log)


def _enforce_timeout(item: _Live, now: float, server: ServerProcess | None) -> None:
    """A run past its timeout gets SIGTERM, and ``KILL_GRACE_S`` later is killed with all it
    started; one whose module's import hangs on the server stops the server (it is stuck)."""
    if item.killed_at is None and now - item.clock > item.job.timeout:
        item.timed_out = True
        item.killed_at = now
        if item.on_server and item.pid is None and server is not None:
            server.kill()
        else:
            item.signal(signal.SIGTERM)
    elif item.killed_at is not None and now - item.killed_at > KILL_GRACE_S:
        item.end(server.proc.pid if server is not None else None)


def exit_message(code: int | None, log: str = "") -> str:
    """Why a child ended without a result: its exit code or the signal that killed it."""
    if code is None:
        return "the check's process vanished"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory?)" if -code == signal.SIGKILL else (
            " (past its CPU-time limit: raise 'limits: {cpu_s: ...}' in the check's YAML)"
            if -code == signal.SIGXCPU else "")
        text = f"killed by signal {name} ({-code}){hint}"
    else:
        text = f"the check's process exited with code {code} before returning"
    last = [line for line in log.strip().splitlines() if line.strip()][-1:]
    return text + (f"; last output: {last[0][:200]}" if last else "")


def _strays(folder: Path, others: set[Path]) -> list[tuple[Path, str]]:
    """What under ``folder`` (walked without following links; the folders of ``others`` left
    out) is not a regular file or a folder, or is a folder named like a file, and why."""
    bad: list[tuple[Path, str]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:  # (made unreadable)
        return [(folder, f"cannot be read ({exc.strerror})")]
    for entry in entries:
        path = Path(entry.path)
        if path in others:
            continue
        if entry.is_dir(follow_symlinks=False):
            bad += [(path, "is a folder where a file is expected")] if path.suffix else _strays(path, others)
        else:
            with contextlib.suppress(FileNotFoundError):  # (gone since: nothing to keep)
                if (why := not_plain(path)) is not None:
                    bad.append((path, why))
    return bad


def _tail(path: Path) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            handle.seek(max(0, size - LOG_TAIL))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return ("…" + text) if size > LOG_TAIL else text


def _result(path: Path) -> dict[str, Any] | None:
    """The run's result as the child wrote it (None when it wrote none)."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) else None
