"""Fixtures shared by the lab's tests: the lab's trained model, trained once per session.

The tests call the checks with their parameters written out, never through the shipped
record's YAML: what the record claims is judged by ``recordtool verify``, what the lab does is
tested here.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks import induction
from recordtool import CheckContext


@pytest.fixture(scope="session")
def lab_ctx(tmp_path_factory: pytest.TempPathFactory) -> CheckContext:
    """A context whose cache is shared by the whole session (the lab model trains once)."""
    return CheckContext.for_testing(tmp_path_factory.mktemp("lab"), seed=0, threads=1)


@pytest.fixture(scope="session")
def lab_metrics(lab_ctx: CheckContext) -> dict[str, Any]:
    """The induction check on the lab's two-layer model, seed 0 (this trains the model)."""
    return induction.measure(lab_ctx)
