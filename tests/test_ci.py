"""CI runs exactly the README's two quick-start commands, and the docs stay short enough to read
(issue 62: a README of at most 12 KB, docs/performance.md of at most 200 lines)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from recordtool.cli import cli

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


def test_the_pre_commit_hook_runs_validate_on_a_change_to_what_it_reads() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert (hook["entry"], hook["language"], hook["pass_filenames"]) == ("recordtool validate", "python", False)
    assert "validate" in cli.commands
    files = re.compile(hook["files"])
    assert all(files.search(p) for p in ["record/theory/THEORY-1.yaml", "record/notes/NOTE-1.yml", "checks/lab.py",
                                         "pyproject.toml"])
    assert not any(files.search(p) for p in ["record/pages/THEORY-1.md", "record/verdicts/THEORY-1.json",
                                             "README.md", "tests/test_ci.py"])
