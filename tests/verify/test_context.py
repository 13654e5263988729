"""The check context: a figure's path, and its title and caption kept beside it."""

from __future__ import annotations

import json
from pathlib import Path

from recordtool import CheckContext
from recordtool.verify.context import is_sidecar, sidecar


def test_a_figure_with_a_title_and_caption_keeps_them_beside_it(tmp_path: Path) -> None:
    ctx = CheckContext.for_testing(tmp_path)
    path = ctx.figure("loss.png", title="Training loss", caption="The loss  falls\nas it learns.")
    assert path == tmp_path / "figures" / "loss.png" and path.parent.is_dir()
    path.write_bytes(b"png")
    assert sidecar(path) == tmp_path / "figures" / "loss.png.json"
    assert json.loads(sidecar(path).read_text(encoding="utf-8")) == {
        "caption": "The loss falls as it learns.", "title": "Training loss"}
    assert is_sidecar(sidecar(path)) and not is_sidecar(path)


def test_a_figure_without_words_has_no_sidecar(tmp_path: Path) -> None:
    ctx = CheckContext.for_testing(tmp_path)
    path = ctx.figure("plain.png")
    path.write_bytes(b"png")
    assert not sidecar(path).exists()
    data = tmp_path / "figures" / "data.json"  # a check's own JSON file is evidence, not a sidecar
    data.write_text("{}", encoding="utf-8")
    assert not is_sidecar(data)
