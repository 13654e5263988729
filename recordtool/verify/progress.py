"""Progress of a verify run: a live display on a terminal, plain lines otherwise.

On a terminal, finished checks scroll up as lines and the running ones stay at the bottom,
redrawn a few times a second (name, state, elapsed, the check's last progress line). When
the output is not a terminal (CI, a pipe), each finished check is one plain line.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from recordtool.verify.judge import short_error
from recordtool.verify.runner import Job, JobResult

REDRAW_S = 0.1


def _result_line(result: JobResult) -> str:
    state = {"ok": "done"}.get(result.outcome, result.outcome)
    line = f"{result.job.label}: {state} ({result.duration_s:.1f} s)"
    if result.error and result.outcome != "ok":
        line += f" — {short_error(result.error)[:160]}"
    return line


class PlainDisplay:
    """One line per finished run (and per finished claim), for logs and pipes."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def started(self, job: Job) -> None:
        pass

    def finished(self, result: JobResult) -> None:
        print(_result_line(result), file=self.stream, flush=True)

    def tick(self, running: list[tuple[Job, float, str]]) -> None:
        pass

    def claim(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveDisplay(PlainDisplay):
    """Running checks redrawn in place at the bottom of the terminal."""

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
            line = f"  {job.label}: running {elapsed:5.1f} s" + (f"  {progress}" if progress else "")
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
