"""What a verify run did, for the terminal (``format_report``), ``--format json``
(``report_json``) and its exit code (``Report.ok``: no claim left worse off than its committed
verdict; ``Report.all_verified``: what ``--strict`` asks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recordtool.verify.status import notes, status_json, tally, tracebacks
from recordtool.verify.verdict import ClaimStatus, ClaimVerdict

# How good a claim's result is, for telling whether a run left it worse off than the verdict
# it replaces (higher is better).
RANK = {"verified": 6, "partly-verified": 5, "skipped": 4, "no-power": 3, "not-reproduced": 2, "contradicted": 1,
        "error": 0, "timeout": 0}


@dataclass
class ClaimResult:
    """One selected claim after the run: its status now, whether it was run, and the
    committed verdict it was measured against (None: there was none)."""

    claim: str
    status: ClaimStatus
    ran: bool
    cut_short: bool = False  # it was to run, and Ctrl-C came first: its last verdict stands, not rechecked
    before: ClaimVerdict | None = None

    @property
    def verified(self) -> bool:
        return self.status.state in ("verified", "skipped")

    @property
    def regressed(self) -> str | None:
        """Why this run leaves the claim worse off than its committed verdict (None: it does
        not), by the rule docs/verdicts.md states."""
        verdict = self.status.verdict
        if self.status.state in ("error", "timeout"):
            return f"its check ended in {self.status.state}"
        if self.status.state == "unchecked" and self.before is None and not self.cut_short:
            return "unchecked: no check tests its clauses, and it has no verdict before"
        if not self.ran or verdict is None:
            return None
        if self.before is None:
            return None if self.verified else f"{self.status.label}, with no verdict before"
        return worse_off(self.before, verdict)


def worse_off(before: ClaimVerdict, after: ClaimVerdict) -> str | None:
    """Why ``after`` is worse than ``before`` (None: it is not): its result is lower
    (``RANK``), or a clause that was verified is not now."""
    if RANK.get(after.result, 0) < RANK.get(before.result, 0):
        return f"{before.summary} before, {after.summary} now"
    held = {c.clause for c in before.clauses if c.state == "verified"}
    lost = sorted(held - {c.clause for c in after.clauses if c.state == "verified"})
    if lost:
        return f"clause{'s' if len(lost) > 1 else ''} {', '.join(lost)} verified before, not now"
    return None


@dataclass
class Report:
    results: list[ClaimResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # damaged files set aside, claims without checks
    interrupted: bool = False
    written: list[str] = field(default_factory=list)  # claims whose verdict this run wrote
    tried: list[str] = field(default_factory=list)  # claims run under --try (judged, nothing written)
    duration_s: float = 0.0
    checks_run: int = 0

    @property
    def ok(self) -> bool:
        """No claim left worse off than its committed verdict (``ClaimResult.regressed``)."""
        return not self.interrupted and all(r.regressed is None for r in self.results)

    @property
    def all_verified(self) -> bool:
        """Every selected claim verified (or skipped): what ``verify --strict`` asks."""
        return not self.interrupted and all(r.verified for r in self.results)


def format_report(report: Report) -> str:
    """One line per selected claim, then the counts with their denominators."""
    width = max([len(r.claim) for r in report.results] + [8])
    lines = []
    for result in report.results:
        status, verdict = result.status, result.status.verdict
        how = "ran" if result.ran else ("fresh" if verdict is not None and status.state != "stale" else "not run")
        if result.cut_short:
            how = "not rerun: interrupted"
        elif result.claim in report.tried:
            how = "tried"
        line = f"{result.claim:<{width}}  {status.label:<9}  {how}"
        if verdict is not None and result.ran:  # the runs' own times summed; the last line gives the wall time
            line += f" ({verdict.duration_s:.1f} s of check runs)"
        elif verdict is not None and status.state != "stale" and not result.cut_short:
            line += f", since {verdict.since}"
        bad = [c for c in verdict.checks if c.outcome != "pass"] if verdict is not None else []
        if bad and status.state != "stale":
            line += " — " + "; ".join(f"{c.name}: {c.outcome}: {c.message}" for c in bad)
        lines.append(line + notes(status))
        if verdict is not None and result.ran:  # what raised, said where it is read first
            lines += [t for check in verdict.checks for t in tracebacks(check, "    ")]
    tail = tally([r.status.state for r in report.results], "selected claim")
    tail += f"; ran {report.checks_run} check run{'s' if report.checks_run != 1 else ''} in {report.duration_s:.1f} s"
    lines.append(tail)
    for r in report.results:
        why = r.regressed
        if why is not None:
            lines.append(f"worse than committed: {r.claim}: {why}")
    if report.interrupted:
        lines.append(f"interrupted: kept {len(report.written)} finished verdict{'s' if len(report.written) != 1 else ''}")
    if report.tried:
        lines.append("tried, not kept: the committed verdicts and figures are as they were "
                     "(the figures of the try are in the cache's tried/ folder)")
    return "\n".join(lines)


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain data: the claims' statuses (``status_json``), whether each ran, and
    the run's outcome."""
    data = status_json({r.claim: r.status for r in report.results})
    ran = {r.claim for r in report.results if r.ran}
    for claim in data["claims"]:  # type: ignore[attr-defined]
        claim["ran"] = claim["claim"] in ran
    data.update({"ok": report.ok, "all_verified": report.all_verified,
                 "worse": {r.claim: r.regressed for r in report.results if r.regressed is not None},
                 "interrupted": report.interrupted, "notes": report.notes,
                 "checks_run": report.checks_run, "duration_s": round(report.duration_s, 3)})
    return data
