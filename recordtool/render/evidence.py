"""The Verdict section of a claim's page: whether it holds now, and on what evidence (its
clauses, each check's expectations, measurements, controls and figures, and provenance).
The rules: docs/verdicts.md.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from recordtool.record.expect import ExpectationSyntaxError, parse_expectation
from recordtool.render import escape
from recordtool.render.figures import figure_lines
from recordtool.render.sitemap import Context, badge, number, outcome_badge
from recordtool.verify.verdict import failed_runs

if TYPE_CHECKING:
    from recordtool.record.schema import CheckSpec, Theory
    from recordtool.verify.verdict import (
        CheckVerdict,
        ClaimStatus,
        ClaimVerdict,
        ClauseVerdict,
        ControlResult,
        ExpectationVerdict,
        Run,
    )

TRACEBACK_LINES = 15

CONTROL_OUTCOMES = {
    "failed-as-required": "fails an expectation on every seed",
    "passed": "meets every expectation on some seed",
    "held": "meets every expectation on every seed",
    "not-held": "fails an expectation on some seed",
    "error": "💥 error",
    "timeout": "⏱️ timeout",
}

# The badges of a clause's and an expectation's states that are not a claim's (``badge``)
CLAUSE_BADGES = {
    "not-reproduced": "❔ not reproduced (the test was never shown able to pass)",
    "observed": "👁️ observed only",
    "untested": "⚪ untested",
}

# A clause's state in a count ("5 verified · 1 observed only"): verified, then the worst first
CLAUSE_WORDS = {"verified": "verified", "contradicted": "contradicted", "not-reproduced": "not reproduced",
                "error": "error", "timeout": "timeout", "skipped": "skipped", "untested": "untested",
                "observed": "observed only"}
CLAUSES = "clauses"  # the anchor of the clause table

EXPECTATION_BADGES = {
    "holds": "✅ holds",
    "fails": "❌ fails",
    "not-reproduced": "❔ not reproduced (never shown able to pass)",
    "no-power": "➖ no power (decides nothing)",
}


ANALOGUE = " in the lab's analogue"


def verdict_badge(ctx: Context, claim_id: str, state: str) -> str:
    """The badge of a claim's state, ``✅ verified in the lab's analogue`` when a check of its
    verdict measured an analogue of the model the claim is about."""
    status = ctx.statuses.get(claim_id)
    analogue = status is not None and status.verdict is not None and status.verdict.analogue
    return badge(state) + (ANALOGUE if analogue and state in ("verified", "partly-verified") else "")


def verdict_line(ctx: Context, claim_id: str, clauses: str) -> str:
    """A claim's verdict at a glance: its badge and, of its clauses, how many are in the state
    that decides it (named, each linked to ``clauses``, the clause table), then how many are in
    each other: ``❌ contradicted: 1 of 7 clauses (`recent-tokens`) · 5 verified · 1 observed only``."""
    state = ctx.states.get(claim_id) or "unchecked"
    shown = verdict_badge(ctx, claim_id, state)
    status = ctx.statuses.get(claim_id)
    verdict = status.verdict if status is not None else None
    if verdict is None or not verdict.clauses or state == "stale":
        return shown
    counts: Counter[str] = Counter(clause.state for clause in verdict.clauses)
    worst = next((s for s in CLAUSE_WORDS if counts[s] and s != "verified"), "verified")  # (worst first)
    lead = "verified" if state == "verified" else worst
    word = CLAUSE_WORDS[lead]
    out = f"{shown}: {counts[lead]} of {len(verdict.clauses)} clause{'s' if len(verdict.clauses) != 1 else ''}"
    if word != state.replace("-", " "):
        out += f" {word}"
    if lead != "verified":
        out += " (" + ", ".join(f"[{escape.code(c.clause)}]({clauses})" for c in verdict.clauses if c.state == lead) + ")"
    return out + "".join(f" · {counts[s]} {word}" for s, word in CLAUSE_WORDS.items() if s != lead and counts[s])


def banner(ctx: Context, claim_id: str) -> str:
    """The first line of a claim's page: ``verdict_line``, in bold, and what its checks ran on."""
    status = ctx.statuses.get(claim_id)
    verdict = status.verdict if status is not None else None
    settings = list(dict.fromkeys(c.setting for c in verdict.checks if c.setting)) if verdict is not None else []
    setting = f" — setting{'s' if len(settings) > 1 else ''}: " + "; ".join(escape.line(s) for s in settings) if settings else ""
    return f"**{verdict_line(ctx, claim_id, '#' + CLAUSES)}**{setting}"


def verdict_section(ctx: Context, claim: Theory, page: str) -> str:
    """``## Verdict`` of ``claim``, for the page at ``page``."""
    status = ctx.statuses.get(claim.id)
    state = status.state if status is not None else "unchecked"
    verdict = status.verdict if status is not None else None
    out = ["## Verdict", "", _headline(ctx, claim.id, status)]
    if status is not None and status.reasons:
        out += ["", "Why it is stale:" if state == "stale" else "Note:", ""]
        out += [f"- {escape.line(reason)}" for reason in status.reasons]
    if verdict is not None and verdict.clauses:
        out += ["", *_clauses(verdict, stale=state == "stale")]
    if status is not None and status.depends:
        deps = ", ".join(f"{ctx.link(page, dep)} ({badge(dep_state)})" for dep, dep_state in status.depends)
        out += ["", f"It uses claims that are not verified now: {deps}."]
    checks = {c.name: c for c in verdict.checks} if verdict is not None else {}
    numbers = [0]  # the figures are numbered across the page
    for spec in claim.checks:
        out += ["", *_check(ctx, spec, checks.pop(spec.name, None), page, claim.id, numbers)]
    for gone in checks.values():  # checked then, no longer declared
        out += ["", *_check(ctx, None, gone, page, claim.id, numbers)]
    if not claim.checks and verdict is None:
        out += ["", "This claim declares no checks."]
    if verdict is not None:
        out += ["", *_provenance(verdict)]
    return "\n".join(out)


def _headline(ctx: Context, claim_id: str, status: ClaimStatus | None) -> str:
    state, label = (status.state, status.label) if status is not None else ("unchecked", "unchecked")
    verdict = status.verdict if status is not None else None
    shown = verdict_badge(ctx, claim_id, state)
    if label != state.replace("-", " ") and ":" in label:  # "partly verified: 4 of 5 clauses"
        shown = f"{shown}{escape.line(label[label.index(':'):])}"
    line = f"**{shown}**"
    if verdict is None:
        if status is not None and status.reasons:  # a verdict file that cannot be used (damaged, or not following from its numbers)
            return line + " — its verdict file is not used (see the note); run `recordtool verify` to check it."
        return line + " — never checked; run `recordtool verify` to check it."
    if state == "stale":
        last = badge(verdict.result)
        if ":" in verdict.summary:
            last += escape.line(verdict.summary[verdict.summary.index(":"):])
        return (line + f" — the last verdict, {last} on {escape.line(verdict.verified_at)}, "
                "no longer applies: something that produced it has changed.")
    return line + f" since {escape.line(verdict.since)}, last verified {escape.line(verdict.verified_at)}."


def _check(ctx: Context, spec: CheckSpec | None, verdict: CheckVerdict | None, page: str, claim: str,
           numbers: list[int]) -> list[str]:
    name = spec.name if spec is not None else verdict.name if verdict is not None else "?"
    outcome = outcome_badge(verdict.outcome) if verdict is not None else "⚪ not run"
    out = [f"### Check {escape.code(name)}: {outcome}", ""]
    run = spec.run if spec is not None else verdict.run if verdict is not None else ""
    params = verdict.params if verdict is not None else spec.params if spec is not None else {}
    facts = [f"Runs {escape.code(run)}" + (f" with {_params(params)}" if params else "")]
    if verdict is not None:
        seeds = sorted({r.seed for r in verdict.runs})
        if seeds:
            quorum = f" (quorum {verdict.required})" if verdict.required < len(seeds) else ""
            facts.append(f"seed{'s' if len(seeds) != 1 else ''} {', '.join(str(s) for s in seeds)}{quorum}")
            facts.append(f"{verdict.threads} thread{'s' if verdict.threads != 1 else ''} per run")
        if spec is not None and "tolerance" in spec.model_fields_set:
            facts.append(f"reruns agree within rel {spec.tolerance.rel:g}, abs {spec.tolerance.abs:g}")
        facts.append(f"{verdict.duration_s:.1f} s")
        if verdict.nondeterministic:
            facts.append("nondeterministic: a rerun of a seed gave different numbers")
    elif spec is None:
        facts.append("no longer declared by the claim")
    out.append("; ".join(facts) + ".")
    setting = verdict.setting if verdict is not None else spec.setting if spec is not None else ""
    if setting:
        analogue = verdict.analogue if verdict is not None else spec is not None and spec.analogue
        out += ["", f"Setting: {escape.line(setting)}" + (" (an analogue of the model the claim is about)."
                                                           if analogue else ".")]
    if verdict is not None:
        if verdict.message:
            out += ["", escape.line(verdict.message)]
        if verdict.expectations:
            out += ["", *_expectations(verdict)]
        degenerate = [r for r in verdict.runs if r.degenerate]
        if degenerate:
            out += ["", "⚠️ Degenerate (it learned nothing): " + "; ".join(
                f"seed {r.seed} ({escape.line(', '.join(r.degenerate))})" for r in degenerate) + "."]
    judged, observed = _measurements(spec, verdict)
    out += ["", *judged]
    if observed:
        out += ["", *observed]
    if verdict is not None:
        for where, run_ in failed_runs(verdict):  # its own runs, its controls' and positives'
            out += ["", f"{escape.line(where[:1].upper() + where[1:])}: {run_.outcome}; the end of its traceback:", "",
                    escape.fence("\n".join((run_.error or "").rstrip("\n").split("\n")[-TRACEBACK_LINES:]), "text")]
        if verdict.controls:
            out += ["", *_controls(verdict.controls, verdict.expectations)]
        elif spec is not None and spec.all_controls:
            out += ["", "Controls: " + ", ".join(escape.code(c.name) for c in spec.all_controls) + " (not run)."]
        if verdict.positives:
            out += ["", *_controls(verdict.positives, verdict.expectations, positive=True)]
        out += figure_lines(ctx, verdict, claim, page, numbers)
    elif spec is not None and spec.all_controls:
        out += ["", "Controls: " + ", ".join(
            f"{escape.code(c.name)} ({_params(c.params)})" if c.params else escape.code(c.name)
            for c in spec.all_controls) + "."]
    return out


def _measurements(spec: CheckSpec | None, verdict: CheckVerdict | None) -> tuple[list[str], list[str]]:
    """What was measured under each seed: the table of the judged expectations, and the
    observed metrics (judged by nothing) in a collapsed block, so the verdict reads first."""
    rows: list[list[str]] = []
    observed: list[list[str]] = []
    clauses = {o.metric: o.clauses for o in verdict.observations} if verdict is not None else {}
    if verdict is not None and verdict.runs:
        unpowered = {e.metric for e in verdict.expectations if e.state == "no-power"}
        nulls = {e.metric: e.null or "" for e in reversed(verdict.expectations)}  # (a metric's first)
        for run_ in verdict.runs:
            if run_.outcome != "ok" and not run_.expectations:
                rows.append([str(run_.seed), "—", "—", "—", "—", f"💥 {escape.line(run_.outcome)}"])
                continue
            expected = {r.metric for r in run_.expectations}  # and the nulls they were judged against
            expected.update(nulls.get(r.metric, "") for r in run_.expectations if r.null is not None)
            for result in run_.expectations:
                held = "✅ holds" if result.holds else "❌ fails"
                if result.metric in unpowered:
                    held += " (no power)"
                measured = number(result.measured)
                if result.null is not None:
                    measured += f" (null {number(result.null)})"
                rows.append([str(run_.seed), escape.code(result.metric).replace("|", "\\|"), escape.line(result.expect),
                             _threshold(result.expect), escape.line(measured), held])
            for metric in sorted(run_.metrics):
                if metric not in expected:
                    observed.append([str(run_.seed), escape.code(metric).replace("|", "\\|"),
                                     ", ".join(escape.code(c) for c in clauses.get(metric, ())) or "—",
                                     escape.line(number(run_.metrics[metric]))])
    elif spec is not None:
        for metric, expectation in spec.expect.items():
            rows.append(["—", escape.code(metric).replace("|", "\\|"), escape.line(str(expectation)),
                         _threshold(str(expectation)), "—", "⚪ not run"])
    header = ["Seed", "Metric", "Expectation", "Threshold", "Measured", "Outcome"]
    judged = _table(header, rows) if rows else ["No expectation was judged." if observed else "No measurements."]
    if not observed:
        return judged, []
    metrics = len({row[1] for row in observed})
    summary = f"{metrics} observed metric{'s' if metrics != 1 else ''}, judged by no expectation"
    # GitHub, Obsidian and MkDocs (md_in_html) render the Markdown table inside the block
    header = ["Seed", "Metric", "Clauses", "Measured"]
    if all(row[2] == "—" for row in observed):  # no observation names a clause
        header, observed = ["Seed", "Metric", "Measured"], [[a, b, d] for a, b, _c, d in observed]
    return judged, ['<details markdown="1">', f"<summary>{summary}</summary>", "", *_table(header, observed), "",
                    "</details>"]


def _controls(controls: list[ControlResult], expectations: list[ExpectationVerdict], *,
              positive: bool = False) -> list[str]:
    """The table of the controls (or, ``positive``, of the positive controls): how each came
    out, and what it gives power (sensitivity) to."""
    rows = []
    for control in controls:
        outcome = CONTROL_OUTCOMES.get(control.outcome, escape.line(control.outcome))
        decides = [e.metric for e in expectations
                   if (f"positive '{control.name}'" in e.sensitivity if positive else f"control '{control.name}'" in e.power)]
        measured = _control_measured(control.runs, set(decides))
        degenerate = [r for r in control.runs if r.degenerate]
        if degenerate:
            seeds = ", ".join(str(r.seed) for r in degenerate)
            why = escape.line(", ".join(sorted({d for r in degenerate for d in r.degenerate})))
            outcome += f"; ⚠️ degenerate on seed{'s' if len(degenerate) != 1 else ''} {seeds} ({why}): it learned nothing"
        rows.append([escape.code(control.name), _params(control.params) or "—", outcome,
                     ", ".join(escape.code(metric) for metric in decides) or "none", measured])
    if positive:
        return ["Positive controls, where the claim is known to hold:", "",
                *_table(["Positive control", "Params", "Outcome", "Gives sensitivity to", "Measured"], rows)]
    return ["Controls, where the claim must not hold:", "",
            *_table(["Control", "Params", "Outcome", "Gives power to", "Measured"], rows)]


def _control_measured(runs: list[Run], decides: set[str]) -> str:
    """What a control measured, per seed: first the metrics it decides something for (``decides``;
    without one, those it fails; without one, all), the rest folded away in ``<details>``."""
    results = [r for run_ in runs for r in run_.expectations]
    first = decides or {r.metric for r in results if not r.holds} or {r.metric for r in results}
    shown, folded, more = [], [], 0
    for run_ in runs:
        if run_.outcome != "ok":
            shown.append(f"seed {run_.seed}: {escape.line(run_.outcome)}")
            continue
        parts: dict[bool, list[str]] = {True: [], False: []}
        for r in run_.expectations:
            parts[r.metric in first].append(f"{escape.line(r.metric)} = {escape.line(number(r.measured))} "
                                            f"({'holds' if r.holds else 'fails'})")
        shown += [f"seed {run_.seed}: " + ", ".join(parts[True])] if parts[True] else []
        folded += [f"seed {run_.seed}: " + ", ".join(parts[False])] if parts[False] else []
        more += len(parts[False])
    out = "; ".join(shown)
    if folded:  # (GitHub, Obsidian and the site draw it in the table's cell)
        out += f" <details><summary>{more} more</summary>{'; '.join(folded)}</details>"
    return out.strip() or "—"


def spread(values: list[float] | None, nans: int, seeds: int) -> str:
    """``0.59`` on one seed or when all agree, else ``0.57 / 0.59 / 0.6`` (min / median /
    max); ``2 NaN`` for the seeds that gave NaN."""
    parts = []
    if values is not None:
        low, mid, high = values
        parts.append(number(mid) if seeds - nans <= 1 or low == high
                     else f"{number(low)} / {number(mid)} / {number(high)}")
    if nans:
        parts.append(f"{nans} NaN")
    return ", ".join(parts) or "—"


def _held(e: ExpectationVerdict) -> str:
    if e.state in ("error", "timeout", "skipped"):
        return "—"
    return f"{e.holds_on} of {e.seeds}" + (f" (quorum {e.required})" if e.required < e.seeds else "")


def _expectations(verdict: CheckVerdict) -> list[str]:
    """Each expectation over the seeds: where it holds, its spread, what gives it power (a
    control or its null failing it) and sensitivity (a positive control holding it)."""
    rows = []
    for e in verdict.expectations:
        power = ", ".join(escape.line(p) for p in e.power) or "none"
        if e.degenerate_power:
            power += f" ({', '.join(escape.line(p) for p in e.degenerate_power)}: degenerate, no power)"
        sensitivity = ", ".join(escape.line(p) for p in e.sensitivity) or "none"
        rows.append([escape.code(e.metric).replace("|", "\\|"), escape.line(e.expect),
                     ", ".join(escape.code(c) for c in e.clauses), _held(e), spread(e.spread, e.nans, e.seeds), power,
                     sensitivity, EXPECTATION_BADGES.get(e.state) or badge(e.state)])
    header = ["Metric", "Expectation", "Clauses", "Holds on seeds", "Min / median / max", "Power", "Sensitivity",
              "Verdict"]
    return ["Over the seeds:", "", *_table(header, rows)]


def _clauses(verdict: ClaimVerdict, stale: bool) -> list[str]:
    """The clause table: each clause, its verdict, what decides it (with values)."""
    checks = {c.name: c for c in verdict.checks}
    rows = []
    for clause in verdict.clauses:
        rows.append([f"{escape.code(clause.clause)}: {escape.line(clause.text)}",
                     CLAUSE_BADGES.get(clause.state) or badge(clause.state), _decided_by(clause, checks)])
    title = ["### Clauses", "", "Of the last verdict:", ""] if stale else ["### Clauses", ""]
    return [*title, *_table(["Clause", "Verdict", "Decided by"], rows)]


def _decided_by(clause: ClauseVerdict, checks: dict[str, CheckVerdict]) -> str:
    if not clause.evidence:
        return "nothing: no expectation or observation names this clause"
    parts = []
    for item in clause.evidence:
        check = checks.get(item.check)
        where = f"{escape.code(item.check)}: {escape.code(item.metric)}"
        if item.kind == "observe":
            observed = next((o for o in check.observations if o.metric == item.metric), None) if check else None
            value = spread(observed.spread, observed.nans, len(check.runs)) if observed and check else "—"
            parts.append(f"{where} observed: {value}")
            continue
        e = next((x for x in check.expectations if x.metric == item.metric), None) if check else None
        if e is None:
            parts.append(f"{where}: {escape.line(item.state)}")
            continue
        text = f"{where} {escape.line(e.expect)}: {EXPECTATION_BADGES.get(e.state) or badge(e.state)}"
        if e.state == "no-power":
            text = f"{where} {escape.line(e.expect)}: ➖ no power, decides nothing; holds"
        if e.state in ("holds", "fails", "not-reproduced", "no-power"):
            text += ((": holds" if e.state in ("fails", "not-reproduced") else "")  # "❌ fails: holds on 0 of 3 seeds"
                     + f" on {e.holds_on} of {e.seeds} seed{'s' if e.seeds != 1 else ''}"
                     + (f" (quorum {e.required})" if e.required < e.seeds else "")
                     + f", measured {spread(e.spread, e.nans, e.seeds)}")
            if e.power:
                text += f"; power: {', '.join(escape.line(p) for p in e.power)}"
            if e.sensitivity:
                text += f"; sensitivity: {', '.join(escape.line(p) for p in e.sensitivity)}"
        parts.append(text)
    return "<br>".join(parts)


def _provenance(verdict: ClaimVerdict) -> list[str]:
    commit = verdict.git_commit[:12] if verdict.git_commit else "—"
    if verdict.git_commit and verdict.git_dirty:
        commit += " (with uncommitted changes)"
    versions = ", ".join(f"{escape.line(k)} {escape.line(v)}" for k, v in sorted(verdict.versions.items())) or "—"
    rows = [
        ["Verified at", escape.line(verdict.verified_at)],
        ["Outcome since", escape.line(verdict.since)],
        ["Duration", f"{verdict.duration_s:.1f} s"],
        ["Seeds", ", ".join(str(s) for s in verdict.seeds) or "—"],
        ["Commit", escape.line(commit)],
        ["Device", escape.line(verdict.device) or "—"],
        ["Versions", versions],
    ]
    return ["### Provenance", "", *_table(["Property", "Value"], rows)]


def _threshold(expect: str) -> str:
    try:
        expectation = parse_expectation(expect)
    except ExpectationSyntaxError:
        return "—"
    if expectation.op == "between":
        return f"{number(expectation.low)} … {number(expectation.high)}"
    return number(expectation.low)


def _params(params: dict[str, Any]) -> str:
    if not params:
        return ""
    return escape.code(", ".join(f"{k}={_value(v)}" for k, v in sorted(params.items())))


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(escape.in_row(cell) for cell in row) + " |" for row in rows]
    return out
