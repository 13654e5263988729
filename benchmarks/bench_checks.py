"""Timings of the record's checks: every check and control of THEORY-1342, THEORY-988 and
THEORY-977 on each of its seeds, cold (an empty temporary model cache, so training included)
and cached (a second pass over the same cache), plus the training throughput.

Runs in one process, sequentially, each run on its check's own thread count (``threads:``,
as verify runs it; the runner's child processes add their own start-up, about the cost of
``import torch``, which is printed too). The cold total is what a cold ``verify -j 1`` costs;
``-j N`` divides it by up to N.

    python3 benchmarks/bench_checks.py
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.train import lab_configs, train  # noqa: E402
from recordtool.record.schema import CheckSpec  # noqa: E402
from recordtool.verify.context import CheckContext  # noqa: E402

CLAIMS = ("THEORY-1342", "THEORY-988", "THEORY-977")


def runs() -> list[tuple[str, Callable[..., Any], dict[str, Any], int, int]]:
    """(label, function, params, seed, threads) for every check and control on each of its
    seeds, in record order."""
    out = []
    for claim in CLAIMS:
        entry = yaml.safe_load((ROOT / "record" / "theory" / f"{claim}.yaml").read_text())
        for raw in entry.get("checks", []):
            check = CheckSpec.model_validate(raw)  # as recordtool reads it: control or controls
            fn = getattr(importlib.import_module(check.module), check.function)
            for seed in range(check.seeds):
                out.append((f"{claim}/{check.name} seed {seed}", fn, check.params, seed, check.threads))
                for control in check.all_controls:
                    out.append((f"{claim}/{check.name} [{control.name}] seed {seed}", fn,
                                {**check.params, **control.params}, seed, check.threads))
    return out


def timed_pass(cache: Path, label: str) -> float:
    total = 0.0
    for name, fn, params, seed, threads in runs():
        ctx = CheckContext(seed=seed, cache_dir=cache, figures_dir=cache / "figures", threads=threads,
                           progress=lambda _m: None)
        start = time.perf_counter()
        fn(ctx, **params)
        seconds = time.perf_counter() - start
        total += seconds
        print(f"  {label:6s} {seconds:7.2f} s  {name}", flush=True)
    print(f"{label} total: {total:.1f} s", flush=True)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1, help="threads for the throughput figure")
    parser.add_argument("--throughput-steps", type=int, default=100)
    args = parser.parse_args()

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    print(f"process start-up with `import torch`: {time.perf_counter() - start:.2f} s")

    model_config, train_config = lab_configs(max_steps=args.throughput_steps, eval_every=10**9)
    _, log = train(model_config, train_config, seed=0, threads=args.threads)
    print(f"training throughput ({args.threads} threads): {log.tokens_per_second:,.0f} tokens/s "
          f"({log.seconds / log.steps * 1e3:.1f} ms/step, batch {train_config.batch_size} x "
          f"{train_config.data.n_ctx})")

    with tempfile.TemporaryDirectory() as tmp:
        cold = timed_pass(Path(tmp), "cold")
        cached = timed_pass(Path(tmp), "cached")
    print(f"SUMMARY cold {cold:.1f} s (target < 600: a cold verify -j 2 under 5 min), cached {cached:.1f} s, "
          f"throughput {log.tokens_per_second:,.0f} tokens/s")


if __name__ == "__main__":
    main()
