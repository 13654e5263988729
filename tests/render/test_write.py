"""Writing the site: the files the last render wrote, as its snapshot keeps them (``Outputs``)."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

from recordtool.render.manifest import Manifest
from recordtool.render.write import Outputs, WriteReport


def _state(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def test_files_not_as_written_are_found_and_the_others_kept(tmp_path: Path) -> None:
    names = [f"p{n}.md" for n in range(5000)] + ["tags/a.md"]  # more than one block of states
    (tmp_path / "tags").mkdir()
    for name in names:
        (tmp_path / name).write_text(name, encoding="utf-8")
    stats = array("q", [v for name in names for v in _state(tmp_path / name)])
    outputs = Outputs(names, stats)
    base = os.path.realpath(tmp_path)
    assert outputs.spoiled(base) == set()
    assert outputs.get("p7.md") == _state(tmp_path / "p7.md") and outputs.get("gone.md") is None
    (tmp_path / "p4999.md").write_text("p4999.mX", encoding="utf-8")  # edited by hand, the same size
    os.utime(tmp_path / "p4999.md", ns=(1, 1))
    (tmp_path / "tags" / "a.md").unlink()
    os.utime(tmp_path / "p3.md", ns=(5, 5))  # only its time
    assert outputs.spoiled(base) == {"p4999.md", "tags/a.md", "p3.md"}
    # the next render's states: those it wrote, the others as the last render wrote them
    report = WriteReport(kept=outputs)
    for name in names:
        report.files.lines[name] = "-"
    report.stats["p3.md"] = [3, 4]
    after = report.outputs()
    assert after.paths == sorted(names) and after.get("p3.md") == [3, 4] and after.get("p7.md") == outputs.get("p7.md")
    report.files = Manifest({name: "-" for name in [*names[1:], "new.md"]})  # one gone, one new
    report.stats["new.md"] = [1, 2]
    after = report.outputs()
    assert after.paths == sorted([*names[1:], "new.md"]) and after.get("new.md") == [1, 2]
    assert after.get("p3.md") == [3, 4] and after.get("p9.md") == outputs.get("p9.md")
