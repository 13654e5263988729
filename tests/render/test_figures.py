"""Figures on a claim's page: grouped under the main run and each control, numbered, captioned."""

from __future__ import annotations

import json
from pathlib import Path

from recordtool.render.page import render_entry
from recordtool.render.plan import context, faces
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses, verdict

BASE = "record/verdicts/figures/THEORY-1/exact"


def _figures(root: Path, words: dict[str, dict[str, str]]) -> list[str]:
    names = [f"{BASE}/loss.png", f"{BASE}/patterns.png", f"{BASE}/seed-1/loss.png", f"{BASE}/control/patterns.png"]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"png")
    for name, sidecar in words.items():
        (root / f"{BASE}/{name}.json").write_text(json.dumps(sidecar), encoding="utf-8")
    return names


def test_figures_are_numbered_captioned_and_grouped_by_run(project: ProjectBuilder) -> None:
    record = small_record(project)
    figures = _figures(project.root, {
        "loss.png": {"title": "Training loss", "caption": "It falls as the model learns *fast*."},
        "control/patterns.png": {"title": "Attention of the untrained model's heads"},
        "patterns.png": ["not", "a", "caption"],  # type: ignore[dict-item]
    })
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=figures))
    page = render_entry(context(record, statuses(record, THEORY_1=status)), "THEORY-1")
    body = page[page.index("#### Figures"):page.index("### Provenance")].strip().split("\n\n")
    assert body == [
        "#### Figures: main run",
        "![Figure 1. Training loss](figures/THEORY-1/exact/loss.png)",
        "*Figure 1. Training loss.* It falls as the model learns \\*fast\\*.",
        "![Figure 2. patterns.png](figures/THEORY-1/exact/patterns.png)",
        "*Figure 2.* patterns.png",
        '<details markdown="1">\n<summary>Figures: main run, seed 1</summary>',
        "![Figure 3. loss.png](figures/THEORY-1/exact/seed-1/loss.png)",
        "*Figure 3.* loss.png",
        "</details>",
        "#### Figures: control `control`",
        "![Figure 4. Attention of the untrained model's heads](figures/THEORY-1/exact/control/patterns.png)",
        "*Figure 4. Attention of the untrained model's heads.*",
    ]


def test_a_new_caption_changes_the_claims_face(project: ProjectBuilder) -> None:
    record = small_record(project)
    figures = _figures(project.root, {"loss.png": {"title": "Before"}})
    status = ClaimStatus("THEORY-1", "verified", verdict(figures=figures))
    before = faces(context(record, statuses(record, THEORY_1=status)))["THEORY-1"]
    (project.root / f"{BASE}/loss.png.json").write_text(json.dumps({"title": "After"}), encoding="utf-8")
    after = faces(context(record, statuses(record, THEORY_1=status)))["THEORY-1"]
    assert before != after
