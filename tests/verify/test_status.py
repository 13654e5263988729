"""Staleness: a verdict goes stale with the right reason, and fresh again when reverted."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest import MonkeyPatch
from verify_fakes import CHECKS, POWER, VALIDATED, check, claim_yaml, edit_to_verified, make_project

from recordtool.record.project import open_project
from recordtool.record.schema import Theory
from recordtool.verify import status
from recordtool.verify.fingerprint import Scanner
from recordtool.verify.session import Options, verify
from recordtool.verify.status import assess, assess_claims, format_status
from recordtool.verify.store import read_store

CLAIM = claim_yaml("THEORY-1", check("small", "ok", more="params: {scale: 1.0}\ncontrol: {params: {broken: true}}"))
USER = claim_yaml("THEORY-2", check("small", "noop", more=POWER), statement="Uses the first.",
                  extra="cites: [{id: THEORY-1, as: uses}]\n")


def states(root: Path) -> dict[str, tuple[str, list[str]]]:
    return {cid: (s.state, s.reasons) for cid, s in assess(open_project(root=root)).items()}


def test_staleness_reasons_and_revert(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"THEORY-1": CLAIM, "THEORY-2": USER})
    assert states(root) == {"THEORY-1": ("unchecked", []), "THEORY-2": ("unchecked", [])}
    report = verify(open_project(root=root), Options(jobs=3))
    assert report.ok
    assert states(root) == {"THEORY-1": ("verified", []), "THEORY-2": ("verified", [])}
    yaml_path = root / "record" / "theory" / "THEORY-1.yaml"
    helper = root / "checks" / "helper.py"
    fake = root / "checks" / "fake.py"
    edits = [
        (yaml_path, CLAIM.replace("The error is small.", "The error is tiny."), "statement changed"),
        (yaml_path, CLAIM.replace("scale: 1.0", "scale: 2.0"), "check 'small': param scale 1.0 -> 2.0"),
        (yaml_path, CLAIM.replace('"< 0.5"', '"< 0.4"'), "check 'small': expect changed"),
        (yaml_path, CLAIM.replace('"< 0.5"', '{is: "< 0.5", clause: statement}'), "check 'small': expect changed"),
        (yaml_path, CLAIM.replace("scale: 1.0}", "scale: 1.0}\n    threads: 2"), "check 'small': threads 1 -> 2"),
        (yaml_path, CLAIM.replace("scale: 1.0}", "scale: 1.0}\n    seeds: 2"),
         "check 'small': ran on 1 seed, declares 2"),
        (yaml_path, CLAIM.replace("scale: 1.0}", "scale: 1.0}\n    tolerance: {rel: 0.1}"),
         "check 'small': tolerance changed"),
        (yaml_path, CLAIM.replace("statement: The error is small.", "statement: The error is small.\n"
                                  "clauses: {statement: The error is small.}"), "clauses changed"),
        (fake, fake.read_text() + "\n# a comment\n", "checks/fake.py changed"),
        (helper, helper.read_text() + "\nY = 2\n", "checks/helper.py changed"),
    ]
    for path, text, reason in edits:
        original = path.read_text()
        path.write_text(text)
        now = states(root)
        assert now["THEORY-1"] == ("stale", [reason]), reason
        status = assess(open_project(root=root))["THEORY-2"]
        assert status.depends == [("THEORY-1", "stale")]
        path.write_text(original)
        assert states(root)["THEORY-1"] == ("verified", []), f"not fresh again after reverting: {reason}"


def test_environment_change_is_a_reason(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"THEORY-1": CLAIM})
    verify(open_project(root=root), Options())
    path = root / "record" / "verdicts" / "THEORY-1.json"
    text = path.read_text()
    import platform

    path.write_text(text.replace(f'"version:python": "{platform.python_version()}"', '"version:python": "3.0.1"'))
    assert states(root)["THEORY-1"] == ("stale", [f"python 3.0.1 -> {platform.python_version()}"])


def test_format_counts_with_denominators(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"THEORY-1": CLAIM, "THEORY-2": USER})
    verify(open_project(root=root), Options(ids=["THEORY-2"]))
    text = format_status(assess(open_project(root=root)), why=True)
    lines = text.splitlines()
    assert lines[0] == "THEORY-1  unchecked"
    assert lines[1].startswith("THEORY-2  verified   since ")
    assert lines[1].endswith(", 1 of 1 check pass  — uses THEORY-1 (unchecked)")
    assert "    check small: pass — 1 expectation with power holds" in lines
    assert "    clause statement: verified — small: err (holds)" in lines
    assert ("      err < 0.5 [statement]: holds on 1 of 1 seed; power: control 'control'; sensitivity: none; measured 0 "
            "over 1 seed"
            in lines)
    assert "    uses THEORY-1, which is unchecked" in lines
    assert lines[-1] == "verified 1 of 2 claims (1 unchecked); checks of fresh verdicts: 1 of 1 pass"


def test_a_verdict_file_that_does_not_follow_from_its_numbers_is_not_used(tmp_path: Path) -> None:
    """A verdict file edited by hand to say more than its numbers give (a claim that fails made
    'verified') is not used: the claim is unchecked, with the reason, until verify runs it again."""
    failing = claim_yaml("THEORY-1", check("small", "ok", expect='{err: "< 0.001"}', more=VALIDATED))
    root = make_project(tmp_path, {"THEORY-1": failing})
    verify(open_project(root=root), Options())
    assert states(root) == {"THEORY-1": ("contradicted", [])}
    edit_to_verified(root / "record" / "verdicts" / "THEORY-1.json")
    state, reasons = states(root)["THEORY-1"]
    assert state == "unchecked" and reasons == [
        "verdict file record/verdicts/THEORY-1.json does not follow from its own numbers (check 'small', seed 0: "
        "err = 0.001 does not meet '< 0.001', but the file says it holds); it is not used: run "
        "`recordtool verify THEORY-1` to check it again"]
    report = verify(open_project(root=root), Options())  # a plain verify runs it again
    assert [r.ran for r in report.results] == [True]
    assert states(root) == {"THEORY-1": ("contradicted", [])}


MEASURED_ONLY = ("metrics", "figures", "verified_at", "since", "duration_s", "git_commit", "git_dirty", "versions",
                 "device", "fingerprint", "log", "format", "summary")  # what only a rerun could check


def _leaves(value: object, path: tuple[object, ...] = ()) -> list[tuple[tuple[object, ...], object]]:
    """Every value to edit: each leaf, and each list of records whole (its last one left out)."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list) and value and all(isinstance(item, (dict, list)) for item in value):
        return [(path, value), *(leaf for n, item in enumerate(value) for leaf in _leaves(item, (*path, n)))]
    return [(path, value)]


def _edited(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    if isinstance(value, str):
        return {"pass": "fail", "holds": "fails", "verified": "contradicted", "failed-as-required": "passed",
                "fail": "pass", "fails": "holds", "contradicted": "verified", "passed": "failed-as-required",
                }.get(value, value + "X")
    if isinstance(value, list):
        return value[:-1] if value else ["X"]
    return "X"


@pytest.mark.parametrize("cache", [False, True], ids=["afresh", "kept"])
def test_every_edit_of_a_verdict_that_changes_its_page_is_caught(tmp_path: Path, cache: bool) -> None:
    """Each field of a verdict that verify wrote (a claim of two clauses, a control, a null,
    an observation, two seeds), edited one at a time: either the claim's page and status are
    as before (a field they do not show), or the verdict is not used. What was measured (a
    run's metrics, its figures, the provenance) is left out: only a rerun could check it."""
    import json

    from recordtool.render.page import render_entry
    from recordtool.render.plan import context

    claim = claim_yaml("THEORY-1", check("small", "ok", expect='{err: {is: "< 0.5", clause: a}, n: {is: ">= 0", clause: a}}',
                                         more="control: {params: {broken: true}}\nseeds: 2\nobserve: {curve: b}"),
                       extra="clauses: {a: The error is small., b: A curve is drawn.}\n")
    root = make_project(tmp_path, {"THEORY-1": claim},
                        checks=CHECKS.replace('"curve": [1.0, 2.0]}', '"curve": [1.0, 2.0], "n": 1.0}'))
    verify(open_project(root=root), Options())

    def shown() -> tuple[str, str]:  # (with ``cache``, through the verdicts kept from the read before)
        project = open_project(root=root, cache=cache)
        statuses = assess(project)
        return statuses["THEORY-1"].state, render_entry(context(project, statuses), "THEORY-1")

    before = shown()
    assert before[0] == "partly-verified"
    path = root / "record" / "verdicts" / "THEORY-1.json"
    text = path.read_text(encoding="utf-8")
    edits = [(where, value) for where, value in _leaves(json.loads(text))
             if not any(part in MEASURED_ONLY for part in where)]
    assert len(edits) > 100
    missed = []
    for where, value in edits:
        data = json.loads(text)
        inner = data
        for part in where[:-1]:
            inner = inner[part]
        inner[where[-1]] = _edited(value)
        path.write_text(json.dumps(data), encoding="utf-8")
        state, page = shown()
        if cache:  # read again: the verdict and its judgement kept from that read, the same page
            assert shown() == (state, page), where
        if state == before[0] and page != before[1]:
            missed.append(where)
    path.write_text(text, encoding="utf-8")
    assert missed == []


def test_stale_reason_under_seeds_names_the_option_not_the_yaml(tmp_path: Path) -> None:
    """While ``verify --seeds N`` decides what to run, a verdict on other seeds is stale
    because of the option: the reason must not say the YAML declares N."""
    root = make_project(tmp_path, {"THEORY-1": CLAIM.replace("scale: 1.0}", "scale: 1.0}\n    seeds: 3")})
    verify(open_project(root=root), Options())
    project = open_project(root=root)
    claims = project.record.claims()
    store = read_store(project.config, [c.id for c in claims])
    given, _ = assess_claims(project, [c.id for c in claims], store, seeds=1)
    assert (given["THEORY-1"].state, given["THEORY-1"].reasons) == (
        "stale", ["check 'small': ran on 3 seeds, --seeds gives 1"])
    plain, _ = assess_claims(project, [c.id for c in claims], store)
    assert (plain["THEORY-1"].state, plain["THEORY-1"].reasons) == ("verified", [])


def test_assess_reads_only_listed_verdicts_and_agrees_with_every_claim_assessed(tmp_path: Path,
                                                                                 monkeypatch: MonkeyPatch) -> None:
    third = claim_yaml("THEORY-3", check("small", "ok"), statement="A third.")
    fourth = claim_yaml("THEORY-4", check("small", "ok"), statement="A fourth.")
    root = make_project(tmp_path, {"THEORY-1": CLAIM, "THEORY-2": USER, "THEORY-3": third, "THEORY-4": fourth})
    verify(open_project(root=root), Options())
    verdicts = root / "record" / "verdicts"
    (verdicts / "THEORY-2.json").unlink()
    (verdicts / "THEORY-4.json").unlink()
    (verdicts / "THEORY-3.json").write_text("{not json", encoding="utf-8")  # damaged
    (verdicts / "THEORY-4.json").symlink_to(verdicts / "THEORY-1.json")  # a link: refused, with its reason
    project = open_project(root=root)
    claims = project.record.claims()
    ids = [c.id for c in claims]
    every, _prints = assess_claims(project, ids, read_store(project.config, ids))
    status.add_dependencies(project, every)
    fingerprinted: list[str] = []
    real = status.claim_fingerprint

    def spy(claim: Theory, scanner: Scanner, seeds: int | None = None) -> tuple[dict[str, str], set[str]]:
        fingerprinted.append(claim.id)
        return real(claim, scanner, seeds)

    monkeypatch.setattr(status, "claim_fingerprint", spy)
    now = assess(project)
    assert list(now) == list(every) and [repr(s) for s in now.values()] == [repr(s) for s in every.values()]
    assert [s.state for s in now.values()] == ["verified", "unchecked", "unchecked", "unchecked"]
    assert now["THEORY-3"].reasons and now["THEORY-4"].reasons  # damaged, refused: said why
    assert now["THEORY-2"].depends == [] and sorted(fingerprinted) == ["THEORY-1", "THEORY-3", "THEORY-4"]


def test_status_json_and_junit_show_power_next_to_sensitivity_and_the_setting(tmp_path: Path) -> None:
    """Issue 63: per expectation, what gives it power next to what gives it sensitivity; each
    check's setting beside the verdict; an analogue verified reads so; a failing expectation
    with no positive control is not reproduced, neither passed nor failed."""
    from recordtool.verify.junit import junit_xml
    from recordtool.verify.status import status_json

    setting = "\nsetting: a fake toy\nanalogue: true"
    root = make_project(tmp_path, {
        "THEORY-1": claim_yaml("THEORY-1", check("small", "fail", more=VALIDATED + setting)),
        "THEORY-2": claim_yaml("THEORY-2", check("small", "ok", more=VALIDATED + setting)),
        "THEORY-3": claim_yaml("THEORY-3", check("small", "fail", more=POWER)),
    })
    verify(open_project(root=root), Options())
    statuses = assess(open_project(root=root))
    assert [(s.state, s.label) for s in statuses.values()] == [
        ("contradicted", "contradicted"), ("verified", "verified in the lab's analogue"),
        ("not-reproduced", "not reproduced")]
    lines = format_status(statuses, why=True).splitlines()
    assert "      setting: a fake toy (an analogue of the model the claim is about)" in lines
    assert ("      err < 0.5 [statement]: fails: holds on 0 of 1 seed; power: control 'control'; sensitivity: "
            "positive 'planted'; measured 0.9 over 1 seed") in lines
    assert ("      err < 0.5 [statement]: not reproduced: holds on 0 of 1 seed; power: control 'control'; "
            "sensitivity: none: the test was never shown able to pass; measured 0.9 over 1 seed") in lines
    claims = status_json(statuses)["claims"]
    assert isinstance(claims, list)
    got = [(c["claim"], c["settings"], c["checks"][0]["setting"], c["checks"][0]["analogue"],
            [(e["state"], e["power"], e["sensitivity"], e["validated"]) for e in c["checks"][0]["expectations"]])
           for c in claims]
    assert got == [
        ("THEORY-1", ["a fake toy"], "a fake toy", True, [("fails", ["control 'control'"], ["positive 'planted'"], True)]),
        ("THEORY-2", ["a fake toy"], "a fake toy", True, [("holds", ["control 'control'"], ["positive 'planted'"], True)]),
        ("THEORY-3", [], "", False, [("not-reproduced", ["control 'control'"], [], False)])]
    xml = junit_xml(statuses.values())
    assert '<property name="setting" value="a fake toy" />' in xml
    assert ('<property name="expectation err" value="fails; power: control \'control\'; sensitivity: positive '
            '\'planted\'" />') in xml
    assert '<skipped message="clause \'statement\' is not-reproduced (small: err not reproduced)" />' in xml
