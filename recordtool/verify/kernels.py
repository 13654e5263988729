"""The CPU kernels a run's numbers came from, named and probed.

A trained model's numbers move a little from one CPU to another, as kernels group float sums
differently (docs/verdicts.md, "Numbers across machines"). So a verdict's device names the
kernels, with a probe of a few operations: ``get_cpu_capability()`` does not say which paths
MKL takes. recordtool never imports torch: the caller passes it.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import math
import os
import platform
from typing import Any

# Settings that send this machine's libraries down another CPU's code paths; a run made
# under one of them says so.
SETTINGS = ("MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "DNNL_MAX_CPU_ISA")


def describe(torch: Any, known: dict[str, str] | None = None) -> str:
    """``Intel(R) Xeon(R) Processor, AVX512, kernels 52b68cb2``: the CPU, torch's kernel
    level, the probe, and any of ``SETTINGS`` that is set. ``known``: the descriptions earlier
    runs made, by ``machine_key`` (the probe costs more than the rest of a short run)."""
    known = {} if known is None else known
    info = _cpuinfo()
    key = machine_key(torch, info)
    if key not in known:  # the CPU's model name (Linux), else what ``platform`` knows
        name = info.get("model name") or info.get("Model") or platform.processor() or platform.machine() or "unknown CPU"
        parts = [name, str(torch.backends.cpu.get_cpu_capability()), f"kernels {probe(torch)}"]
        known[key] = ", ".join(parts + _settings())
    return known[key]


def machine_key(torch: Any, info: dict[str, str]) -> str:
    """What a description depends on, hashed, without asking torch's kernels: the CPU and its
    flags (``info``, from /proc/cpuinfo), torch's build, ``ATEN_CPU_CAPABILITY`` and ``SETTINGS``."""
    parts = [info.get("model name", ""), info.get("flags", ""), torch.__version__, str(torch.__file__),
             os.environ.get("ATEN_CPU_CAPABILITY", ""), *_settings()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _settings() -> list[str]:
    return [f"{name}={os.environ[name]}" for name in SETTINGS if os.environ.get(name)]


def _cpuinfo() -> dict[str, str]:
    """The first value of each key in /proc/cpuinfo, spaces made single (empty where none)."""
    info: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
        for line in cpuinfo:
            key, _, value = line.partition(":")
            if value.strip():
                info.setdefault(key.strip(), " ".join(value.split()))
    return info


def probe(torch: Any) -> str:
    """Eight hex digits of a hash of float32 and float64 results (matrix products, softmax,
    layer norm, exp, sums) on one thread: equal on two machines when their kernels group these
    sums alike."""

    def same_everywhere(*shape: int, dtype: Any = torch.float32) -> Any:
        # float64 products and fractional parts are correctly rounded: the same bits on any CPU
        values = torch.frac(torch.arange(math.prod(shape), dtype=torch.float64) * 0.6180339887498949) - 0.5
        return values.to(dtype).reshape(shape)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, b = same_everywhere(4096, 64), same_everywhere(64, 64)
        c = same_everywhere(64, 64, dtype=torch.float64)
        outputs = [a @ b, a.T @ a, torch.bmm(same_everywhere(64, 64, 16), same_everywhere(64, 16, 64)),
                   torch.softmax(a, -1), torch.nn.functional.layer_norm(a, (64,)), a.exp().sum(0), c @ c]
    finally:
        torch.set_num_threads(threads)
    digest = hashlib.sha256()
    for tensor in outputs:
        tensor = tensor.contiguous()
        digest.update(ctypes.string_at(tensor.data_ptr(), tensor.numel() * tensor.element_size()))
    return digest.hexdigest()[:8]
