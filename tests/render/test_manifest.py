"""The manifest: one line per file, valid JSON whatever the paths, read back as written."""

from __future__ import annotations

import json
from pathlib import Path

from recordtool.render import manifest
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


def test_a_manifest_as_written_is_read_line_by_line_and_written_back_the_same(tmp_path: Path) -> None:
    files: dict[str, Written] = {"NOTE-1.md": ("0f" * 16, 120, "ab" * 16), "figures/THEORY-1/a b.png": (None, 9, "cd"),
                                 'odd "quoted" \\ é\x01.md': ("k", 0, ""), 'a": {"hash": "x.md': ("k2", 3, "ef")}
    text = manifest_text(files)
    (tmp_path / MANIFEST).write_text(text, encoding="utf-8")
    for as_written in (True, False):
        read = manifest.read(tmp_path, as_written=as_written)
        assert read.written() == files and read.text() == text
        assert all(read.get(rel) == value for rel, value in files.items()) and read.get("other.md") is None
        assert read.has_key("NOTE-1.md", "0f" * 16) and not read.has_key("NOTE-1.md", "0f" * 15)
        assert read.has_key('a": {"hash": "x.md', "k2") and not read.has_key("NOTE-1.md", "k2")
        kept = manifest.Manifest()
        for rel in files:
            kept.keep(rel, read)
        kept.put("NOTE-1.md", ("1f" * 16, 121, "ab" * 16))
        assert kept.written() == {**files, "NOTE-1.md": ("1f" * 16, 121, "ab" * 16)}
        assert kept.text() == manifest_text(kept.written())
    # laid out otherwise (by hand, another tool): read as JSON whatever it was said to be
    (tmp_path / MANIFEST).write_text(json.dumps(json.loads(text), indent=2), encoding="utf-8")
    assert manifest.read(tmp_path, as_written=True).written() == files
    (tmp_path / MANIFEST).write_text(text.replace('{"format": 1, "files": {', '{"files": {', 1), encoding="utf-8")
    assert manifest.read(tmp_path, as_written=True).written() == files
    (tmp_path / MANIFEST).write_text("{not json", encoding="utf-8")
    assert len(manifest.read(tmp_path, as_written=True)) == 0


def test_has_key_finds_each_key_as_its_line_writes_it() -> None:
    """``Manifest.has_key`` looks for a plain key (letters and digits: every key a render makes)
    as it is, any other as JSON writes it, on the line read back as written."""
    from recordtool.render.manifest import Manifest, _lines

    keys = ["0123abcdef", 'a"b', "a\\b", "é1", "a b", ""]
    written = Manifest()
    for n, key in enumerate(keys):
        written.put(f"page-{n}.md", (key, n, "hash"))
    read = Manifest(_lines(written.text()))
    for n, key in enumerate(keys):
        assert read.has_key(f"page-{n}.md", key) and written.has_key(f"page-{n}.md", key), key
        assert not read.has_key(f"page-{n}.md", key + "x") and not read.has_key(f"page-{n + 1}.md", key + "y")


def test_copied_says_what_the_parsed_line_says(tmp_path: Path) -> None:
    """``Manifest.copied`` (a figure copied: no key, a hash) reads the line as written without
    parsing it, and answers as its parse does, for paths that look like a line's fields; a
    manifest read as JSON answers from what it parsed."""
    rels = ["figures/a.png", 'a", "key": null, "size": 1.png', 'b{"hash": "", .png', "c\\d.md", "é.md"]
    values: list[Written] = [(None, 9, "cd"), (None, 0, ""), ("k", 3, "ef"), ("", 1, "ab"), (None, 1, 'x"y')]
    for shift in range(len(values)):
        (tmp_path / MANIFEST).write_text(manifest_text({rel: values[(n + shift) % len(values)]
                                                        for n, rel in enumerate(rels)}), encoding="utf-8")
        lines = manifest.read(tmp_path, as_written=True)
        parsed = manifest.read(tmp_path)
        assert lines.plain() and not parsed.plain()
        for rel in [*rels, "other.png"]:
            said = parsed.get(rel)  # (no key, a hash)
            assert lines.copied(rel) == parsed.copied(rel) == (said is not None and said[0] is None and bool(said[2])), \
                (rel, shift)
        assert sum(lines.copied(rel) for rel in rels) == 2  # (None, 9, "cd") and (None, 1, 'x"y')
