from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checks import path_expansion
from recordtool import CheckContext


@pytest.mark.parametrize("n_layers", [2, 3])
def test_expansion_is_exact_on_random_models_and_misses_under_controls(tmp_path: Path, n_layers: int) -> None:
    ctx = CheckContext.for_testing(tmp_path, seed=1)
    m = path_expansion.measure(ctx, n_layers=n_layers)
    assert m["max_abs_error"] < 1e-9 and m["scores_max_abs_error"] < 1e-9
    assert m["n_path_terms"] == (1 + 4) ** n_layers
    assert m["error_without_longest_chains"] > 0.1  # the chains of n_layers heads matter
    for switch in ("layer_norm", "biases"):
        under = path_expansion.measure(ctx, n_layers=n_layers, **{switch: True})
        assert under["max_abs_error"] > 1e-2 and under["scores_max_abs_error"] > 1e-2  # misses by far


def test_expansion_is_exact_on_the_trained_model(lab_ctx: CheckContext, lab_metrics: dict[str, Any]) -> None:
    m = path_expansion.measure(lab_ctx, model="trained")
    assert m["max_abs_error"] < 1e-9 and m["scores_max_abs_error"] < 1e-9
    assert m["training_steps"] == lab_metrics["training_steps"]  # the same cached model


def test_expansion_misses_on_trained_models_with_layer_norm_or_biases(tmp_path: Path) -> None:
    """Trained controls on 40 steps (the record runs 100): the miss comes from the architecture."""
    ctx = CheckContext.for_testing(tmp_path)
    for switch in ("layer_norm", "biases"):
        under = path_expansion.measure(ctx, model="trained", max_steps=40, **{switch: True})
        assert under["training_steps"] == 40
        assert under["max_abs_error"] > 1e-2
