"""Link checking finds what does not resolve, with its page and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recordtool.record.project import open_project
from recordtool.render import linkcheck
from recordtool.render.linkcheck import BrokenLink, check_folder, links
from recordtool.render.site import render
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses


def _check(out: Path, **options: Any) -> list[BrokenLink]:
    """The broken links of every ``.md`` file under ``out``."""
    return check_folder(out, [p.relative_to(out).as_posix() for p in out.rglob("*.md")], **options)


def test_links_images_and_mermaid_clicks_with_their_lines() -> None:
    text = "# T\n\nsee [a](a.md) and\n![i](img/x.png) `[no](code.md)`\n\n```mermaid\ngraph LR\n  click n0 \"b.md\"\n```\n"
    assert links(text) == [(3, "a.md"), (4, "img/x.png"), (8, "b.md")]


def test_check_folder_reports_broken_and_ignores_urls(tmp_path: Path) -> None:
    pages = {
        "index.md": "[ok](A.md) [web](https://x.org) [anchor](#top) [bad](B.md)\n",
        "A.md": "[up](index.md) [tag](tags/t.md#x) [abs](/etc/passwd)\n",
        "tags/t.md": "[back](../A.md) [gone](../C.md)\n",
    }
    for rel, text in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert _check(tmp_path) == [
        BrokenLink("A.md", 1, "/etc/passwd", "an absolute path; write a relative link"),
        BrokenLink("index.md", 1, "B.md", "B.md does not exist"),
        BrokenLink("tags/t.md", 1, "../C.md", "C.md does not exist"),
    ]


def test_check_finds_a_planted_broken_link(project: ProjectBuilder) -> None:
    record = small_record(project)
    out = project.root / "record" / "pages"
    report = render(record, statuses=statuses(record), check=True)
    assert report.broken == []
    page = out / "NOTE-1.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA [planted](NOPE-1.md) link.\n", encoding="utf-8")
    lines = page.read_text(encoding="utf-8").count("\n")
    assert [str(b) for b in _check(out)] == [f"NOTE-1.md:{lines}: broken link 'NOPE-1.md': NOPE-1.md does not exist"]
    # and a broken link written in an entry's body is found by render --check too
    project.add("NOTE-2", "title: T\nbody: 'A [missing file](nothere.csv).'\n")
    report = render(open_project(root=project.root), statuses=statuses(record), check=True)
    written = (out / "NOTE-2.md").read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(written, 1) if "nothere.csv" in text)
    assert [str(b) for b in report.broken or []] == [
        f"NOTE-2.md:{line}: broken link '../notes/nothere.csv': ../notes/nothere.csv does not exist"]


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_check_folder_finds_the_same_shared_by_any_number_of_processes(
        jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linkcheck, "PARALLEL_MIN", 1)
    pages = {}
    for n in range(300):
        folder = "tags/" if n % 7 == 0 else ""
        up = "../" if folder else ""
        pages[f"{folder}P-{n}.md"] = (f"# P-{n}\n\n[next]({up}P-{n + 1}.md) and [fig]({up}figs/{n}.png)\n"
                                      f"![img]({up}P-{n}.md)\n")
    for rel, text in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "figs").mkdir()
    for n in range(0, 300, 2):
        (tmp_path / "figs" / f"{n}.png").write_bytes(b"")
    told: list[int] = []
    found = _check(tmp_path, jobs=jobs, progress=told.append)
    assert found == _check(tmp_path, jobs=1)
    assert sum(told) == len(pages)
    # every page links the next, which is not there for the last, or in the wrong folder for a sixth
    assert len([b for b in found if b.target.endswith(".md")]) > 40
    assert len([b for b in found if b.target.endswith(".png")]) == 150
