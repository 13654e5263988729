from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from checks import path_expansion
from recordtool.record.expect import Expectation
from recordtool.record.schema import CheckSpec
from recordtool.verify.context import CheckContext

Spec = Callable[[str, str], CheckSpec]
Unmet = Callable[[dict[str, Expectation], dict[str, Any]], list[str]]


def test_expansion_is_exact_on_a_random_model_and_misses_under_controls(
    tmp_path: Path, check_spec: Spec, unmet: Unmet
) -> None:
    check = check_spec("THEORY-988", "exact-expansion-random")
    ctx = CheckContext.for_testing(tmp_path)
    metrics = path_expansion.measure(ctx, **check.params)
    assert unmet(check.expect, metrics) == []
    assert metrics["n_path_terms"] == 1 + 2 * 4 + 4**2
    assert [c.name for c in check.all_controls] == ["layer-norm", "biases"]
    for control in check.all_controls:
        under = path_expansion.measure(ctx, **{**check.params, **control.params})
        assert "max_abs_error" in unmet(check.expect, under)
        assert under["max_abs_error"] > 1e-2  # misses by far


def test_expansion_is_exact_on_the_trained_model(
    lab_ctx: CheckContext, lab_metrics: dict[str, Any], check_spec: Spec, unmet: Unmet
) -> None:
    check = check_spec("THEORY-988", "exact-expansion-trained")
    metrics = path_expansion.measure(lab_ctx, **check.params)
    assert unmet(check.expect, metrics) == []
    assert metrics["training_steps"] == lab_metrics["training_steps"]  # the same cached model


def test_expansion_misses_on_trained_models_with_layer_norm_or_biases(
    tmp_path: Path, check_spec: Spec, unmet: Unmet
) -> None:
    """The trained controls, on a shorter budget than the YAML's (40 steps instead of 300) to
    keep the suite fast: the miss comes from the architecture, not from the training length."""
    check = check_spec("THEORY-988", "exact-expansion-trained")
    ctx = CheckContext.for_testing(tmp_path, threads=1)
    for control in check.all_controls:
        params = {**check.params, **control.params, "max_steps": 40}
        under = path_expansion.measure(ctx, **params)
        assert under["training_steps"] == 40
        assert "max_abs_error" in unmet(check.expect, under)
        assert under["max_abs_error"] > 1e-2
