"""Judging: the numbers a check measured against the expectations its claim states.

Pure functions, no I/O. A run's metric that is missing or not a number is an error that
names it; NaN never satisfies an expectation. A check passes when every expectation holds
(under every seed) and, under each control, at least one fails; when a control passes too,
the check has no power to tell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from recordtool.record.schema import CheckSpec
from recordtool.verify.fingerprint import canonical
from recordtool.verify.verdict import (
    CheckVerdict,
    ControlOutcome,
    ControlResult,
    ExpectationResult,
    Outcome,
    Run,
    RunOutcome,
    worst,
)


def describe(value: Any) -> str:
    """A short description of a non-numeric metric value, for messages."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"the string {shown!r}"
    if isinstance(value, list):
        return f"a list of {len(value)} value{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict) and "__type__" in value:
        return f"a {value['__type__']}"
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


def as_number(value: Any) -> float | None:
    """The metric as a float (bools count as 0/1), or None when it is not a number."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def judge_run(spec: CheckSpec, seed: int, outcome: RunOutcome, metrics: Mapping[str, Any],
              duration_s: float, error: str | None = None, log: str = "") -> Run:
    """One run's metrics against the check's expectations."""
    duration_s = round(duration_s, 4)
    if outcome != "ok":
        return Run(seed, outcome, dict(metrics), [], duration_s, error, log)
    results: list[ExpectationResult] = []
    problems: list[str] = []
    for metric, expectation in spec.expect.items():
        if metric not in metrics:
            returned = ", ".join(sorted(metrics)) or "nothing"
            problems.append(f"metric '{metric}' missing (the check returned: {returned})")
            results.append(ExpectationResult(metric, str(expectation), None, False))
            continue
        number = as_number(metrics[metric])
        if number is None:
            problems.append(f"metric '{metric}' is {describe(metrics[metric])}, not a number")
            results.append(ExpectationResult(metric, str(expectation), None, False))
            continue
        results.append(ExpectationResult(metric, str(expectation), number, expectation.holds(number)))
    if problems:
        return Run(seed, "error", dict(metrics), results, duration_s, "; ".join(problems), log)
    return Run(seed, "ok", dict(metrics), results, duration_s, None, log)


def _run_outcome(run: Run) -> Outcome:
    if run.outcome == "timeout":
        return "timeout"
    if run.outcome == "error":
        return "error"
    return "pass" if all(e.holds for e in run.expectations) else "fail"


def short_error(error: str | None) -> str:
    """The line of an error that says what happened (a traceback's last line)."""
    if not error:
        return "failed without a message"
    lines = [line for line in error.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith(("Traceback", "…")):
        return "raised " + lines[-1].strip()
    return lines[0].strip() if lines else error


def _fmt(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x:.6g}"


def _failing(run: Run) -> str:
    bad = [e for e in run.expectations if not e.holds]
    return ", ".join(f"{e.metric} = {_fmt(e.measured)}, expected {e.expect}" for e in bad)


def judge_control(name: str, params: dict[str, Any], runs: list[Run]) -> ControlResult:
    outcome: ControlOutcome
    if any(r.outcome == "timeout" for r in runs):
        outcome = "timeout"
    elif any(r.outcome == "error" for r in runs):
        outcome = "error"
    elif any(all(e.holds for e in r.expectations) for r in runs):
        outcome = "passed"
    else:
        outcome = "failed-as-required"
    return ControlResult(name, params, outcome, runs)


def same_numbers(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Metrics equal value for value (NaN equal to NaN)."""
    def norm(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return canonical({k: norm(v) for k, v in a.items()}) == canonical({k: norm(v) for k, v in b.items()})


def judge_check(spec: CheckSpec, runs: list[Run], controls: list[ControlResult], *, timeout: float,
                figures: list[str], duration_s: float, previous: CheckVerdict | None = None) -> CheckVerdict:
    """The check's outcome from its runs (one per seed) and its controls.

    ``previous``: the last verdict of this same check (same spec, code and environment);
    a seed whose numbers differ from it marks the check nondeterministic.
    """
    several = len(runs) > 1
    outcomes = [_run_outcome(r) for r in runs]
    outcome = worst(outcomes) if runs else "error"
    message = ""
    where = ""
    for run, run_outcome in zip(runs, outcomes, strict=True):
        if run_outcome == outcome and outcome != "pass":
            where = f" (seed {run.seed})" if several else ""
            if outcome == "fail":
                message = _failing(run) + where
            elif outcome == "timeout":
                message = f"ran past its {timeout:g} s timeout{where}"
            else:
                message = short_error(run.error) + where
            break
    if outcome == "pass":
        passed = [c for c in controls if c.outcome == "passed"]
        broken = [c for c in controls if c.outcome in ("error", "timeout")]
        if passed:
            outcome = "no-power"
            names = ", ".join(f"'{c.name}'" for c in passed)
            message = f"control {names} passed too: the check cannot tell"
        elif broken:
            control = broken[0]
            outcome = control.outcome  # type: ignore[assignment]
            bad = next(r for r in control.runs if r.outcome != "ok")
            detail = f"ran past its {timeout:g} s timeout" if bad.outcome == "timeout" else short_error(bad.error)
            message = f"control '{control.name}': {detail}"
        elif controls:
            message = f"all expectations hold; {len(controls)} control{'s' if len(controls) != 1 else ''} fail{'' if len(controls) != 1 else 's'} as required"
        else:
            message = "all expectations hold (no control)"
    nondeterministic = False
    if previous is not None:
        before = {r.seed: r for r in previous.runs if r.outcome == "ok"}
        for run in runs:
            old = before.get(run.seed)
            if run.outcome == "ok" and old is not None and not same_numbers(old.metrics, run.metrics):
                nondeterministic = True
                message += f"; seed {run.seed} gave different numbers than last time (nondeterministic)"
                break
    return CheckVerdict(
        name=spec.name,
        run=spec.run,
        params=dict(spec.params),
        outcome=outcome,
        message=message,
        runs=runs,
        controls=controls,
        figures=figures,
        duration_s=round(duration_s, 4),
        nondeterministic=nondeterministic,
    )


def skipped_check(spec: CheckSpec, why: str) -> CheckVerdict:
    return CheckVerdict(spec.name, spec.run, dict(spec.params), "skipped", why, [], [], [], 0.0, False)
