"""Judging measured numbers against a claim's expectations."""

from __future__ import annotations

import math

from recordtool.record.schema import CheckSpec
from recordtool.verify.judge import judge_check, judge_control, judge_run
from recordtool.verify.verdict import CheckVerdict

SPEC = CheckSpec(name="small", run="checks.fake:ok", expect={"err": "< 0.5", "n": ">= 2"},
                 control={"name": "broken", "params": {"broken": True}})


def run(err: object, n: object = 3, seed: int = 0):  # type: ignore[no-untyped-def]
    return judge_run(SPEC, seed, "ok", {"err": err, "n": n}, 0.1)


def check(runs, controls=None, previous: CheckVerdict | None = None) -> CheckVerdict:  # type: ignore[no-untyped-def]
    return judge_check(SPEC, runs, controls or [], timeout=5, figures=[], duration_s=0.1, previous=previous)


def test_pass_needs_the_control_to_fail() -> None:
    control = judge_control("broken", {"broken": True}, [run(0.9)])
    assert control.outcome == "failed-as-required"
    verdict = check([run(0.1)], [control])
    assert (verdict.outcome, verdict.message) == ("pass", "all expectations hold; 1 control fails as required")
    assert [(e.metric, e.measured, e.holds) for e in verdict.runs[0].expectations] == [("err", 0.1, True),
                                                                                      ("n", 3.0, True)]


def test_no_power_when_the_control_passes_too() -> None:
    control = judge_control("broken", {"broken": True}, [run(0.1)])
    verdict = check([run(0.1)], [control])
    assert (verdict.outcome, verdict.message) == ("no-power", "control 'broken' passed too: the check cannot tell")


def test_fail_names_the_expectation() -> None:
    verdict = check([run(0.7)])
    assert (verdict.outcome, verdict.message) == ("fail", "err = 0.7, expected < 0.5")


def test_nan_never_passes() -> None:
    verdict = check([run(math.nan)])
    assert verdict.outcome == "fail"
    assert verdict.message == "err = nan, expected < 0.5"


def test_missing_and_non_numeric_metrics_are_errors_that_name_them() -> None:
    missing = judge_run(SPEC, 0, "ok", {"n": 3}, 0.1)
    assert missing.outcome == "error"
    assert missing.error == "metric 'err' missing (the check returned: n)"
    text = check([run("small")])
    assert (text.outcome, text.message) == ("error", "metric 'err' is the string 'small', not a number")
    listed = check([run([1.0, 2.0])])
    assert listed.message == "metric 'err' is a list of 2 values, not a number"


def test_errors_and_timeouts_of_controls() -> None:
    broken = judge_control("broken", {}, [judge_run(SPEC, 0, "timeout", {}, 5, "ran past")])
    verdict = check([run(0.1)], [broken])
    assert (verdict.outcome, verdict.message) == ("timeout", "control 'broken': ran past its 5 s timeout")
    crashed = judge_control("broken", {}, [judge_run(SPEC, 0, "error", {}, 5, "Traceback\n  x\nKeyError: 'a'")])
    assert check([run(0.1)], [crashed]).message == "control 'broken': raised KeyError: 'a'"


def test_worst_seed_decides_and_is_named() -> None:
    verdict = check([run(0.1, seed=0), run(0.8, seed=1)])
    assert (verdict.outcome, verdict.message) == ("fail", "err = 0.8, expected < 0.5 (seed 1)")


def test_same_seed_different_numbers_is_nondeterministic() -> None:
    first = check([run(0.1)])
    assert not check([run(0.1)], previous=first).nondeterministic
    again = check([run(0.2)], previous=first)
    assert again.nondeterministic
    assert again.message.endswith("; seed 0 gave different numbers than last time (nondeterministic)")
    assert not check([run(math.nan)], previous=check([run(math.nan)])).nondeterministic
