"""Expectations: what a claim says a measured number must be.

The grammar is small on purpose: ``< x``, ``<= x``, ``> x``, ``>= x``, ``== x``, ``!= x`` and
``between a and b`` (inclusive), ``x`` a number. NaN never satisfies an expectation.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARISON = re.compile(rf"^\s*(<=|>=|==|!=|<|>)\s*({_NUMBER})\s*$")
_BETWEEN = re.compile(rf"^\s*between\s+({_NUMBER})\s+and\s+({_NUMBER})\s*$", re.IGNORECASE)
_OPERATORS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
              "!=": operator.ne}


class ExpectationSyntaxError(ValueError):
    """An expectation that does not parse; the message says what would."""


@dataclass(frozen=True)
class Expectation:
    """One comparison: ``op`` with ``low`` (and ``high`` for ``between``)."""

    op: str
    low: float
    high: float | None = None
    text: str = field(default="", compare=False)  # as the claim wrote it, for display

    def holds(self, value: float) -> bool:
        """Whether ``value`` satisfies this expectation (never for NaN)."""
        if math.isnan(value):
            return False
        if self.op == "between":
            assert self.high is not None
            return self.low <= value <= self.high
        return bool(_OPERATORS[self.op](value, self.low))

    def __str__(self) -> str:
        if self.text:
            return self.text
        if self.op == "between":
            return f"between {_fmt(self.low)} and {_fmt(self.high)}"
        return f"{self.op} {_fmt(self.low)}"


def _fmt(x: float | None) -> str:
    assert x is not None
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def parse_expectation(text: object) -> Expectation:
    """Parse ``"< 1e-9"``, ``">= 0.4"``, ``"== 21"``, ``"between 0.2 and 0.6"``. A bare number
    is refused: as an equality on a measured float it would almost never hold."""
    if isinstance(text, bool):
        raise ExpectationSyntaxError(_hint(repr(text)))
    if isinstance(text, (int, float)):
        _finite(float(text), repr(text))
        raise ExpectationSyntaxError(
            f"{text!r} is a number, not an expectation; write '== {text}' for an exact value (a measured float "
            f"seldom equals one) or a range such as 'between {_nudged(text, -1)} and {_nudged(text, 1)}'")
    if not isinstance(text, str):
        raise ExpectationSyntaxError(_hint(repr(text)))
    match = _COMPARISON.match(text)
    if match:
        return Expectation(match.group(1), _finite(float(match.group(2)), f"'{text}'"), text=" ".join(text.split()))
    match = _BETWEEN.match(text)
    if match:
        low, high = (_finite(float(match.group(n)), f"'{text}'") for n in (1, 2))
        if low > high:
            raise ExpectationSyntaxError(
                f"'{text}': the lower bound is above the upper; write 'between {match.group(2)} and {match.group(1)}'"
            )
        return Expectation("between", low, high, text=" ".join(text.split()))
    if text.strip().startswith("=>") or text.strip().startswith("=<"):
        raise ExpectationSyntaxError(_hint(f"'{text}'") + f" (did you mean '{text.strip()[1]}{text.strip()[0]}'?)")
    raise ExpectationSyntaxError(_hint(f"'{text}'"))


def _nudged(number: float, sign: int) -> str:
    """``number`` moved a tenth of its size (0.1 from zero) down (``sign`` -1) or up (1)."""
    return _fmt(float(number) + sign * abs(float(number)) / 10 if number else sign * 0.1)


def _finite(bound: float, shown: str) -> float:
    """``bound``, when it is a finite number: a bound of infinity (``1e999``) or NaN would make
    an expectation that every value meets, or none."""
    if not math.isfinite(bound):
        raise ExpectationSyntaxError(f"{shown}: a bound must be a finite number, and this one reads as "
                                     f"{'NaN' if math.isnan(bound) else 'infinity'}; write a number such as 1e-9 or 0.4")
    return bound


def _hint(shown: str) -> str:
    return (
        f"{shown} is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', "
        "'== 21' or 'between 0.2 and 0.6'"
    )
