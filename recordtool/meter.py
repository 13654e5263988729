"""Progress on the terminal: one module for every long command.

``Meter``: one line on a terminal saying where a long command is, erased before anything else
is printed; off a terminal, nothing. ``make_display``: the runs of ``verify``, redrawn at the
bottom of a terminal, else a line when a run starts and ends and a heartbeat between.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TextIO

from recordtool.safetext import one_line, terminal

DELAY_S = 1.0  # nothing is drawn before the command has run this long
EVERY_S = 0.2  # the line is redrawn at most this often
ERASE = "\r\x1b[K"  # to the start of the line, and erase it
REDRAW_S = 0.1  # the running runs of verify are redrawn at most this often
HEARTBEAT_S = 30.0  # at most this long between two lines about a running run, off a terminal


def _is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that moves its cursor: not a dumb one (``TERM=dumb``:
    an editor's shell buffer, say, which would show the escape codes)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # (no such method; a closed stream)
        return False


class Meter:
    """The progress line of one command (see the module); ``stream``: where to draw it, a
    terminal, else nothing is drawn. A context manager: leaving it erases the line."""

    def __init__(self, stream: TextIO | None, *, delay: float | None = None, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None and _is_terminal(stream) else None
        self.delay = DELAY_S if delay is None else delay  # (read now: tests set them to draw at once)
        self.every = EVERY_S if every is None else every
        self.clock = clock
        self.started = clock()
        self.drawn: float | None = None  # when the line was last drawn (None: it is not on the screen)
        self.what = ""
        self.total = 0
        self.done = 0

    def stage(self, what: str, total: int = 0) -> Callable[[int], None]:
        """Begin a stage (``what``: "reading the entry files") of ``total`` items (0: none counted);
        returns the function to call with how many more items are done."""
        self.what, self.total, self.done = what, total, 0
        self._draw(force=True)
        return self.advance

    def advance(self, n: int) -> None:
        """``n`` more items of the stage are done."""
        self.done += n
        self._draw()

    def erase(self) -> None:
        """Take the line off the screen (before something else is printed); the next stage or
        count draws it again."""
        if self.drawn is not None and self.stream is not None:
            self.stream.write(ERASE)
            self.stream.flush()
        self.drawn = None

    def _draw(self, force: bool = False) -> None:
        if self.stream is None or not self.what:
            return
        now = self.clock()
        if now - self.started < self.delay or (not force and self.drawn is not None and now - self.drawn < self.every):
            return
        line = f"{self.what}: {min(self.done, self.total):,} of {self.total:,}" if self.total else f"{self.what}…"
        self.stream.write(f"{ERASE}{line}")
        self.stream.flush()
        self.drawn = now

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.erase()


class Run(Protocol):
    """A run of a check, as a display shows it (a protocol: this module imports no stage)."""

    @property
    def label(self) -> str: ...


class Ended(Protocol):
    """How a run ended: ``line``, e.g. "THEORY-1 small seed 0: done (0.1 s)"."""

    @property
    def job(self) -> Run: ...

    @property
    def line(self) -> str: ...


class PlainDisplay:
    """For logs and pipes: a line when a run starts, one when it ends, a heartbeat between."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.beats: dict[str, float] = {}  # a running run's label -> the elapsed time it last said so at

    def started(self, job: Run) -> None:
        self.beats[job.label] = 0.0
        print(f"{job.label}: started", file=self.stream, flush=True)

    def finished(self, result: Ended) -> None:
        self.beats.pop(result.job.label, None)
        print(result.line, file=self.stream, flush=True)

    def tick(self, running: Sequence[tuple[Run, float, str]]) -> None:
        for job, elapsed, progress in running:
            if elapsed - self.beats.get(job.label, 0.0) >= HEARTBEAT_S:
                self.beats[job.label] = elapsed
                said = f", {one_line(progress)}" if progress else ", nothing reported yet"
                print(f"{job.label}: running {elapsed:.0f} s{said}", file=self.stream, flush=True)

    def claim(self, line: str) -> None:
        print(terminal(line), file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveDisplay(PlainDisplay):
    """Running checks redrawn in place at the bottom of the terminal."""

    def started(self, job: Run) -> None:
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

    def finished(self, result: Ended) -> None:
        self._clear()
        super().finished(result)
        self.last = 0.0

    def claim(self, line: str) -> None:
        self._clear()
        super().claim(line)

    def tick(self, running: Sequence[tuple[Run, float, str]]) -> None:
        now = time.monotonic()
        if now - self.last < REDRAW_S:
            return
        self.last = now
        self._clear()
        lines = [f"  {job.label}: running {elapsed:5.1f} s{f'  {one_line(progress)}' if progress else ''}"[: self.width]
                 for job, elapsed, progress in running]
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
        return LiveDisplay(stream, width=max(40, shutil.get_terminal_size().columns - 1))
    return PlainDisplay(stream)
