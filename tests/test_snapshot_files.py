"""recordtool.snapshot: the installed versions that a code version names, read without importing
``importlib.metadata`` when a ``.dist-info`` folder names them."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from recordtool import store as snapshot


def _installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def test_the_versions_are_those_importlib_metadata_gives() -> None:
    dists = ["markdown-it-py", "pydantic", "PyYAML", "recordtool", "click", "pydantic_core", "no-such-distribution"]
    assert snapshot.dist_versions(dists) == {dist: _installed(dist) for dist in dists}
    assert snapshot.dist_versions(dists)["no-such-distribution"] is None


def _plant(folder: Path, version: str) -> None:
    """A distribution's metadata folder (``.dist-info`` or ``.egg-info``), as an installer leaves it."""
    folder.mkdir(parents=True)
    meta = "PKG-INFO" if folder.name.endswith(".egg-info") else "METADATA"
    (folder / meta).write_text(f"Metadata-Version: 2.1\nName: markdown-it-py\nVersion: {version}\n", encoding="utf-8")


def test_the_first_folder_of_the_path_that_holds_one_gives_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel's folder names its distribution with underscores and its version: the first on
    ``sys.path`` wins; an ``.egg-info`` met first is read by ``importlib.metadata`` itself."""
    first, second = tmp_path / "first", tmp_path / "second"
    _plant(second / "markdown_it_py-98.0.dist-info", "98.0")
    _plant(first / "Markdown_It.Py-99.0.dist-info", "99.0")
    monkeypatch.setattr(sys, "path", [str(first), str(second), *sys.path])
    assert snapshot.dist_versions(["markdown-it-py"]) == {"markdown-it-py": "99.0"} == {
        "markdown-it-py": _installed("markdown-it-py")}
    egg = tmp_path / "egg"
    _plant(egg / "markdown_it_py.egg-info", "97.0")
    monkeypatch.setattr(sys, "path", [str(egg), *sys.path])
    assert snapshot.dist_versions(["markdown-it-py"]) == {"markdown-it-py": "97.0"} == {
        "markdown-it-py": _installed("markdown-it-py")}


def test_a_code_version_names_the_versions_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot.code_version(("markdown-it-py",))
    _plant(tmp_path / "markdown_it_py-99.0.dist-info", "99.0")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    snapshot.code_version.cache_clear()
    try:
        assert snapshot.code_version(("markdown-it-py",)) != before
        assert snapshot.code_version(()) == snapshot.code_version(("no-such-distribution",))
    finally:
        snapshot.code_version.cache_clear()
