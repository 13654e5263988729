from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from checks.data import RepeatData
from checks.train import cache_key, lab_configs, load_or_train, train


def test_repeat_data_marks_true_copies() -> None:
    data = RepeatData(repeat_prob=1.0)
    tokens, repeated = data.batch(32, torch.Generator().manual_seed(0))
    assert tokens.shape == repeated.shape == (32, 64)
    assert 0.3 < float(repeated.float().mean()) < 0.9
    none = RepeatData(repeat_prob=0.0).batch(8, torch.Generator().manual_seed(0))[1]
    assert not none.any()
    again = data.batch(32, torch.Generator().manual_seed(0))[0]
    assert torch.equal(tokens, again)


def test_training_is_deterministic_and_logged() -> None:
    torch.set_num_threads(1)
    mc, tc = lab_configs(max_steps=12, eval_every=5, log_every=2)
    a, log = train(mc, tc, seed=3)
    b, _ = train(mc, tc, seed=3)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert log.steps == 12 and log.loss_steps[:3] == [1, 2, 4] and len(log.eval_steps) == 2
    assert log.tokens_per_second > 0


def test_early_stop() -> None:
    mc, tc = lab_configs(max_steps=50, eval_every=5, target_repeat_loss=10.0)
    _, log = train(mc, tc, seed=0)
    assert log.stopped_early and log.steps == 5


def test_cache_round_trip(tmp_path: Path) -> None:
    mc, tc = lab_configs(max_steps=3, eval_every=100)
    first = load_or_train(mc, tc, 0, tmp_path)
    second = load_or_train(mc, tc, 0, tmp_path)
    assert not first.log.from_cache and second.log.from_cache
    assert second.log.loss == first.log.loss
    for (name, x), (_, y) in zip(
        first.model.state_dict().items(), second.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    files = sorted(p.name for p in (tmp_path / "models").iterdir())
    assert files == sorted([f"{first.key}.json", f"{first.key}.lock", f"{first.key}.safetensors"])


def test_cache_key_depends_on_configs_and_seed() -> None:
    mc, tc = lab_configs()
    assert cache_key(mc, tc, 0) == cache_key(*lab_configs(), 0)
    assert cache_key(mc, tc, 0) != cache_key(mc, tc, 1)
    assert cache_key(mc, tc, 0) != cache_key(*lab_configs(layer_norm=True), 0)
    assert cache_key(mc, tc, 0) != cache_key(*lab_configs(repeat_prob=0.0), 0)


def test_lab_training_forms_a_real_induction_head(lab_metrics: dict[str, Any]) -> None:
    """The session's seeded training (the lab's own config) stops early with the circuit formed."""
    m = lab_metrics
    assert m["training_stopped_early"] == 1
    assert m["previous_token_score"] > 0.4
    assert m["n_induction_heads"] >= 1 and m["max_induction_score"] > 0.4
    assert m["k_comp_rank"] == 1 and m["k_comp_over_baseline"] > 2
