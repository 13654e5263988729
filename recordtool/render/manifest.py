"""The manifest (``.recordtool-manifest.json`` in the output folder): every file recordtool
wrote there, so that a render writes over and removes only its own files.

It lists paths only, sorted, one a line: it is committed beside the pages and changes only
when a page or a figure comes or goes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from recordtool.atomic import write_atomic

MANIFEST = ".recordtool-manifest.json"


class Manifest(BaseModel):
    """The files recordtool wrote into an output folder (paths relative to it, with '/')."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1, 2] = 2
    files: list[str] = []


def read(out: Path) -> set[str]:
    """The files the manifest in ``out`` lists; none when it is missing, damaged or not ours."""
    try:
        return set(Manifest.model_validate_json((out / MANIFEST).read_bytes()).files)
    except (OSError, ValidationError, ValueError):
        return set()


def text(files: set[str]) -> str:
    """The manifest of ``files`` as JSON, a path a line, in order."""
    return json.dumps({"format": 2, "files": sorted(files)}, indent=1) + "\n"


def write(out: Path, files: set[str]) -> None:
    write_atomic(out / MANIFEST, text(files))
