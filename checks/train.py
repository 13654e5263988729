"""Training the lab's models, and the cache that keeps them.

Training is seeded and deterministic for a given seed and thread count: the weights come from
a ``torch.Generator`` seeded with ``seed``, the training and evaluation batches from their own
generators, and nothing reads torch's global random state. The thread count is part of the
recipe: float sums are grouped differently with more threads, and training amplifies the
difference (two runs of one seed on 1 and 2 threads end with different weights), so a check
fixes it (``threads:`` in its YAML, ``ctx.threads``) and it is in the cache key. Training
stops early once the loss on the predictable repeated tokens (the ones only an induction
mechanism can predict) falls below ``target_repeat_loss``, and logs the loss curve, which is
kept as evidence.

A trained model is saved (safetensors) under ``<cache_dir>/models/<key>.safetensors`` with
its curve in ``<key>.json``; the key hashes the model config, the training config, the seed,
the thread count, torch's version, a probe of what this CPU's kernels compute
(``recordtool.kernel_probe``: another CPU's kernels train slightly different weights), and the
source text of the model, data and training code, so any change to them retrains. Writes are atomic, and a lock file
lets one process train while another, wanting the same model, waits and then loads it.

While it trains, the model is checkpointed into the same folder (``<key>.checkpoint``, every
``checkpoint_seconds``): the weights, the optimiser's state, the data generator's state, the
log so far and the step. A run that is interrupted or times out leaves it there, and the next
run that wants the model resumes from it instead of starting over, ending with the same
weights, bit for bit, as a run that was never interrupted. It is removed once the model is
saved.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors
from torch import Tensor

from checks import data as data_module
from checks import model as model_module
from checks.data import RepeatData, TextData
from checks.model import AttnOnlyTransformer, ModelConfig
from recordtool import kernel_probe, write_atomic
from recordtool.atomic import sweep


@dataclass(frozen=True)
class TrainConfig:
    data: RepeatData | TextData = field(default_factory=RepeatData)
    batch_size: int = 64
    lr: float = 1e-2
    weight_decay: float = 0.01
    max_steps: int = 2000
    eval_every: int = 50
    eval_batch_size: int = 256
    target_repeat_loss: float = 1.6  # stop when the predictable repeated tokens cost less (nats)
    log_every: int = 10
    frozen_layer0: bool = False  # leave layer 0 at its initialisation (a control: nothing to compose with)


@dataclass
class TrainingLog:
    """The evidence of one training run."""

    steps: int = 0  # optimisation steps taken
    seconds: float = 0.0  # wall time of the training (a cached model keeps its training's)
    tokens_per_second: float = 0.0
    loss_steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)  # training loss, every log_every steps
    eval_steps: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)  # all tokens of the eval batch
    eval_repeat_loss: list[float] = field(default_factory=list)  # predictable repeated tokens
    stopped_early: bool = False
    from_cache: bool = False
    resumed_at: list[int] = field(default_factory=list)  # the steps of checkpoints training resumed from


@dataclass
class TrainedModel:
    model: AttnOnlyTransformer
    log: TrainingLog
    key: str


def lab_configs(data: str = "repeat", **overrides: Any) -> tuple[ModelConfig, TrainConfig]:
    """The lab's standard two-layer model and its training, with ``overrides`` applied.

    data: "repeat", random tokens with recurring stretches (``RepeatData``), or "text", the
          natural-text windows of ``TextData`` (trained for its whole budget: nothing in it
          is a predictable repeat to stop on)
    Overrides name fields of ModelConfig (``n_layers``, ``layer_norm``, ...), of TrainConfig
    (``max_steps``, ...) or of the data (``repeat_prob``, ...). Every check builds its
    configs here, so the same settings give the same cache key across checks.
    """
    if data not in ("repeat", "text"):
        raise ValueError(f"data must be 'repeat' or 'text', not {data!r}")
    data_class = RepeatData if data == "repeat" else TextData
    model_fields = set(ModelConfig.__dataclass_fields__)
    train_fields = set(TrainConfig.__dataclass_fields__) - {"data"}
    data_fields = set(data_class.__dataclass_fields__) - {"d_vocab", "n_ctx"}
    unknown = set(overrides) - model_fields - train_fields - data_fields
    if unknown:
        raise TypeError(f"unknown lab settings: {sorted(unknown)}")
    mc = replace(ModelConfig(), **{k: v for k, v in overrides.items() if k in model_fields})
    rd = data_class(d_vocab=mc.d_vocab, n_ctx=mc.n_ctx)
    rd = replace(rd, **{k: v for k, v in overrides.items() if k in data_fields})
    tc = replace(TrainConfig(data=rd), **{k: v for k, v in overrides.items() if k in train_fields})
    if data == "text" and "target_repeat_loss" not in overrides:
        tc = replace(tc, target_repeat_loss=-math.inf)
    return mc, tc


def cache_key(model_config: ModelConfig, train_config: TrainConfig, seed: int, threads: int) -> str:
    """A hash of the configs, the seed, the thread count, torch's version and what the CPU's
    kernels compute (both change the arithmetic), the source of the model, data and
    training code, and for natural text the text's digest."""
    h = hashlib.sha256()
    recipe = [asdict(model_config), asdict(train_config), seed, threads, torch.__version__, kernel_probe(torch)]
    if isinstance(train_config.data, TextData):
        recipe.append(train_config.data.digest())
    h.update(json.dumps(recipe, sort_keys=True).encode())
    for module in (model_module, data_module):
        h.update(Path(str(module.__file__)).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:20]


def predictable_repeat_mask(repeated: Tensor) -> Tensor:
    """(batch, pos-1) bool: logits at position t predict a repeated token that the previous
    position's match already determines (tokens t+1 and t both in the second copy)."""
    return repeated[:, 1:] & repeated[:, :-1]


def language_model_losses(logits: Tensor, tokens: Tensor) -> Tensor:
    """Next-token cross-entropy per position. logits (batch, pos, vocab) -> (batch, pos-1)."""
    B, T, V = logits.shape
    losses = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1), reduction="none"
    )
    return losses.view(B, T - 1)


@dataclass
class Checkpoint:
    """Training stopped after ``step``: everything needed to go on exactly as if it had not."""

    step: int
    model: dict[str, Tensor]
    optimizer: dict[int, dict[str, Tensor]]  # the optimiser's state per parameter (its settings come from the key)
    data_rng: Tensor  # the training batches' generator state
    log: TrainingLog

    def to_bytes(self, key: str) -> bytes:
        """One safetensors file: the tensors, and the step, log and key as metadata."""
        tensors = {f"model.{name}": t.detach().contiguous() for name, t in self.model.items()}
        for index, state in self.optimizer.items():
            for name, value in state.items():
                tensors[f"optimizer.{index}.{name}"] = value.detach().contiguous()
        tensors["data_rng"] = self.data_rng.contiguous()
        meta = {"key": key, "step": str(self.step), "log": json.dumps(asdict(self.log))}
        return save_safetensors(tensors, metadata=meta)

    @classmethod
    def from_bytes(cls, data: bytes, key: str) -> Checkpoint:
        """Read ``to_bytes``'s file; ValueError if it is not a whole checkpoint of the model ``key``."""
        try:
            tensors = load_safetensors(data)
            meta = _safetensors_metadata(data)
        except (SafetensorError, ValueError, json.JSONDecodeError) as exc:
            raise ValueError(f"unreadable checkpoint: {exc}") from exc
        if meta.get("key") != key:
            raise ValueError(f"a checkpoint of model {meta.get('key')}, not {key}")
        model = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
        state: dict[int, dict[str, Tensor]] = {}
        for name, value in tensors.items():
            if name.startswith("optimizer."):
                _, index, field_name = name.split(".", 2)
                state.setdefault(int(index), {})[field_name] = value
        try:
            log = _log_from_json(meta["log"])
            return cls(int(meta["step"]), model, state, tensors["data_rng"], log)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"a checkpoint without its {exc}") from exc


def _log_from_json(text: str) -> TrainingLog:
    """A training log as ``to_bytes`` and ``load_or_train`` write it; ValueError if it is not one."""
    try:
        return TrainingLog(**json.loads(text))
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"training log: {exc}") from exc


def _fits(model: AttnOnlyTransformer, weights: dict[str, Tensor]) -> None:
    """Load ``weights`` into ``model``; ValueError unless they are all of its weights, in its shapes."""
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"weights that do not fit the model ({str(exc).splitlines()[0]})") from exc


def _safetensors_metadata(data: bytes) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file (its header is 8 bytes of length, then JSON)."""
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + length])
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict):
        raise ValueError("no metadata")
    return {str(k): str(v) for k, v in meta.items()}


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    """Run with torch using ``threads`` threads, then restore the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(
    model_config: ModelConfig,
    train_config: TrainConfig,
    seed: int,
    threads: int = 1,
    progress: Callable[[str], None] = lambda _m: None,
    resume: Checkpoint | None = None,
    checkpoint: Callable[[Checkpoint], None] | None = None,
    checkpoint_seconds: float = 15.0,
) -> tuple[AttnOnlyTransformer, TrainingLog]:
    """Train a fresh model (AdamW) on ``threads`` threads; the same seed and thread count give
    the same weights, bit for bit, on the same machine and torch.

    resume:             go on from this checkpoint (taken by a run of the same settings)
    checkpoint:         called with a checkpoint after a step, at most every
                        ``checkpoint_seconds`` (0: after every step); the weights are the same
                        whether or when it is called
    """
    with _torch_threads(threads):
        return _train(model_config, train_config, seed, progress, resume, checkpoint, checkpoint_seconds)


def _train(
    model_config: ModelConfig,
    train_config: TrainConfig,
    seed: int,
    progress: Callable[[str], None],
    resume: Checkpoint | None,
    checkpoint: Callable[[Checkpoint], None] | None,
    checkpoint_seconds: float,
) -> tuple[AttnOnlyTransformer, TrainingLog]:
    data, batch_size, max_steps = train_config.data, train_config.batch_size, train_config.max_steps
    model = AttnOnlyTransformer(model_config, generator=torch.Generator().manual_seed(seed))
    data_gen = torch.Generator().manual_seed(seed + 1)
    eval_gen = torch.Generator().manual_seed(seed + 2)
    eval_tokens, eval_repeated = data.held_out().batch(train_config.eval_batch_size, eval_gen)
    eval_mask = predictable_repeat_mask(eval_repeated)
    if train_config.frozen_layer0:
        model.attention(0).requires_grad_(False)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=train_config.lr, weight_decay=train_config.weight_decay
    )
    log, first = TrainingLog(), 1
    if resume is not None:
        model.load_state_dict(resume.model)
        optimizer.load_state_dict({"state": resume.optimizer,
                                   "param_groups": optimizer.state_dict()["param_groups"]})
        data_gen.set_state(resume.data_rng)
        log, first = replace(resume.log, resumed_at=[*resume.log.resumed_at, resume.step]), resume.step + 1
        progress(f"resumed at step {resume.step}/{max_steps}")
    start = time.perf_counter() - log.seconds
    saved = time.perf_counter()
    for step in range(first, max_steps + 1):
        tokens, _ = data.batch(batch_size, data_gen)
        loss = language_model_losses(model.logits(tokens), tokens).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        log.steps = step
        if step % train_config.log_every == 0 or step == 1:
            log.loss_steps.append(step)
            log.loss.append(float(loss.detach()))
        if step % train_config.eval_every == 0:
            repeat_loss = _evaluate(model, eval_tokens, eval_mask, step, log)
            progress(f"step {step}/{max_steps}, loss {float(loss.detach()):.3f}, "
                     f"repeated tokens {repeat_loss:.3f}")
            if repeat_loss < train_config.target_repeat_loss:
                log.stopped_early = True
                break
        if checkpoint is not None and step < max_steps and time.perf_counter() - saved >= checkpoint_seconds:
            log.seconds = time.perf_counter() - start
            state = optimizer.state_dict()["state"]
            checkpoint(Checkpoint(step, model.state_dict(), state, data_gen.get_state(), log))
            saved = time.perf_counter()
    log.seconds = time.perf_counter() - start
    n_tokens = (log.steps - (first - 1)) * batch_size * data.n_ctx  # this run's steps only
    this_run = log.seconds - (resume.log.seconds if resume is not None else 0.0)
    log.tokens_per_second = n_tokens / this_run if this_run > 0 else 0.0
    model.eval()
    return model, log


def _evaluate(model: AttnOnlyTransformer, tokens: Tensor, mask: Tensor, step: int, log: TrainingLog) -> float:
    """Log the held-out loss at ``step``, over all tokens and over the predictable repeated
    ones (``mask``); return the latter (nan when there are none)."""
    with torch.no_grad():
        losses = language_model_losses(model.logits(tokens), tokens)
    repeat_loss = float(losses[mask].mean()) if mask.any() else math.nan
    log.eval_steps.append(step)
    log.eval_loss.append(float(losses.mean()))
    log.eval_repeat_loss.append(repeat_loss)
    return repeat_loss


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX flock; no lock where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def load_or_train(
    model_config: ModelConfig,
    train_config: TrainConfig,
    seed: int,
    cache_dir: Path,
    threads: int = 1,
    progress: Callable[[str], None] = lambda _m: None,
    checkpoint_seconds: float = 15.0,
) -> TrainedModel:
    """The trained model from the cache, or trained now (on ``threads`` threads) and saved
    there, resuming from the checkpoint an interrupted run left (``<key>.checkpoint``)."""
    key = cache_key(model_config, train_config, seed, threads)
    folder = cache_dir / "models"
    weights_path, log_path = folder / f"{key}.safetensors", folder / f"{key}.json"
    checkpoint_path = folder / f"{key}.checkpoint"
    with _locked(folder / f"{key}.lock"):
        sweep(folder)  # what a killed training was writing (a checkpoint, say) goes
        if weights_path.exists() or log_path.exists():
            try:
                return _cached(model_config, weights_path, log_path, key, progress)
            except (OSError, ValueError) as exc:  # a damaged cache heals: trained again, in place
                progress(f"training again: the cached model {weights_path.name} is damaged ({exc})")
        resume = None
        if checkpoint_path.exists():
            try:
                resume = Checkpoint.from_bytes(checkpoint_path.read_bytes(), key)
                _whole(resume, model_config)
            except (OSError, ValueError) as exc:
                resume = None
                progress(f"starting over: checkpoint {checkpoint_path.name} not used ({exc})")
        progress(f"training model {key}")
        model, log = train(model_config, train_config, seed, threads, progress, resume=resume,
                           checkpoint=lambda c: write_atomic(checkpoint_path, c.to_bytes(key)),
                           checkpoint_seconds=checkpoint_seconds)
        state = {name: t.detach().contiguous() for name, t in model.state_dict().items()}
        write_atomic(log_path, json.dumps(asdict(log)))
        write_atomic(weights_path, save_safetensors(state))
        checkpoint_path.unlink(missing_ok=True)
        return TrainedModel(model, log, key)


def _whole(checkpoint: Checkpoint, model_config: ModelConfig) -> None:
    """ValueError unless ``checkpoint`` holds all the model's weights and, for each parameter
    it names, the optimiser's whole state (AdamW's step and both moments)."""
    _fits(AttnOnlyTransformer(model_config), checkpoint.model)
    for index, state in checkpoint.optimizer.items():
        if set(state) != {"step", "exp_avg", "exp_avg_sq"}:
            raise ValueError(f"a checkpoint without the optimiser's state of parameter {index}")


def _cached(model_config: ModelConfig, weights_path: Path, log_path: Path, key: str,
            progress: Callable[[str], None]) -> TrainedModel:
    """The model saved in the cache; ValueError (or OSError) when its weights or its log are
    missing, cut short or not the model's: it is then trained again."""
    model = AttnOnlyTransformer(model_config)
    try:
        weights = load_safetensors(weights_path.read_bytes())
    except SafetensorError as exc:
        raise ValueError(f"unreadable weights: {exc}") from exc
    _fits(model, weights)
    model.eval()
    log = _log_from_json(log_path.read_text(encoding="utf-8"))
    log.from_cache = True
    progress(f"loaded model {key} from the cache")
    return TrainedModel(model, log, key)
