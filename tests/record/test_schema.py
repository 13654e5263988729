"""The schema's models: claims, clauses, expectations and checks as pydantic validates them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from recordtool.record.config import load_config
from recordtool.record.load import entry_files
from recordtool.record.project import open_project
from recordtool.record.schema import MODELS, Theory, json_schema
from recordtool.record.template import SCHEMA_FILE, schema_text

CLAIM = {
    "id": "THEORY-1", "kind": "theory", "statement": "A claim.", "cites": [{"id": "LIT-1", "as": "source"}],
    "checks": [{"name": "exact", "run": "checks.demo:measure", "expect": {"error": "< 1e-9"},
                "controls": [{"params": {"noise": True}}, {"name": "shuffled"}]}],
}


def test_a_claim_without_clauses_is_one_clause_and_plain_expectations_test_it() -> None:
    claim = Theory.model_validate(CLAIM)
    check = claim.checks[0]
    assert [c.name for c in check.all_controls] == ["control-1", "shuffled"]  # unnamed controls are numbered
    assert check.controls[0].model_fields_set == {"params"}  # (naming them leaves the control as it was)
    assert claim.clause_ids == ["statement"]
    assert claim.clause_text("statement") == "A claim."
    expect = check.expect["error"]
    assert (expect.plain, expect.clause, expect.null, str(expect)) == (True, [], None, "< 1e-9")
    assert expect.holds(1e-10) and not expect.holds(float("nan"))
    assert (check.seeds, check.quorum, check.threads, check.required(1)) == (1, None, 1, 1)
    assert (check.tolerance.rel, check.tolerance.abs) == (1e-6, 1e-9)


def test_clauses_and_the_mapping_form_of_expectations() -> None:
    claim = Theory.model_validate({
        **CLAIM,
        "clauses": {"previous-token": "A head attends to the previous token.", "k-composition": "Heads K-compose."},
        "checks": [{"name": "induction", "run": "checks.demo:measure", "seeds": 3, "quorum": 2, "threads": 2,
                    "tolerance": {"rel": 1e-3},
                    "expect": {"score": {"is": "> 0.4", "clause": "previous-token"},
                               "k_comp": {"is": "> 2", "clause": ["previous-token", "k-composition"],
                                          "null": "k_comp_null"}},
                    "observe": {"window": "k-composition"},
                    "degenerate": {"loss_drop": "< 0.1"}}],
    })
    check = claim.checks[0]
    assert claim.clause_ids == ["previous-token", "k-composition"]
    assert check.expect["score"].clause == ["previous-token"] and not check.expect["score"].plain
    assert check.expect["k_comp"].null == "k_comp_null"
    assert check.expect["k_comp"].key() == {"is": "> 2", "clause": ["previous-token", "k-composition"],
                                             "null": "k_comp_null"}
    assert check.observe == {"window": ["k-composition"]}
    assert check.degenerate["loss_drop"].holds(0.05)
    assert (check.seeds, check.quorum, check.threads, check.required(3), check.required(1)) == (3, 2, 2, 2, 1)
    assert (check.tolerance.rel, check.tolerance.abs) == (1e-3, 1e-9)


@pytest.mark.parametrize(("change", "message"), [
    ({"seeds": 2, "quorum": 3}, "quorum 3 is more than the 2 seeds the check runs on; give seeds: 3 or more, "
                                "or a quorum of at most 2"),
    ({"seeds": 0}, "greater than or equal to 1"),
    ({"threads": 0}, "greater than or equal to 1"),
    ({"tolerance": {"rel": -1}}, "greater than or equal to 0"),
    # not finite: a tolerance every pair of numbers meets, a timeout that is none
    ({"tolerance": {"rel": float("inf")}}, "Input should be a finite number"),
    ({"tolerance": {"abs": float("nan")}}, "Input should be a finite number"),
    ({"timeout": float("inf")}, "Input should be a finite number"),
    ({"degenerate": {"loss": "> 1e999"}}, "a bound must be a finite number"),
    ({"expect": {"e": {"is": "< 1", "clause": "Bad Clause"}}},
     "'Bad Clause' is not a clause id; use lowercase words joined by dashes, e.g. previous-token"),
    ({"expect": {"e": {"is": "<< 1"}}}, "'<< 1' is not an expectation"),
    ({"expect": {"e": {"is": "< 1", "clause": ["a", "a"]}}}, "a clause is named twice; name each once"),
    # a metric's name, wherever a check names one
    ({"expect": {"bad-name": "< 1"}}, "'bad-name' is not a metric name; use letters, digits and underscores"),
    ({"expect": {"e": {"is": "< 1", "null": "e null"}}}, "'e null' is not a metric name"),
    ({"observe": {"1st": "statement"}}, "'1st' is not a metric name"),
    ({"degenerate": {"loss-drop": "< 0.1"}}, "'loss-drop' is not a metric name"),
    ({"keep": ["curve", "loss curve"]}, "'loss curve' is not a metric name"),
])
def test_bad_check_fields_are_refused(change: dict[str, object], message: str) -> None:
    data = {**CLAIM, "checks": [{**CLAIM["checks"][0], **change}]}  # type: ignore[index]
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Theory.model_validate(data)


@pytest.mark.parametrize(("change", "message"), [
    ({"tags": ["a" * 101]}, "is 101 characters long; a tag names a page file, so it holds at most 100"),
    ({"checks": [{**CLAIM["checks"][0], "name": "c" * 65}]},  # type: ignore[dict-item]
     "is 65 characters long; a check's name names a folder of the pages and verdicts, so it holds at most 64"),
    ({"checks": [{**CLAIM["checks"][0], "controls": [{"name": "x" * 65}]}]},  # type: ignore[dict-item]
     "is 65 characters long; a control's name names a folder"),
])
def test_class_8_names_fit_a_file_system(change: dict[str, object], message: str) -> None:
    """Issue 66, what validate accepts render can write: a tag, a check's or a control's name
    too long to name a file is refused where it is written, with the limit."""
    with pytest.raises(ValidationError, match=message):
        Theory.model_validate({**CLAIM, **change})
    Theory.model_validate({**CLAIM, "tags": ["a" * 100]})  # the limit itself is a name


# The JSON Schema editors read (``json_schema``): what the models accept, it accepts; a wrong
# field is rejected at its path.
KINDS = {"literature": "literature", "note": "note", "theory": "theory", "paper": "literature"}
GOOD = [
    {"id": "LIT-1", "kind": "literature", "title": "A paper", "created": "2026-10-26",
     "reference": {"authors": ["Doe, J."], "year": 2021, "title": "A paper", "doi": "10.1000/xyz"}},
    {"id": "PAPER-1", "kind": "paper", "title": "A paper", "reference": {"authors": ["Doe, J."], "year": 2021,
                                                                        "title": "A paper"}},
    {"id": "NOTE-1", "kind": "note", "title": "Notes", "tags": ["reading"], "cites": [{"id": "LIT-1", "as": "paper"}],
     "body": "Read LIT-1."},
    {"id": "NOTE-2", "title": "No kind: its folder says it"},
    CLAIM,
    {**CLAIM, "clauses": {"a": "A.", "b": "B."}, "checks": [
        {"name": "c", "run": "checks.demo:measure", "seeds": 3, "tolerance": {"rel": 1e-3},
         "expect": {"x": {"is": "> 0.4", "clause": "a"}, "y": {"is": "< 1", "clause": ["a", "b"], "null": "y0"}},
         "observe": {"z": "b"}, "degenerate": {"x": "< 0"}, "positives": [{"name": "planted"}], "needs": ["gpu"]}]},
]
BAD = [  # (entry, the path of the error, what the validator says there)
    ({"id": "NOTE-1", "kind": "note", "title": "Notes", "titel": "typo"}, [], "Additional properties are not allowed ('titel' was unexpected)"),
    ({"id": "NOTE-1", "kind": "note", "title": "Notes", "statement": "only claims have one"}, [], "Additional properties are not allowed ('statement' was"),
    ({"id": "LIT-1", "kind": "literature", "title": "T", "reference": {"authors": ["A"], "year": "soon",
                                                                      "title": "T"}},
     ["reference", "year"], "'soon' is not of type 'integer'"),
    ({**CLAIM, "checks": [{"name": "c", "run": "checks.demo:measure", "expect": {"x": "< 1"}, "seed": 3}]},
     ["checks", 0], "Additional properties are not allowed ('seed' was unexpected)"),
    ({**CLAIM, "checks": [{"name": "c", "run": "checks.demo:measure", "expect": {"x": 1.5}}]},
     ["checks", 0, "expect", "x"], "1.5 is not valid under any of the given schemas"),
    ({"id": "NOTE-1", "kind": "notes", "title": "Notes"}, ["kind"], "'notes' is not one of"),
    ({"id": "NOTE-1", "kind": "note", "title": "Notes", "status": "done"}, ["status"], "'done' is not one of"),
]


def _validator() -> jsonschema.Draft7Validator:
    schema = json_schema(KINDS)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_the_json_schema_accepts_every_kind_of_entry() -> None:
    validator = _validator()
    for entry in GOOD:
        assert list(validator.iter_errors(entry)) == [], entry
        kind = KINDS.get(entry.get("kind", "note"), "note")
        MODELS[kind].model_validate({"kind": kind, **entry})  # (the models accept them too)


@pytest.mark.parametrize(("entry", "path", "message"), BAD)
def test_the_json_schema_rejects_a_wrong_field_at_its_path(entry: dict[str, Any], path: list[Any],
                                                           message: str) -> None:
    error = jsonschema.exceptions.best_match(_validator().iter_errors(entry))
    assert error is not None
    assert (list(error.absolute_path), error.message[:len(message)]) == (path, message)


@pytest.mark.shipped_record
def test_the_json_schema_accepts_every_entry_of_the_shipped_record() -> None:
    """Whatever entries the shipped record holds: each file without an error passes the schema
    (a YAML date read as the string an editor sees)."""
    project = open_project(root=Path(__file__).resolve().parents[2])
    broken = {problem.path for problem in project.errors}
    validator = _validator()
    files, _ = entry_files(project.config)
    assert files
    for path, _kind in files:
        if project.config.relative(Path(path)) not in broken:
            data = json.loads(json.dumps(yaml.safe_load(Path(path).read_text(encoding="utf-8")), default=str))
            assert [e.message for e in validator.iter_errors(data)] == [], path


@pytest.mark.shipped_record
def test_the_shipped_records_schema_file_is_what_schema_prints() -> None:
    config = load_config(Path(__file__).resolve().parents[2])
    assert (config.record / SCHEMA_FILE).read_text(encoding="utf-8") == schema_text(config), (
        "record/.schema.json is out of date: recordtool schema > record/.schema.json")
