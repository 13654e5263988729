"""The verdict data model and its stable JSON."""

from __future__ import annotations

import json
import math

import pytest

from recordtool.verify.verdict import (
    CheckVerdict,
    ClaimVerdict,
    ControlResult,
    ExpectationResult,
    Run,
    VerdictError,
    label,
    worst,
)


def sample() -> ClaimVerdict:
    run = Run(0, "ok", {"err": math.nan, "curve": [1.0, math.inf], "low": -math.inf, "word": "inf?"},
              [ExpectationResult("err", "< 0.5", math.nan, False)], 0.25, None)
    control = ControlResult("broken", {"broken": True}, "failed-as-required", [run])
    check = CheckVerdict("small", "checks.fake:ok", {"scale": 1}, "fail", "err = nan, expected < 0.5", [run],
                         [control], ["record/verdicts/figures/THEORY-1/small/plot.png"], 0.5, False)
    return ClaimVerdict("THEORY-1", "fail", "The error is small.", [check], {"statement": "abc"},
                        "2026-11-29T14:03:00Z", "2026-11-29T14:03:00Z", 0.5, [0], "deadbeef", False,
                        {"python": "3.11.7"}, "cpu", result="contradicted")


def strict(constant: str) -> None:
    raise AssertionError(f"bare {constant} in a verdict")


def test_round_trip_is_stable_and_strict_json() -> None:
    text = sample().to_json()
    assert text.endswith("}\n")
    data = json.loads(text, parse_constant=strict)  # no bare NaN or Infinity
    assert data["claim"] == "THEORY-1"
    metrics = data["checks"][0]["runs"][0]["metrics"]
    assert metrics == {"err": "nan", "curve": [1.0, "inf"], "low": "-inf", "word": "inf?"}
    assert data["checks"][0]["runs"][0]["expectations"][0]["measured"] == "nan"
    again = ClaimVerdict.from_json(text)
    assert again.to_json() == text
    assert math.isnan(again.checks[0].runs[0].expectations[0].measured or 0.0)
    back = again.checks[0].runs[0].metrics
    assert math.isnan(back["err"]) and back["curve"] == [1.0, math.inf] and back["low"] == -math.inf
    assert back["word"] == "inf?"
    assert list(data) == sorted(data)
    assert (data["result"], data["summary"]) == ("contradicted", "contradicted")


@pytest.mark.parametrize(("text", "message"), [
    ('{"claim": "THEORY-1"', "not valid JSON"),
    ("[]", "not a verdict: the file does not hold a JSON object"),
    ('{"claim": "THEORY-1"}', "not a verdict: missing field 'outcome'"),
])
def test_damage_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(VerdictError) as info:
        ClaimVerdict.from_json(text)
    assert str(info.value).startswith(message)


def test_bad_outcome_is_named() -> None:
    data = json.loads(sample().to_json())
    data["outcome"] = "great"
    with pytest.raises(VerdictError, match="outcome 'great': Input should be 'pass', 'fail'"):
        ClaimVerdict.from_json(json.dumps(data))


def test_worst_and_states() -> None:
    assert worst(["pass", "skipped"]) == "skipped"
    assert worst(["error", "fail", "timeout"]) == "fail"
    assert worst(["pass", "no-power"]) == "no-power"
    assert (label("no-power"), label("verified"), label("contradicted")) == ("no power", "verified", "contradicted")


@pytest.mark.parametrize("depth", [40, 200_000])
def test_class_6_a_verdict_nested_too_deep_is_damaged_not_a_recursion_error(depth: int) -> None:
    """Issue 66, class 6: a verdict JSON nested 200,000 deep gave a RecursionError traceback
    from status and render; any file nested deeper than a verdict can be is a damaged file."""
    with pytest.raises(VerdictError, match="nested deeper than the 32 levels a verdict may have"):
        ClaimVerdict.from_json("[" * depth + "]" * depth)
    data = json.loads(sample().to_json())
    data["checks"][0]["runs"][0]["metrics"]["deep"] = json.loads("[" * 40 + "]" * 40)
    with pytest.raises(VerdictError, match="nested deeper"):
        ClaimVerdict.from_json(json.dumps(data))
