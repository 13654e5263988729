"""What holds now: every claim's verdict, and whether anything that produced it has changed.

``assess`` reads the verdict store and the check sources (never running or importing them)
and gives each claim a ``ClaimStatus``: ``unchecked`` when it has no verdict, ``stale`` with
the reasons when its fingerprint changed, otherwise the verdict's own result.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict
from typing import TYPE_CHECKING, cast

from recordtool.record.schema import Theory
from recordtool.verify.fingerprint import Scanner, claim_fingerprint, diff
from recordtool.verify.judge import as_judged_now, unsupported
from recordtool.verify.kept import KeptVerdicts
from recordtool.verify.store import SUFFIX, Store, read_store, verdict_path
from recordtool.verify.verdict import (
    FORMAT,
    CheckVerdict,
    ClaimStatus,
    ClaimVerdict,
    ExpectationVerdict,
    State,
    failed_runs,
    json_ready,
)

if TYPE_CHECKING:
    from recordtool.record.project import Project

Fingerprints = dict[str, tuple[dict[str, str], set[str]]]  # claim -> (fingerprint, packages)


def claim_status(claim: Theory, verdict: ClaimVerdict | None, current: dict[str, str], *,
                 seeds_given: bool = False) -> ClaimStatus:
    """The state of one claim given its verdict (or None) and its current fingerprint
    (``seeds_given``: made with the seeds of ``verify --seeds``)."""
    if verdict is None:
        return ClaimStatus(claim.id, "unchecked", None)
    if verdict.fingerprint == current:
        return ClaimStatus(claim.id, verdict.result, verdict)
    old_params = {c.name: c.params for c in verdict.checks}
    new_params = {c.name: c.params for c in claim.checks}
    reasons = diff(verdict.fingerprint, current, old_params, new_params, seeds_given=seeds_given)
    return ClaimStatus(claim.id, "stale", verdict, reasons or ["fingerprint changed"])


def assess(project: Project) -> dict[str, ClaimStatus]:
    """Every claim of the record, in record order, with its state now: only those whose file
    the verdict folder lists are read and fingerprinted, the others are ``unchecked``."""
    ids = project.record.claim_ids()
    try:  # (a link or a folder named like a verdict is read, and refused with its reason)
        listed = set(os.listdir(project.config.verdicts))
    except OSError:  # no folder (or an unreadable one: each verdict then says why)
        listed = set() if not os.path.lexists(project.config.verdicts) else {f"{i}{SUFFIX}" for i in ids}
    named = {name[:-len(SUFFIX)] for name in listed if name.endswith(SUFFIX)}  # (few: no string made per claim)
    judged = [i for i in ids if i in named]
    # the verdicts read and judged before, when unchanged (``recordtool.verify.kept``)
    kept = KeptVerdicts(project.config) if project.cached else None
    store = read_store(project.config, judged, kept)
    found, _prints = assess_claims(project, judged, store, kept=kept)
    if kept is not None:
        kept.save()
    statuses = {i: found.get(i) or ClaimStatus(i, "unchecked", None) for i in ids}
    add_dependencies(project, statuses)
    return statuses


def assess_claims(project: Project, claims: list[str], store: Store, seeds: int | None = None,
                  kept: KeptVerdicts | None = None) -> tuple[dict[str, ClaimStatus], Fingerprints]:
    """The state of each of the claims ``claims`` (ids) given the verdicts in ``store``, and
    the fingerprint each has now (``kept``: what ``store`` was read with)."""
    config = project.config
    entries = project.record.entries
    scanner = Scanner(config)
    statuses: dict[str, ClaimStatus] = {}
    prints: Fingerprints = {}
    for claim_id in claims:
        claim = cast(Theory, entries[claim_id])
        prints[claim_id] = current, _packages = claim_fingerprint(claim, scanner, seeds)
        if claim_id in store.damaged:
            where = config.relative(verdict_path(config, claim_id))
            statuses[claim_id] = ClaimStatus(claim_id, "unchecked", None,
                                             [f"verdict file {where} is damaged: {store.damaged[claim_id]}"])
            continue
        status = statuses[claim_id] = claim_status(claim, store.verdicts.get(claim_id), current,
                                                   seeds_given=seeds is not None)
        if status.verdict is not None and status.state != "stale":
            if status.verdict.format < FORMAT:  # judged under today's rules (docs/verdicts.md §6)
                status.verdict, why = as_judged_now(claim, status.verdict)
                status.state = status.verdict.result
            else:
                why = (unsupported(claim, status.verdict) if kept is None  # judged again from its own numbers
                       else kept.unsupported(claim, status.verdict, project.record.places[claim_id].digest))
            if why is not None:
                where = config.relative(verdict_path(config, claim_id))
                statuses[claim_id] = ClaimStatus(claim_id, "unchecked", None, [
                    f"verdict file {where} does not follow from its own numbers ({why}); it is not used: "
                    f"run `recordtool verify {claim_id}` to check it again"])
    return statuses, prints


def add_dependencies(project: Project, statuses: dict[str, ClaimStatus]) -> None:
    """Fill ``depends``: claims each one cites ``as: uses`` that are not verified now."""
    cites = project.record.cites
    for claim_id, status in statuses.items():
        status.depends = [
            (cited, statuses[cited].state)
            for cited, relation in cites(claim_id)
            if relation == "uses" and cited in statuses and statuses[cited].state != "verified"
        ]


def tally(states: list[State], noun: str) -> str:
    """``verified 2 of 3 claims (1 stale)``: ``noun`` is what is counted."""
    counts = Counter(states)
    others = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()) if state != "verified")
    line = f"verified {counts['verified']} of {len(states)} {noun}{'s' if len(states) != 1 else ''}"
    return line + (f" ({others})" if others else "")


def summary(statuses: dict[str, ClaimStatus]) -> str:
    """``verified 2 of 3 claims (1 stale); checks: 5 of 6 pass``."""
    line = tally([s.state for s in statuses.values()], "claim")
    checks = [c for s in statuses.values() if s.state != "stale" and s.verdict for c in s.verdict.checks]
    if checks:
        passed = sum(1 for c in checks if c.outcome == "pass")
        line += f"; checks of fresh verdicts: {passed} of {len(checks)} pass"
    return line


def _checks_line(verdict: ClaimVerdict) -> str:
    passed = sum(1 for c in verdict.checks if c.outcome == "pass")
    return f"{passed} of {len(verdict.checks)} check{'s' if len(verdict.checks) != 1 else ''} pass"


def spread_text(values: list[float] | None, nans: int, seeds: int) -> str:
    """``0.58 on 1 seed``, ``min 0.57, median 0.59, max 0.6 over 3 seeds``, ``2 NaN``."""
    parts = []
    if values is not None:
        low, mid, high = values
        if seeds - nans == 1 or low == high:
            parts.append(f"{mid:.4g}")
        else:
            parts.append(f"min {low:.4g}, median {mid:.4g}, max {high:.4g}")
    if nans:
        parts.append(f"{nans} NaN")
    return (" and ".join(parts) or "no value") + f" over {seeds} seed{'s' if seeds != 1 else ''}"


def expectation_line(e: ExpectationVerdict) -> str:
    """``err < 0.5 [a]: holds on 3 of 3 seeds (quorum 3); power: control 'broken'; sensitivity:
    positive 'planted'; measured ...``."""
    clauses = ", ".join(e.clauses)
    line = f"{e.metric} {e.expect} [{clauses}]: "
    if e.state in ("error", "timeout", "skipped"):
        return line + e.state
    held = f"holds on {e.holds_on} of {e.seeds} seed{'s' if e.seeds != 1 else ''}"
    if e.required != e.seeds:
        held += f" (quorum {e.required})"
    line += {"holds": held, "fails": f"fails: {held}", "not-reproduced": f"not reproduced: {held}",
             "no-power": f"no power: {held}, but no control or null fails it on every seed"}[e.state]
    return line + f"; {evidence_text(e)}; measured {spread_text(e.spread, e.nans, e.seeds)}"


def evidence_text(e: ExpectationVerdict) -> str:
    """``power: control 'broken'; sensitivity: positive 'planted'`` (``none`` where nothing
    gives it; a degenerate control that fails it said as such)."""
    power = ", ".join(e.power) or "none"
    if e.degenerate_power:
        power += f" (degenerate, no power: {', '.join(e.degenerate_power)})"
    sensitivity = ", ".join(e.sensitivity) or ("none: the test was never shown able to pass"
                                               if e.state == "not-reproduced" else "none")
    return f"power: {power}; sensitivity: {sensitivity}"


def _check_lines(check: CheckVerdict) -> list[str]:
    flag = " [nondeterministic]" if check.nondeterministic else ""
    lines = [f"    check {check.name}: {check.outcome}{flag} — {check.message}"]
    if check.setting:
        lines.append(f"      setting: {check.setting}{' (an analogue of the model the claim is about)' if check.analogue else ''}")
    lines += [f"      {expectation_line(e)}" for e in check.expectations]
    lines += [f"      {o.metric} observed [{', '.join(o.clauses)}]: {spread_text(o.spread, o.nans, len(check.runs))}"
              for o in check.observations]
    return lines + tracebacks(check, "      ")


TAIL_LINES = 8  # of a traceback, on the terminal (the claim's page shows more)


def tracebacks(check: CheckVerdict, indent: str) -> list[str]:
    """The end of each traceback of ``check``'s runs (its own, its controls', its positives'),
    each said once with the runs that raised it."""
    raised: dict[str, list[str]] = {}
    for where, run in failed_runs(check):
        raised.setdefault(run.error or "", []).append(where)
    lines = []
    for error, wheres in raised.items():
        if error.startswith(("Traceback", "…")):  # (a run that raised)
            lines.append(f"{indent}{check.name} {', '.join(wheres)} raised; the end of the traceback:")
            lines += [f"{indent}  {line}" for line in error.rstrip("\n").split("\n")[-TAIL_LINES:]]
    return lines


def format_status(statuses: dict[str, ClaimStatus], why: bool = False) -> str:
    """One line per claim (its result, since when, checks passing, why stale), then the counts;
    with ``why``, each clause, check, expectation, reason and dependency too."""
    width = max([len(cid) for cid in statuses] + [8])
    lines: list[str] = []
    for cid, status in statuses.items():
        verdict = status.verdict
        parts = [f"{cid:<{width}}  {status.label:<9}"]
        if verdict is not None:
            if status.state == "stale":
                parts.append(f"was {verdict.summary} ({verdict.verified_at})")
            else:
                parts.append(f"since {verdict.since}, {_checks_line(verdict)}")
                if not why and status.state != "verified" and len(verdict.clauses) > 1:
                    unverified = [f"{c.clause} {c.state}" for c in verdict.clauses if c.state != "verified"]
                    parts.append("— " + ", ".join(unverified))
        if status.reasons and not why:
            parts.append("— " + ", ".join(status.reasons))
        if status.depends:
            parts.append("— uses " + ", ".join(f"{d} ({s})" for d, s in status.depends))
        lines.append("  ".join(parts))
        if why:
            for reason in status.reasons:
                lines.append(f"    {'stale' if status.state == 'stale' else 'note'}: {reason}")
            if verdict is not None and status.state in ("timeout", "error"):
                cause = run_failure(verdict)
                lines.append(f"    the run failed, not the claim ({cause}): a plain `verify` reruns it" if cause else
                             "    the check or the claim failed (not the machine): fix it, then `verify --failed`")
            if verdict is not None:
                lines.append(f"    measured {verdict.verified_at} on {verdict.device}, commit "
                             f"{(verdict.git_commit or 'unknown')[:12]}{' (dirty)' if verdict.git_dirty else ''}, "
                             + ", ".join(f"{k} {v}" for k, v in sorted(verdict.versions.items())))
                for clause in verdict.clauses:
                    by = ", ".join(f"{e.check}: {e.metric} ({e.state.replace('-', ' ')})" for e in clause.evidence)
                    lines.append(f"    clause {clause.clause}: {clause.state}" + (f" — {by}" if by else ""))
                for check in verdict.checks:
                    lines += _check_lines(check)
            for dep, state in status.depends:
                lines.append(f"    uses {dep}, which is {state}")
    lines.append(summary(statuses))
    return "\n".join(lines)


def status_json(statuses: dict[str, ClaimStatus]) -> dict[str, object]:
    """The statuses as plain data (for ``--format json``); strict JSON (non-finite numbers
    as ``"nan"``, ``"inf"``, ``"-inf"``)."""
    claims = []
    for status in statuses.values():
        verdict = status.verdict
        claims.append({
            "claim": status.claim,
            "state": status.state,
            "label": status.label,
            "result": verdict.result if verdict else None,
            "summary": verdict.summary if verdict else None,
            "outcome": verdict.outcome if verdict else None,
            "since": verdict.since if verdict else None,
            "verified_at": verdict.verified_at if verdict else None,
            "settings": sorted({c.setting for c in verdict.checks if c.setting}) if verdict else [],
            "analogue": verdict.analogue if verdict else False,
            "reasons": status.reasons,
            "depends": [{"claim": d, "state": s} for d, s in status.depends],
            "clauses": [{"clause": c.clause, "state": c.state, "text": c.text,
                         "evidence": [asdict(e) for e in c.evidence]} for c in verdict.clauses] if verdict else [],
            "checks": [{"name": c.name, "outcome": c.outcome, "message": c.message,
                        "nondeterministic": c.nondeterministic, "seeds": c.seeds, "required": c.required,
                        "threads": c.threads, "setting": c.setting, "analogue": c.analogue,
                        "expectations": [{"metric": e.metric, "expect": e.expect, "clauses": e.clauses,
                                          "state": e.state, "holds_on": e.holds_on, "seeds": e.seeds,
                                          "required": e.required, "power": e.power,
                                          "degenerate_power": e.degenerate_power, "sensitivity": e.sensitivity,
                                          "validated": e.validated, "spread": e.spread,
                                          "nans": e.nans} for e in c.expectations],
                        "observations": [asdict(o) for o in c.observations]}
                       for c in verdict.checks] if verdict else [],
        })
    counts = Counter(s.state for s in statuses.values())
    return cast(dict[str, object], json_ready({"claims": claims, "counts": dict(sorted(counts.items())),
                                           "total": len(statuses)}))


def describe_state(status: ClaimStatus) -> str:
    """A claim's state now in one line, for `recordtool show`: "verified since ..., 1 of 1
    check passing", "stale (was verified, 2026-...) — statement changed", "unchecked"."""
    verdict = status.verdict
    line: str = status.label
    if verdict is not None:
        if status.state == "stale":
            line += f" (was {verdict.summary}, {verdict.verified_at})"
        else:
            line += f" since {verdict.since}, {_checks_line(verdict)}"
    return line + notes(status)


def notes(status: ClaimStatus) -> str:
    """`` — statement changed — uses THEORY-2 (stale)``: why a claim is stale, what it uses."""
    line = " — " + ", ".join(status.reasons) if status.reasons else ""
    if status.depends:
        line += " — uses " + ", ".join(f"{d} ({s})" for d, s in status.depends)
    return line


# How a run that died on its own says so (recordtool.verify.runner.exit_message).
_DIED = ("killed by signal", "the check's process exited", "the check's process vanished")


def run_failure(verdict: ClaimVerdict) -> str | None:
    """Why a timeout or error verdict came from the run (a timeout, a crash, a signal), not from
    the claim, which a plain ``verify`` then reruns; None when it did not, or only partly."""
    if verdict.result not in ("timeout", "error"):
        return None
    causes: list[str] = []
    for check in verdict.checks:
        for variant, runs in [("", check.runs), *((f"control {c.name}", c.runs) for c in check.controls),
                              *((f"positive {c.name}", c.runs) for c in check.positives)]:
            for run in runs:
                where = f"{check.name}{f' [{variant}]' if variant else ''} seed {run.seed}"
                if run.outcome == "timeout":
                    causes.append(f"{where} timed out")
                elif run.outcome == "error":
                    if not (run.error or "").startswith(_DIED):
                        return None
                    causes.append(f"{where}: {(run.error or '').split(';')[0]}")
    return ", ".join(causes) or None
