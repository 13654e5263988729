"""A verdict judged again from its own numbers when it is read (``status``, ``render``, ``verify``).

``unsupported`` says why a verdict does not follow from its numbers (a number edited by hand),
so that no page shows a result its numbers do not give; ``as_judged_now`` gives a verdict of an
older format as today's rules judge it (docs/verdicts.md §6). Fresh numbers: ``rules``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from recordtool.record.schema import CheckSpec, Theory
from recordtool.verify.rules import (
    claim_result,
    judge_check,
    judge_clauses,
    judge_control,
    judge_run,
    number_text,
    skipped_check,
)
from recordtool.verify.verdict import FORMAT, CheckVerdict, ClaimVerdict, ControlResult, Run, worst

_MOVED = " gave different numbers than last time"


def as_judged_now(claim: Theory, verdict: ClaimVerdict) -> tuple[ClaimVerdict, str | None]:
    """``verdict`` as today's rules judge it, and why it does not follow from its own numbers
    (None when it does): one of an older format is judged again from its runs, and its checks,
    clauses and result replaced by what they give now."""
    if verdict.format >= FORMAT:
        return verdict, unsupported(claim, verdict)
    checks, why = _checks_again(claim, verdict, strict=False)
    if why is not None:
        return verdict, why
    clauses = judge_clauses(claim, checks)
    return dataclasses.replace(verdict, checks=checks, outcome=worst([c.outcome for c in checks]), clauses=clauses,
                               result=claim_result(clauses, checks), format=FORMAT), None


def unsupported(claim: Theory, verdict: ClaimVerdict) -> str | None:
    """Why ``verdict`` does not follow from its numbers judged again under ``claim``'s checks:
    the first difference found, or None. Runs that ended in an error or a timeout are taken as
    they are: they can only make a result worse."""
    if verdict.format < FORMAT:
        return as_judged_now(claim, verdict)[1]
    again, why = _checks_again(claim, verdict, strict=True)
    if why is not None:
        return why
    if verdict.outcome != worst([c.outcome for c in again]):
        return f"its outcome is {verdict.outcome}, but its checks' are {worst([c.outcome for c in again])}"
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


def _checks_again(claim: Theory, verdict: ClaimVerdict, *, strict: bool) -> tuple[list[CheckVerdict], str | None]:
    """Each check of ``verdict`` judged again from its runs, and the first thing that differs
    from the file (``strict``: all a page shows; else, for an older format, its runs' numbers)."""
    specs = {spec.name: spec for spec in claim.checks}
    if [check.name for check in verdict.checks] != list(specs):  # (none left out: a failing one, say)
        return [], f"it holds the checks {[c.name for c in verdict.checks]}, the claim has {list(specs)}"
    again: list[CheckVerdict] = []
    for check in verdict.checks:
        spec = specs[check.name]
        if check.outcome == "skipped" and not check.runs:
            skipped = skipped_check(spec, check.message, claim.clause_ids)
            if strict and not _same(skipped, check):
                return again, f"check '{check.name}': {_first_field('the skipped check', skipped, check)}"
            again.append(check if strict else skipped)
            continue
        if strict:
            # the seeds it ran on: the check's own, or those of ``verify --seeds``, as its fingerprint
            # says (which is the claim's now: it is not read when it differs)
            why = _as_specified(spec, check, int(verdict.fingerprint.get(f"check:{check.name}:seeds", spec.seeds)))
            if why:
                return again, f"check '{check.name}': {why}"
        made, why = _check_again(spec, check, claim.clause_ids, strict=strict)
        if why is None and strict:
            why = _compared(made, check)
        if why is not None:
            return again, why
        if not strict:  # (an older format: keep what a rerun said of its numbers moving)
            moved = check.message.find("; seed ")
            if moved >= 0 and _MOVED in check.message[moved:]:
                made.message += check.message[moved:]
                made.nondeterministic = check.nondeterministic
        again.append(made)
    return again, None


def _check_again(spec: CheckSpec, check: CheckVerdict, clause_ids: list[str], *, strict: bool
                 ) -> tuple[CheckVerdict, str | None]:
    """``check`` judged again from its runs, its controls' and its positives'."""
    runs: list[Run] = []
    for run in check.runs:
        made, why = _judged_again(spec, run, f"check '{check.name}'", main=True, strict=strict)
        if why:
            return check, why
        runs.append(made)
    variants: list[list[ControlResult]] = [[], []]
    for kind, said in enumerate((check.controls, check.positives)):
        for control in said:
            name = f"{'positive' if kind else 'control'} '{control.name}'"
            control_runs = []
            for run in control.runs:
                made, why = _judged_again(spec, run, f"check '{check.name}', {name}", main=False, strict=strict)
                if why:
                    return check, why
                control_runs.append(made)
            judged = judge_control(control.name, control.params, control_runs, positive=bool(kind))
            if judged.outcome != control.outcome:
                return check, (f"check '{check.name}': {name} {judged.outcome} by its numbers, "
                               f"but the file says {control.outcome}")
            variants[kind].append(judged)
    made_check = judge_check(spec, runs, variants[0], timeout=spec.timeout or 0.0, figures=check.figures,
                             duration_s=check.duration_s, clause_ids=clause_ids, positives=variants[1])
    if not strict:  # (an older format: what the check said of itself then)
        made_check.setting, made_check.analogue = check.setting or spec.setting, check.analogue or spec.analogue
    return made_check, None


def _compared(made: CheckVerdict, check: CheckVerdict) -> str | None:
    """What of ``check`` (the file's) differs from ``made`` (judged again)."""
    kept = {e.metric: e for e in check.expectations}
    for expectation in made.expectations:
        said = kept.get(expectation.metric, expectation)
        if said.state != expectation.state:
            return (f"check '{check.name}': {expectation.metric} {expectation.state} by its numbers, "
                    f"but the file says {said.state}")
    why = _as_made(made, check)
    if why:
        return f"check '{check.name}': {why}"
    if made.outcome != check.outcome:
        return f"check '{check.name}' comes out {made.outcome} by its numbers, but the file says {check.outcome}"
    return None


def _as_specified(spec: CheckSpec, check: CheckVerdict, count: int) -> str | None:
    """What of ``check`` (a verdict's) is not as ``spec`` says it ran, on seeds 0..``count``-1."""
    if (check.run, check.params, check.threads) != (spec.run, dict(spec.params), spec.threads):
        return "its function, params or threads are not the claim's"
    if (check.setting, check.analogue) != (spec.setting, spec.analogue):
        return "its setting or analogue is not the claim's"
    seeds = list(range(count))
    if [run.seed for run in check.runs] != seeds:
        return f"its runs are on seeds {[run.seed for run in check.runs]}, not {seeds}"
    for kind, said, specified in (("controls", check.controls, spec.all_controls),
                                  ("positives", check.positives, spec.all_positives)):
        if [(c.name, c.params) for c in said] != [(c.name, {**spec.params, **c.params}) for c in specified]:
            return f"its {kind} (their names or params) are not the claim's"
        for control in said:
            if [run.seed for run in control.runs] != seeds:
                return f"{kind[:-1]} '{control.name}' ran on seeds {[run.seed for run in control.runs]}, not {seeds}"
    return None


def _as_made(made: CheckVerdict, check: CheckVerdict) -> str | None:
    """What ``check`` (a verdict's) shows otherwise than ``made`` (judged again from its
    numbers); its message may go on to say the numbers moved since the verdict before."""
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
            return made, f"{seed}: the file shows {result.metric} as {number_text(kept.measured)}, its metrics hold {number_text(result.measured)}"
        if kept.holds != result.holds or (main and kept.null_holds != result.null_holds):
            meets = "meets" if result.holds else "does not meet"
            return made, (f"{seed}: {result.metric} = {number_text(result.measured)} {meets} '{result.expect}', but the file "
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
    """``a == b`` for what a verdict holds, a NaN equal to a NaN (which ``==`` on dataclasses,
    lists and dicts does not give)."""
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
