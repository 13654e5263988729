from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checks import induction
from recordtool.record.expect import Expectation
from recordtool.record.schema import CheckSpec
from recordtool.verify.context import CheckContext

Spec = Callable[[str, str], CheckSpec]
Unmet = Callable[[dict[str, Expectation], dict[str, Any]], list[str]]
NAME = "induction-by-k-composition"


def test_induction_by_k_composition_holds(
    lab_ctx: CheckContext, lab_metrics: dict[str, Any], check_spec: Spec, unmet: Unmet
) -> None:
    check = check_spec("THEORY-977", NAME)
    assert unmet(check.expect, lab_metrics) == []
    for name in ("patterns.png", "composition.png", "loss.png"):
        assert (lab_ctx.figures_dir / name).stat().st_size > 1000
    assert abs(lab_metrics["k_comp_baseline"] - lab_metrics["inv_sqrt_d_model"]) < 0.02
    assert len(lab_metrics["loss_curve"]) > 10


def test_untrained_control_fails(tmp_path: Path, check_spec: Spec, unmet: Unmet) -> None:
    check = check_spec("THEORY-977", NAME)
    (control,) = [c for c in check.all_controls if c.name == "untrained"]
    metrics = induction.measure(CheckContext.for_testing(tmp_path), **{**check.params, **control.params})
    assert metrics["n_induction_heads"] == 0
    # measured on the most induction-like head, the composition and circuit criteria fail too
    assert {"previous_token_score", "n_induction_heads", "k_comp_over_baseline", "k_comp_rank", "k_minus_max_qv",
            "copying", "same_matching", "induction_drop"} <= set(unmet(check.expect, metrics))
    assert all(math.isfinite(metrics[m]) for m in ("k_comp_over_baseline", "copying", "same_matching",
                                                    "induction_drop"))


def test_no_repeats_control_fails(tmp_path: Path, check_spec: Spec, unmet: Unmet) -> None:
    """The no-repeats control on a shorter budget than the YAML's (300 steps, not 1000), to keep
    the suite fast; the full control runs in `recordtool verify` and the benchmark."""
    check = check_spec("THEORY-977", NAME)
    (control,) = [c for c in check.all_controls if c.name == "no-repeats"]
    params = {**check.params, **control.params, "max_steps": 300}
    metrics = induction.measure(CheckContext.for_testing(tmp_path, threads=1), **params)
    assert metrics["training_steps"] == 300 and not metrics["training_stopped_early"]
    assert metrics["n_induction_heads"] == 0
    assert {"previous_token_score", "n_induction_heads"} <= set(unmet(check.expect, metrics))
    assert math.isfinite(metrics["k_comp_over_baseline"]) and math.isfinite(metrics["copying"])
