"""What holds now: every claim's verdict, and whether anything that produced it has changed.

``assess`` reads the verdict store and the check sources (never running or importing them,
never importing torch) and gives each claim of the record a ``ClaimStatus``: ``unchecked``
when it has no verdict, ``stale`` with the reasons when its fingerprint changed, otherwise
the verdict's own state (pass -> ``verified``, fail -> ``failed``, the others by name).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from recordtool.record.schema import Theory
from recordtool.verify.fingerprint import Scanner, diff, fingerprint
from recordtool.verify.store import Store, read_store, verdict_path
from recordtool.verify.verdict import ClaimStatus, ClaimVerdict, State, state_of

if TYPE_CHECKING:
    from recordtool.record.project import Project

__all__ = ["assess", "assess_claims", "claim_status", "summary"]

Fingerprints = dict[str, tuple[dict[str, str], set[str]]]  # claim -> (fingerprint, packages)


def claim_status(claim: Theory, verdict: ClaimVerdict | None, current: dict[str, str]) -> ClaimStatus:
    """The state of one claim given its verdict (or None) and its current fingerprint."""
    if verdict is None:
        return ClaimStatus(claim.id, "unchecked", None)
    reasons = stale_reasons(claim, verdict, current)
    if reasons:
        return ClaimStatus(claim.id, "stale", verdict, reasons)
    return ClaimStatus(claim.id, state_of(verdict.outcome), verdict)


def stale_reasons(claim: Theory, verdict: ClaimVerdict, current: dict[str, str]) -> list[str]:
    if verdict.fingerprint == current:
        return []
    old_params = {c.name: c.params for c in verdict.checks}
    new_params = {c.name: c.params for c in claim.checks}
    return diff(verdict.fingerprint, current, old_params, new_params) or ["fingerprint changed"]


def assess(project: Project) -> dict[str, ClaimStatus]:
    """Every claim of the record, in record order, with its state now."""
    claims = project.record.claims()
    store = read_store(project.config, [c.id for c in claims])
    statuses, _prints = assess_claims(project, claims, store)
    add_dependencies(project, statuses)
    return statuses


def assess_claims(project: Project, claims: list[Theory], store: Store) -> tuple[dict[str, ClaimStatus], Fingerprints]:
    """The state of each of ``claims`` given the verdicts in ``store``, and the fingerprint
    each has now (which ``verify`` keeps with a new verdict)."""
    config = project.config
    scanner = Scanner(config)
    statuses: dict[str, ClaimStatus] = {}
    prints: Fingerprints = {}
    for claim in claims:
        prints[claim.id] = current, _packages = fingerprint(claim, scanner)
        if claim.id in store.damaged:
            where = config.relative(verdict_path(config, claim.id))
            statuses[claim.id] = ClaimStatus(claim.id, "unchecked", None,
                                             [f"verdict file {where} is damaged: {store.damaged[claim.id]}"])
        else:
            statuses[claim.id] = claim_status(claim, store.verdicts.get(claim.id), current)
    return statuses, prints


def add_dependencies(project: Project, statuses: dict[str, ClaimStatus]) -> None:
    """Fill ``depends``: claims each one cites ``as: uses`` that are not verified now."""
    for claim in project.record.claims():
        status = statuses.get(claim.id)
        if status is None:
            continue
        status.depends = [
            (c.id, statuses[c.id].state)
            for c in claim.cites
            if c.as_ == "uses" and c.id in statuses and statuses[c.id].state != "verified"
        ]


def summary(statuses: dict[str, ClaimStatus]) -> str:
    """``verified 2 of 3 claims (1 stale); checks: 5 of 6 pass``."""
    total = len(statuses)
    counts: Counter[State] = Counter(s.state for s in statuses.values())
    others = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()) if state != "verified")
    line = f"verified {counts['verified']} of {total} claim{'s' if total != 1 else ''}"
    if others:
        line += f" ({others})"
    checks = [c for s in statuses.values() if s.state != "stale" and s.verdict for c in s.verdict.checks]
    if checks:
        passed = sum(1 for c in checks if c.outcome == "pass")
        line += f"; checks of fresh verdicts: {passed} of {len(checks)} pass"
    return line


def _checks_line(verdict: ClaimVerdict) -> str:
    passed = sum(1 for c in verdict.checks if c.outcome == "pass")
    return f"{passed} of {len(verdict.checks)} check{'s' if len(verdict.checks) != 1 else ''} pass"


def format_status(statuses: dict[str, ClaimStatus], why: bool = False) -> str:
    """One line per claim (state, since when, checks passing, why stale), then the counts.

    With ``why``: every check's outcome and message, each reason, each dependency.
    """
    width = max([len(cid) for cid in statuses] + [8])
    lines: list[str] = []
    for cid, status in statuses.items():
        verdict = status.verdict
        parts = [f"{cid:<{width}}  {status.state:<9}"]
        if verdict is not None:
            if status.state == "stale":
                parts.append(f"was {state_of(verdict.outcome)} ({verdict.verified_at})")
            else:
                parts.append(f"since {verdict.since}, {_checks_line(verdict)}")
        if status.reasons and not why:
            parts.append("— " + ", ".join(status.reasons))
        if status.depends:
            parts.append("— uses " + ", ".join(f"{d} ({s})" for d, s in status.depends))
        lines.append("  ".join(parts))
        if why:
            for reason in status.reasons:
                lines.append(f"    {'stale' if status.state == 'stale' else 'note'}: {reason}")
            if verdict is not None:
                lines.append(f"    measured {verdict.verified_at} on {verdict.device}, commit "
                             f"{(verdict.git_commit or 'unknown')[:12]}{' (dirty)' if verdict.git_dirty else ''}, "
                             + ", ".join(f"{k} {v}" for k, v in sorted(verdict.versions.items())))
                for check in verdict.checks:
                    flag = " [nondeterministic]" if check.nondeterministic else ""
                    lines.append(f"    check {check.name}: {check.outcome}{flag} — {check.message}")
            for dep, state in status.depends:
                lines.append(f"    uses {dep}, which is {state}")
    lines.append(summary(statuses))
    return "\n".join(lines)


def status_json(statuses: dict[str, ClaimStatus]) -> dict[str, object]:
    """The statuses as plain data (for ``--format json``)."""
    claims = []
    for status in statuses.values():
        verdict = status.verdict
        claims.append({
            "claim": status.claim,
            "state": status.state,
            "outcome": verdict.outcome if verdict else None,
            "since": verdict.since if verdict else None,
            "verified_at": verdict.verified_at if verdict else None,
            "reasons": status.reasons,
            "depends": [{"claim": d, "state": s} for d, s in status.depends],
            "checks": [{"name": c.name, "outcome": c.outcome, "message": c.message,
                        "nondeterministic": c.nondeterministic} for c in verdict.checks] if verdict else [],
        })
    counts = Counter(s.state for s in statuses.values())
    return {"claims": claims, "counts": dict(sorted(counts.items())), "total": len(statuses)}
