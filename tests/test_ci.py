"""CI runs exactly the README's two quick-start commands, and the docs stay short enough to read
(issue 62: a README of at most 12 KB, docs/performance.md of at most 200 lines)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def quick_start() -> list[str]:
    """The command lines of the README's quick-start block."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Quick start\n.*?^```sh\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    assert block is not None, "README.md has no ```sh block under '## Quick start'"
    return block.group(1).splitlines()


def test_ci_runs_exactly_the_readmes_quick_start_commands() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in script.splitlines() if line.startswith("python3 ")]
    assert commands == quick_start()
    assert len(commands) == 2


def test_the_readme_and_the_performance_notes_stay_short() -> None:
    assert len((REPO / "README.md").read_bytes()) <= 12 * 1024
    assert len((REPO / "docs" / "performance.md").read_text(encoding="utf-8").splitlines()) <= 200
