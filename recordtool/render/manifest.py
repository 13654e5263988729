"""The manifest (``.recordtool-manifest.json`` in the output folder): every file recordtool
wrote, with the key of its inputs, its size and a hash of its content.

An unchanged page is not even composed again, a page composed again the same is not
rewritten, and only files the manifest lists are ever removed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

MANIFEST = ".recordtool-manifest.json"
MANIFEST_FORMAT = 1


Written = tuple[str | None, int, str]
"""What the manifest keeps of a file written: the key of its inputs (None for a copied figure),
its size and the hash of its content."""


def read_manifest(out: Path) -> dict[str, Written]:
    """The files recordtool wrote into ``out`` last time (path -> key, size, hash); {} if none."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
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


_PLAIN = re.compile(r"[ -!#-\[\]-~]*")  # printable ASCII but '"' and '\\': JSON as it is


def _text(value: str) -> str:
    """``json.dumps(value)``, without its call for the hashes and plain paths that fill a manifest."""
    return f'"{value}"' if _PLAIN.fullmatch(value) else json.dumps(value)


def manifest_text(files: dict[str, Written]) -> str:
    """The manifest as JSON with one line per file (a render's change reads as a short diff),
    written with the C encoder: ``indent`` would take the pure-Python one, ten times slower."""
    lines = [f'\n {_text(rel)}: {{"hash": {_text(digest)}, "key": {"null" if key is None else _text(key)}, '
             f'"size": {int(size)}}}' for rel, (key, size, digest) in sorted(files.items())]
    return f'{{"format": {MANIFEST_FORMAT}, "files": {{' + ",".join(lines) + ("\n" if lines else "") + "}}\n"
