"""A line on the terminal that says where a long command is: "reading the entry files: 41,216 of 100,000".

Every command that reads the record reads every entry file the first time (later, only those
that changed), and ``render`` composes every page: on 100,000 entries a cold run takes one to
two minutes, silent until its summary. On a terminal (the command's stderr) a ``Meter`` keeps one line up to date with the
stage and, where the stage counts items, how many are done. It draws nothing before the
command has run ``DELAY_S`` (a run after one edit never shows it), redraws at most every
``EVERY_S``, and erases its line before anything else is printed and when the command is done,
so that what a command prints is what it printed without it. Off a terminal (a pipe, a log, CI)
it writes nothing at all, nor on a dumb terminal (``TERM=dumb``).

Counting costs a call per chunk of work (64 files or pages: ``recordtool.parallel``), made in
the command's own process as each chunk is done there or its results come back from a worker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

DELAY_S = 1.0  # nothing is drawn before the command has run this long
EVERY_S = 0.2  # the line is redrawn at most this often
ERASE = "\r\x1b[K"  # to the start of the line, and erase it


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
        self.delay = DELAY_S if delay is None else delay
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
