"""A researcher's first claim, as docs/record.md and docs/checks.md tell it: a paper, a claim
of two clauses and a new check module added to a small project, then validate, verify,
render and show, each from the command line. Nothing here reads the shipped record."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from tests.conftest import ProjectBuilder

RECORDTOOL = [sys.executable, "-m", "recordtool"]

# A check that trains: a line fitted by gradient descent, in plain Python (quick and seeded).
CHECK = '''
import random
from typing import TypedDict

from recordtool import CheckContext

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


class FitMetrics(TypedDict):
    slope_error: float
    fit_loss: float
    loss_curve: list[float]


def measure(ctx: CheckContext, *, steps: int = 300, lr: float = 0.05, train: bool = True) -> FitMetrics:
    rng = random.Random(ctx.seed)
    xs = [rng.uniform(-1, 1) for _ in range(64)]
    ys = [3.0 * x for x in xs]
    w, curve = 0.0, []
    for step in range(steps if train else 0):
        grad = sum(2 * (w * x - y) * x for x, y in zip(xs, ys)) / len(xs)
        w -= lr * grad * 10
        curve.append(sum((w * x - y) ** 2 for x, y in zip(xs, ys)) / len(xs))
        if step % 100 == 0:
            ctx.progress(f"step {step}/{steps}, loss {curve[-1]:.4f}")
    ctx.figure("fit.png").write_bytes(PNG)
    loss = sum((w * x - y) ** 2 for x, y in zip(xs, ys)) / len(xs)
    return {"slope_error": abs(w - 3.0), "fit_loss": loss, "loss_curve": curve}
'''

CLAIM = '''
title: Gradient descent recovers the slope
statement: >-
  Gradient descent on squared error recovers the slope of noiseless linear data, and the
  fitted line then matches the data.
clauses:
  recovers-slope: Gradient descent recovers the slope of noiseless linear data.
  fits-data: The fitted line matches the data.
cites:
  - {id: LIT-2, as: source}
checks:
  - name: line-fit
    run: checks.fit:measure
    params: {steps: 300}
    seeds: 2
    expect:
      slope_error: {is: "< 0.01", clause: recovers-slope}
      fit_loss: {is: "< 1e-4", clause: fits-data}
    observe:
      loss_curve: fits-data
    controls:
      - name: untrained
        params: {train: false}
    timeout: 60
body: Drawn from LIT-2.
'''


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RECORDTOOL, *args[:1], "--root", str(root), *args[1:]], capture_output=True, text=True,
                          check=False)


def test_a_paper_a_claim_of_two_clauses_and_a_new_check_reach_a_verified_page(
        minimal: Callable[[], ProjectBuilder]) -> None:
    root = minimal().root
    (root / "checks").mkdir()
    (root / "checks" / "__init__.py").write_text("", encoding="utf-8")

    paper = cli(root, "new", "literature", "--title", "Learning lines")
    assert (paper.returncode, paper.stdout) == (0, "record/literature/LIT-2.yaml\n")
    claim = cli(root, "new", "theory", "--title", "Gradient descent recovers the slope")
    assert (claim.returncode, claim.stdout) == (0, "record/theory/THEORY-2.yaml\n")
    placeholders = cli(root, "validate", "--strict")
    assert placeholders.returncode == 1 and "still the template's placeholder" in placeholders.stderr

    # the author fills in the paper and writes the claim and its check
    lit = root / "record" / "literature" / "LIT-2.yaml"
    lit.write_text(lit.read_text(encoding="utf-8").replace('"Surname, I."', '"Doe, J."')
                   .replace("Write the body here, in Markdown. Mention other entries by id.", "Fits lines."),
                   encoding="utf-8")
    (root / "record" / "theory" / "THEORY-2.yaml").write_text(
        "id: THEORY-2\nkind: theory\n" + textwrap.dedent(CLAIM).lstrip(), encoding="utf-8")
    (root / "checks" / "fit.py").write_text(CHECK, encoding="utf-8")

    validate = cli(root, "validate", "--strict")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert validate.stdout.endswith(": 0 errors, 0 warnings\n")

    verify = cli(root, "verify", "THEORY-2")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert re.search(r"^THEORY-2 +verified", verify.stdout, re.MULTILINE), verify.stdout
    assert "THEORY-2 line-fit seed 1: started" in verify.stderr  # progress, off a terminal
    again = cli(root, "verify", "THEORY-2")
    assert again.returncode == 0 and "ran 0 check runs" in again.stdout

    render = cli(root, "render", "--check")
    assert render.returncode == 0, render.stdout + render.stderr
    page = (root / "record" / "pages" / "THEORY-2.md").read_text(encoding="utf-8")
    assert page.startswith("---\n") and "# THEORY-2: Gradient descent recovers the slope\n" in page
    assert "recovers-slope" in page and "fits-data" in page
    assert re.search(r"figures/THEORY-2/[0-9a-f]{12}/line-fit/fit\.png", page)  # in the folder of its verdict

    show = cli(root, "show", "THEORY-2")
    assert show.returncode == 0
    assert show.stdout.startswith("THEORY-2: Gradient descent recovers the slope\n  verdict:  verified")

    # a typo in the check's YAML is caught before anything runs, at its line, with a hint
    path = root / "record" / "theory" / "THEORY-2.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("{steps: 300}", "{step: 300}"), encoding="utf-8")
    typo = cli(root, "verify", "THEORY-2", "--force")
    assert typo.returncode == 1
    assert ("record/theory/THEORY-2.yaml:15:14: error: checks[0].params.step: measure() (checks/fit.py:17) has no "
            "parameter 'step'; did you mean 'steps'?") in typo.stderr
