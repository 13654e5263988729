"""Shared fixtures: small projects written into a temporary folder."""

from __future__ import annotations

import contextlib
import os
import select
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture
def project(tmp_path: Path) -> ProjectBuilder:
    return ProjectBuilder(tmp_path)


@pytest.fixture
def minimal(project: ProjectBuilder) -> Callable[..., ProjectBuilder]:
    """A valid three-entry record: a paper, a note on it, a claim from it."""

    def build() -> ProjectBuilder:
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

    return build


class ChildFirst:
    """Wraps a function that work shared with a forked child calls (``recordtool.parallel``),
    so that both processes surely do some of it, however busy the machine: this process
    waits, at its first call, until the child has started ``lead`` calls, and the child waits,
    before its call after those, until this process has started one (10 s at most each; the
    child's first ``lead`` calls never wait, so neither waits for the other in a circle).
    Each call notes, before it starts, which process made it: ``pids()``."""

    def __init__(self, func: Callable[..., Any], lead: int = 1) -> None:
        # recordtool.parallel does not fork while other threads run (a test left one behind?)
        assert threading.active_count() == 1, f"threads running: {threading.enumerate()}"
        self.func = func
        self.lead = lead
        self.parent = os.getpid()
        self.calls, self.call = os.pipe()
        os.set_blocking(self.calls, False)
        self.here_started, self.start_here = os.pipe()  # written once this process makes a call; the child waits on it
        self.seen: list[int] = []
        self.waited = False
        self.made = 0  # calls made by this process (the child counts its own, in its copy)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        os.write(self.call, os.getpid().to_bytes(4, "little"))
        self.made += 1
        if os.getpid() == self.parent and not self.waited:
            self.waited = True
            os.write(self.start_here, b"x")
            deadline = time.monotonic() + 10
            while sum(pid != self.parent for pid in self._read()) < self.lead and time.monotonic() < deadline:
                select.select([self.calls], [], [], 0.05)
        elif os.getpid() != self.parent and self.made == self.lead + 1:
            select.select([self.here_started], [], [], 10)  # this process had no chunk yet: leave it one
        return self.func(*args, **kwargs)

    def _read(self) -> list[int]:
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.calls, 65536):
                data += chunk
        self.seen += [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
        return self.seen

    def pids(self) -> set[int]:
        """The processes that made calls so far."""
        return set(self._read())
