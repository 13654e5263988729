"""Training speed: the lab's whole training loop against TransformerLens's, on one configuration.

    python3 benchmarks/bench_train.py [--rounds 5] [--steps 150] [--threads 1]

The configuration is the lab's (``checks/train.py``): 2 attention-only layers, 4 heads of
d_head 16, d_model 64, vocabulary 64, no LayerNorm or biases, positions on queries and keys
only; batches of 64 sequences of 64 tokens from ``RepeatData``; AdamW, lr 1e-2, weight decay
0.01; on ``--threads`` threads (the shipped checks train on 1). Interleaved rounds, medians:

- lab loop: ``checks.train.train`` as the checks run it (a fresh batch each step, the loss
  logged every 10 steps, an evaluation on 256 sequences every 50);
- TL loop: TransformerLens's ``HookedTransformer`` (``attn_only=True``, no normalisation,
  shortformer positions: the same function) in its idiomatic loop, ``loss =
  model(tokens, return_type="loss")``, backward, ``torch.optim.AdamW`` step, with each batch
  from the same ``RepeatData`` generator (no evaluation: the TL side does less);
- TL train(): TransformerLens's own training function (``transformer_lens.train.train``: a
  ``DataLoader`` over a dataset of sequences, AdamW, no gradient clipping, progress bars off),
  given the same number of steps' worth of ``RepeatData`` sequences drawn beforehand (their
  drawing not timed: generous to it);
- each model's step alone (forward, backward, AdamW) on a fixed batch, to show where the
  difference lies;
- steps per second both by the wall clock and by the process's CPU time (on one thread, the
  work done, whatever else the machine runs: on a busy machine the wall clock mostly measures
  the neighbours); a loop is timed whole, building its model and optimiser included;
- GFLOP/s: the floating-point operations of a step counted analytically, every matmul of the
  forward pass (projections, attention scores, pattern times values, output, unembedding) as
  2·m·n·k with the attention's matmuls dense (the causal half a fused kernel skips counted
  too), and the backward pass as twice the forward (a gradient for each operand of each
  matmul); softmax, additions and the optimiser are not counted. Against it, this machine's
  matmul rate for the same shapes: the step's matmuls alone, forward and backward, timed in
  the same round.

TransformerLens is optional and never in the default or CI install:
``pip install -c constraints.txt -e ".[compare]"`` (TransformerLens 2.x: 3.0 dropped
HookedTransformer). Without it the lab's figures are printed alone.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TQDM_DISABLE", "1")  # TransformerLens's train() draws progress bars
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from checks.data import RepeatData  # noqa: E402
from checks.model import AttnOnlyTransformer, ModelConfig  # noqa: E402
from checks.train import TrainConfig, lab_configs, language_model_losses, train  # noqa: E402

INSTALL_HINT = 'pip install -c constraints.txt -e ".[compare]"   (TransformerLens 2.x)'


def step_flops(mc: ModelConfig, batch: int) -> int:
    """Floating-point operations of one training step (forward + backward), counted as above."""
    rows, inner = batch * mc.n_ctx, mc.n_heads * mc.d_head
    per_layer = (
        3 * 2 * rows * mc.d_model * inner  # x W_Q, x W_K, x W_V
        + 2 * 2 * batch * mc.n_heads * mc.n_ctx * mc.n_ctx * mc.d_head  # q k^T, pattern v
        + 2 * rows * inner * mc.d_model  # z W_O
    )
    forward = mc.n_layers * per_layer + 2 * rows * mc.d_model * mc.d_vocab  # + unembedding
    return 3 * forward


def matmul_step(mc: ModelConfig, batch: int) -> Callable[[], None]:
    """The matmuls of one training step at their shapes (forward, then each operand's gradient)."""
    rows, inner, bh, T, dh = batch * mc.n_ctx, mc.n_heads * mc.d_head, batch * mc.n_heads, mc.n_ctx, mc.d_head
    g = torch.Generator().manual_seed(0)
    x, gy = torch.randn(rows, mc.d_model, generator=g), torch.randn(rows, inner, generator=g)
    w = torch.randn(mc.d_model, inner, generator=g)
    wu, gu = torch.randn(mc.d_model, mc.d_vocab, generator=g), torch.randn(rows, mc.d_vocab, generator=g)
    q, k = torch.randn(bh, T, dh, generator=g), torch.randn(bh, T, dh, generator=g)
    p, gs = torch.randn(bh, T, T, generator=g), torch.randn(bh, T, T, generator=g)
    gz = torch.randn(bh, T, dh, generator=g)

    def run() -> None:
        for _ in range(mc.n_layers):
            for _ in range(4):  # Q, K, V, O: forward, input gradient, weight gradient
                x @ w
                gy @ w.T
                x.T @ gy
            torch.bmm(q, k.transpose(1, 2))  # scores: forward and the gradients of q and k
            torch.bmm(gs, k)
            torch.bmm(gs.transpose(1, 2), q)
            torch.bmm(p, q)  # pattern v: forward and the gradients of pattern and v
            torch.bmm(gz, k.transpose(1, 2))
            torch.bmm(p.transpose(1, 2), gz)
        x @ wu  # unembedding
        gu @ wu.T
        x.T @ gu

    return run


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Calls per second by the wall clock and by CPU time (after one warm-up call)."""
    fn()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        fn()
    return repeats / (time.perf_counter() - wall), repeats / (time.process_time() - cpu)


def clocked(loop: Callable[[], int]) -> tuple[float, float]:
    """Steps per second of ``loop`` (which returns its step count), wall clock and CPU time."""
    wall, cpu = time.perf_counter(), time.process_time()
    steps = loop()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def lab_loop(steps: int, threads: int) -> int:
    """The lab's whole training loop, as the checks run it."""
    mc, tc = lab_configs(max_steps=steps, target_repeat_loss=0.0)
    _, log = train(mc, tc, seed=0, threads=threads)
    return log.steps


def lab_step(mc: ModelConfig, tokens: torch.Tensor) -> Callable[[], None]:
    model = AttnOnlyTransformer(mc, generator=torch.Generator().manual_seed(0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)

    def step() -> None:
        loss = language_model_losses(model.logits(tokens), tokens).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()

    return step


def tl_model(mc: ModelConfig) -> Any:
    from transformer_lens import HookedTransformer, HookedTransformerConfig

    cfg = HookedTransformerConfig(
        n_layers=mc.n_layers, d_model=mc.d_model, n_ctx=mc.n_ctx, d_head=mc.d_head, n_heads=mc.n_heads,
        d_vocab=mc.d_vocab, attn_only=True, normalization_type=None, positional_embedding_type="shortformer",
        act_fn="relu", device="cpu", seed=0)
    return HookedTransformer(cfg)


def tl_step(mc: ModelConfig, tokens: torch.Tensor) -> Callable[[], None]:
    model = tl_model(mc)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)

    def step() -> None:
        loss = model(tokens, return_type="loss")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def tl_loop(mc: ModelConfig, tc: TrainConfig, steps: int) -> int:
    """TransformerLens's idiomatic training loop, with batches from the lab's generator."""
    model = tl_model(mc)
    optimizer = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay)
    data: RepeatData = tc.data
    generator = torch.Generator().manual_seed(1)
    losses = []
    for step in range(1, steps + 1):
        tokens, _ = data.batch(tc.batch_size, generator)
        loss = model(tokens, return_type="loss")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % tc.log_every == 0:
            losses.append(loss.item())
    return steps


def tl_train(mc: ModelConfig, tc: TrainConfig, steps: int) -> Callable[[], int]:
    """TransformerLens's own ``train`` on ``steps`` batches of the lab's sequences (drawn now)."""
    tokens, _ = tc.data.batch(steps * tc.batch_size, torch.Generator().manual_seed(1))
    dataset = [{"tokens": row} for row in tokens]

    def run() -> int:
        from transformer_lens.train import HookedTransformerTrainConfig
        from transformer_lens.train import train as tl_train_function

        config = HookedTransformerTrainConfig(
            num_epochs=1, batch_size=tc.batch_size, lr=tc.lr, weight_decay=tc.weight_decay, optimizer_name="AdamW",
            device="cpu", print_every=None, seed=0)
        tl_train_function(tl_model(mc), config, dataset)  # type: ignore[arg-type]
        return steps

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=150, help="training steps per loop and round")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    try:
        import transformer_lens  # noqa: F401
        have_tl = True
    except ImportError:
        have_tl = False
        print(f"TransformerLens is not installed, so the lab's figures are printed alone. To compare: {INSTALL_HINT}")

    mc, tc = lab_configs()
    flops = step_flops(mc, tc.batch_size)
    tokens, _ = tc.data.batch(tc.batch_size, torch.Generator().manual_seed(0))
    names = ["lab loop", "TL loop", "TL train()", "lab step", "TL step", "matmuls"] if have_tl else [
        "lab loop", "lab step", "matmuls"]
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}

    def note(name: str, rates: tuple[float, float]) -> None:
        wall[name].append(rates[0])
        cpu[name].append(rates[1])

    for round_ in range(1, args.rounds + 1):
        note("lab loop", clocked(lambda: lab_loop(args.steps, args.threads)))
        torch.set_num_threads(args.threads)
        if have_tl:
            note("TL loop", clocked(lambda: tl_loop(mc, tc, args.steps)))
            note("TL train()", clocked(tl_train(mc, tc, args.steps)))
            torch.set_num_threads(args.threads)
        note("lab step", timed(lab_step(mc, tokens), 30))
        if have_tl:
            note("TL step", timed(tl_step(mc, tokens), 30))
        note("matmuls", timed(matmul_step(mc, tc.batch_size), 30))
        print(f"round {round_} (steps/s, wall | cpu): "
              + ", ".join(f"{k} {wall[k][-1]:.1f} | {cpu[k][-1]:.1f}" for k in names), flush=True)

    print(f"\n{args.rounds} rounds of {args.steps} steps a loop, medians; {args.threads} thread(s); "
          f"torch {torch.__version__}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"one step: {flops / 1e9:.3f} GFLOP (forward + backward, counted analytically)")
    print(f"  {'':10s} {'wall clock':>25s}   {'CPU time':>25s}")
    for name in names:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"  {name:10s} {w:6.1f} steps/s {w * flops / 1e9:6.1f} GFLOP/s   {c:6.1f} steps/s {c * flops / 1e9:6.1f} GFLOP/s")
    print("  (matmuls: the step's matmuls alone at their shapes: this machine's rate for them)")
    for label, rates in (("wall clock", wall), ("CPU time", cpu)):
        m = {k: statistics.median(v) for k, v in rates.items()}
        line = f"{label}: the lab loop reaches {m['lab loop'] / m['matmuls']:.0%} of the matmul rate"
        if have_tl:
            per_round = [a / b for a, b in zip(rates["lab loop"], rates["TL loop"], strict=True)]
            line += (f"; lab loop / TL loop {statistics.median(per_round):.2f}x (median of rounds: "
                     f"{', '.join(f'{r:.2f}' for r in per_round)}); lab loop / TL train() "
                     f"{m['lab loop'] / m['TL train()']:.2f}x; lab step / TL step {m['lab step'] / m['TL step']:.2f}x")
        print(line)
    if have_tl:
        print(f"TransformerLens {_version('transformer_lens')}")
    guards(cpu, flops, have_tl)


def guards(cpu: dict[str, list[float]], flops: int, have_tl: bool) -> None:
    """The table the other benchmarks print, by CPU time: the lab's loop against its floor (this
    machine's rate for the step's matmuls alone) and against TransformerLens's loop (the aim:
    at least 1.5x)."""
    m = {name: statistics.median(values) for name, values in cpu.items()}
    print("\n| guard | figure | floor | ratio | limit | ok? |\n|---|---|---|---|---|---|")
    print(f"| lab training loop, CPU time | {m['lab loop']:.1f} steps/s ({m['lab loop'] * flops / 1e9:.1f} GFLOP/s) | "
          f"{m['matmuls']:.1f} steps/s (the matmuls alone) | {m['lab loop'] / m['matmuls']:.2f}x | - | - |")
    if have_tl:
        ratio = statistics.median(a / b for a, b in zip(cpu["lab loop"], cpu["TL loop"], strict=True))
        print(f"| lab loop against TransformerLens's loop, CPU time | {m['lab loop']:.1f} steps/s | "
              f"{m['TL loop']:.1f} steps/s | {ratio:.2f}x | >= 1.5x | {'ok' if ratio >= 1.5 else 'NOT MET'} |")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
