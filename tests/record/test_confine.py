"""Confinement without a race: what is checked is what is read, even when a file or a folder
on its way is swapped for a link (or a named pipe) between the check and the opening."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from recordtool.record import confine
from recordtool.record.confine import Refused, read_inside


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "record" / "notes").mkdir(parents=True)
    (tmp_path / "record" / "notes" / "NOTE-1.yaml").write_text("title: mine\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "NOTE-1.yaml").write_text("title: the secret\n", encoding="utf-8")
    return tmp_path / "record"


def through_a_link(folder: Path) -> Path:
    """``notes/`` reached through a link inside the folder: such a path is resolved and checked
    before it is opened, which leaves the window a swap can use (a path with no link on the way
    is opened at once, one name at a time: there is no window to test)."""
    (folder / "by-link").symlink_to(folder / "notes", target_is_directory=True)
    return folder / "by-link"


def after_the_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    real = confine.refused

    def checked_then_swapped(path: Path | str, where: Path | str) -> str | None:
        why = real(path, where)
        swap()
        return why
    monkeypatch.setattr(confine, "refused", checked_then_swapped)


def test_a_file_of_the_folder_is_read(folder: Path) -> None:
    assert read_inside(folder / "notes" / "NOTE-1.yaml", folder) == b"title: mine\n"


def test_a_link_that_stays_inside_is_followed(folder: Path) -> None:
    (folder / "notes" / "NOTE-2.yaml").symlink_to(folder / "notes" / "NOTE-1.yaml")
    assert read_inside(folder / "notes" / "NOTE-2.yaml", folder) == b"title: mine\n"


def test_a_link_out_is_refused(folder: Path) -> None:
    (folder / "notes" / "NOTE-2.yaml").symlink_to(folder.parent / "outside" / "NOTE-1.yaml")
    with pytest.raises(Refused, match=r"is a link to .*/outside/NOTE-1\.yaml, outside record/"):
        read_inside(folder / "notes" / "NOTE-2.yaml", folder)


def test_a_file_swapped_for_a_link_after_the_check_is_not_read(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "notes" / "NOTE-1.yaml"

    def swap() -> None:
        path.unlink()
        path.symlink_to(folder.parent / "outside" / "NOTE-1.yaml")
    after_the_check(monkeypatch, swap)
    with pytest.raises(Refused, match="changed while it was read"):
        read_inside(through_a_link(folder) / "NOTE-1.yaml", folder)


def test_a_folder_on_the_way_swapped_for_a_link_is_not_followed(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def swap() -> None:
        os.rename(folder / "notes", folder / "notes.old")
        (folder / "notes").symlink_to(folder.parent / "outside", target_is_directory=True)
    after_the_check(monkeypatch, swap)
    with pytest.raises(Refused, match="changed while it was read"):
        read_inside(through_a_link(folder) / "NOTE-1.yaml", folder)


def test_a_named_pipe_swapped_in_is_refused_at_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "notes" / "NOTE-1.yaml"

    def swap() -> None:
        path.unlink()
        os.mkfifo(path)
    after_the_check(monkeypatch, swap)
    with pytest.raises(Refused, match="is not a regular file"):
        read_inside(through_a_link(folder) / "NOTE-1.yaml", folder)  # no writer: it would wait for ever if it were opened to be read


def test_a_limit_reads_one_byte_over_it(folder: Path) -> None:
    (folder / "notes" / "big.yaml").write_bytes(b"x" * 100)
    assert len(read_inside(folder / "notes" / "big.yaml", folder, limit=10)) == 11
    assert len(read_inside(folder / "notes" / "big.yaml", folder)) == 100


@pytest.mark.parametrize("swap, why", [
    ("file", r"is a link to .*/outside/NOTE-1\.yaml, outside record/"),
    ("folder", r"is a link to .*/outside/NOTE-1\.yaml, outside record/"),
    ("pipe", "is not a regular file"),
    ("gone", "cannot be read: No such file or directory"),
    ("folder-file", "cannot be read: Not a directory"),
])
def test_a_file_swapped_before_it_is_opened_is_refused_as_if_checked(folder: Path, swap: str, why: str) -> None:
    path = folder / "notes" / "NOTE-1.yaml"
    if swap == "file":
        path.unlink()
        path.symlink_to(folder.parent / "outside" / "NOTE-1.yaml")
    elif swap == "folder":
        os.rename(folder / "notes", folder / "notes.old")
        (folder / "notes").symlink_to(folder.parent / "outside", target_is_directory=True)
    elif swap == "pipe":
        path.unlink()
        os.mkfifo(path)
    elif swap == "gone":
        path.unlink()
    else:
        os.rename(folder / "notes", folder / "notes.old")
        (folder / "notes").write_text("", encoding="utf-8")
    with pytest.raises(Refused, match=why):
        read_inside(path, folder)


@pytest.mark.parametrize("written", ["notes/../notes/NOTE-1.yaml", "./notes/NOTE-1.yaml", "notes//NOTE-1.yaml"])
def test_a_path_written_with_dots_is_resolved_first(folder: Path, written: str) -> None:
    assert read_inside(f"{folder}/{written}", folder) == b"title: mine\n"


def test_dots_that_lead_out_are_refused(folder: Path) -> None:
    with pytest.raises(Refused, match=r"is a link to .*/outside/NOTE-1\.yaml, outside record/"):
        read_inside(f"{folder}/notes/../../outside/NOTE-1.yaml", folder)


def test_a_relative_folder_and_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder.parent)
    assert read_inside("record/notes/NOTE-1.yaml", "record") == b"title: mine\n"
    (folder / "notes" / "NOTE-2.yaml").symlink_to(folder.parent / "outside" / "NOTE-1.yaml")
    with pytest.raises(Refused, match="outside record/"):
        read_inside("record/notes/NOTE-2.yaml", "record")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts this process's open files in /proc")
def test_nothing_is_left_open_whichever_way_a_file_is_opened_or_refused(folder: Path) -> None:
    (folder / "notes" / "NOTE-2.yaml").symlink_to(folder.parent / "outside" / "NOTE-1.yaml")
    (folder / "by-link").symlink_to(folder / "notes", target_is_directory=True)
    os.mkfifo(folder / "notes" / "pipe.yaml")
    paths = [folder / "notes" / "NOTE-1.yaml", folder / "by-link" / "NOTE-1.yaml", folder / "notes" / "NOTE-2.yaml",
             folder / "notes" / "pipe.yaml", folder / "notes" / "gone.yaml", folder / "notes" / "NOTE-1.yaml" / "x",
             folder / "by-link" / "gone.yaml"]
    before = len(os.listdir("/proc/self/fd"))
    read = []
    for _ in range(3):
        read = []
        for path in paths:
            with contextlib.suppress(Refused):
                read.append(read_inside(path, folder))
    assert read == [b"title: mine\n", b"title: mine\n"]  # the others refused, by either way
    assert len(os.listdir("/proc/self/fd")) == before
