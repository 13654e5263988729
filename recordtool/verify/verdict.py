"""Verdicts: what `recordtool verify` measured, judged, and kept as evidence.

A claim's verdict is computed, never typed by hand. One ``ClaimVerdict`` per claim is kept in
``record/verdicts/<ID>.json`` (stable formatting, meant to be committed), so pages render
without re-running anything. ``ClaimStatus`` is what holds *now*: the verdict, and whether
anything that produced it has changed since (then ``stale``, with the reasons).

The rules are in docs/verdicts.md. In short: each expectation is judged over the check's
seeds (``holds`` on at least the quorum of them, or ``fails``) and counts only when it has
power (some control, or its declared null, fails it on every seed; else ``no-power``).
Outcome of one check:

    pass      every expectation with power holds (and at least one has power)
    fail      an expectation with power fails
    no-power  no expectation has power: the check cannot tell
    error     the check raised, crashed, or returned a missing / non-numeric metric
              (or a control did, when nothing with power failed)
    timeout   the check ran past its time
    skipped   the check could not run here (e.g. it needs a GPU)

Each clause of the claim is ``verified`` (an expectation with power tests it, and every one
that does holds), ``contradicted`` (one with power fails), ``observed`` (only observations or
expectations without power speak of it), ``untested`` (nothing does), or the ``error``,
``timeout`` or ``skipped`` of a check that tests it. The claim's result:

    verified         every clause verified
    partly-verified  some clauses verified, none contradicted ("partly verified: 4 of 5 clauses")
    contradicted     a clause contradicted
    error, timeout   a check broke (and no clause is contradicted)
    skipped          nothing verified, a check could not run here
    no-power         nothing verified: no expectation has power

Verdict files are strict JSON: a number that is not finite is written as the string
``"nan"``, ``"inf"`` or ``"-inf"`` and read back as that float.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast, get_args

Outcome = Literal["pass", "fail", "no-power", "error", "timeout", "skipped"]
Result = Literal["verified", "partly-verified", "contradicted", "no-power", "error", "timeout", "skipped"]
State = Literal["verified", "partly-verified", "contradicted", "no-power", "error", "timeout", "skipped",
                "stale", "unchecked"]
RunOutcome = Literal["ok", "error", "timeout"]
ControlOutcome = Literal["failed-as-required", "passed", "error", "timeout"]
ExpectationState = Literal["holds", "fails", "no-power", "error", "timeout", "skipped"]
ClauseState = Literal["verified", "contradicted", "observed", "untested", "error", "timeout", "skipped"]

OUTCOMES: tuple[str, ...] = get_args(Outcome)
RESULTS: tuple[str, ...] = get_args(Result)
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

# From best to worst: a failed expectation is the strongest statement against a claim; an
# error or a timeout says nothing about it; no-power says the check cannot tell.
SEVERITY: dict[str, int] = {"pass": 0, "skipped": 1, "no-power": 2, "timeout": 3, "error": 4, "fail": 5}

# What a verdict of format 1 (one outcome per claim, no clauses) means now.
RESULT_OF_OUTCOME: dict[str, Result] = {
    "pass": "verified",
    "fail": "contradicted",
    "no-power": "no-power",
    "error": "error",
    "timeout": "timeout",
    "skipped": "skipped",
}

FORMAT = 2  # the verdict file format; bumped when a field changes meaning (format 1 is still read)


class VerdictError(ValueError):
    """A verdict file that cannot be read back (damaged, truncated, or of another format)."""


def worst(outcomes: list[Outcome]) -> Outcome:
    """The worst outcome of ``outcomes`` (``pass`` for none)."""
    if not outcomes:
        return "pass"
    return max(outcomes, key=lambda o: SEVERITY[o])


def label(result: str, clauses: list[ClauseVerdict] | None = None) -> str:
    """A result as a reader says it: ``partly verified: 4 of 5 clauses``, ``no power``."""
    clauses = clauses or []
    n = len(clauses)
    if result == "partly-verified":
        k = sum(1 for c in clauses if c.state == "verified")
        return f"partly verified: {k} of {n} clauses"
    if result == "verified" and n > 1:
        return f"verified: {n} of {n} clauses"
    if result == "contradicted" and n > 1:
        k = sum(1 for c in clauses if c.state == "contradicted")
        return f"contradicted: {k} of {n} clause{'s' if n != 1 else ''}"
    return result.replace("-", " ")


@dataclass
class ExpectationResult:
    """One expectation of the claim (``"< 1e-9"``) against the measured value of its metric
    in one run; with a declared null, the null's value in that run too."""

    metric: str
    expect: str
    measured: float | None
    holds: bool
    null: float | None = None
    null_holds: bool | None = None


@dataclass
class ExpectationVerdict:
    """One expectation judged over a check's seeds (docs/verdicts.md).

    state:    ``holds`` (on at least ``required`` of ``seeds`` seeds) or ``fails``, when it
              has power; ``no-power`` when nothing gives it power (it decides nothing);
              ``error``, ``timeout`` or ``skipped`` when the check could not judge it.
    power:    what fails it on every seed: ``control 'untrained'``, ``null k_comp_null``.
    spread:   ``[min, median, max]`` of the measured values over the seeds (NaN left out,
              counted in ``nans``); None when no value is a number.
    """

    metric: str
    expect: str
    clauses: list[str]
    null: str | None
    state: ExpectationState
    holds_on: int
    seeds: int
    required: int
    power: list[str]
    spread: list[float] | None
    nans: int = 0


@dataclass
class ObservationVerdict:
    """A metric a check reports for a clause without a threshold (``observe:``)."""

    metric: str
    clauses: list[str]
    spread: list[float] | None
    nans: int = 0


@dataclass
class Evidence:
    """What speaks of a clause: an expectation (``kind`` expect, with its state) or an
    observation (``kind`` observe, state ``observed``) of one check."""

    check: str
    metric: str
    kind: Literal["expect", "observe"]
    state: str


@dataclass
class ClauseVerdict:
    clause: str
    text: str
    state: ClauseState
    evidence: list[Evidence]


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
    degenerate: list[str] = field(default_factory=list)  # the ``degenerate:`` conditions this run met


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

    message: one line saying why (``err = 0.7, expected < 0.5``, ``metric 'x' missing``).
    figures: the figures the check wrote, relative to the project root, POSIX.
    threads: the CPU threads each run had (the check's ``threads:``).
    required: the seeds an expectation must hold on (the quorum).
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
    expectations: list[ExpectationVerdict] = field(default_factory=list)
    observations: list[ObservationVerdict] = field(default_factory=list)
    threads: int = 1
    required: int = 1

    @property
    def seeds(self) -> list[int]:
        return [r.seed for r in self.runs]


@dataclass
class ClaimVerdict:
    """Everything `verify` learnt about one claim, and what produced it.

    result:      the claim's result (``verified``, ``partly-verified``, ...), from its clauses.
    outcome:     the worst of its checks' outcomes.
    verified_at: when these numbers were measured (ISO 8601 UTC, ``2026-11-29T14:03:00Z``).
    since:       when this result began (kept across reruns with the same result).
    fingerprint: hashes of what produced the verdict (``statement``, ``check:<name>``,
                 ``source:<path>``, ``version:<package>``); see ``recordtool.verify.fingerprint``.
    git_dirty:   whether a file the fingerprint covers (the claim's file, its check modules)
                 differed from the commit, untracked included.
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
    result: Result = "verified"
    clauses: list[ClauseVerdict] = field(default_factory=list)
    format: int = FORMAT

    @property
    def summary(self) -> str:
        """``partly verified: 4 of 5 clauses``."""
        return label(self.result, self.clauses)

    def to_json(self) -> str:
        """Stable strict JSON: sorted keys, indent 2, a trailing newline; NaN and infinities
        as the strings ``"nan"``, ``"inf"``, ``"-inf"``."""
        data = json_ready(asdict(self))
        data["summary"] = self.summary
        return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

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

    @property
    def label(self) -> str:
        """The state as a reader says it: ``partly verified: 4 of 5 clauses``, ``stale``."""
        if self.verdict is not None and self.state == self.verdict.result:
            return self.verdict.summary
        return self.state


def json_ready(value: Any) -> Any:
    """Tuples to lists, numpy-like scalars to floats, non-finite floats to ``"nan"``,
    ``"inf"``, ``"-inf"``: strict-JSON-ready values."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if not isinstance(value, float):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _numbers(value: Any) -> Any:
    """A metric's value read back: ``"nan"``, ``"inf"``, ``"-inf"`` as floats (in lists too)."""
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def _literal(value: Any, allowed: tuple[str, ...], what: str) -> Any:
    if value not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return value


def _float(value: Any) -> float:
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _optional(value: Any) -> float | None:
    return None if value is None else _float(value)


def _expectation(data: dict[str, Any]) -> ExpectationResult:
    null_holds = data.get("null_holds")
    return ExpectationResult(
        metric=str(data["metric"]),
        expect=str(data["expect"]),
        measured=_optional(data["measured"]),
        holds=bool(data["holds"]),
        null=_optional(data.get("null")),
        null_holds=None if null_holds is None else bool(null_holds),
    )


def _spread(value: Any) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise ValueError("spread is not [min, median, max]")
    return [_float(v) for v in value]


def _expectation_verdict(data: dict[str, Any]) -> ExpectationVerdict:
    null = data.get("null")
    return ExpectationVerdict(
        metric=str(data["metric"]),
        expect=str(data["expect"]),
        clauses=[str(c) for c in data["clauses"]],
        null=None if null is None else str(null),
        state=_literal(data["state"], get_args(ExpectationState), "expectation state"),
        holds_on=int(data["holds_on"]),
        seeds=int(data["seeds"]),
        required=int(data["required"]),
        power=[str(p) for p in data["power"]],
        spread=_spread(data.get("spread")),
        nans=int(data.get("nans", 0)),
    )


def _observation(data: dict[str, Any]) -> ObservationVerdict:
    return ObservationVerdict(
        metric=str(data["metric"]),
        clauses=[str(c) for c in data["clauses"]],
        spread=_spread(data.get("spread")),
        nans=int(data.get("nans", 0)),
    )


def _clause(data: dict[str, Any]) -> ClauseVerdict:
    return ClauseVerdict(
        clause=str(data["clause"]),
        text=str(data["text"]),
        state=_literal(data["state"], get_args(ClauseState), "clause state"),
        evidence=[Evidence(str(e["check"]), str(e["metric"]), _literal(e["kind"], ("expect", "observe"), "kind"),
                           str(e["state"])) for e in data["evidence"]],
    )


def _run(data: dict[str, Any]) -> Run:
    if not isinstance(data["metrics"], dict):
        raise ValueError("metrics is not a mapping")
    return Run(
        seed=int(data["seed"]),
        outcome=_literal(data["outcome"], get_args(RunOutcome), "run outcome"),
        metrics={str(k): _numbers(v) for k, v in data["metrics"].items()},
        expectations=[_expectation(e) for e in data["expectations"]],
        duration_s=_float(data["duration_s"]),
        error=None if data.get("error") is None else str(data["error"]),
        log=str(data.get("log", "")),
        degenerate=[str(d) for d in data.get("degenerate", [])],
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
        expectations=[_expectation_verdict(e) for e in data.get("expectations", [])],
        observations=[_observation(o) for o in data.get("observations", [])],
        threads=int(data.get("threads", 1)),
        required=int(data.get("required", len(data["runs"]) or 1)),
    )


def _claim_verdict(data: Any) -> ClaimVerdict:
    if not isinstance(data, dict):
        raise ValueError("the file does not hold a JSON object")
    fmt = data.get("format", FORMAT)
    if fmt not in (1, FORMAT):
        raise ValueError(f"format {fmt!r}; this recordtool reads formats 1 and {FORMAT}")
    fingerprint = data["fingerprint"]
    versions = data["versions"]
    if not isinstance(fingerprint, dict) or not isinstance(versions, dict):
        raise ValueError("fingerprint and versions must be mappings")
    outcome = cast(Outcome, _literal(data["outcome"], OUTCOMES, "outcome"))
    result = data["result"] if fmt == FORMAT else RESULT_OF_OUTCOME[outcome]
    git_dirty = data.get("git_dirty")
    return ClaimVerdict(
        claim=str(data["claim"]),
        outcome=outcome,
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
        result=cast(Result, _literal(result, RESULTS, "result")),
        clauses=[_clause(c) for c in data.get("clauses", [])],
        format=FORMAT,
    )

