"""Verdicts: what `recordtool verify` measured, judged, and kept as evidence.

A claim's verdict is computed, never typed by hand. One ``ClaimVerdict`` per claim is kept in
``record/verdicts/<ID>.json`` (stable strict JSON, meant to be committed: a number that is not
finite is written as ``"nan"``, ``"inf"`` or ``"-inf"``), so pages render without re-running
anything. ``ClaimStatus`` is what holds *now*: the verdict, or ``stale`` with the reasons.
The outcomes, clause states and results, and how they are judged, are in docs/verdicts.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, TypeAdapter, ValidationError

Outcome = Literal["pass", "fail", "not-reproduced", "no-power", "error", "timeout", "skipped"]
Result = Literal["verified", "partly-verified", "contradicted", "not-reproduced", "no-power", "error", "timeout",
                 "skipped"]
State = Literal[Result, "stale", "unchecked"]
RunOutcome = Literal["ok", "error", "timeout"]
# a negative control: failed-as-required or passed; a positive one: held or not-held
ControlOutcome = Literal["failed-as-required", "passed", "held", "not-held", "error", "timeout"]
ExpectationState = Literal["holds", "fails", "not-reproduced", "no-power", "error", "timeout", "skipped"]
ClauseState = Literal["verified", "contradicted", "not-reproduced", "observed", "untested", "error", "timeout",
                      "skipped"]
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _numbers(value: Any) -> Any:
    """A metric read back from strict JSON: ``"nan"``, ``"inf"``, ``"-inf"`` as the floats
    they stand for (in lists too). Fields typed ``float`` pydantic reads so itself."""
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def _spread(value: Any) -> Any:
    if isinstance(value, list) and len(value) != 3:
        raise ValueError("spread is not [min, median, max]")
    return value


Spread = Annotated[list[float], BeforeValidator(_spread)]
Metrics = dict[str, Annotated[Any, BeforeValidator(_numbers)]]

# From best to worst: a failed expectation is the strongest statement against a claim; an
# error or a timeout says nothing about it; no-power, that the check cannot tell; not-reproduced,
# that an expectation with power failed a test never shown able to pass.
SEVERITY: dict[str, int] = {"pass": 0, "skipped": 1, "no-power": 2, "not-reproduced": 3, "timeout": 4, "error": 5,
                            "fail": 6}

# The verdict file format; bumped when a field changes meaning. Format 2 (before positive
# controls) is still read, and judged again from its numbers under today's rules.
FORMAT = 3
FORMATS = (2, 3)
MAX_DEPTH = 32  # a verdict nests about ten levels deep; a file nested deeper is damaged (issue 66, class 6)


class VerdictError(ValueError):
    """A verdict file that cannot be read back (damaged, truncated, or of another format)."""


def worst(outcomes: list[Outcome]) -> Outcome:
    """The worst outcome of ``outcomes`` (``pass`` for none)."""
    return max(outcomes, key=SEVERITY.__getitem__, default="pass")


def label(result: str, clauses: Sequence[ClauseVerdict] = (), analogue: bool = False) -> str:
    """A result as a reader says it: ``partly verified: 4 of 5 clauses``, ``no power``,
    ``verified in the lab's analogue`` (a check's ``analogue: true``)."""
    n = len(clauses)
    where = " in the lab's analogue" if analogue else ""
    if result == "partly-verified":
        k = sum(1 for c in clauses if c.state == "verified")
        return f"partly verified{where}: {k} of {n} clauses"
    if result == "verified":
        return f"verified{where}: {n} of {n} clauses" if n > 1 else f"verified{where}"
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
    """One expectation judged over a check's seeds (docs/verdicts.md). ``power``: what fails it
    on every seed (``control 'untrained'``, ``null k_comp_null``); ``spread``: ``[min, median,
    max]`` of its values, NaN left out and counted in ``nans``."""

    metric: str
    expect: str
    clauses: list[str]
    null: str | None
    state: ExpectationState
    holds_on: int
    seeds: int
    required: int
    power: list[str]
    spread: Spread | None
    nans: int = 0
    sensitivity: list[str] = field(default_factory=list)
    degenerate_power: list[str] = field(default_factory=list)

    @property
    def validated(self) -> bool:
        """Shown able both to fail (power) and to pass (sensitivity)."""
        return bool(self.power) and bool(self.sensitivity)


@dataclass
class ObservationVerdict:
    """A metric a check reports for a clause without a threshold (``observe:``)."""

    metric: str
    clauses: list[str]
    spread: Spread | None
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
    """One call of a check function (under one seed): what it returned and how it was judged;
    ``error`` and ``log`` (its last output) say why a run failed."""

    seed: int
    outcome: RunOutcome
    metrics: Metrics
    expectations: list[ExpectationResult]
    duration_s: float
    error: str | None = None
    log: str = ""
    degenerate: list[str] = field(default_factory=list)  # the ``degenerate:`` conditions this run met


@dataclass
class ControlResult:
    """A control (the check's params updated by ``params``), negative or positive, judged by
    ``rules.judge_control``."""

    name: str
    params: dict[str, Any]
    outcome: ControlOutcome
    runs: list[Run]


@dataclass
class CheckVerdict:
    """One check of a claim, with its runs (one per seed), its controls and positives;
    ``message`` says why in one line, ``figures`` are relative to the project root, POSIX, and
    ``required`` is the quorum."""

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
    positives: list[ControlResult] = field(default_factory=list)
    setting: str = ""
    analogue: bool = False

    @property
    def seeds(self) -> list[int]:
        return [r.seed for r in self.runs]


def failed_runs(check: CheckVerdict) -> list[tuple[str, Run]]:
    """The runs of ``check`` that say what went wrong (its own, its controls', its
    positives'), each with where it ran: ``seed 0``, ``control 'broken' seed 1``."""
    out = [(f"seed {r.seed}", r) for r in check.runs if r.error]
    for kind, controls in (("control", check.controls), ("positive", check.positives)):
        out += [(f"{kind} '{c.name}' seed {r.seed}", r) for c in controls for r in c.runs if r.error]
    return out


@dataclass
class ClaimVerdict:
    """Everything `verify` learnt about one claim, and what produced it (docs/verdicts.md):
    ``result`` from its clauses, ``outcome`` the worst of its checks', ``since`` when this
    result began, ``fingerprint`` hashes of what produced it (``recordtool.verify.fingerprint``)."""

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
        """``partly verified: 4 of 5 clauses``, ``verified in the lab's analogue``."""
        return label(self.result, self.clauses, self.analogue)

    @property
    def analogue(self) -> bool:
        """Whether a check measured an analogue of the model the claim is about."""
        return any(check.analogue for check in self.checks)

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
        except RecursionError:
            raise VerdictError(f"nested deeper than the {MAX_DEPTH} levels a verdict may have") from None
        if _deeper(data, MAX_DEPTH):
            raise VerdictError(f"nested deeper than the {MAX_DEPTH} levels a verdict may have")
        if not isinstance(data, dict):
            raise VerdictError("not a verdict: the file does not hold a JSON object")
        fmt = data.get("format", 2)  # (a file that names no format is of format 2)
        if fmt not in FORMATS:
            raise VerdictError(f"not a verdict: format {fmt!r}; this recordtool reads formats "
                               f"{', '.join(map(str, FORMATS))}")
        data = {key: value for key, value in data.items() if key != "summary"}
        data["format"] = fmt  # as read: an older format is judged again under today's rules
        try:
            return _adapter().validate_python(data)
        except ValidationError as exc:  # named by the first field wrong
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the file"
            if first["type"] == "missing":
                raise VerdictError(f"not a verdict: missing field '{where}'") from None
            raise VerdictError("not a verdict: " + f"{where} {first['input']!r}: {first['msg']}"[:300]) from None

    @property
    def figures(self) -> list[str]:
        return [path for check in self.checks for path in check.figures]


@dataclass
class ClaimStatus:
    """What holds now for one claim: ``reasons`` why it is stale (``statement changed``), and
    ``depends``, the claims it cites ``as: uses`` that are not ``verified``."""

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


def _deeper(data: Any, limit: int) -> bool:
    """Whether ``data`` (parsed JSON) nests deeper than ``limit`` levels; walked without
    recursion, so that no file can make reading it recurse."""
    level: list[Any] = [data]
    for _ in range(limit):
        level = [v for item in level if isinstance(item, (dict, list))
                 for v in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return any(isinstance(item, (dict, list)) for item in level)


@cache
def _adapter() -> TypeAdapter[ClaimVerdict]:
    """The pydantic model of a verdict file, built on first use (the warm ``status`` that
    reads no verdict does not build it)."""
    return TypeAdapter(ClaimVerdict)
