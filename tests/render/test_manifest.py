"""The manifest: one line per file, valid JSON whatever the paths, read back as written."""

from __future__ import annotations

import json
from pathlib import Path

from recordtool.render.manifest import MANIFEST, Written, manifest_text, read_manifest


def test_the_manifest_is_json_with_one_line_a_file(tmp_path: Path) -> None:
    files: dict[str, Written] = {"NOTE-1.md": ("0f" * 16, 120, "ab" * 16), "figures/THEORY-1/a b.png": (None, 9, "cd"),
                                 'odd "quoted" \\ é\x01.md': ("k", 0, "")}
    text = manifest_text(files)
    assert json.loads(text) == {"format": 1, "files": {rel: {"hash": h, "key": k, "size": s}
                                                       for rel, (k, s, h) in files.items()}}
    assert text.count("\n") == len(files) + 2  # the head, a line per file, the end
    assert '"NOTE-1.md": {"hash": "' + "ab" * 16 + '", "key": "' + "0f" * 16 + '", "size": 120}' in text
    (tmp_path / MANIFEST).write_text(text, encoding="utf-8")
    assert read_manifest(tmp_path) == files
    assert json.loads(manifest_text({})) == {"format": 1, "files": {}}
