"""Judging: the numbers a check measured against the expectations its claim states.

Pure functions, no I/O; the rules are in docs/verdicts.md. A run's metric that is missing or
not a number is an error that names it; NaN never satisfies an expectation. Each expectation
holds when it holds on at least the quorum of the seeds (all of them by default), and counts
only when it has power: some control, or its declared null, fails it on every seed. A check
passes when every expectation with power holds; with none, it has no power to tell. Clauses
are judged from the expectations and observations that name them, the claim from its clauses.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping
from typing import Any, cast

from recordtool.record.schema import STATEMENT_CLAUSE, CheckSpec, Theory, Tolerance
from recordtool.verify.fingerprint import canonical
from recordtool.verify.limits import bound_error, bound_metrics, bound_value, is_summary
from recordtool.verify.verdict import (
    CheckVerdict,
    ClaimVerdict,
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
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


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
    if problems:
        return Run(seed, "error", dict(metrics), results, duration_s, "; ".join(problems), log, degenerate)
    return Run(seed, "ok", dict(metrics), results, duration_s, None, log, degenerate)


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
    """Whether two metric values are the same within ``tolerance``:
    ``|a - b| <= abs + rel * max(|a|, |b|)``; NaN equals NaN, an infinity only itself; lists
    element by element (a list kept whole before the bounds of ``limits`` compares as its
    summary with a summary); anything else exactly."""
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
                return f"{metric} {_fmt(a)} then {_fmt(b)}"
            return f"{metric} changed"
    return None


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


def _judge_expectations(spec: CheckSpec, clause_ids: list[str], runs: list[Run],
                        controls: list[ControlResult]) -> list[ExpectationVerdict]:
    """Each expectation over the seeds of the main run, with what gives it power."""
    required = spec.required(len(runs))
    out: list[ExpectationVerdict] = []
    for metric, expect in spec.expect.items():
        measured = [r for r in (_result(run, metric) for run in runs) if r is not None]
        holds_on = sum(1 for r in measured if r.holds)
        power: list[str] = []
        for control in controls:
            judged = [_result(run, metric) for run in control.runs]
            # NaN fails every expectation, but a metric undefined under a control (no second
            # layer to compose with, say) shows nothing the measurement could get wrong: no power.
            if judged and all(run.outcome == "ok" for run in control.runs) and all(
                    r is not None and not r.holds and _defined(r.measured) for r in judged):
                power.append(f"control '{control.name}'")
        if expect.null is not None and measured and len(measured) == len(runs) and all(
                r.null is not None and r.null_holds is False and _defined(r.null) for r in measured):
            power.append(f"null {expect.null}")
        values, nans = spread([r.measured for r in measured if r.measured is not None])
        state: ExpectationState = ("no-power" if not power else "holds" if holds_on >= required else "fails")
        out.append(ExpectationVerdict(metric, str(expect), list(expect.clause) or list(clause_ids), expect.null,
                                      state, holds_on, len(runs), required, power, values, nans))
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
    text = f"{e.metric} = {_fmt(bad[1].measured)}, expected {e.expect}" if bad else f"{e.metric}: expected {e.expect}"
    if e.seeds > 1 and bad is not None:
        text += f" (seed {bad[0]})"
    if e.required < e.seeds:
        text += f"; holds on {e.holds_on} of {e.seeds} seeds, quorum {e.required}"
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _degenerate_note(runs: list[Run], controls: list[ControlResult]) -> str:
    notes = []
    for name, group in [("the main run", runs), *((f"control '{c.name}'", c.runs) for c in controls)]:
        seeds = [str(r.seed) for r in group if r.degenerate]
        if seeds:
            notes.append(f"{name} is degenerate on seed{'s' if len(seeds) != 1 else ''} {', '.join(seeds)}")
    return "; ".join(notes)


def timed_out(timeout: float, last_ok_s: float | None) -> str:
    """Why a run timed out and what to do: how long the last successful one took, how to
    raise the limit."""
    took = "" if last_ok_s is None else f"{last_ok_s:.0f}" if last_ok_s >= 10 else f"{last_ok_s:.1f}"
    last = f"; its last successful run took {took} s" if took else ""
    return (f"ran past its {timeout:g} s timeout{last}; raise the limit with 'timeout:' in the check's YAML "
            "or 'verify --timeout S'")


def last_successful(previous: CheckVerdict | None) -> dict[str, float]:
    """The longest successful run of each part of a check's last verdict: "" for the check
    itself, else the control's name (for the messages of a timeout)."""
    out: dict[str, float] = {}
    if previous is None:
        return out
    for name, runs in [("", previous.runs), *((c.name, c.runs) for c in previous.controls)]:
        times = [r.duration_s for r in runs if r.outcome == "ok"]
        if times:
            out[name] = max(times)
    return out


def judge_check(spec: CheckSpec, runs: list[Run], controls: list[ControlResult], *, timeout: float,
                figures: list[str], duration_s: float, previous: CheckVerdict | None = None,
                clause_ids: list[str] | None = None, last_ok: dict[str, float] | None = None,
                previous_elsewhere: str = "") -> CheckVerdict:
    """The check's outcome from its runs (one per seed) and its controls (docs/verdicts.md).

    ``last_ok``: how long the longest successful run of the check ("") and of each control
    took last time (``last_successful``), said when a run times out.

    ``clause_ids``: the claim's clauses (an expectation that names none tests them all).
    ``previous``: the last verdict of this same check (same spec, code and environment); a
    seed whose numbers differ from it beyond the check's tolerance marks the check
    nondeterministic. ``previous_elsewhere``: the device that verdict was measured on, when
    not this run's (another CPU's kernels, a GPU): a difference beyond the tolerance is then
    said to come from the machine, and marks nothing.
    """
    clause_ids = clause_ids or [STATEMENT_CLAUSE]
    several = len(runs) > 1
    outcomes = [_run_outcome(r) for r in runs]
    broken: list[Outcome] = [o for o in outcomes if o in ("error", "timeout")]
    outcome: Outcome = worst(broken) if broken else "pass" if runs else "error"
    message = ""
    expectations = _judge_expectations(spec, clause_ids, runs, controls)
    if outcome != "pass":
        for run, run_outcome in zip(runs, outcomes, strict=True):
            if run_outcome == outcome:
                where = f" (seed {run.seed})" if several else ""
                if outcome == "timeout":
                    message = timed_out(timeout, (last_ok or {}).get("")) + where
                else:
                    message = short_error(run.error) + where
                break
        if not runs:
            message = "no run"
    else:
        powered = [e for e in expectations if e.power]
        failing = [e for e in powered if e.state == "fails"]
        unpowered = [e for e in expectations if not e.power]
        broken_controls = [c for c in controls if c.outcome in ("error", "timeout")]
        if failing:
            outcome = "fail"
            message = "; ".join(_failure(e, runs) for e in failing)
        elif broken_controls:
            control = broken_controls[0]
            outcome = cast(Outcome, control.outcome)
            bad = next(r for r in control.runs if r.outcome != "ok")
            detail = timed_out(timeout, (last_ok or {}).get(control.name)) if bad.outcome == "timeout" \
                else short_error(bad.error)
            message = f"control '{control.name}': {detail}"
        elif not powered:
            outcome = "no-power"
            if not controls and not any(e.null for e in expectations):
                message = "no expectation has power: the check has no control and no null"
            else:
                message = "no expectation has power: none fails on every seed of a control or of its null"
        else:
            message = f"{_plural(len(powered), 'expectation')} with power hold{'s' if len(powered) == 1 else ''}"
            if several:
                message += f" on {'every one' if spec.required(len(runs)) == len(runs) else f'at least {spec.required(len(runs))}'} of {len(runs)} seeds"
        if outcome in ("pass", "fail") and unpowered:
            names = ", ".join(e.metric for e in unpowered)
            message += f"; {len(unpowered)} without power decide{'s' if len(unpowered) == 1 else ''} nothing ({names})"
    if outcome in ("error", "timeout"):
        for e in expectations:
            e.state = cast(ExpectationState, outcome)
    degenerate = _degenerate_note(runs, controls)
    if degenerate:
        message += f"; {degenerate}"
    nondeterministic = False
    if previous is not None:
        before = {r.seed: r for r in previous.runs if r.outcome == "ok"}
        for run in runs:
            old = before.get(run.seed)
            if run.outcome != "ok" or old is None:
                continue
            difference = first_difference(old.metrics, run.metrics, spec.tolerance)
            if difference is not None:
                nondeterministic = not previous_elsewhere
                where, why = (f" on {previous_elsewhere}", "they depend on the machine") if previous_elsewhere \
                    else ("", "nondeterministic")
                message += (f"; seed {run.seed} gave different numbers than last time{where} ({difference}, "
                            f"beyond the tolerance): {why}")
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
        expectations=expectations,
        observations=_observations(spec, runs),
        threads=spec.threads,
        required=spec.required(len(runs)) if runs else spec.required(spec.seeds),
    )


CLAUSE_ORDER: tuple[ClauseState, ...] = ("contradicted", "error", "timeout", "skipped", "verified", "observed")


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
        states = {_clause_state(e.state) for e in evidence}
        state: ClauseState = next((s for s in CLAUSE_ORDER if s in states), "untested")
        out.append(ClauseVerdict(clause, claim.clause_text(clause), state, evidence))
    return out


def _clause_state(state: str) -> ClauseState:
    return cast(ClauseState, {"holds": "verified", "fails": "contradicted", "no-power": "observed"}.get(state, state))


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
    if "skipped" in outcomes:
        return "skipped"
    return "no-power"


def skipped_check(spec: CheckSpec, why: str, clause_ids: list[str] | None = None) -> CheckVerdict:
    clause_ids = clause_ids or [STATEMENT_CLAUSE]
    expectations = [ExpectationVerdict(metric, str(e), list(e.clause) or list(clause_ids), e.null, "skipped", 0, 0,
                                       spec.required(spec.seeds), [], None) for metric, e in spec.expect.items()]
    return CheckVerdict(spec.name, spec.run, dict(spec.params), "skipped", why, [], [], [], 0.0, False,
                        expectations, [], spec.threads, spec.required(spec.seeds))


# A verdict judged again from its own numbers ---------------------------------------------------

def unsupported(claim: Theory, verdict: ClaimVerdict) -> str | None:
    """Why ``verdict`` does not follow from the numbers it holds when they are judged again
    under ``claim``'s checks (those that made it, when its fingerprint is the claim's now):
    the first difference found, or None when every run, expectation, check, clause and the
    claim come out as the verdict says. A verdict file edited by hand (a number that fails
    marked as holding, a result made ``verified``) is caught here, so that no page shows a
    result its own numbers do not give. Runs that ended in an error or a timeout are taken as
    they are: they can only make a result worse. A verdict of format 1 (no clauses) is judged
    again down to its outcome, which its result is read from."""
    strict = bool(verdict.clauses)  # format 2: everything a page shows is judged again
    specs = {spec.name: spec for spec in claim.checks}
    if [check.name for check in verdict.checks] != list(specs):  # (none left out: a failing one, say)
        return f"it holds the checks {[c.name for c in verdict.checks]}, the claim has {list(specs)}"
    again: list[CheckVerdict] = []
    for check in verdict.checks:
        spec = specs[check.name]
        if check.outcome == "skipped" and not check.runs:
            skipped = skipped_check(spec, check.message, claim.clause_ids)
            if strict and not _same(skipped, check):
                return f"check '{check.name}': {_first_field('the skipped check', skipped, check)}"
            again.append(check)
            continue
        if strict:
            # the seeds it ran on: the check's own, or those of ``verify --seeds``, as its fingerprint
            # says (which is the claim's now: it is not read when it differs)
            why = _as_specified(spec, check, int(verdict.fingerprint.get(f"check:{check.name}:seeds", spec.seeds)))
            if why:
                return f"check '{check.name}': {why}"
        runs: list[Run] = []
        for run in check.runs:
            made, why = _judged_again(spec, run, f"check '{check.name}'", main=True, strict=strict)
            if why:
                return why
            runs.append(made)
        controls: list[ControlResult] = []
        for control in check.controls:
            control_runs = []
            for run in control.runs:
                made, why = _judged_again(spec, run, f"check '{check.name}', control '{control.name}'", main=False,
                                          strict=strict)
                if why:
                    return why
                control_runs.append(made)
            judged = judge_control(control.name, control.params, control_runs)
            if judged.outcome != control.outcome:
                return (f"check '{check.name}': control '{control.name}' {judged.outcome} by its numbers, "
                        f"but the file says {control.outcome}")
            controls.append(judged)
        made_check = judge_check(spec, runs, controls, timeout=spec.timeout or 0.0, figures=check.figures,
                                 duration_s=check.duration_s, clause_ids=claim.clause_ids)
        kept = {e.metric: e for e in check.expectations}
        for expectation in made_check.expectations:
            said = kept.get(expectation.metric, expectation)
            if said.state != expectation.state:
                return (f"check '{check.name}': {expectation.metric} {expectation.state} by its numbers, "
                        f"but the file says {said.state}")
        if strict:
            why = _as_made(made_check, check)
            if why:
                return f"check '{check.name}': {why}"
        if made_check.outcome != check.outcome:
            return f"check '{check.name}' comes out {made_check.outcome} by its numbers, but the file says {check.outcome}"
        again.append(made_check)
    if verdict.outcome != worst([c.outcome for c in again]):
        return f"its outcome is {verdict.outcome}, but its checks' are {worst([c.outcome for c in again])}"
    if not verdict.clauses:  # a verdict of format 1: its result is read from its outcome (docs/verdicts.md)
        return None
    clauses = judge_clauses(claim, again)
    said_clauses = {c.clause: c for c in verdict.clauses}
    for clause in clauses:
        said_clause = said_clauses.get(clause.clause, clause)
        if said_clause.state != clause.state:
            return f"clause '{clause.clause}' is {clause.state} by its numbers, but the file says {said_clause.state}"
    if not _same(verdict.clauses, clauses):
        return "its clauses (their ids, text or evidence) are not those its checks give"
    result = claim_result(clauses, again)
    if result != verdict.result:
        return f"the claim is {result} by its numbers, but the file says {verdict.result}"
    seeds = sorted({run.seed for check in again for run in check.runs})
    if verdict.seeds != seeds:
        return f"it says it ran on seeds {verdict.seeds}, its runs are on {seeds}"
    if verdict.statement != claim.statement:
        return "its statement is not the claim's"
    return None


def _as_specified(spec: CheckSpec, check: CheckVerdict, count: int) -> str | None:
    """What of ``check`` (a verdict's) is not as ``spec`` says it ran: its function, params,
    threads, its runs' seeds (every one of 0..``count``-1), its controls' names, params and
    seeds."""
    if (check.run, check.params, check.threads) != (spec.run, dict(spec.params), spec.threads):
        return "its function, params or threads are not the claim's"
    seeds = list(range(count))
    if [run.seed for run in check.runs] != seeds:
        return f"its runs are on seeds {[run.seed for run in check.runs]}, not {seeds}"
    controls = [(c.name, {**spec.params, **c.params}) for c in spec.all_controls]
    if [(c.name, c.params) for c in check.controls] != controls:
        return "its controls (their names or params) are not the claim's"
    for control in check.controls:
        if [run.seed for run in control.runs] != seeds:
            return f"control '{control.name}' ran on seeds {[run.seed for run in control.runs]}, not {seeds}"
    return None


def _as_made(made: CheckVerdict, check: CheckVerdict) -> str | None:
    """What ``check`` (a verdict's) shows otherwise than ``made`` (judged again from its
    numbers): its expectations, observations, quorum, and its message (which may go on to
    say the numbers differ from the verdict before: that is not judged again)."""
    for name in ("expectations", "observations"):
        for said, again in zip(getattr(check, name), getattr(made, name), strict=False):
            if not _same(said, again):
                return _first_field(again.metric, again, said)
        if len(getattr(check, name)) != len(getattr(made, name)):
            return f"the file lists {len(getattr(check, name))} {name}, its checks give {len(getattr(made, name))}"
    if check.required != made.required:
        return f"its quorum is {made.required} by its numbers, but the file says {check.required}"
    if check.nondeterministic != check.message.endswith(" beyond the tolerance): nondeterministic"):
        return "it is flagged nondeterministic or not otherwise than its message says"
    if made.outcome in ("pass", "fail", "no-power") and check.message != made.message and not (
            check.message.startswith(made.message + "; seed ") and " gave different numbers than last time" in check.message):
        return f"its message is not what its numbers give ('{made.message}')"
    return None


def _judged_again(spec: CheckSpec, run: Run, where: str, *, main: bool, strict: bool = False
                  ) -> tuple[Run, str | None]:
    """``run`` judged again from its metrics (a run that ended in an error or a timeout: as it
    is), and what differs from what the verdict says of it, if anything."""
    if run.outcome != "ok":
        return run, None
    made = judge_run(spec, run.seed, "ok", run.metrics, run.duration_s, main=main)
    seed = f"{where}, seed {run.seed}"
    if made.outcome != "ok":
        return made, f"{seed}: {made.error}, but the file says the run was ok"
    said = {e.metric: e for e in run.expectations}
    for result in made.expectations:
        kept = said.get(result.metric)
        if kept is None:
            return made, f"{seed}: the file has no result for {result.metric}"
        if not _same_number(kept.measured, result.measured) or (main and not _same_number(kept.null, result.null)):
            return made, f"{seed}: the file shows {result.metric} as {_fmt(kept.measured)}, its metrics hold {_fmt(result.measured)}"
        if kept.holds != result.holds or (main and kept.null_holds != result.null_holds):
            meets = "meets" if result.holds else "does not meet"
            return made, (f"{seed}: {result.metric} = {_fmt(result.measured)} {meets} '{result.expect}', but the file "
                          f"says it {'holds' if kept.holds else 'fails'}")
    if sorted(made.degenerate) != sorted(run.degenerate):
        return made, f"{seed}: degenerate by its numbers: {made.degenerate or 'no'}, by the file: {run.degenerate or 'no'}"
    if strict and not _same(made.expectations, run.expectations):  # (their order, the expectations as written)
        return made, f"{seed}: its results are not those of the claim's expectations"
    if strict and not _same(made, run):  # (no error, no log: what an ok run is)
        name = next(f for f in made.__dataclass_fields__ if not _same(getattr(made, f), getattr(run, f)))
        return made, f"{seed}: its {name} is not what an ok run with its numbers has"
    return made, None


def _first_field(metric: str, made: Any, said: Any) -> str:
    """The first field of ``made`` (judged again) that ``said`` (the file) has otherwise."""
    name = next(f for f in made.__dataclass_fields__ if not _same(getattr(made, f), getattr(said, f)))
    return f"{metric}'s {name} is {getattr(made, name)!r} by its numbers, but the file says {getattr(said, name)!r}"


def _same(a: Any, b: Any) -> bool:
    """``a == b`` for what a verdict holds (runs, expectations, clauses and the numbers in
    them), a NaN equal to a NaN: ``==`` on dataclasses, lists and dicts holding one is true only
    where both hold the very same NaN object, and on Python 3.13, whose dataclasses compare
    field by field, not even then."""
    if type(a) is not type(b):
        return bool(a == b)  # (an int and a float, None and a value: as ``==`` says)
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, float):
        return _same_number(a, b)
    return bool(a == b)


def _same_number(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))
