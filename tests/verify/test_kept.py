"""Verdicts kept read and judged between commands (``recordtool.verify.kept``): given back only
for the same bytes under the same claim, and what they give is what reading afresh gives."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from verify_fakes import POWER, VALIDATED, check, claim_yaml, edit_to_verified, make_project

from recordtool.record.project import open_project, open_store
from recordtool.store import FILE
from recordtool.verify import judge, kept, verdict
from recordtool.verify.report import Report
from recordtool.verify.session import Options, verify
from recordtool.verify.status import assess

FAILING = claim_yaml("THEORY-1", check("small", "ok", expect='{err: "< 0.001"}', more=VALIDATED))
PASSING = claim_yaml("THEORY-2", check("small", "ok", more=POWER))


def _statuses(root: Path, cache: bool = True) -> dict[str, str]:
    return {cid: repr(s) for cid, s in assess(open_project(root=root, cache=cache)).items()}


class Count:
    """How often the verdicts are parsed and judged afresh from now on."""

    def __init__(self, monkeypatch: MonkeyPatch) -> None:
        self.parsed = self.judged = 0
        real_parse, real_judge = verdict.ClaimVerdict.from_json, judge.unsupported

        def parse(text: str) -> verdict.ClaimVerdict:
            self.parsed += 1
            return real_parse(text)

        def judged(*args: object) -> str | None:
            self.judged += 1
            return real_judge(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(verdict.ClaimVerdict, "from_json", staticmethod(parse))
        monkeypatch.setattr(kept, "unsupported", judged)


@pytest.fixture
def verified(tmp_path: Path) -> Path:
    """A project whose two claims have verdicts: one contradicted, one verified."""
    root = make_project(tmp_path, {"THEORY-1": FAILING, "THEORY-2": PASSING})
    verify(open_project(root=root), Options())
    return root


def test_verdicts_read_and_judged_once_are_given_back_as_read_afresh(verified: Path,
                                                                     monkeypatch: MonkeyPatch) -> None:
    afresh = _statuses(verified, cache=False)
    assert "state='contradicted'" in afresh["THEORY-1"] and "state='verified'" in afresh["THEORY-2"]
    count = Count(monkeypatch)
    assert _statuses(verified) == afresh  # the first time: read, judged and kept
    assert (count.parsed, count.judged) == (2, 2)
    assert open_store(open_project(root=verified).config).keys(kept.VERDICTS) == {"THEORY-1", "THEORY-2"}
    assert _statuses(verified) == afresh  # then given back
    assert (count.parsed, count.judged) == (2, 2)
    assert _statuses(verified, cache=False) == afresh  # --no-cache: nothing kept is read
    assert (count.parsed, count.judged) == (4, 2)


def test_a_verdict_edited_after_it_was_kept_is_read_and_judged_afresh(verified: Path,
                                                                     monkeypatch: MonkeyPatch) -> None:
    """The kept judgement said the old bytes follow from their numbers: an edit by hand that
    makes a failing claim 'verified' is still caught."""
    assert "state='contradicted'" in _statuses(verified)["THEORY-1"]
    edit_to_verified(verified / "record" / "verdicts" / "THEORY-1.json")
    count = Count(monkeypatch)
    shown = _statuses(verified)
    assert (count.parsed, count.judged) == (1, 1)  # the edited one only
    assert shown == _statuses(verified, cache=False)
    assert "state='unchecked'" in shown["THEORY-1"] and "does not follow from its own numbers" in shown["THEORY-1"]


def test_a_verdict_is_judged_again_when_its_claim_changed(verified: Path, monkeypatch: MonkeyPatch) -> None:
    """Any edit of the claim's file (here its title: the verdict is still fresh) judges it again."""
    _statuses(verified)
    path = verified / "record" / "theory" / "THEORY-2.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "title: The error\n", encoding="utf-8")
    count = Count(monkeypatch)
    shown = _statuses(verified)
    assert (count.parsed, count.judged) == (0, 1)  # the same bytes (given back), judged under the new claim
    assert shown == _statuses(verified, cache=False)
    assert "state='verified'" in shown["THEORY-2"]


@pytest.mark.parametrize("edit", ["statement", "expect"])
def test_a_claim_edited_after_its_fingerprint_was_kept_is_stale(verified: Path, edit: str) -> None:
    """The kept keys were the old entry's: a changed statement, or a check's changed
    expectation, makes the verdict stale with its reason, as without the kept verdicts."""
    assert "state='verified'" in _statuses(verified)["THEORY-2"]
    path = verified / "record" / "theory" / "THEORY-2.yaml"
    text = path.read_text(encoding="utf-8")
    old, new = ("statement: ", "statement: Now ") if edit == "statement" else ('"< 0.5"', '"< 0.4"')
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    shown = _statuses(verified)
    assert shown == _statuses(verified, cache=False)
    reason = "statement changed" if edit == "statement" else "check 'small': expect changed"
    assert "state='stale'" in shown["THEORY-2"] and reason in shown["THEORY-2"]


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_store_is_not_used(verified: Path, monkeypatch: MonkeyPatch, damage: str) -> None:
    afresh = _statuses(verified, cache=False)
    _statuses(verified)
    path = verified / ".recordtool-cache" / FILE
    data = path.read_bytes()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(data[:len(data) // 2] if damage == "truncated" else bytes(len(data)) + b"x" * 100)
    count = Count(monkeypatch)
    assert _statuses(verified) == afresh
    assert count.parsed == 2
    assert _statuses(verified) == afresh
    assert count.parsed == 2  # kept again


def test_only_the_verdicts_read_now_are_kept(verified: Path) -> None:
    _statuses(verified)
    (verified / "record" / "verdicts" / "THEORY-1.json").unlink()
    shown = _statuses(verified)
    assert "state='unchecked'" in shown["THEORY-1"]
    assert open_store(open_project(root=verified).config).keys(kept.VERDICTS) == {"THEORY-2"}


def test_verify_reads_the_kept_verdicts_and_makes_only_the_claims_it_runs(verified: Path) -> None:
    """A plain ``verify`` of a project opened with the store reads the verdicts as ``status``
    does, and decides what to run as without it."""
    _statuses(verified)  # kept
    project = open_project(root=verified, cache=True)
    report = verify(project, Options())
    assert report.written == [] and [r.status.state for r in report.results] == ["contradicted", "verified"]


def test_verify_runs_again_a_verdict_edited_after_it_was_kept(verified: Path) -> None:
    """The kept judgement was of the old bytes: a verdict edited by hand to say 'verified' does
    not follow from its numbers, so ``verify`` runs its claim again, which is contradicted."""
    _statuses(verified)
    edit_to_verified(verified / "record" / "verdicts" / "THEORY-1.json")
    report = verify(open_project(root=verified, cache=True), Options())
    assert report.written == ["THEORY-1"]
    assert [r.status.state for r in report.results] == ["contradicted", "verified"]


WALKED = {
    "THEORY-1": FAILING,
    "THEORY-2": PASSING,
    "THEORY-3": claim_yaml("THEORY-3", check("small", "always", more=POWER),
                           extra="cites: [{id: THEORY-2, as: uses}]\n"),
}
EDITS = ("statement", "expect", "title", "revert", "hand", "number", "delete", "restore", "module", "verify")


def _edit(root: Path, rng: random.Random, step: int, saved: Path) -> str:
    """One edit of a claim, its verdict or the checks (or a verify), picked by ``rng``."""
    edit, claim_id = rng.choice(EDITS), rng.choice(sorted(WALKED))
    path = root / "record" / "theory" / f"{claim_id}.yaml"
    verdict_file = root / "record" / "verdicts" / f"{claim_id}.json"
    text = path.read_text(encoding="utf-8")
    if edit == "statement":
        path.write_text(text.replace("statement: ", f"statement: Now {step} ", 1), encoding="utf-8")
    elif edit == "expect":
        path.write_text(text.replace('"< 0.5"', '"< 0.6"') if '"< 0.5"' in text else text.replace('"< 0.6"', '"< 0.5"'),
                        encoding="utf-8")
    elif edit == "title":
        path.write_text(f"{text}title: Title {step}\n" if "title:" not in text else text.replace("title: ", "title: X", 1),
                        encoding="utf-8")
    elif edit == "revert":
        path.write_text(WALKED[claim_id], encoding="utf-8")
    elif edit == "hand" and claim_id == "THEORY-1" and verdict_file.exists():
        edit_to_verified(verdict_file)
    elif edit == "number" and verdict_file.exists():
        data = json.loads(verdict_file.read_text(encoding="utf-8"))
        data["checks"][0]["runs"][0]["metrics"]["err"] = 0.25
        verdict_file.write_text(json.dumps(data), encoding="utf-8")
    elif edit == "delete" and verdict_file.exists():
        verdict_file.replace(saved / verdict_file.name)
    elif edit == "restore" and (saved / verdict_file.name).exists():
        (saved / verdict_file.name).replace(verdict_file)
    elif edit == "module":
        helper = root / "checks" / "helper.py"
        helper.write_text(helper.read_text(encoding="utf-8") + f"\n# {step}\n", encoding="utf-8")
    elif edit == "verify":
        verify(open_project(root=root, cache=rng.random() < 0.5), Options())
    return f"{edit} {claim_id}"


@pytest.mark.parametrize("seed", range(4))
def test_a_random_walk_of_edits_gives_what_reading_afresh_gives(tmp_path: Path, seed: int) -> None:
    """Claims, verdicts and check modules edited at random (and verify run between): after
    each edit the statuses read through the kept verdicts, twice, are those of a no-cache read;
    every fourth edit, what verify runs and decides is the same with the kept verdicts as
    without (each on its own copy of the project). Fails when kept keys ignore the entry's
    hash (checked)."""
    rng = random.Random(seed)
    root = make_project(tmp_path, WALKED)
    verify(open_project(root=root), Options())
    saved = tmp_path / "saved"
    saved.mkdir()
    for step in range(20):
        done = _edit(root, rng, step, saved)
        afresh = _statuses(root, cache=False)
        assert _statuses(root) == afresh, (step, done)
        assert _statuses(root) == afresh, (step, done, "given back")
        if step % 4 == 0:
            kept_copy, afresh_copy = tmp_path / f"kept-{step}", tmp_path / f"afresh-{step}"
            shutil.copytree(root, kept_copy)
            shutil.copytree(root, afresh_copy)
            with_kept = verify(open_project(root=kept_copy, cache=True), Options())
            without = verify(open_project(root=afresh_copy), Options())
            assert _decided(with_kept) == _decided(without), (step, done)


def _decided(report: Report) -> tuple[list[tuple[str, bool, str, list[str], list[tuple[str, str]]]], list[str]]:
    """What a verify decided (a fresh verdict's times and durations aside): each claim's state,
    whether it ran, why it is stale or unchecked, what it uses that is not verified."""
    return [(r.claim, r.ran, r.status.state, r.status.reasons, r.status.depends) for r in report.results], report.written
