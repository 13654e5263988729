"""docs/lab.md's worked check runs: its entry, check module and test, each a fenced block marked
``file=PATH``, are written into a small project beside a copy of the lab; ``validate`` holds
the entry to the check, and the doc's own test (which trains the model briefly, on the check's
setting and on its control) passes."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[2]
LAB_DOC = REPO / "docs" / "lab.md"
FILES = ("record/theory/THEORY-1343.yaml", "checks/in_context.py", "tests/checks/test_in_context.py")
SOURCE = """\
id: LIT-1538
kind: literature
title: In-context Learning and Induction Heads
reference: {authors: ["Olsson, C."], year: 2022, title: In-context Learning and Induction Heads}
"""


def marked_blocks(markdown: str) -> dict[str, str]:
    """The fenced blocks whose info string names a file (```python file=checks/x.py): path -> text."""
    blocks: dict[str, str] = {}
    for token in MarkdownIt().parse(markdown):
        words = token.info.split() if token.type == "fence" else []
        for word in words[1:]:
            if word.startswith("file="):
                path = word.removeprefix("file=")
                assert path not in blocks, f"two blocks of docs/lab.md are {path}"
                blocks[path] = token.content
    return blocks


def test_marked_blocks_are_found() -> None:
    text = "```python file=a.py\nA = 1\n```\n\n```python\nB = 2\n```\n\n```yaml file=b.yaml\nc: 3\n```\n"
    assert marked_blocks(text) == {"a.py": "A = 1\n", "b.yaml": "c: 3\n"}


def _module(name: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Import ``path`` as the module ``name``, which is forgotten again after the test."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_the_worked_check_validates_and_its_test_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = marked_blocks(LAB_DOC.read_text(encoding="utf-8"))
    assert sorted(blocks) == sorted(FILES)
    root = tmp_path / "project"
    shutil.copytree(REPO / "checks", root / "checks", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text('[tool.recordtool]\nrecord = "record"\nchecks = "checks"\n',
                                         encoding="utf-8")
    (root / "record" / "literature").mkdir(parents=True)
    (root / "record" / "literature" / "LIT-1538.yaml").write_text(SOURCE, encoding="utf-8")
    for path, text in blocks.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    validate = subprocess.run([sys.executable, "-m", "recordtool", "validate", "--root", str(root), "--strict"],
                              capture_output=True, text=True, timeout=300)
    assert validate.returncode == 0, validate.stderr
    written = 1 + sum(path.startswith("record/") for path in blocks)  # the source and the doc's entries
    assert validate.stdout.endswith(f"{written} entr{'y' if written == 1 else 'ies'}: 0 errors, 0 warnings\n")

    _module("checks.in_context", root / "checks" / "in_context.py", monkeypatch)  # beside the lab it imports
    test = _module("test_in_context", root / "tests" / "checks" / "test_in_context.py", monkeypatch)
    (tmp_path / "run").mkdir()
    test.test_recurring_data_teaches_in_context_and_the_control_does_not(tmp_path / "run")
