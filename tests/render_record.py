"""A small hand-made record and hand-made verdicts, for the render tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import recordtool
from recordtool.record.config import Config
from recordtool.record.project import Project, open_project
from recordtool.verify.verdict import (
    CheckVerdict,
    ClaimStatus,
    ClaimVerdict,
    ControlResult,
    ExpectationResult,
    Run,
)
from tests.conftest import ProjectBuilder


def small_record(project: ProjectBuilder, check_more: str = "") -> Project:
    """LIT-1 (a paper), NOTE-1 (a note citing it as paper), THEORY-1 (citing it as source,
    mentioning NOTE-1 and the missing THEORY-99; ``check_more``: more YAML lines of its check),
    THEORY-2 (using THEORY-1)."""
    project.add("LIT-1", """
        title: A paper
        tags: [alpha]
        reference: {authors: ["Doe, J.", "Roe, R."], year: 2021, title: A paper, venue: A Journal, url: "https://example.org/p"}
        body: The paper. See NOTE-1.
    """)
    project.add("NOTE-1", """
        title: Notes on the paper
        tags: [alpha, beta]
        cites: [{id: LIT-1, as: paper}]
        body: |
          Read LIT-1 in full. Its claim is THEORY-1.

          Not a mention: `THEORY-2` in code.
    """)
    project.add("THEORY-1", """
        title: The claim
        statement: The paper's claim, drawn from LIT-1.
        cites: [{id: LIT-1, as: source}]
        body: Checked as NOTE-1 suggests; THEORY-99 would extend it.
        checks:
          - name: exact
            run: checks.demo:measure
            params: {n: 2}
            expect: {error: "< 1e-9", terms: "== 5"}
            control: {params: {noise: true}}
    """.rstrip(" ") + "".join(f"        {line}\n" for line in check_more.splitlines()))
    project.add("THEORY-2", """
        statement: A second claim that uses the first.
        cites: [{id: THEORY-1, as: uses}]
    """)
    return open_project(root=project.root)


def verdict(claim: str = "THEORY-1", outcome: str = "pass", *, error: str | None = None,
            figures: list[str] | None = None) -> ClaimVerdict:
    ok = error is None
    runs = [Run(seed=0, outcome="ok" if ok else "error",
                metrics={"error": 2.3e-15, "terms": 5, "loss": [0.5, 0.4, 0.3, 0.2, 0.1]} if ok else {},
                expectations=[ExpectationResult("error", "< 1e-9", 2.3e-15, True),
                              ExpectationResult("terms", "== 5", 5.0, True)] if ok else [],
                duration_s=1.5, error=error)]
    controls = [ControlResult("control", {"noise": True}, "failed-as-required",
                              [Run(0, "ok", {"error": 0.31, "terms": 5},
                                   [ExpectationResult("error", "< 1e-9", 0.31, False),
                                    ExpectationResult("terms", "== 5", 5.0, True)], 1.0)])] if ok else []
    check = CheckVerdict(name="exact", run="checks.demo:measure", params={"n": 2}, outcome=outcome,  # type: ignore[arg-type]
                         message="" if ok else "the check raised ValueError", runs=runs, controls=controls,
                         figures=figures or [], duration_s=2.5, nondeterministic=False)
    return ClaimVerdict(claim=claim, outcome=outcome, statement="The paper's claim, drawn from LIT-1.",  # type: ignore[arg-type]
                        checks=[check], fingerprint={"statement": "abc"}, verified_at="2026-11-29T14:03:00Z",
                        since="2026-11-28T10:00:00Z", duration_s=2.5, seeds=[0], git_commit="0123456789abcdef",
                        git_dirty=False, versions={"python": "3.11.7", "torch": "2.4.0"}, device="cpu")


def statuses(project: Project, **states: ClaimStatus) -> dict[str, ClaimStatus]:
    """Every claim unchecked, except those given (by id with '-' as '_')."""
    out = {c.id: ClaimStatus(c.id, "unchecked", None) for c in project.record.claims()}
    for key, status in states.items():
        out[key.replace("_", "-")] = status
    return out


def site_markdown(config: Config) -> Any:
    """Python-Markdown as the site reads the pages of ``config``'s record: MkDocs' own extensions
    (``toc``, ``tables``) and those the ``mkdocs.yml`` that ``render --site`` writes names; None
    where the ``site`` extra is not installed."""
    try:
        import markdown
        import pymdownx  # noqa: F401
    except ImportError:
        return None
    from recordtool.render.mkdocs import mkdocs_config

    names: list[str] = []
    lines = iter(mkdocs_config(config, config.pages).split("\n"))
    for line in lines:
        if line == "markdown_extensions:":
            break
    for line in lines:
        if not line.startswith("  "):
            break
        if line.startswith("  - "):
            names.append(line[4:].split("#")[0].strip().rstrip(":"))
    return markdown.Markdown(extensions=["toc", "tables", *names])


def build_site(root: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the site ``render --site`` configured under ``root``, with
    this tree's recordtool (its MkDocs plugin), not an installed one."""
    here = str(Path(recordtool.__file__).resolve().parents[1])
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "record/mkdocs.yml"],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": here})
