"""Progress of a verify run: a live display on a terminal, plain lines otherwise.

On a terminal, finished checks scroll up as lines and the running ones stay at the bottom,
redrawn a few times a second (name, state, elapsed, the check's last progress line). When
the output is not a terminal (CI, a pipe, ``nohup``), each run is a plain line when it starts
and one when it ends, and a run still going says so every ``HEARTBEAT_S`` seconds with what
the check last reported (``ctx.progress``: "step 300/1000, loss 2.31"), so a log is never
silent for long. What a check says is shown with its control characters escaped.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from recordtool.safetext import one_line, terminal
from recordtool.verify.rules import short_error
from recordtool.verify.runner import Job, JobResult

REDRAW_S = 0.1
HEARTBEAT_S = 30.0  # at most this long between two lines about a running run, off a terminal


def _result_line(result: JobResult) -> str:
    state = {"ok": "done"}.get(result.outcome, result.outcome)
    line = f"{result.job.label}: {state} ({result.duration_s:.1f} s)"
    if result.error and result.outcome != "ok":
        line += f" — {one_line(short_error(result.error)[:160])}"
    return line


class PlainDisplay:
    """For logs and pipes: a line when a run starts, one when it ends, a heartbeat between."""

    def __init__(self, stream: TextIO | None = None, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.stream = stream or sys.stderr
        self.heartbeat_s = heartbeat_s
        self.beats: dict[str, float] = {}  # a running run's label -> the elapsed time it last said so at

    def started(self, job: Job) -> None:
        self.beats[job.label] = 0.0
        print(f"{job.label}: started", file=self.stream, flush=True)

    def finished(self, result: JobResult) -> None:
        self.beats.pop(result.job.label, None)
        print(_result_line(result), file=self.stream, flush=True)

    def tick(self, running: list[tuple[Job, float, str]]) -> None:
        for job, elapsed, progress in running:
            if elapsed - self.beats.get(job.label, 0.0) >= self.heartbeat_s:
                self.beats[job.label] = elapsed
                said = f", {one_line(progress)}" if progress else ", nothing reported yet"
                print(f"{job.label}: running {elapsed:.0f} s{said}", file=self.stream, flush=True)

    def claim(self, line: str) -> None:
        print(terminal(line), file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveDisplay(PlainDisplay):
    """Running checks redrawn in place at the bottom of the terminal."""

    def started(self, job: Job) -> None:
        pass  # shown among the running ones at the next redraw

    def __init__(self, stream: TextIO | None = None, width: int = 100) -> None:
        super().__init__(stream)
        self.drawn = 0
        self.last = 0.0
        self.width = width

    def _clear(self) -> None:
        if self.drawn:
            self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0

    def finished(self, result: JobResult) -> None:
        self._clear()
        super().finished(result)
        self.last = 0.0

    def claim(self, line: str) -> None:
        self._clear()
        super().claim(line)

    def tick(self, running: list[tuple[Job, float, str]]) -> None:
        now = time.monotonic()
        if now - self.last < REDRAW_S:
            return
        self.last = now
        self._clear()
        lines = []
        for job, elapsed, progress in running:
            line = f"  {job.label}: running {elapsed:5.1f} s" + (f"  {one_line(progress)}" if progress else "")
            lines.append(line[: self.width])
        if lines:
            self.stream.write("\n".join(lines) + "\n")
            self.drawn = len(lines)
        self.stream.flush()

    def close(self) -> None:
        self._clear()
        self.stream.flush()


def make_display(stream: TextIO | None = None) -> PlainDisplay:
    """A live display when ``stream`` (stderr by default) is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        import shutil

        return LiveDisplay(stream, width=max(40, shutil.get_terminal_size().columns - 1))
    return PlainDisplay(stream)
