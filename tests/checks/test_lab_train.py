from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from checks.model import AttnOnlyTransformer
from checks.train import _safetensors_metadata, cache_key, lab_configs, load_or_train, train
from recordtool.verify.child import FIXED_THREADS  # as verify runs a check


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
model, _ = train(*lab_configs(max_steps=25, target_repeat_loss=0.0), seed=5, threads=int(sys.argv[1]))
sys.stdout.buffer.write(save({k: v.contiguous() for k, v in model.state_dict().items()}))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_training_in_two_processes_gives_the_same_weights_bit_for_bit(threads: int) -> None:
    root = Path(__file__).resolve().parents[2]
    weights = [
        load_safetensors(io.BytesIO(subprocess.run(
            [sys.executable, "-c", TRAIN_IN_A_CHILD, str(threads)], cwd=root, capture_output=True, check=True,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", **FIXED_THREADS}).stdout).read())
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
    assert cache_key(mc, tc, 0, 1) != cache_key(*lab_configs("text"), 0, 1)
    assert cache_key(mc, tc, 0, 1) != cache_key(*lab_configs(frozen_layer0=True), 0, 1)


def test_natural_text_trains_for_its_whole_budget_and_a_frozen_layer_stays() -> None:
    mc, tc = lab_configs("text", max_steps=6, eval_every=3, frozen_layer0=True)
    model, log = train(mc, tc, seed=0, threads=1)
    assert log.steps == 6 and not log.stopped_early and len(log.eval_loss) == 2
    init = AttnOnlyTransformer(mc, generator=torch.Generator().manual_seed(0))
    for name in ("W_Q", "W_K", "W_V", "W_O"):  # layer 0 as initialised, layer 1 trained
        assert torch.equal(getattr(model.attention(0), name), getattr(init.attention(0), name))
        assert not torch.equal(getattr(model.attention(1), name), getattr(init.attention(1), name))
    with pytest.raises(ValueError, match="data must be 'repeat' or 'text'"):
        lab_configs("words")


def test_lab_training_forms_a_real_induction_head(lab_metrics: dict[str, Any]) -> None:
    """The session's seeded training (the lab's own config) stops early with the circuit formed."""
    m = lab_metrics
    assert m["training_stopped_early"] == 1 and m["final_eval_repeat_loss"] < 1.6
    assert m["n_induction_heads"] >= 1 and m["max_induction_score"] > 0.4


class Interrupted(Exception):
    pass


def _interrupt_at(step: int) -> Any:
    def progress(message: str) -> None:
        if message.startswith(f"step {step}/"):
            raise Interrupted(message)
    return progress


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name


def test_an_interrupted_training_resumes_from_its_checkpoint_bit_for_bit(tmp_path: Path) -> None:
    mc, tc = lab_configs(max_steps=40, eval_every=10, log_every=3, target_repeat_loss=0.0)
    straight = load_or_train(mc, tc, 4, tmp_path / "straight", threads=1)
    folder = tmp_path / "interrupted" / "models"
    with pytest.raises(Interrupted):  # checkpoints after every step, then stops at step 20
        load_or_train(mc, tc, 4, tmp_path / "interrupted", threads=1, progress=_interrupt_at(20),
                      checkpoint_seconds=0)
    assert (folder / f"{straight.key}.checkpoint").exists()
    assert not (folder / f"{straight.key}.safetensors").exists()
    with pytest.raises(Interrupted):  # resumes at 19 (the last checkpoint before the eval that raised), stops at 30
        load_or_train(mc, tc, 4, tmp_path / "interrupted", threads=1, progress=_interrupt_at(30),
                      checkpoint_seconds=0)
    messages: list[str] = []
    resumed = load_or_train(mc, tc, 4, tmp_path / "interrupted", threads=1, progress=messages.append)
    assert "resumed at step 29/40" in messages
    _same_weights(straight.model, resumed.model)
    assert resumed.log.resumed_at == [19, 29] and resumed.log.steps == 40
    assert (resumed.log.loss_steps, resumed.log.loss) == (straight.log.loss_steps, straight.log.loss)
    assert resumed.log.eval_repeat_loss == straight.log.eval_repeat_loss
    assert not (folder / f"{straight.key}.checkpoint").exists()  # removed once the model is saved
    _same_weights(straight.model, load_or_train(mc, tc, 4, tmp_path / "interrupted", threads=1).model)


def test_a_checkpoint_of_another_model_or_unreadable_is_not_used(tmp_path: Path) -> None:
    mc, tc = lab_configs(max_steps=6, eval_every=3, target_repeat_loss=0.0)
    key = cache_key(mc, tc, 0, 1)
    folder = tmp_path / "models"
    folder.mkdir()
    other = lab_configs(max_steps=6, eval_every=3, target_repeat_loss=0.0, lr=1e-3)
    with pytest.raises(Interrupted):
        load_or_train(*other, 0, tmp_path, threads=1, progress=_interrupt_at(3), checkpoint_seconds=0)
    other_key = cache_key(*other, 0, 1)
    (folder / f"{key}.checkpoint").write_bytes((folder / f"{other_key}.checkpoint").read_bytes())
    messages: list[str] = []
    fresh = load_or_train(mc, tc, 0, tmp_path, threads=1, progress=messages.append)
    assert any(m.startswith(f"starting over: checkpoint {key}.checkpoint not used (a checkpoint of model {other_key}")
               for m in messages), messages
    _same_weights(fresh.model, train(mc, tc, seed=0, threads=1)[0])
    (folder / f"{other_key}.checkpoint").write_bytes(b"\x00garbage")
    messages.clear()
    load_or_train(*other, 0, tmp_path, threads=1, progress=messages.append)
    assert any(m.startswith("starting over: checkpoint") for m in messages), messages


def test_what_a_killed_training_was_writing_is_swept(tmp_path: Path) -> None:
    mc, tc = lab_configs(max_steps=2, eval_every=100)
    key = cache_key(mc, tc, 0, 1)
    folder = tmp_path / "models"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (folder / f".{key}.checkpoint.recordtool-{dead}-0a1b2c3d.tmp").write_bytes(b"half a checkpoint")
    load_or_train(mc, tc, 0, tmp_path, threads=1)
    assert sorted(p.name for p in folder.iterdir()) == sorted([f"{key}.json", f"{key}.lock", f"{key}.safetensors"])



def _weights_bytes(model: torch.nn.Module) -> bytes:
    return save_safetensors({name: t.contiguous() for name, t in model.state_dict().items()})


@pytest.mark.parametrize("damage", ["truncated weights", "garbled log", "weights of another model", "log missing"])
def test_class_5_caches_heal_a_damaged_model_by_training_it_again(tmp_path: Path, damage: str) -> None:
    """Issue 66, the caches heal: a cached model whose weights are cut short or not the model's,
    or whose log is garbled or gone, is trained again with a one-line warning naming the file,
    and the cache holds the model again afterwards."""
    mc, tc = lab_configs(max_steps=3, eval_every=100)
    first = load_or_train(mc, tc, 0, tmp_path, threads=1)
    weights, log = tmp_path / "models" / f"{first.key}.safetensors", tmp_path / "models" / f"{first.key}.json"
    if damage == "truncated weights":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "garbled log":
        log.write_text('{"steps": 3, "loss', encoding="utf-8")
    elif damage == "weights of another model":
        other = train(*lab_configs(max_steps=3, eval_every=100, n_layers=1), seed=0, threads=1)[0]
        weights.write_bytes(_weights_bytes(other))
    else:
        log.unlink()
    messages: list[str] = []
    healed = load_or_train(mc, tc, 0, tmp_path, threads=1, progress=messages.append)
    warned = [m for m in messages if m.startswith(f"training again: the cached model {weights.name} is damaged (")]
    assert len(warned) == 1, messages
    _same_weights(first.model, healed.model)
    again: list[str] = []
    load_or_train(mc, tc, 0, tmp_path, threads=1, progress=again.append)
    assert again == [f"loaded model {first.key} from the cache"]


def test_class_5_caches_heal_a_checkpoint_that_lacks_fields(tmp_path: Path) -> None:
    """Issue 66, the caches heal: a checkpoint of the right model that lacks its step, its log,
    a weight or an optimiser's moment is not resumed from; training starts over and ends as an
    uninterrupted one."""
    mc, tc = lab_configs(max_steps=6, eval_every=3, target_repeat_loss=0.0)
    straight = train(mc, tc, seed=0, threads=1)[0]
    with pytest.raises(Interrupted):
        load_or_train(mc, tc, 0, tmp_path, threads=1, progress=_interrupt_at(3), checkpoint_seconds=0)
    path = tmp_path / "models" / f"{cache_key(mc, tc, 0, 1)}.checkpoint"
    whole = path.read_bytes()
    tensors, meta = load_safetensors(whole), _safetensors_metadata(whole)
    lacking = {
        "step": save_safetensors(tensors, metadata={k: v for k, v in meta.items() if k != "step"}),
        "log": save_safetensors(tensors, metadata={k: v for k, v in meta.items() if k != "log"}),
        "a weight": save_safetensors({k: v for k, v in tensors.items() if k != "model.W_U"}, metadata=meta),
        "a moment": save_safetensors({k: v for k, v in tensors.items() if not k.endswith(".exp_avg_sq")},
                                     metadata=meta),
    }
    for what, data in lacking.items():
        for made in (tmp_path / "models").glob(f"{cache_key(mc, tc, 0, 1)}.*"):
            made.unlink()
        path.write_bytes(data)
        messages: list[str] = []
        model = load_or_train(mc, tc, 0, tmp_path, threads=1, progress=messages.append).model
        assert any(m.startswith(f"starting over: checkpoint {path.name} not used (") for m in messages), (what, messages)
        _same_weights(straight, model)
