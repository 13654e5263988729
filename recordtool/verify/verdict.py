"""Verdicts: what `recordtool verify` measured, judged, and kept as evidence.

A claim's verdict is computed, never typed by hand. One ``ClaimVerdict`` per claim is kept in
``record/verdicts/<ID>.json`` (stable formatting, meant to be committed), so pages render
without re-running anything. ``ClaimStatus`` is what holds *now*: the verdict, and whether
anything that produced it has changed since (then ``stale``, with the reasons).

Outcome of one check (docs/verdicts.md):

    pass      every expectation holds, and under each control at least one fails
    fail      an expectation does not hold
    no-power  the expectations hold, but they hold under a control too: the check cannot tell
    error     the check raised, crashed, or returned a missing / non-numeric metric
    timeout   the check ran past its time
    skipped   the check could not run here (e.g. it needs a GPU)

A claim's outcome is the worst of its checks' (``worst``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast, get_args

Outcome = Literal["pass", "fail", "no-power", "error", "timeout", "skipped"]
State = Literal["verified", "failed", "no-power", "error", "timeout", "skipped", "stale", "unchecked"]
RunOutcome = Literal["ok", "error", "timeout"]
ControlOutcome = Literal["failed-as-required", "passed", "error", "timeout"]

OUTCOMES: tuple[str, ...] = get_args(Outcome)

# From best to worst: a failed expectation is the strongest statement against a claim; an
# error or a timeout says nothing about it; no-power says the check cannot tell.
SEVERITY: dict[str, int] = {"pass": 0, "skipped": 1, "no-power": 2, "timeout": 3, "error": 4, "fail": 5}

STATE_OF_OUTCOME: dict[str, State] = {
    "pass": "verified",
    "fail": "failed",
    "no-power": "no-power",
    "error": "error",
    "timeout": "timeout",
    "skipped": "skipped",
}

FORMAT = 1  # the verdict file format; bumped when a field changes meaning


class VerdictError(ValueError):
    """A verdict file that cannot be read back (damaged, truncated, or of another format)."""


def worst(outcomes: list[Outcome]) -> Outcome:
    """The worst outcome of ``outcomes`` (``pass`` for none)."""
    if not outcomes:
        return "pass"
    return max(outcomes, key=lambda o: SEVERITY[o])


def state_of(outcome: Outcome) -> State:
    """``pass`` -> ``verified``, ``fail`` -> ``failed``, the others keep their name."""
    return STATE_OF_OUTCOME[outcome]


@dataclass
class ExpectationResult:
    """One expectation of the claim (``"< 1e-9"``) against the measured value of its metric."""

    metric: str
    expect: str
    measured: float | None
    holds: bool


@dataclass
class Run:
    """One call of a check function (under one seed): what it returned and how it was judged.

    error: the traceback's tail, the exit signal, or what was wrong with the metrics.
    log:   the last lines the check printed (stdout and stderr), kept for errors.
    """

    seed: int
    outcome: RunOutcome
    metrics: dict[str, Any]
    expectations: list[ExpectationResult]
    duration_s: float
    error: str | None = None
    log: str = ""


@dataclass
class ControlResult:
    """A control: the check's params updated by ``params``; the claim must NOT hold there.

    ``failed-as-required`` when, in every run, at least one expectation fails.
    """

    name: str
    params: dict[str, Any]
    outcome: ControlOutcome
    runs: list[Run]


@dataclass
class CheckVerdict:
    """One check of a claim, with its runs (one per seed) and its controls.

    message: one line saying why (``control 'layer-norm' passed too``, ``metric 'x' missing``).
    figures: the figures the check wrote, relative to the project root, POSIX.
    """

    name: str
    run: str
    params: dict[str, Any]
    outcome: Outcome
    message: str
    runs: list[Run]
    controls: list[ControlResult]
    figures: list[str]
    duration_s: float
    nondeterministic: bool


@dataclass
class ClaimVerdict:
    """Everything `verify` learnt about one claim, and what produced it.

    verified_at: when these numbers were measured (ISO 8601 UTC, ``2026-11-29T14:03:00Z``).
    since:       when this outcome began (kept across reruns with the same outcome).
    fingerprint: hashes of what produced the verdict (``statement``, ``check:<name>``,
                 ``source:<path>``, ``version:<package>``); see ``recordtool.verify.fingerprint``.
    """

    claim: str
    outcome: Outcome
    statement: str
    checks: list[CheckVerdict]
    fingerprint: dict[str, str]
    verified_at: str
    since: str
    duration_s: float
    seeds: list[int]
    git_commit: str | None
    git_dirty: bool | None
    versions: dict[str, str]
    device: str
    format: int = FORMAT

    def to_json(self) -> str:
        """Stable JSON: sorted keys, indent 2, a trailing newline (NaN kept as ``NaN``)."""
        return json.dumps(_plain(asdict(self)), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> ClaimVerdict:
        """Read a verdict back; raises ``VerdictError`` saying what is wrong."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise VerdictError(f"not valid JSON ({exc})") from None
        try:
            return _claim_verdict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise VerdictError(f"not a verdict: {what}") from None

    @property
    def figures(self) -> list[str]:
        return [path for check in self.checks for path in check.figures]


@dataclass
class ClaimStatus:
    """What holds now for one claim.

    reasons: why it is stale (``statement changed``, ``checks/circuits.py changed``,
             ``torch 2.13.0 -> 2.14.0``); empty otherwise.
    depends: claims this one cites ``as: uses`` whose state is not ``verified``.
    """

    claim: str
    state: State
    verdict: ClaimVerdict | None
    reasons: list[str] = field(default_factory=list)
    depends: list[tuple[str, State]] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome | None:
        """The verdict's outcome (also for a stale verdict), or None when never checked."""
        return self.verdict.outcome if self.verdict is not None else None


def _plain(value: Any) -> Any:
    """Tuples to lists, numpy-like scalars to floats: JSON-ready values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _literal(value: Any, allowed: tuple[str, ...], what: str) -> Any:
    if value not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return value


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _expectation(data: dict[str, Any]) -> ExpectationResult:
    measured = data["measured"]
    return ExpectationResult(
        metric=str(data["metric"]),
        expect=str(data["expect"]),
        measured=None if measured is None else _float(measured),
        holds=bool(data["holds"]),
    )


def _run(data: dict[str, Any]) -> Run:
    if not isinstance(data["metrics"], dict):
        raise ValueError("metrics is not a mapping")
    return Run(
        seed=int(data["seed"]),
        outcome=_literal(data["outcome"], get_args(RunOutcome), "run outcome"),
        metrics=dict(data["metrics"]),
        expectations=[_expectation(e) for e in data["expectations"]],
        duration_s=_float(data["duration_s"]),
        error=None if data.get("error") is None else str(data["error"]),
        log=str(data.get("log", "")),
    )


def _control(data: dict[str, Any]) -> ControlResult:
    return ControlResult(
        name=str(data["name"]),
        params=dict(data["params"]),
        outcome=_literal(data["outcome"], get_args(ControlOutcome), "control outcome"),
        runs=[_run(r) for r in data["runs"]],
    )


def _check(data: dict[str, Any]) -> CheckVerdict:
    return CheckVerdict(
        name=str(data["name"]),
        run=str(data["run"]),
        params=dict(data["params"]),
        outcome=_literal(data["outcome"], OUTCOMES, "outcome"),
        message=str(data["message"]),
        runs=[_run(r) for r in data["runs"]],
        controls=[_control(c) for c in data["controls"]],
        figures=[str(f) for f in data["figures"]],
        duration_s=_float(data["duration_s"]),
        nondeterministic=bool(data["nondeterministic"]),
    )


def _claim_verdict(data: Any) -> ClaimVerdict:
    if not isinstance(data, dict):
        raise ValueError("the file does not hold a JSON object")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise ValueError(f"format {fmt!r}; this recordtool reads format {FORMAT}")
    fingerprint = data["fingerprint"]
    versions = data["versions"]
    if not isinstance(fingerprint, dict) or not isinstance(versions, dict):
        raise ValueError("fingerprint and versions must be mappings")
    git_dirty = data.get("git_dirty")
    return ClaimVerdict(
        claim=str(data["claim"]),
        outcome=cast(Outcome, _literal(data["outcome"], OUTCOMES, "outcome")),
        statement=str(data["statement"]),
        checks=[_check(c) for c in data["checks"]],
        fingerprint={str(k): str(v) for k, v in fingerprint.items()},
        verified_at=str(data["verified_at"]),
        since=str(data["since"]),
        duration_s=_float(data["duration_s"]),
        seeds=[int(s) for s in data["seeds"]],
        git_commit=None if data.get("git_commit") is None else str(data["git_commit"]),
        git_dirty=None if git_dirty is None else bool(git_dirty),
        versions={str(k): str(v) for k, v in versions.items()},
        device=str(data["device"]),
        format=FORMAT,
    )

