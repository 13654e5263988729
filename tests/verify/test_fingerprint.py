"""Fingerprints follow a check's imports inside checks/ by reading them, not running them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from recordtool.record.config import load_config
from recordtool.record.schema import CheckSpec
from recordtool.verify.fingerprint import Scanner, check_parts, diff, environment
from tests.conftest import needs_torch


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_transitive_imports_inside_checks_only(tmp_path: Path) -> None:
    write(tmp_path, {
        "pyproject.toml": "[tool.recordtool]\n",
        "checks/__init__.py": "",
        "checks/a.py": "import os\nimport numpy as np\nfrom checks import b\nfrom .sub import c\nimport outside\n",
        "checks/b.py": "from checks.sub.d import thing\n",
        "checks/sub/__init__.py": "",
        "checks/sub/c.py": "from . import d\nfrom .. import e\n",
        "checks/sub/d.py": "def thing(): ...\n",
        "checks/e.py": "import torch\n",
        "checks/unused.py": "",
        "outside.py": "",
    })
    scan = Scanner(load_config(tmp_path)).scan("checks.a")
    assert sorted(scan.files) == ["checks/__init__.py", "checks/a.py", "checks/b.py", "checks/e.py",
                                  "checks/sub/__init__.py", "checks/sub/c.py", "checks/sub/d.py"]
    assert scan.packages == {"numpy", "outside", "torch"}
    assert not scan.missing


def test_missing_module_is_noted(tmp_path: Path) -> None:
    write(tmp_path, {"checks/__init__.py": "", "checks/a.py": "import checks.gone\n"})
    scan = Scanner(load_config(tmp_path)).scan("checks.a")
    assert scan.missing == {"checks/gone.py"}


def test_reasons() -> None:
    old = {"statement": "1", "check:x:run": "r", "check:x:params": "p", "check:x:expect": "e",
           "check:x:controls": "c", "source:checks/a.py": "h", "source:checks/b.py": "h",
           "version:python": "3.11.7", "version:torch": "2.13.0"}
    new = {**old, "statement": "2", "check:x:params": "q", "source:checks/a.py": "i",
           "version:torch": "2.14.0", "source:checks/c.py": "h"}
    del new["source:checks/b.py"]
    assert diff(old, new, {"x": {"n": 2, "k": 1}}, {"x": {"n": 3, "k": 1}}) == [
        "statement changed",
        "check 'x': param n 2 -> 3",
        "checks/a.py changed",
        "checks/b.py no longer imported",
        "checks/c.py now imported",
        "torch 2.13.0 -> 2.14.0",
    ]
    added = {**old, "check:y:run": "r", "check:y:params": "p"}
    assert diff(old, added) == ["check 'y' added"]
    assert diff(added, old) == ["check 'y' removed"]


@needs_torch
def test_environment_reads_metadata_without_importing_torch() -> None:
    import subprocess
    import sys

    # in a fresh process: this one may have imported torch already (the lab's tests do)
    code = ("import sys; from recordtool.verify.fingerprint import environment\n"
            "v = environment(['click', 'recordtool', 'torch']); print(sorted(v), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['click', 'python', 'recordtool', 'torch'] False"
    versions = environment(["click"])
    assert versions["python"].count(".") == 2


def test_positives_setting_and_analogue_are_in_the_fingerprint_when_given() -> None:
    """Issue 63's fields: none of them changes the fingerprint of a check that gives none
    (the committed verdicts stay fresh), and a change of any names it."""
    base = {"name": "small", "run": "checks.fake:ok", "expect": {"err": "< 0.5"},
            "controls": [{"name": "broken", "params": {"broken": True}}]}
    plain = check_parts(CheckSpec.model_validate(base))
    assert not any(k.endswith((":positives", ":setting", ":analogue")) for k in plain)
    given = check_parts(CheckSpec.model_validate({**base, "positives": [{"params": {"planted": True}}],
                                                  "setting": "a toy", "analogue": True}))
    assert diff(plain, given) == ["check 'small': analogue changed", "check 'small': positives changed",
                                  "check 'small': setting changed"]
    spec = CheckSpec.model_validate({**base, "positives": [{"params": {"planted": True}}], "setting": " a  toy "})
    assert ([p.name for p in spec.all_positives], spec.setting) == (["positive-1"], "a toy")
    with pytest.raises(ValidationError, match="'broken' names both a control and a positive"):
        CheckSpec.model_validate({**base, "positives": [{"name": "broken"}]})
    with pytest.raises(ValidationError, match="the setting is one line"):
        CheckSpec.model_validate({**base, "setting": "a toy\nand more"})
