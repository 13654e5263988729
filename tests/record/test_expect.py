from __future__ import annotations

import math

import pytest

from recordtool.record.expect import Expectation, ExpectationSyntaxError, parse_expectation


@pytest.mark.parametrize(("text", "value", "holds"), [
    ("< 1e-9", 1e-10, True), ("< 1e-9", 1e-9, False), ("<= 0.5", 0.5, True), ("> 0.4", 0.41, True),
    (">= 0.4", 0.39, False), ("== 21", 21, True), ("!= 0", 0.0, False), ("between 0.2 and 0.6", 0.6, True),
    ("between 0.2 and 0.6", 0.61, False), ("  >=  -3 ", -3, True),
])
def test_comparisons(text: object, value: float, holds: bool) -> None:
    assert parse_expectation(text).holds(value) is holds


@pytest.mark.parametrize("text", ["< 1", "> 1", "between 0 and 1", "!= 3", "== 0"])
def test_nan_never_holds(text: str) -> None:
    assert not parse_expectation(text).holds(math.nan)


def test_str_round_trips() -> None:
    for text in ["< 1e-9", ">= 0.4", "== 21", "between 0.2 and 0.6"]:
        assert str(parse_expectation(text)) == text
        assert parse_expectation(str(parse_expectation(text))) == parse_expectation(text)


@pytest.mark.parametrize(("text", "message"), [
    ("less than 3", "'less than 3' is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', '== 21' or 'between 0.2 and 0.6'"),
    ("=> 3", "'=> 3' is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', '== 21' or 'between 0.2 and 0.6' (did you mean '>='?)"),
    ("between 1 and 0", "'between 1 and 0': the lower bound is above the upper; write 'between 0 and 1'"),
    (True, "True is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', '== 21' or 'between 0.2 and 0.6'"),
    (None, "None is not an expectation; write a comparison such as '< 1e-9', '>= 0.4', '== 21' or 'between 0.2 and 0.6'"),
    # a bare number reads as a value, and as an equality on a measured float it would seldom hold
    (1.5, "1.5 is a number, not an expectation; write '== 1.5' for an exact value (a measured float seldom equals "
          "one) or a range such as 'between 1.35 and 1.65'"),
    (21, "21 is a number, not an expectation; write '== 21' for an exact value (a measured float seldom equals one) "
         "or a range such as 'between 18.9 and 23.1'"),
    (0, "0 is a number, not an expectation; write '== 0' for an exact value (a measured float seldom equals one) "
        "or a range such as 'between -0.1 and 0.1'"),
    # a bound that reads as infinity or NaN: an expectation every value meets, or none
    ("< 1e999", "'< 1e999': a bound must be a finite number, and this one reads as infinity; write a number such as "
                "1e-9 or 0.4"),
    ("between -1e400 and 0", "'between -1e400 and 0': a bound must be a finite number, and this one reads as "
                             "infinity; write a number such as 1e-9 or 0.4"),
    (float("inf"), "inf: a bound must be a finite number, and this one reads as infinity; write a number such as "
                   "1e-9 or 0.4"),
    (float("nan"), "nan: a bound must be a finite number, and this one reads as NaN; write a number such as 1e-9 or 0.4"),
])
def test_bad_syntax_says_what_would_parse(text: object, message: str) -> None:
    with pytest.raises(ExpectationSyntaxError) as info:
        parse_expectation(text)
    assert str(info.value) == message


def test_between_is_inclusive() -> None:
    assert Expectation("between", 1.0, 2.0).holds(1.0) and Expectation("between", 1.0, 2.0).holds(2.0)
