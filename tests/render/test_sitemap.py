"""Where pages go and how they name states (``recordtool.render.sitemap``)."""

from __future__ import annotations

import pytest

from recordtool.render import escape, sitemap
from recordtool.render.sitemap import BADGES, OUTCOME_BADGES, badge, outcome_badge


def test_a_known_state_or_outcome_has_its_badge_and_any_other_its_name_on_one_line_escaped() -> None:
    assert badge("verified") == "✅ verified" and badge("stale") == "⚠️ stale"
    assert outcome_badge("pass") == "✅ pass" and outcome_badge("timeout") == "⏱️ timeout"
    assert badge("half\n  *done*") == escape.line("half\n  *done*") == "half \\*done\\*"
    assert outcome_badge("odd_one") == escape.line("odd_one")


def test_a_known_states_badge_is_looked_up_without_escaping_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard and the claims' kind page give a badge per claim (40,000 of them at 100,000
    entries): a known state's badge is looked up, its name not escaped each time for nothing."""
    def refuse(value: str) -> str:
        raise AssertionError(f"escaped {value!r}")

    monkeypatch.setattr(sitemap.escape, "line", refuse)
    assert [badge(state) for state in BADGES] == list(BADGES.values())
    assert [outcome_badge(outcome) for outcome in OUTCOME_BADGES] == list(OUTCOME_BADGES.values())
