from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from checks import induction
from recordtool import CheckContext

COMPOSITION = ("k_comp_over_baseline", "k_over_qv", "k_comp_lead", "copying", "same_matching",
               "induction_drop", "max_qv_comp_over_baseline")


def test_trained_model_has_an_induction_circuit(lab_ctx: CheckContext, lab_metrics: dict[str, Any]) -> None:
    """Seed 0 of the lab's model: the circuit the claim describes, measured as the check does."""
    m = lab_metrics
    assert m["training_stopped_early"] and m["loss_below_uniform"] > 0.5
    assert m["previous_token_score"] > 0.4 and m["n_induction_heads"] >= 1
    assert m["k_comp_over_baseline"] > 2 and m["k_over_qv"] > 1 and m["k_comp_lead"] > 0.5
    assert m["k_comp_rank"] == 1 and m["max_qv_comp_over_baseline"] < 2
    assert m["copying"] > 0.5 and m["same_matching"] > 0.5 and m["induction_drop"] >= 0.5
    assert m["copying_null"] < 0.5 and m["same_matching_null"] < 0.5  # the nulls fail
    # the toy's data give a recent-tokens head no job: none forms, and none is found
    assert m["recent_head_mass"] < 0.5 and m["recent_partner_head"] == -1
    assert m["recent_partner_k_comp_over_baseline"] == 0.0
    assert abs(m["virtual_cost_fraction"]) < 0.333
    for name in ("patterns.png", "composition.png", "loss.png"):
        assert (lab_ctx.figures_dir / name).stat().st_size > 1000
    assert abs(m["k_comp_baseline"] - 1 / math.sqrt(64)) < 0.02  # about 1/sqrt(d_model)
    assert len(m["loss_curve"]) > 10
    assert set(m) <= set(induction.METRICS)  # declared for recordtool validate


def test_untrained_model_fails_on_measured_numbers(tmp_path: Path) -> None:
    m = induction.measure(CheckContext.for_testing(tmp_path), train=False)
    assert m["training_steps"] == 0 and abs(m["loss_below_uniform"]) < 0.1  # learned nothing
    assert m["n_induction_heads"] == 0 and m["previous_token_score"] < 0.4
    # at initialisation the composition scores are the random level: well inside the margins
    assert abs(m["k_comp_over_baseline"] - 1) < 0.2
    assert abs(m["k_over_qv"]) < 0.5 and abs(m["k_comp_lead"]) < 0.5 and m["max_qv_comp_over_baseline"] < 2
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


def test_a_planted_recent_tokens_head_passes_the_partner_test(lab_ctx: CheckContext) -> None:
    """The positive control: a layer-0 head written to attend evenly over t-1 .. t-5, with the
    previous-token head's OV, is found, and the induction heads K-compose with it."""
    m: dict[str, Any] = induction.measure(lab_ctx, plant="recent_tokens")
    assert m["recent_partner_head"] == m["planted_head"] != m["previous_token_head"]
    assert m["recent_head_mass"] > 0.5 and m["recent_partner_k_comp_over_baseline"] > 2
    assert m["recent_partner_n_composing"] == m["n_induction_heads"] >= 1


@pytest.mark.parametrize("threshold", [0.4, 1.0])
def test_planted_previous_token_heads_fail_the_partner_test(lab_ctx: CheckContext, threshold: float) -> None:
    """Every other layer-0 head made a copy of the previous-token head (which the old test,
    counting t-1 as recent, passed): no recent-tokens head is found, both because copies of a
    previous-token head are not searched and, with no head counted as one (threshold 1),
    because their attention is not on t-2 .. t-5."""
    m: dict[str, Any] = induction.measure(lab_ctx, plant="previous_token", threshold=threshold)
    assert m["recent_head_mass"] < 0.5 and m["recent_partner_head"] == -1
    assert m["recent_partner_k_comp_over_baseline"] == 0.0
    assert m["k_comp_over_baseline"] > 2  # the copies do K-compose: the pattern test rejects them


def test_the_partner_test_asks_for_spread_attention_and_some_composing_head() -> None:
    """A head with most of its t-2 .. t-5 mass on one offset is no recent-tokens head however
    it composes; a spread one is, when some induction head (here one of two) composes with it."""
    heads = induction.Heads(previous=0, previous_heads=[0], candidates=[0, 1], inductive=True)
    metrics: induction.Metrics = {"recent_mass_L0": [0.1, 0.9, 0.6, 0.7], "recent_peak_share_L0": [0.3, 0.95, 0.3, 0.4]}
    k_units = torch.tensor([[3.0, 5.0, 1.0, 1.5], [3.0, 5.0, 2.6, 1.0], [0.0] * 4, [0.0] * 4], dtype=torch.float64)
    m = induction.recent_tokens_partner(metrics, k_units, heads, 0.4)
    assert m == {"recent_head_mass": 0.7, "recent_partner_head": 2, "recent_partner_k_comp_over_baseline": 2.6,
                 "recent_partner_n_composing": 1}
    metrics["recent_mass_L0"] = [0.1, 0.9, 0.45, 0.3]
    assert induction.recent_tokens_partner(metrics, k_units, heads, 0.4)["recent_partner_head"] == -1


def test_a_planted_v_composing_head_fails_the_q_and_v_bound(lab_ctx: CheckContext) -> None:
    m: dict[str, Any] = induction.measure(lab_ctx, plant="v_composition")
    assert m["max_qv_comp_over_baseline"] > 2


def test_a_model_with_layer_0_frozen_learns_but_does_not_k_compose(tmp_path: Path) -> None:
    """The K-composition control that is not degenerate (300 steps here; the record runs 750)."""
    m: dict[str, Any] = induction.measure(CheckContext.for_testing(tmp_path), frozen_layer0=True, max_steps=300)
    assert m["training_steps"] == 300 and m["loss_below_uniform"] > 0.02
    assert m["previous_token_score"] < 0.4 and m["n_induction_heads"] == 0
    assert m["k_comp_over_baseline"] < 2 and m["k_over_qv"] < 1


def test_the_natural_text_setting_measures_the_same_things(tmp_path: Path) -> None:
    """A short run on pydoc_data.topics (20 steps; the record runs 1500): characters are
    learned at once, the whole budget is used, and the partner test reports on it."""
    m: dict[str, Any] = induction.measure(CheckContext.for_testing(tmp_path), data="text", max_steps=20)
    assert m["training_steps"] == 20 and not m["training_stopped_early"]
    assert m["loss_below_uniform"] > 0.3
    assert len(m["recent_mass_L0"]) == 4 and m["recent_partner_head"] in (-1, 0, 1, 2, 3)
    assert set(m) <= set(induction.METRICS)
