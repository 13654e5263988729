"""Is the lab's training deterministic? Trains one seed in separate processes and compares.

    PYTHONPATH=. python3 benchmarks/lab_determinism.py [--steps 300] [--seed 0]

Three trainings of the lab's two-layer model, each in a fresh Python process: two on 1 thread
and one on 2 threads. Prints the largest weight difference between the two 1-thread runs
(expected: exactly 0, bit for bit) and between 1 and 2 threads (allowed to differ: float sums
are grouped differently, and training amplifies it; that is why a check's thread count is
fixed and part of the model cache key). Also checks that a batch drawn twice from one seed is
identical and that drawing it leaves torch's global random state alone.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load as load_safetensors

CHILD = """
import sys, torch
from safetensors.torch import save
from checks.train import lab_configs, train
steps, seed, threads = map(int, sys.argv[1:4])
mc, tc = lab_configs(max_steps=steps, target_repeat_loss=0.0)
model, log = train(mc, tc, seed, threads)
sys.stdout.buffer.write(save({k: v.contiguous() for k, v in model.state_dict().items()}))
"""


def trained_weights(steps: int, seed: int, threads: int) -> tuple[dict[str, torch.Tensor], float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(steps), str(seed), str(threads)],
                          capture_output=True, check=True, cwd=Path(__file__).resolve().parents[1])
    return load_safetensors(io.BytesIO(done.stdout).read()), time.perf_counter() - start


def max_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    return max(float((a[k] - b[k]).abs().max()) for k in a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from checks.data import RepeatData

    data = RepeatData()
    state = torch.random.get_rng_state()
    first = data.batch(64, torch.Generator().manual_seed(args.seed))
    second = data.batch(64, torch.Generator().manual_seed(args.seed))
    same_batch = all(torch.equal(x, y) for x, y in zip(first, second, strict=True))
    global_untouched = torch.equal(state, torch.random.get_rng_state())
    print(f"batches from one seed identical: {same_batch}; global RNG untouched: {global_untouched}")

    one_a, t1 = trained_weights(args.steps, args.seed, 1)
    one_b, t2 = trained_weights(args.steps, args.seed, 1)
    two, t3 = trained_weights(args.steps, args.seed, 2)
    print(f"{args.steps} steps, seed {args.seed}; process times {t1:.1f} s, {t2:.1f} s (1 thread), "
          f"{t3:.1f} s (2 threads)")
    same = all(torch.equal(one_a[k], one_b[k]) for k in one_a)
    print(f"1 thread vs 1 thread, separate processes: bit-identical {same}, "
          f"max |difference| {max_difference(one_a, one_b):.3g}")
    print(f"1 thread vs 2 threads: bit-identical {all(torch.equal(one_a[k], two[k]) for k in one_a)}, "
          f"max |difference| {max_difference(one_a, two):.3g}")
    if not (same and same_batch and global_untouched):
        sys.exit(1)


if __name__ == "__main__":
    main()
