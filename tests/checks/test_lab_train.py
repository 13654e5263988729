from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_safetensors

from checks.train import cache_key, lab_configs, load_or_train, train


def test_training_is_deterministic_and_logged() -> None:
    mc, tc = lab_configs(max_steps=12, eval_every=5, log_every=2)
    before, state = torch.get_num_threads(), torch.random.get_rng_state()
    a, log = train(mc, tc, seed=3, threads=1)
    b, _ = train(mc, tc, seed=3, threads=1)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert log.steps == 12 and log.loss_steps[:3] == [1, 2, 4] and len(log.eval_steps) == 2
    assert log.tokens_per_second > 0
    assert torch.get_num_threads() == before  # restored
    assert torch.equal(state, torch.random.get_rng_state())  # seeded generators only


TRAIN_IN_A_CHILD = """
import sys
from safetensors.torch import save
from checks.train import lab_configs, train
model, _ = train(*lab_configs(max_steps=25, target_repeat_loss=0.0), seed=5, threads=1)
sys.stdout.buffer.write(save({k: v.contiguous() for k, v in model.state_dict().items()}))
"""


def test_training_in_two_processes_gives_the_same_weights_bit_for_bit() -> None:
    root = Path(__file__).resolve().parents[2]
    weights = [
        load_safetensors(io.BytesIO(subprocess.run(
            [sys.executable, "-c", TRAIN_IN_A_CHILD], cwd=root, capture_output=True, check=True,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}).stdout).read())
        for _ in range(2)
    ]
    assert weights[0].keys() == weights[1].keys()
    for name in weights[0]:
        assert torch.equal(weights[0][name], weights[1][name]), name


def test_early_stop() -> None:
    mc, tc = lab_configs(max_steps=50, eval_every=5, target_repeat_loss=10.0)
    _, log = train(mc, tc, seed=0, threads=1)
    assert log.stopped_early and log.steps == 5


def test_cache_round_trip(tmp_path: Path) -> None:
    mc, tc = lab_configs(max_steps=3, eval_every=100)
    first = load_or_train(mc, tc, 0, tmp_path, threads=1)
    second = load_or_train(mc, tc, 0, tmp_path, threads=1)
    assert not first.log.from_cache and second.log.from_cache
    assert second.log.loss == first.log.loss
    for (name, x), (_, y) in zip(
        first.model.state_dict().items(), second.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    files = sorted(p.name for p in (tmp_path / "models").iterdir())
    assert files == sorted([f"{first.key}.json", f"{first.key}.lock", f"{first.key}.safetensors"])


def test_cache_key_depends_on_configs_seed_and_threads() -> None:
    mc, tc = lab_configs()
    assert cache_key(mc, tc, 0, 1) == cache_key(*lab_configs(), 0, 1)
    assert cache_key(mc, tc, 0, 1) != cache_key(mc, tc, 1, 1)
    assert cache_key(mc, tc, 0, 1) != cache_key(mc, tc, 0, 2)
    assert cache_key(mc, tc, 0, 1) != cache_key(*lab_configs(layer_norm=True), 0, 1)
    assert cache_key(mc, tc, 0, 1) != cache_key(*lab_configs(repeat_prob=0.0), 0, 1)


def test_lab_training_forms_a_real_induction_head(lab_metrics: dict[str, Any]) -> None:
    """The session's seeded training (the lab's own config) stops early with the circuit formed."""
    m = lab_metrics
    assert m["training_stopped_early"] == 1 and m["final_eval_repeat_loss"] < 1.6
    assert m["n_induction_heads"] >= 1 and m["max_induction_score"] > 0.4
