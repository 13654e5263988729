from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from checks import induction
from recordtool import CheckContext

COMPOSITION = ("k_comp_over_baseline", "k_over_qv", "k_comp_lead", "copying", "same_matching",
               "induction_drop", "partner_k_comp_over_baseline")


def test_trained_model_has_an_induction_circuit(lab_ctx: CheckContext, lab_metrics: dict[str, Any]) -> None:
    """Seed 0 of the lab's model: the circuit the claim describes, measured as the check does."""
    m = lab_metrics
    assert m["training_stopped_early"] and m["loss_below_uniform"] > 0.5
    assert m["previous_token_score"] > 0.4 and m["n_induction_heads"] >= 1
    assert m["k_comp_over_baseline"] > 2 and m["k_over_qv"] > 1 and m["k_comp_lead"] > 0.5
    assert m["k_comp_rank"] == 1 and m["partner_head"] != m["previous_token_head"]
    assert m["copying"] > 0.5 and m["same_matching"] > 0.5 and m["induction_drop"] >= 0.5
    assert abs(m["virtual_cost_fraction"]) < 0.333
    for name in ("patterns.png", "composition.png", "loss.png"):
        assert (lab_ctx.figures_dir / name).stat().st_size > 1000
    assert abs(m["k_comp_baseline"] - m["inv_sqrt_d_model"]) < 0.02
    assert len(m["loss_curve"]) > 10
    assert set(m) <= set(induction.METRICS)  # declared for recordtool validate


def test_untrained_model_fails_on_measured_numbers(tmp_path: Path) -> None:
    m = induction.measure(CheckContext.for_testing(tmp_path), train=False)
    assert m["training_steps"] == 0 and abs(m["loss_below_uniform"]) < 0.1  # learned nothing
    assert m["n_induction_heads"] == 0 and m["previous_token_score"] < 0.4
    # at initialisation the composition scores are the random level: well inside the margins
    assert abs(m["k_comp_over_baseline"] - 1) < 0.2
    assert abs(m["k_over_qv"]) < 0.5 and abs(m["k_comp_lead"]) < 0.5
    assert m["copying"] < 0.5 and m["same_matching"] < 0.5 and m["induction_drop"] < 0.5
    assert all(math.isfinite(m[k]) for k in COMPOSITION)


def test_one_layer_model_learns_but_forms_no_induction_head(tmp_path: Path) -> None:
    """The one-layer control on a short budget (200 steps; the record runs 1000)."""
    m = induction.measure(CheckContext.for_testing(tmp_path), n_layers=1, max_steps=200)
    assert m["training_steps"] == 200 and not m["training_stopped_early"]
    assert m["loss_below_uniform"] > 0.02  # learning (0.045 here; 0.10 to 0.14 after 1000 steps; untrained 1e-4)
    assert m["n_induction_heads"] == 0 and m["max_induction_score"] < 0.4
    assert "induction_scores_L0" in m and "induction_scores_L1" not in m
    assert all(math.isnan(m[k]) for k in induction.COMPOSITION_METRICS)  # undefined, not failed
    assert m["virtual_cost_fraction"] == 0.0 and m["loss_full"] == m["loss_first_order"]  # none to remove
    assert math.isfinite(m["copying"])
    assert set(m) <= set(induction.METRICS)
    assert (tmp_path / "figures" / "patterns.png").stat().st_size > 1000


def test_figure_words_say_what_each_head_is_in_this_run() -> None:
    from checks.induction import _panel, _patterns_words

    assert _panel((0, 2, "previous-token", 0.59), 0.4) == "L0H2: previous-token head (0.59)"
    assert _panel((1, 1, "induction", 0.02), 0.4) == "L1H1: most induction-like, none (0.02 ≤ 0.4)"
    words = _patterns_words([(0, 2, "previous-token", 0.59), (1, 1, "induction", 0.02)], 0.4, 32)
    assert words["title"] == "Attention on a repeated random sequence"
    assert "L0H2 is a previous-token head: its previous-token score is 0.59, above the 0.4" in words["caption"]
    assert ("L1H1 is no induction head: its induction score is 0.02, not above the 0.4 the claim asks for "
            "(it is only the most induction-like head)") in words["caption"]
    assert "L1H1 is an induction head" in _patterns_words([(1, 1, "induction", 0.6)], 0.4, 32)["caption"]
