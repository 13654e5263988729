"""The manifest (``.recordtool-manifest.json`` in the output folder): every file recordtool
wrote there, one a line, so that a render writes over and removes only its own files. One of
the first format (a dict of paths, as earlier versions wrote it) is read as its paths.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from recordtool.atomic import write_atomic

MANIFEST = ".recordtool-manifest.json"


class Manifest(BaseModel):
    """The files recordtool wrote into an output folder (paths relative to it, with '/')."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1, 2] = 2
    files: list[str] = []

    @field_validator("files", mode="before")
    @classmethod
    def _paths_of_the_first_format(cls, value: Any) -> Any:
        return list(value) if isinstance(value, dict) else value


def read(out: Path) -> set[str]:
    """The files the manifest in ``out`` lists; none when it is missing, damaged or not ours."""
    try:
        return set(Manifest.model_validate_json((out / MANIFEST).read_bytes()).files)
    except (OSError, ValidationError, ValueError):
        return set()


def write(out: Path, files: set[str]) -> None:
    """Write the manifest of ``files`` into ``out`` (JSON, a path a line, in order), unless the
    one there says the same (in the same format)."""
    text = json.dumps({"format": 2, "files": sorted(files)}, indent=1) + "\n"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if (out / MANIFEST).read_text(encoding="utf-8") == text:
            return
    write_atomic(out / MANIFEST, text)
