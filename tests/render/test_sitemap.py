"""Where pages go and how they name states (``recordtool.render.sitemap``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import get_args

import pytest

from recordtool.render import escape, sitemap
from recordtool.render.sitemap import BADGES, badge, outcome_badge
from recordtool.verify.verdict import Outcome
from tests.conftest import ProjectBuilder
from tests.corpus import invoke


def test_a_known_state_or_outcome_has_its_badge_and_any_other_its_name_on_one_line_escaped() -> None:
    assert badge("verified") == "✅ verified" and badge("stale") == "⚠️ stale"
    assert outcome_badge("pass") == "✅ pass" and outcome_badge("timeout") == "⏱️ timeout"
    assert badge("half\n  *done*") == escape.line("half\n  *done*") == "half \\*done\\*"
    assert outcome_badge("odd_one") == escape.line("odd_one")


def test_a_known_states_badge_is_looked_up_without_escaping_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard and the claims' kind page give a badge per claim (40,000 of them at 100,000
    entries): a known state's badge is looked up, its name not escaped each time for nothing."""
    def refuse(value: str) -> str:
        raise AssertionError(f"escaped {value!r}")

    monkeypatch.setattr(sitemap.escape, "line", refuse)
    assert [badge(state) for state in BADGES] == list(BADGES.values())
    outcomes = get_args(Outcome)
    assert [outcome_badge(o) for o in outcomes] == ["✅ pass", "❌ fail", *(BADGES[o] for o in outcomes[2:])]


def test_after_a_title_edit_the_pages_composed_again_name_their_neighbours(
        project: ProjectBuilder, tmp_path: Path) -> None:
    """A title edit of a paper four claims cite writes the claims' pages again; each also
    shows the title of another paper it cites and of a note that mentions it; the pages are
    those of a cold render."""
    project.add("LIT-1", 'title: The paper\nreference: {authors: ["Doe, J."], year: 2021, title: P}\n')
    for n in range(1, 5):
        project.add(f"LIT-{n + 1}", f'title: Paper {n + 1}\nreference: {{authors: ["Doe, J."], year: 2021, title: P}}\n')
        project.add(f"THEORY-{n}", f"title: Claim {n}\nstatement: Claim {n} holds.\n"
                                   f"cites: [{{id: LIT-1, as: source}}, {{id: LIT-{n + 1}, as: source}}]\n")
        project.add(f"NOTE-{n}", f"title: Note {n}\nbody: On THEORY-{n}.\n")
    assert invoke("render", "--root", str(project.root)).code == 0
    path = project.path("LIT-1")
    path.write_text(path.read_text(encoding="utf-8").replace("The paper", "The first paper"), encoding="utf-8")
    rendered = invoke("render", "--root", str(project.root))
    assert rendered.code == 0 and not rendered.err
    assert ": 7 written, " in rendered.out, rendered.out  # LIT-1's page, the four claims', two lists
    page = (project.root / "record" / "pages" / "THEORY-2.md").read_text(encoding="utf-8")
    assert "The first paper" in page and "Paper 3" in page and "Note 2" in page
    cold = tmp_path / "cold"
    shutil.copytree(project.root, cold, ignore=shutil.ignore_patterns(".recordtool-cache", "pages"))
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert _pages(project.root / "record" / "pages") == _pages(cold / "record" / "pages")


def _pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".recordtool-snapshot.json"}
