"""Judging: the numbers a check measured against the expectations its claim states.

Pure functions, no I/O; the rules are in docs/verdicts.md. A run's metric that is missing or
not a number is an error that names it; NaN never satisfies an expectation. Each expectation
holds when it holds on at least the quorum of the seeds (all of them by default), and counts
only when it has power: some control, or its declared null, fails it on every seed. A check
passes when every expectation with power holds; with none, it has no power to tell. Clauses
are judged from the expectations and observations that name them, the claim from its clauses.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any, cast

from recordtool.record.schema import STATEMENT_CLAUSE, CheckSpec, Theory, Tolerance
from recordtool.verify.fingerprint import canonical
from recordtool.verify.limits import bound_error, bound_metrics, bound_value, is_summary
from recordtool.verify.verdict import (
    CheckVerdict,
    ClauseState,
    ClauseVerdict,
    ControlOutcome,
    ControlResult,
    Evidence,
    ExpectationResult,
    ExpectationState,
    ExpectationVerdict,
    ObservationVerdict,
    Outcome,
    Result,
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
    if is_summary(value):
        return f"a list of {value['count']:,} values (summarized)"
    if isinstance(value, dict) and "__type__" in value:
        return f"a {value['__type__']}"
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


def as_number(value: Any) -> float | None:
    """The metric as a float (bools count as 0/1), or None when it is not a number."""
    return float(value) if isinstance(value, (int, float)) else None


def judge_run(spec: CheckSpec, seed: int, outcome: RunOutcome, metrics: Mapping[str, Any],
              duration_s: float, error: str | None = None, log: str = "", *, main: bool = True) -> Run:
    """One run's metrics against the check's expectations (and, on the ``main`` run, against
    their declared nulls); flags the run degenerate when it meets a ``degenerate:`` condition."""
    duration_s = round(duration_s, 4)
    error = bound_error(error)
    named = {*spec.expect, *(e.null for e in spec.expect.values() if e.null is not None), *spec.observe,
             *spec.degenerate}
    metrics, too_much = bound_metrics(metrics, named, spec.keep)
    if outcome == "ok" and too_much is not None:
        return Run(seed, "error", metrics, [], duration_s, too_much, log)
    if outcome != "ok":
        return Run(seed, outcome, dict(metrics), [], duration_s, error, log)
    results: list[ExpectationResult] = []
    problems: list[str] = []

    def number_of(metric: str, why: str = "") -> float | None:
        if metric not in metrics:
            returned = ", ".join(sorted(metrics)) or "nothing"
            problems.append(f"metric '{metric}' missing{why} (the check returned: {returned})")
            return None
        number = as_number(metrics[metric])
        if number is None:
            problems.append(f"metric '{metric}' is {describe(metrics[metric])}, not a number")
        return number

    for metric, expect in spec.expect.items():
        number = number_of(metric)
        result = ExpectationResult(metric, str(expect), number, number is not None and expect.holds(number))
        if main and expect.null is not None:
            null = number_of(expect.null, f", the null of '{metric}'")
            result.null = null
            result.null_holds = None if null is None else expect.holds(null)
        results.append(result)
    if main:
        for metric in spec.observe:
            if metric not in metrics:
                number_of(metric, ", observed")
    degenerate: list[str] = []
    for metric, condition in spec.degenerate.items():
        number = number_of(metric, ", named under degenerate")
        if number is not None and condition.holds(number):
            degenerate.append(f"{metric} {condition}")
    return Run(seed, "error" if problems else "ok", dict(metrics), results, duration_s, "; ".join(problems) or None,
               log, degenerate)


def _run_outcome(run: Run) -> Outcome:
    if run.outcome != "ok":
        return run.outcome
    return "pass" if all(e.holds for e in run.expectations) else "fail"


def short_error(error: str | None) -> str:
    """The line of an error that says what happened (a traceback's last line)."""
    if not error:
        return "failed without a message"
    lines = [line for line in error.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith(("Traceback", "…")):
        return "raised " + lines[-1].strip()
    return lines[0].strip() if lines else error


def number_text(x: float | None) -> str:
    return "?" if x is None else f"{x:.6g}"


def _result(run: Run, metric: str) -> ExpectationResult | None:
    return next((e for e in run.expectations if e.metric == metric), None)


def spread(values: list[float]) -> tuple[list[float] | None, int]:
    """``[min, median, max]`` of ``values`` with NaN left out, and how many were NaN."""
    numbers = sorted(v for v in values if not math.isnan(v))
    nans = len(values) - len(numbers)
    if not numbers:
        return None, nans
    return [numbers[0], float(statistics.median(numbers)), numbers[-1]], nans


def close(a: Any, b: Any, tolerance: Tolerance) -> bool:
    """Whether two metric values are the same within ``tolerance``: ``|a - b| <= abs + rel *
    max(|a|, |b|)``, NaN equal to NaN, lists element by element, anything else exactly."""
    if is_summary(a) or is_summary(b):
        a, b = bound_value(a), bound_value(b)
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        x, y = float(a), float(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= tolerance.abs + tolerance.rel * max(abs(x), abs(y))
    return canonical(a) == canonical(b)


def first_difference(old: Mapping[str, Any], new: Mapping[str, Any], tolerance: Tolerance) -> str | None:
    """The first metric (by name) whose values differ beyond ``tolerance``, described; None
    when all are the same."""
    for metric in sorted(set(old) | set(new)):
        if metric not in old or metric not in new:
            return f"{metric} {'appeared' if metric not in old else 'disappeared'}"
        if not close(old[metric], new[metric], tolerance):
            a, b = as_number(old[metric]), as_number(new[metric])
            if a is not None and b is not None:
                return f"{metric} {number_text(a)} then {number_text(b)}"
            return f"{metric} changed"
    return None


def judge_control(name: str, params: dict[str, Any], runs: list[Run], *, positive: bool = False) -> ControlResult:
    """A control from its runs: a negative one ``failed-as-required`` when every run fails
    some expectation; a positive one (``positive``) ``held`` when every run holds them all."""
    outcome: ControlOutcome
    if any(r.outcome == "timeout" for r in runs):
        outcome = "timeout"
    elif any(r.outcome == "error" for r in runs):
        outcome = "error"
    elif positive:
        outcome = "held" if runs and all(all(e.holds for e in r.expectations) for r in runs) else "not-held"
    elif any(all(e.holds for e in r.expectations) for r in runs):
        outcome = "passed"
    else:
        outcome = "failed-as-required"
    return ControlResult(name, params, outcome, runs)


def _on_every_seed(control: ControlResult, metric: str, *, holds: bool) -> bool:
    """Whether every run of ``control`` ran and holds (``holds``) the expectation on ``metric``,
    or fails it with a defined value (a NaN under a control shows nothing about the test)."""
    judged = [_result(run, metric) for run in control.runs]
    return bool(judged) and all(run.outcome == "ok" for run in control.runs) and all(
        r is not None and (r.holds if holds else not r.holds and _defined(r.measured)) for r in judged)


def _judge_expectations(spec: CheckSpec, clause_ids: list[str], runs: list[Run], controls: list[ControlResult],
                        positives: list[ControlResult]) -> list[ExpectationVerdict]:
    """Each expectation over the seeds of the main run, with what gives it power and
    sensitivity (docs/verdicts.md)."""
    required = spec.required(len(runs))
    out: list[ExpectationVerdict] = []
    for metric, expect in spec.expect.items():
        measured = [r for r in (_result(run, metric) for run in runs) if r is not None]
        holds_on = sum(1 for r in measured if r.holds)
        failing = [c for c in controls if _on_every_seed(c, metric, holds=False)]
        power = [f"control '{c.name}'" for c in failing if not any(run.degenerate for run in c.runs)]
        degenerate_power = [f"control '{c.name}'" for c in failing if any(run.degenerate for run in c.runs)]
        if expect.null is not None and measured and len(measured) == len(runs) and all(
                r.null is not None and r.null_holds is False and _defined(r.null) for r in measured):
            power.append(f"null {expect.null}")
        sensitivity = [f"positive '{p.name}'" for p in positives if _on_every_seed(p, metric, holds=True)]
        values, nans = spread([r.measured for r in measured if r.measured is not None])
        state: ExpectationState = ("no-power" if not power else "holds" if holds_on >= required
                                   else "fails" if sensitivity else "not-reproduced")
        out.append(ExpectationVerdict(metric, str(expect), list(expect.clause) or list(clause_ids), expect.null,
                                      state, holds_on, len(runs), required, power, values, nans, sensitivity,
                                      degenerate_power))
    return out


def _defined(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def _observations(spec: CheckSpec, runs: list[Run]) -> list[ObservationVerdict]:
    out = []
    for metric, clauses in spec.observe.items():
        numbers = [as_number(run.metrics.get(metric)) for run in runs if run.outcome == "ok"]
        values, nans = spread([n for n in numbers if n is not None])
        out.append(ObservationVerdict(metric, list(clauses), values, nans))
    return out


def _failure(e: ExpectationVerdict, runs: list[Run]) -> str:
    """Why an expectation with power fails: the value on the first seed it fails, and, with
    a quorum, on how many seeds it holds."""
    bad = next(((run.seed, r) for run in runs if (r := _result(run, e.metric)) is not None and not r.holds), None)
    text = f"{e.metric} = {number_text(bad[1].measured)}, expected {e.expect}" if bad else f"{e.metric}: expected {e.expect}"
    if e.seeds > 1 and bad is not None:
        text += f" (seed {bad[0]})"
    if e.required < e.seeds:
        text += f"; holds on {e.holds_on} of {e.seeds} seeds, quorum {e.required}"
    return text


def _degenerate_note(runs: list[Run], controls: list[ControlResult]) -> str:
    notes = []
    for name, group in [("the main run", runs), *((f"{_kind(c)} '{c.name}'", c.runs) for c in controls)]:
        seeds = [str(r.seed) for r in group if r.degenerate]
        if seeds:
            notes.append(f"{name} is degenerate on seed{'s' if len(seeds) != 1 else ''} {', '.join(seeds)}")
    return "; ".join(notes)


def _kind(control: ControlResult) -> str:
    return "positive" if control.outcome in ("held", "not-held") else "control"


def timed_out(timeout: float, last_ok_s: float | None) -> str:
    """Why a run timed out and what to do: how long the last successful one took, how to
    raise the limit."""
    took = "" if last_ok_s is None else f"{last_ok_s:.0f}" if last_ok_s >= 10 else f"{last_ok_s:.1f}"
    last = f"; its last successful run took {took} s" if took else ""
    return (f"ran past its {timeout:g} s timeout{last}; raise the limit with 'timeout:' in the check's YAML "
            "or 'verify --timeout S'")


def last_successful(previous: CheckVerdict | None) -> dict[str, float]:
    """The longest successful run of each part of a check's last verdict: "" for the check
    itself, else the control's (or positive's) name (for the messages of a timeout)."""
    out: dict[str, float] = {}
    if previous is None:
        return out
    for name, runs in [("", previous.runs), *((c.name, c.runs) for c in [*previous.controls, *previous.positives])]:
        times = [r.duration_s for r in runs if r.outcome == "ok"]
        if times:
            out[name] = max(times)
    return out


def _broken(runs: list[Run], outcome: Outcome, timeout: float, last_ok: dict[str, float]) -> str:
    """The message of a check whose own run errored or timed out: the first such run's."""
    for run in runs:
        if _run_outcome(run) == outcome:
            where = f" (seed {run.seed})" if len(runs) > 1 else ""
            return (timed_out(timeout, last_ok.get("")) if outcome == "timeout" else short_error(run.error)) + where
    return "no run"


def _judged(spec: CheckSpec, runs: list[Run], expectations: list[ExpectationVerdict],
            variants: list[ControlResult], timeout: float, last_ok: dict[str, float]) -> tuple[Outcome, str]:
    """The outcome and message of a check whose own runs all ran (docs/verdicts.md §3)."""
    powered = [e for e in expectations if e.power]
    failing = [e for e in powered if e.state == "fails"]
    unreproduced = [e for e in powered if e.state == "not-reproduced"]
    unpowered = [e for e in expectations if not e.power]
    broken = [c for c in variants if c.outcome in ("error", "timeout")]
    outcome: Outcome = "pass"
    unreproduced_text = ("not reproduced: " + "; ".join(_failure(e, runs) for e in unreproduced)
                         + "; the test was never shown able to pass (no positive control holds it on every seed)")
    if failing:
        outcome, message = "fail", "; ".join(_failure(e, runs) for e in failing)
        if unreproduced:
            message += f"; {unreproduced_text}"
    elif broken:
        control = broken[0]
        outcome = cast(Outcome, control.outcome)
        bad = next(r for r in control.runs if r.outcome != "ok")
        detail = timed_out(timeout, last_ok.get(control.name)) if bad.outcome == "timeout" else short_error(bad.error)
        message = f"{_kind(control)} '{control.name}': {detail}"
    elif unreproduced:
        outcome, message = "not-reproduced", unreproduced_text
    elif not powered:
        outcome = "no-power"
        if not any(c.outcome in ("failed-as-required", "passed") for c in variants) \
                and not any(e.null for e in expectations):
            message = "no expectation has power: the check has no control and no null"
        else:
            message = "no expectation has power: none fails on every seed of a control or of its null"
        degenerate = sorted({d for e in expectations for d in e.degenerate_power})
        if degenerate:
            message += f"; its only power is degenerate ({', '.join(degenerate)})"
    else:
        one = len(powered) == 1
        message = f"{len(powered)} expectation{'' if one else 's'} with power hold{'s' if one else ''}"
        if len(runs) > 1:
            required = spec.required(len(runs))
            message += f" on {'every one' if required == len(runs) else f'at least {required}'} of {len(runs)} seeds"
    if outcome in ("pass", "fail", "not-reproduced") and unpowered:
        names = ", ".join(e.metric + (f" [only degenerate power: {', '.join(e.degenerate_power)}]"
                                      if e.degenerate_power else "") for e in unpowered)
        message += f"; {len(unpowered)} without power decide{'s' if len(unpowered) == 1 else ''} nothing ({names})"
    return outcome, message


def _moved(spec: CheckSpec, runs: list[Run], previous: CheckVerdict | None, elsewhere: str) -> tuple[bool, str]:
    """Whether a seed's numbers moved beyond the tolerance since ``previous`` (nondeterministic,
    unless that was measured ``elsewhere``), and the note that says so."""
    if previous is None:
        return False, ""
    before = {r.seed: r for r in previous.runs if r.outcome == "ok"}
    for run in runs:
        old = before.get(run.seed)
        if run.outcome != "ok" or old is None:
            continue
        difference = first_difference(old.metrics, run.metrics, spec.tolerance)
        if difference is not None:
            where, why = (f" on {elsewhere}", "they depend on the machine") if elsewhere else ("", "nondeterministic")
            return not elsewhere, (f"; seed {run.seed} gave different numbers than last time{where} ({difference}, "
                                   f"beyond the tolerance): {why}")
    return False, ""


def judge_check(spec: CheckSpec, runs: list[Run], controls: list[ControlResult], *, timeout: float,
                figures: list[str], duration_s: float, previous: CheckVerdict | None = None,
                clause_ids: list[str] | None = None, last_ok: dict[str, float] | None = None,
                previous_elsewhere: str = "", positives: list[ControlResult] | None = None) -> CheckVerdict:
    """The check's outcome from its runs (one per seed), its controls and its positive
    controls (docs/verdicts.md). ``previous``: the last verdict of this check, whose numbers a
    seed's may not leave beyond the tolerance; ``previous_elsewhere``: its device, when not this
    run's."""
    clause_ids = clause_ids or [STATEMENT_CLAUSE]
    positives = positives or []
    last_ok = last_ok or {}
    broken: list[Outcome] = [o for o in map(_run_outcome, runs) if o in ("error", "timeout")]
    expectations = _judge_expectations(spec, clause_ids, runs, controls, positives)
    if broken or not runs:
        outcome: Outcome = worst(broken) if broken else "error"
        message = _broken(runs, outcome, timeout, last_ok)
    else:
        outcome, message = _judged(spec, runs, expectations, [*controls, *positives], timeout, last_ok)
    if outcome in ("error", "timeout"):
        for e in expectations:
            e.state = cast(ExpectationState, outcome)
    degenerate = _degenerate_note(runs, [*controls, *positives])
    if degenerate:
        message += f"; {degenerate}"
    nondeterministic, moved = _moved(spec, runs, previous, previous_elsewhere)
    return CheckVerdict(
        name=spec.name, run=spec.run, params=dict(spec.params), outcome=outcome, message=message + moved,
        runs=runs, controls=controls, figures=figures, duration_s=round(duration_s, 4),
        nondeterministic=nondeterministic, expectations=expectations, observations=_observations(spec, runs),
        threads=spec.threads, required=spec.required(len(runs)) if runs else spec.required(spec.seeds),
        positives=positives, setting=spec.setting, analogue=spec.analogue,
    )


CLAUSE_STATE = {"holds": "verified", "fails": "contradicted", "no-power": "observed"}  # an expectation's, as a clause's
CLAUSE_ORDER: tuple[ClauseState, ...] = ("contradicted", "error", "timeout", "skipped", "not-reproduced", "verified",
                                         "observed")


def judge_clauses(claim: Theory, checks: list[CheckVerdict]) -> list[ClauseVerdict]:
    """Each clause of ``claim`` from what its checks' expectations and observations found."""
    out = []
    for clause in claim.clause_ids:
        evidence: list[Evidence] = []
        for check in checks:
            evidence += [Evidence(check.name, e.metric, "expect", e.state)
                         for e in check.expectations if clause in e.clauses]
            evidence += [Evidence(check.name, o.metric, "observe", "observed")
                         for o in check.observations if clause in o.clauses]
        states = {CLAUSE_STATE.get(e.state, e.state) for e in evidence}
        state: ClauseState = next((s for s in CLAUSE_ORDER if s in states), "untested")
        out.append(ClauseVerdict(clause, claim.clause_text(clause), state, evidence))
    return out


def claim_result(clauses: list[ClauseVerdict], checks: list[CheckVerdict]) -> Result:
    """The claim's result from its clauses (docs/verdicts.md)."""
    states = [c.state for c in clauses]
    outcomes = {c.outcome for c in checks}
    if "contradicted" in states:
        return "contradicted"
    for broken in ("error", "timeout"):
        if broken in outcomes or broken in states:
            return cast(Result, broken)
    verified = states.count("verified")
    if clauses and verified == len(clauses):
        return "verified"
    if verified:
        return "partly-verified"
    if "not-reproduced" in states:
        return "not-reproduced"
    if "skipped" in outcomes:
        return "skipped"
    return "no-power"


def skipped_check(spec: CheckSpec, why: str, clause_ids: list[str]) -> CheckVerdict:
    expectations = [ExpectationVerdict(metric, str(e), list(e.clause) or list(clause_ids), e.null, "skipped", 0, 0,
                                       spec.required(spec.seeds), [], None) for metric, e in spec.expect.items()]
    return CheckVerdict(spec.name, spec.run, dict(spec.params), "skipped", why, [], [], [], 0.0, False,
                        expectations, [], spec.threads, spec.required(spec.seeds), setting=spec.setting,
                        analogue=spec.analogue)
