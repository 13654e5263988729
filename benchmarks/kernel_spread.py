"""How much do the shipped record's numbers depend on the machine's float kernels?

    python3 benchmarks/kernel_spread.py [-j 2] [--configs native,avx2,avx2-mkl,default,compatible] [--keep DIR]

A trained model's numbers are the same bit for bit on one machine (fixed seeds, fixed threads:
see lab_determinism.py), but not from one CPU to another: ATen's vectorised kernels (softmax,
layer norm, reductions) and MKL's matrix products take the widest instructions the CPU has,
which group float sums differently, and training amplifies the difference. This script verifies
the shipped record from scratch once per kernel set, each in its own copy of the project (no
verdicts, no model cache), with environment variables that make this machine's libraries take
the code paths another machine would take:

    native       nothing set: what this CPU picks
    avx2         ATEN_CPU_CAPABILITY=avx2: ATen's AVX2 kernels (a machine without AVX-512)
    avx2-mkl     also MKL_CBWR=AVX2, MKL_ENABLE_INSTRUCTIONS=AVX2, DNNL_MAX_CPU_ISA=AVX2
    default      ATEN_CPU_CAPABILITY=default: ATen's scalar kernels
    compatible   also MKL_CBWR=COMPATIBLE, DNNL_MAX_CPU_ISA=SSE41 (an old or unknown x86 CPU)

Then prints, for each check, the largest difference of any metric of any seed (main runs and
controls) between any two kernel sets, absolute and relative, against the check's declared
`tolerance:`, and whether any clause or expectation came out differently. A check whose spread
is beyond its tolerance cannot be reproduced on another machine within it: its tolerance is too
tight for a trained model (docs/verdicts.md, "Numbers across machines"). Also prints each kernel
set's wall time and the device each verdict names. With --keep, each set's verdicts are kept
in DIR/<set>/record/verdicts, and a later run with the same DIR reads them instead of verifying
again (to print the figures again, or compare against one more set).

On x86 CPUs the sets take the code paths of other x86 CPUs; an ARM CPU or a GPU differs more
and is not emulated. Each set verifies from scratch (about 2 to 8 minutes each on two cores).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CONFIGS: dict[str, dict[str, str]] = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "avx2-mkl": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                 "DNNL_MAX_CPU_ISA": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default"},
    "compatible": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "DNNL_MAX_CPU_ISA": "SSE41"},
}
KERNEL_VARIABLES = sorted({name for env in CONFIGS.values() for name in env})


def copy_project(target: Path) -> Path:
    """This project without its verdicts, pages, caches and git (as the shipped-record test does)."""
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(
        ".venv", ".git", "pages", "verdicts", "__pycache__", ".recordtool-cache*", "*.egg-info", "out"))
    return target


def verify(root: Path, jobs: int, env: dict[str, str]) -> float:
    environment = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES} | env
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "recordtool", "verify", "--root", str(root), "-j", str(jobs)],
                          env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"verify failed under {env}:\n{done.stdout}{done.stderr}")
    return elapsed


def numbers(value: Any, where: str) -> dict[str, float]:
    """A metric's value flattened to numbers (lists and summaries element by element)."""
    if isinstance(value, bool):
        return {where: float(value)}
    if isinstance(value, (int, float)):
        return {where: float(value)}
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return {where: float(value)}
    out: dict[str, float] = {}
    if isinstance(value, list):
        for i, item in enumerate(value):
            out |= numbers(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in sorted(value.items()):
            out |= numbers(item, f"{where}.{key}")
    return out


def read_verdicts(root: Path) -> dict[str, dict[str, Any]]:
    folder = root / "record" / "verdicts"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def measured(verdict: dict[str, Any]) -> dict[tuple[str, str, int, str], float]:
    """(check, variant, seed, metric) -> value, for the main runs and every control's."""
    out: dict[tuple[str, str, int, str], float] = {}
    for check in verdict["checks"]:
        variants = [("", check["runs"])] + [(c["name"], c["runs"]) for c in check["controls"]]
        for variant, runs in variants:
            for run in runs:
                for metric, value in (run.get("metrics") or {}).items():
                    for name, number in numbers(value, metric).items():
                        out[(check["name"], variant, run["seed"], name)] = number
    return out


def judged(verdict: dict[str, Any]) -> dict[str, str]:
    """Every clause's and expectation's state, by a readable key."""
    out = {f"clause {c['clause']}": c["state"] for c in verdict["clauses"]}
    for check in verdict["checks"]:
        out[f"check {check['name']}"] = check["outcome"]
        for e in check["expectations"]:
            out[f"{check['name']}: {e['metric']}"] = e["state"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--configs", default=",".join(CONFIGS), help="kernel sets, comma-separated")
    parser.add_argument("--keep", type=Path, help="keep each kernel set's verdicts in this folder "
                        "(one subfolder per set); given again, reads them instead of verifying")
    args = parser.parse_args()
    names = [n for n in args.configs.split(",") if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown or len(names) < 2:
        sys.exit(f"--configs: two or more of {', '.join(CONFIGS)}")

    from recordtool.record.project import open_project
    from recordtool.verify.judge import close

    claims = open_project(root=REPO).record.entries
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="kernel-spread-") as tmp:
        for name in names:
            kept = args.keep / name / "record" / "verdicts" if args.keep else None
            if kept is not None and kept.is_dir():
                results[name] = read_verdicts(args.keep / name)
                timing = "read back"
            else:
                root = copy_project(Path(tmp) / name)
                timing = f"{verify(root, args.jobs, CONFIGS[name]):6.1f} s"
                results[name] = read_verdicts(root)
                if kept is not None:
                    shutil.copytree(root / "record" / "verdicts", kept)
            devices = sorted({v["device"] for v in results[name].values()})
            print(f"{name:<11} verify -j {args.jobs}: {timing}   device: {'; '.join(devices)}", flush=True)

    print()
    base = results[names[0]]
    for claim_id in sorted(base):
        spec = claims[claim_id]
        per_config = {n: measured(results[n][claim_id]) for n in names if claim_id in results[n]}
        for check in spec.checks:  # type: ignore[attr-defined]
            keys = sorted({k for m in per_config.values() for k in m if k[0] == check.name})
            worst_abs = worst_rel = 0.0
            worst_key: tuple[str, str, int, str] | None = None
            beyond = 0
            for key in keys:
                values = [m[key] for m in per_config.values() if key in m]
                if any(math.isnan(v) or math.isinf(v) for v in values):
                    continue
                spread = max(values) - min(values)
                scale = max(abs(v) for v in values)
                rel = spread / scale if scale else 0.0
                if not close(max(values), min(values), check.tolerance):
                    beyond += 1
                if rel > worst_rel:
                    worst_rel, worst_key = rel, key
                worst_abs = max(worst_abs, spread)
            where = ""
            if worst_key is not None:
                variant = worst_key[1] or "main"
                where = f" (largest relative: {worst_key[3]}, {variant} run, seed {worst_key[2]})"
            tolerance = f"rel {check.tolerance.rel:g}, abs {check.tolerance.abs:g}"
            print(f"{claim_id} {check.name}: {len(keys)} numbers, largest spread abs {worst_abs:.3g}, "
                  f"rel {worst_rel:.3g}{where}; tolerance {tolerance}: {beyond} beyond it")
            for metric, field in check.expect.items():  # the judged numbers, main runs: how near a threshold
                values_by_seed = [[m[k] for m in per_config.values() if k in m] for k in keys
                                  if k[1] == "" and k[3] == metric]
                if not values_by_seed or any(math.isnan(v) for vs in values_by_seed for v in vs):
                    continue
                spread = rel = 0.0
                for vs in values_by_seed:
                    spread = max(spread, max(vs) - min(vs))
                    scale = max(abs(v) for v in vs)
                    rel = max(rel, (max(vs) - min(vs)) / scale if scale else 0.0)
                low = min(min(vs) for vs in values_by_seed)
                high = max(max(vs) for vs in values_by_seed)
                print(f"    judged {metric} {field.is_}: measured {low:.6g} .. {high:.6g} over seeds and kernel "
                      f"sets; one seed's spread abs {spread:.3g}, rel {rel:.3g}")
        states = {n: judged(results[n][claim_id]) for n in per_config}
        differing = sorted(k for k in states[names[0]] if len({s.get(k) for s in states.values()}) > 1)
        for what in differing:
            print(f"  differs across kernel sets: {what}: " + ", ".join(f"{n} {s.get(what)}" for n, s in states.items()))
        if not differing:
            print(f"  {claim_id}: every clause, check and expectation the same under every kernel set")


if __name__ == "__main__":
    main()
