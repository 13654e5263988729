"""Running checks in child processes: isolation, timeouts, parallel workers.

Every run of a check (each seed, and each control) is one ``Job``, run by
``python -m recordtool.child`` in a process of its own (its own session, so a Ctrl-C on the
terminal reaches only the parent, which stops them). A hang ends in ``timeout``; a crash
(an exception, ``os._exit``, a signal, memory exhaustion) in ``error`` with the traceback or
the exit signal; neither stops the run. Up to ``jobs`` children run at once, the slowest
(by their last duration) started first. The parent never imports the check's code.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from recordtool.verdict import RunOutcome

LOG_TAIL = 4000
KILL_GRACE_S = 1.0
POLL_S = 0.01


@dataclass
class Job:
    """One call of a check function, in a child process."""

    claim: str
    check: str
    variant: str  # "" for the check itself, else the control's name
    seed: int
    module: str
    function: str
    params: dict[str, Any]
    timeout: float
    figures_dir: Path
    expected_s: float = math.inf  # last duration, for ordering (unknown first)

    @property
    def label(self) -> str:
        control = f" [control {self.variant}]" if self.variant else ""
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


@dataclass
class _Live:
    job: Job
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    files: dict[str, Path]
    started: float
    killed_at: float | None = None
    timed_out: bool = False
    last_progress: str = ""
    progress_size: int = 0


@dataclass
class Runner:
    """Runs jobs in child processes, ``jobs`` at a time."""

    root: Path
    package: str
    workdir: Path
    cache_dir: Path
    device: str = "cpu"
    jobs: int = 1
    threads: int = 1
    display: Display = field(default_factory=NoDisplay)
    python: str = sys.executable

    def run(self, jobs: list[Job]) -> Generator[JobResult, None, None]:
        """Yield each job's result as it finishes. On KeyboardInterrupt (or when the
        generator is closed), every running child is stopped before it propagates."""
        pending = sorted(jobs, key=lambda j: -j.expected_s)
        live: list[_Live] = []
        counter = 0
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            while pending or live:
                while pending and len(live) < max(1, self.jobs):
                    job = pending.pop(0)
                    counter += 1
                    live.append(self._start(job, counter))
                    self.display.started(job)
                time.sleep(POLL_S)
                now = time.monotonic()
                still: list[_Live] = []
                for item in live:
                    if item.proc.poll() is not None:
                        _signal_group(item.proc, signal.SIGKILL)  # any stray grandchildren
                        result = self._finish(item, now)
                        self.display.finished(result)
                        yield result
                        continue
                    if item.killed_at is None and now - item.started > item.job.timeout:
                        item.timed_out = True
                        item.killed_at = now
                        _signal_group(item.proc, signal.SIGTERM)
                    elif item.killed_at is not None and now - item.killed_at > KILL_GRACE_S:
                        _signal_group(item.proc, signal.SIGKILL)
                    still.append(item)
                live = still
                self.display.tick([(i.job, now - i.started, self._progress(i)) for i in live])
        finally:
            for item in live:
                _signal_group(item.proc, signal.SIGKILL)
            for item in live:
                with contextlib.suppress(Exception):
                    item.proc.wait(timeout=5)
                item.log.close()

    def _start(self, job: Job, number: int) -> _Live:
        stem = self.workdir / f"job-{number}"
        files = {name: stem.with_suffix(f".{name}") for name in ("request", "result", "log", "progress")}
        request = {
            "root": str(self.root),
            "package": self.package,
            "module": job.module,
            "function": job.function,
            "params": job.params,
            "seed": job.seed,
            "device": self.device,
            "cache_dir": str(self.cache_dir),
            "figures_dir": str(job.figures_dir),
            "threads": self.threads,
            "progress": str(files["progress"]),
        }
        files["request"].write_text(json.dumps(request, default=str), encoding="utf-8")
        env = dict(os.environ)
        threads = str(self.threads)
        env.update({"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
                    "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": str(job.seed)})
        if self.device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        log = open(files["log"], "wb")  # noqa: SIM115 - closed in _finish
        proc = subprocess.Popen(
            [self.python, "-m", "recordtool.child", str(files["request"]), str(files["result"])],
            cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return _Live(job, proc, log, files, time.monotonic())

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
        item.log.close()
        job, code = item.job, item.proc.returncode
        elapsed = now - item.started
        log = _tail(item.files["log"])
        if item.timed_out:
            return JobResult(job, "timeout", {}, elapsed, f"ran past its {job.timeout:g} s timeout and was stopped", log)
        try:
            result = json.loads(item.files["result"].read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
        if isinstance(result, dict) and result.get("status") == "ok":
            metrics = result.get("metrics")
            return JobResult(job, "ok", metrics if isinstance(metrics, dict) else {},
                             float(result.get("duration_s", elapsed)), None, log, str(result.get("device", "")))
        if isinstance(result, dict) and result.get("status") == "error":
            return JobResult(job, "error", {}, float(result.get("duration_s", elapsed)), str(result.get("error")), log)
        return JobResult(job, "error", {}, elapsed, exit_message(code, log), log)


def exit_message(code: int | None, log: str = "") -> str:
    """Why a child ended without a result: its exit code or the signal that killed it."""
    if code is None:
        return "the check's process vanished"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory?)" if -code == signal.SIGKILL else ""
        text = f"killed by signal {name} ({-code}){hint}"
    else:
        text = f"the check's process exited with code {code} before returning"
    last = [line for line in log.strip().splitlines() if line.strip()][-1:]
    return text + (f"; last output: {last[0][:200]}" if last else "")


def _tail(path: Path) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            handle.seek(max(0, size - LOG_TAIL))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return ("…" + text) if size > LOG_TAIL else text


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
