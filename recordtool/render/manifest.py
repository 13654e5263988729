"""The manifest (``.recordtool-manifest.json`` in the output folder): every file recordtool
wrote, with the key of its inputs, its size and a hash of its content.

An unchanged page is not even composed again, a page composed again the same is not
rewritten, and only files the manifest lists are ever removed.

The manifest is JSON with one line per file, in the order of the files' paths. A render after
a small edit keeps most lines as they were: ``Manifest`` holds each file's line as written,
parses one only when asked, and writes the unchanged ones back as they were read (at 100,000
pages, parsing every line and writing each again took half a second).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

MANIFEST = ".recordtool-manifest.json"
MANIFEST_FORMAT = 1
_HEAD = f'{{"format": {MANIFEST_FORMAT}, "files": {{'
_END = "}}\n"


Written = tuple[str | None, int, str]
"""What the manifest keeps of a file written: the key of its inputs (None for a copied figure),
its size and the hash of its content."""


_PLAIN = re.compile(r"[ -!#-\[\]-~]*")  # printable ASCII but '"' and '\\': JSON as it is
_STRING = r'"(?:[^"\\]|\\.)*"'
_LINE = re.compile(rf' ({_STRING}): \{{"hash": ({_STRING}), "key": (null|{_STRING}), "size": (0|[1-9][0-9]*)\}}')
_SPLIT = '": {"hash": "'  # where a line's path ends: a path's own quotes are escaped (\")


def _text(value: str) -> str:
    """``json.dumps(value)``, without its call for the hashes and plain paths that fill a manifest."""
    return f'"{value}"' if _PLAIN.fullmatch(value) else json.dumps(value)


def line(rel: str, written: Written) -> str:
    """The manifest's line for the file ``rel``."""
    key, size, digest = written
    return (f' {_text(rel)}: {{"hash": {_text(digest)}, "key": {"null" if key is None else _text(key)}, '
            f'"size": {int(size)}}}')


def _parse(text: str) -> tuple[str, Written] | None:
    """The path and what a line of ours says of it; None when it is not such a line."""
    match = _LINE.fullmatch(text)
    if match is None:
        return None
    rel, digest, key, size = match.groups()
    return json.loads(rel), (None if key == "null" else json.loads(key), int(size), json.loads(digest))


class Manifest:
    """A manifest: each file's line (``line``) by its path. Lines read are kept as read and
    parsed when asked (``get``); ``text`` writes them in the order of their paths."""

    def __init__(self, lines: dict[str, str] | None = None) -> None:
        self.lines: dict[str, str] = lines if lines is not None else {}
        self._written: dict[str, Written] | None = None  # each line parsed, when read so

    def __len__(self) -> int:
        return len(self.lines)

    def __contains__(self, rel: object) -> bool:
        return rel in self.lines

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Manifest) and self.lines == other.lines

    __hash__ = None  # type: ignore[assignment]

    def get(self, rel: str) -> Written | None:
        if self._written is not None:
            return self._written.get(rel)
        text = self.lines.get(rel)
        parsed = _parse(text) if text is not None else None
        return parsed[1] if parsed is not None else None

    def has_key(self, rel: str, key: str) -> bool:
        """Whether the line of ``rel`` keeps ``key`` (the key is the only field written as
        ``"key": "...", "size": `` on a line: a path's quotes are escaped)."""
        text = self.lines.get(rel)
        if text is None:
            return False
        return f'"key": "{key}", "size": ' in text if key.isalnum() and key.isascii() \
            else f'"key": {_text(key)}, "size": ' in text

    def copied(self, rel: str) -> bool:
        """Whether the line of ``rel`` is that of a figure copied (no key, a hash): what
        ``get(rel)`` says of it, without parsing the line (in ``has_key``'s way: a path's quotes
        are escaped). A verified record's manifest lists a figure or more per claim, each asked
        about on every render: parsing their lines took 16 ms of a render after one edit of
        10,000 entries."""
        if self._written is not None:
            written = self._written.get(rel)
            return written is not None and written[0] is None and bool(written[2])
        text = self.lines.get(rel)
        return text is not None and '"key": null, "size": ' in text and '{"hash": "", ' not in text

    def plain(self) -> bool:
        """Whether only its lines are held (none parsed: ``keep`` copies a line, nothing more)."""
        return self._written is None

    def put(self, rel: str, written: Written) -> None:
        self.lines[rel] = line(rel, written)
        if self._written is not None:
            self._written[rel] = written

    def keep(self, rel: str, old: Manifest) -> None:
        """The line of ``rel`` as ``old`` has it."""
        self.lines[rel] = old.lines[rel]
        if self._written is not None:
            written = old.get(rel)
            assert written is not None
            self._written[rel] = written

    def written(self) -> dict[str, Written]:
        """Every file as plain data (path -> key, size, hash)."""
        if self._written is not None:
            return dict(self._written)
        out: dict[str, Written] = {}
        for text in self.lines.values():
            parsed = _parse(text)
            if parsed is not None:
                out[parsed[0]] = parsed[1]
        return out

    def text(self) -> str:
        """The manifest as JSON with one line per file (a render's change reads as a short
        diff), in the order of the paths."""
        lines = self.lines
        if not lines:
            return _HEAD + _END
        return _HEAD + "\n" + ",\n".join([lines[rel] for rel in sorted(lines)]) + "\n" + _END


def read(out: Path, *, as_written: bool = False) -> Manifest:
    """The manifest in ``out`` (empty if none or damaged). ``as_written``: it is the one the last
    render wrote (its size and time are those that render kept), so its lines are taken as
    they are, each parsed only when asked; otherwise it is parsed as JSON whatever its layout,
    and each file's line made again."""
    try:
        text = (out / MANIFEST).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return Manifest()
    if as_written:
        lines = _lines(text)
        if lines is not None:
            return Manifest(lines)
    manifest = Manifest()
    manifest._written = {}
    for rel, written in _read_json(text).items():
        manifest.put(rel, written)
    return manifest


def _lines(text: str) -> dict[str, str] | None:
    """The lines of a manifest written by ``Manifest.text``, by path; None when ``text`` is
    laid out otherwise."""
    if not (text.startswith(_HEAD) and text.endswith(_END)):
        return None
    body = text[len(_HEAD):-len(_END)]
    if not body:
        return {}
    if not (body.startswith("\n") and body.endswith("\n")):
        return None
    lines: dict[str, str] = {}
    for text_line in body[1:-1].split(",\n"):
        end = text_line.find(_SPLIT)
        if end < 3 or text_line[1] != '"':
            return None
        rel = text_line[2:end]
        if "\\" in rel or "\n" in text_line:
            parsed = _parse(text_line)
            if parsed is None:
                return None
            rel = parsed[0]
        lines[rel] = text_line
    return lines


def _read_json(text: str) -> dict[str, Written]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    written: dict[str, Written] = {}
    for rel, v in files.items():
        if isinstance(v, dict):
            key, size, digest = v.get("key"), v.get("size"), v.get("hash")
            if (key is None or isinstance(key, str)) and isinstance(size, int) and isinstance(digest, str):
                written[str(rel)] = (key, size, digest)
    return written


def read_manifest(out: Path) -> dict[str, Written]:
    """The files recordtool wrote into ``out`` last time (path -> key, size, hash); {} if none."""
    try:
        return _read_json((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def manifest_text(files: dict[str, Written]) -> str:
    """The manifest of ``files`` as JSON with one line per file (``Manifest.text``)."""
    manifest = Manifest()
    for rel, written in files.items():
        manifest.put(rel, written)
    return manifest.text()
