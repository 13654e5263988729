"""The verdict store: atomic, locked, and never silently overwriting a damaged file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from verify_fakes import POWER, check, one_claim

from recordtool.record.config import load_config
from recordtool.record.project import open_project
from recordtool.verify.session import Options, verify
from recordtool.verify.status import assess
from recordtool.verify.store import StoreError, locked, read_store, verdict_path


def test_lock_refuses_a_second_run(tmp_path: Path) -> None:
    root = one_claim(tmp_path, check("small", "noop"))
    config = load_config(root)
    with locked(config):
        with pytest.raises(StoreError, match=r"another `recordtool verify` \(pid \d+\) is writing record/verdicts"):
            verify(open_project(root=root), Options())
        assert not verdict_path(config, "THEORY-1").exists()
    with locked(config):  # released
        pass


def test_class_4_the_lock_outlives_a_deleted_cache_folder(tmp_path: Path) -> None:
    """The docs tell users to delete ``.recordtool-cache`` to retrain: a check (or a user)
    doing so while verify runs must not let a second verify run beside it."""
    root = one_claim(tmp_path, check("small", "noop"))
    config = load_config(root)
    with locked(config):
        assert (root / ".recordtool.lock").read_text() == f"pid {os.getpid()}"
        shutil.rmtree(config.cache, ignore_errors=True)
        with pytest.raises(StoreError, match="another `recordtool verify`"):
            verify(open_project(root=root), Options())
    assert not (root / ".recordtool.lock").exists()  # removed when released


def test_damaged_file_is_reported_and_kept_aside(tmp_path: Path) -> None:
    root = one_claim(tmp_path, check("small", "noop", more=POWER))
    config = load_config(root)
    path = verdict_path(config, "THEORY-1")
    path.parent.mkdir(parents=True)
    path.write_text('{"claim": "THEORY-1", "outc')
    store = read_store(config, ["THEORY-1"])
    assert store.damaged == {"THEORY-1": "not valid JSON (Unterminated string starting at: line 1 column 23 (char 22))"}
    status = assess(open_project(root=root))["THEORY-1"]
    assert status.state == "unchecked"
    assert status.reasons == ["verdict file record/verdicts/THEORY-1.json is damaged: not valid JSON "
                              "(Unterminated string starting at: line 1 column 23 (char 22))"]
    assert path.read_text() == '{"claim": "THEORY-1", "outc'  # status only reads

    report = verify(open_project(root=root), Options())
    aside = list(path.parent.glob("THEORY-1.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text() == '{"claim": "THEORY-1", "outc'
    assert report.notes == [f"record/verdicts/THEORY-1.json was damaged (not valid JSON (Unterminated string "
                            f"starting at: line 1 column 23 (char 22))); kept as record/verdicts/{aside[0].name}"]
    assert read_store(config, ["THEORY-1"]).verdicts["THEORY-1"].outcome == "pass"


def test_a_verdict_of_another_claim_is_damage(tmp_path: Path) -> None:
    root = one_claim(tmp_path, check("small", "noop"))
    config = load_config(root)
    verify(open_project(root=root), Options())
    text = verdict_path(config, "THEORY-1").read_text()
    verdict_path(config, "THEORY-2").write_text(text)
    assert read_store(config, ["THEORY-1", "THEORY-2"]).damaged == {
        "THEORY-2": "holds the verdict of THEORY-1, not of THEORY-2"}
