"""The schema's models: what loading leaves in memory behaves as pydantic made it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from recordtool.record.schema import Literature, Theory, compact

CLAIM = {
    "id": "THEORY-1", "kind": "theory", "statement": "A claim.", "cites": [{"id": "LIT-1", "as": "source"}],
    "checks": [{"name": "exact", "run": "checks.demo:measure", "expect": {"error": "< 1e-9"},
                "controls": [{"params": {"noise": True}}, {"name": "shuffled"}]}],
}


def test_compacted_models_share_their_field_sets_and_behave_the_same() -> None:
    fresh = Theory.model_validate(CLAIM)
    first, second = Theory.model_validate(CLAIM), Theory.model_validate(CLAIM)
    compact(first)
    compact(second)
    assert first == fresh and first.model_dump() == fresh.model_dump()
    assert first.model_dump(exclude_unset=True) == fresh.model_dump(exclude_unset=True)
    assert first.model_fields_set == fresh.model_fields_set
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__  # one set for both
    assert first.cites[0].__pydantic_fields_set__ is second.cites[0].__pydantic_fields_set__
    # copying with changes (all_controls names unnamed controls) leaves the shared sets alone
    assert [c.name for c in first.checks[0].all_controls] == ["control-1", "shuffled"]
    assert first.checks[0].controls[0].model_fields_set == {"params"}
    with pytest.raises(ValidationError):
        first.title = "changed"  # frozen: nothing can add to a shared set
    assert first.model_fields_set == fresh.model_fields_set


def test_models_with_other_fields_set_keep_their_own() -> None:
    paper = Literature.model_validate({"id": "LIT-1", "kind": "literature", "title": "A paper",
                                       "reference": {"authors": ["Doe, J."], "year": 2021, "title": "A paper"}})
    claim = Theory.model_validate(CLAIM)
    compact(paper)
    compact(claim)
    assert paper.model_fields_set == {"id", "kind", "title", "reference"}
    assert paper.reference.model_fields_set == {"authors", "year", "title"}
    assert claim.model_fields_set == {"id", "kind", "statement", "cites", "checks"}
