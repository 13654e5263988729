from __future__ import annotations

from pathlib import Path

import pytest

from checks import separation
from recordtool import CheckContext

TINY = 1e-10


@pytest.mark.parametrize("seed", [0, 1])
def test_separation_holds_on_a_plain_model(tmp_path: Path, seed: int) -> None:
    m = separation.measure(CheckContext.for_testing(tmp_path, seed=seed))
    assert m["pattern_shift_ov"] == 0.0  # bit-for-bit
    assert m["output_shift_ov"] > 1e-3 and m["pattern_shift_qk"] > 1e-3
    assert m["layer_output_error"] < TINY
    assert m["qk_gauge_error"] < TINY and m["ov_gauge_error"] < TINY
    assert m["qk_gauge_error_null"] > 0.1 and m["ov_gauge_error_null"] > 0.1  # one side only: no gauge
    assert m["pattern_shift_other_ov"] > 1e-3  # layer 0 feeds the layer-1 head's input


def test_each_control_breaks_what_it_should(tmp_path: Path) -> None:
    ctx = CheckContext.for_testing(tmp_path)
    biased = separation.measure(ctx, biases=True)
    assert biased["layer_output_error"] > 1e-3  # the biases add to the weighted values
    assert biased["pattern_shift_ov"] == 0.0
    normed = separation.measure(ctx, layer_norm=True)
    assert normed["layer_output_error"] > 1e-3  # the heads read the normalised stream
    assert normed["qk_gauge_error"] < TINY and normed["ov_gauge_error"] < TINY
    earlier = separation.measure(ctx, perturb_layer=0)
    assert earlier["pattern_shift_ov"] > 1e-3
    first = separation.measure(ctx, layer=0)
    assert first["pattern_shift_other_ov"] == 0.0  # heads of one layer do not feed each other
    assert first["layer_output_error"] < TINY


def test_the_gauge_transforms_the_biases_too(tmp_path: Path) -> None:
    """With b_Q, b_K and b_V changed with their weights, a model with biases keeps its pattern
    and output under the gauge: the biases control has no power over the gauge errors (it had,
    from biases left in the old basis), only over the layer's output formula, which leaves
    them out."""
    for seed in (0, 1):
        biased = separation.measure(CheckContext.for_testing(tmp_path, seed=seed), biases=True)
        assert biased["qk_gauge_error"] < TINY and biased["ov_gauge_error"] < TINY
        assert biased["qk_gauge_error_null"] > 0.1 and biased["ov_gauge_error_null"] > 0.1
        assert biased["layer_output_error"] > 1e-3
