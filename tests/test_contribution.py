"""A user's first contribution to this very project keeps CI green.

In a temporary copy of the repository, a paper, a claim of two clauses and a new check module
are added to the shipped record with the command line, as docs/record.md tells it. Then what CI
runs on a contribution, applied to it: the whole record validates without an error, the new
claim's own checks verify it, and the pages render with every link resolving. The rest of the
suite cannot depend on the shipped record (tests/conftest.py fails a test that reads it unless
it is marked ``shipped_record``), so it is not run again here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_first_claim import CHECK, CLAIM

REPO = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".recordtool-cache*", "*.egg-info", ".pytest_cache",
                                 ".mypy_cache", ".ruff_cache", "out", "pages-site", ".recordtool-snapshot.json")


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "recordtool", *args[:1], "--root", str(root), *args[1:]],
                          capture_output=True, text=True, check=False, env=env, cwd=root)


def created_id(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return Path(result.stdout.strip()).stem


@pytest.mark.shipped_record
def test_adding_a_paper_a_claim_and_a_check_to_the_shipped_record_keeps_ci_green(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO, root, ignore=IGNORED)

    paper = created_id(cli(root, "new", "literature", "--title", "Learning lines"))
    claim = created_id(cli(root, "new", "theory", "--title", "Gradient descent recovers the slope"))
    lit = root / "record" / "literature" / f"{paper}.yaml"
    lit.write_text(lit.read_text(encoding="utf-8").replace('"Surname, I."', '"Doe, J."')
                   .replace("Write the body here, in Markdown. Mention other entries by id.", "Fits lines."),
                   encoding="utf-8")
    module = "first_fit"
    while (root / "checks" / f"{module}.py").exists():  # never overwrite a check the record ships
        module += "_"
    (root / "checks" / f"{module}.py").write_text(CHECK, encoding="utf-8")
    text = textwrap.dedent(CLAIM).lstrip().replace("LIT-2", paper).replace("checks.fit:", f"checks.{module}:")
    (root / "record" / "theory" / f"{claim}.yaml").write_text(f"id: {claim}\nkind: theory\n{text}", encoding="utf-8")

    validate = cli(root, "validate")
    assert validate.returncode == 0 and " 0 errors, " in validate.stdout, validate.stdout + validate.stderr
    # only the new claim's checks: the shipped claims' verdicts are CI's own first job
    verify = cli(root, "verify", claim)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert re.search(rf"^{claim} +verified", verify.stdout, re.MULTILINE), verify.stdout
    render = cli(root, "render", "--check")
    assert render.returncode == 0, render.stdout + render.stderr
    assert f"[{claim}]({claim}.md)" in (root / "record" / "pages" / "index.md").read_text(encoding="utf-8")
    assert (root / "record" / "pages" / f"{paper}.md").is_file()
