"""Fixtures shared by the lab's tests: the trained lab model (trained once per session) and
the claims' checks as the YAML writes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks import induction
from recordtool.record.expect import Expectation
from recordtool.record.schema import CheckSpec
from recordtool.verify.context import CheckContext

RECORD = Path(__file__).resolve().parents[2] / "record" / "theory"


def load_check(claim: str, name: str) -> CheckSpec:
    """The check ``name`` of claim ``claim``, read and validated as recordtool does."""
    entry = yaml.safe_load((RECORD / f"{claim}.yaml").read_text())
    (check,) = [c for c in entry["checks"] if c["name"] == name]
    return CheckSpec.model_validate(check)


def failing(expect: dict[str, Expectation], metrics: dict[str, Any]) -> list[str]:
    """The names of the expectations ``metrics`` does not meet."""
    return [k for k, expectation in expect.items() if not expectation.holds(float(metrics[k]))]


@pytest.fixture(scope="session")
def lab_ctx(tmp_path_factory: pytest.TempPathFactory) -> CheckContext:
    """A context whose cache is shared by the whole session (the lab model trains once)."""
    return CheckContext.for_testing(tmp_path_factory.mktemp("lab"), seed=0, threads=1)


@pytest.fixture(scope="session")
def lab_metrics(lab_ctx: CheckContext) -> dict[str, Any]:
    """THEORY-977's check on the lab model, as the YAML calls it (this trains the model)."""
    check = load_check("THEORY-977", "induction-by-k-composition")
    return induction.measure(lab_ctx, **check.params)


@pytest.fixture
def check_spec() -> Callable[[str, str], CheckSpec]:
    return load_check


@pytest.fixture
def unmet() -> Callable[[dict[str, Expectation], dict[str, Any]], list[str]]:
    """``unmet(expect, metrics)``: the expectations the metrics do not meet."""
    return failing
