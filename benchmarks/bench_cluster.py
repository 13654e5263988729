"""Benchmark of `recordtool verify --scheduler`: a 2-worker local Dask cluster against the local runner.

    python3 benchmarks/bench_cluster.py [--runs 200] [--heavy 20] [--repeat 3] [--no-shipped | --only-shipped]

Prints (1) for RUNS trivial check runs (a no-op check that imports nothing, in 20 claims under
RUNS/20 seeds) the wall time per run of `recordtool verify --force`: with the local runner at
-j 2 (forked from its warm server, and fresh interpreters), and on a cluster of two worker
processes started beforehand (`--scheduler tcp://...`, so the cluster's start is not counted;
it is printed on its own), and with `--scheduler local:2` (the cluster started and stopped by
verify, all counted); medians of REPEAT; (2) the same for HEAVY runs of a no-op check whose
module imports torch, as the shipped checks do (a worker runs each in a fresh interpreter,
which imports torch again), once; (3) once, the shipped record's cold `verify --force` (a copy of
record/ and checks/ with an empty model cache, so every model is trained): -j 2 here against
`--scheduler local:2`, with the speed-up, and whether every verdict is the same. The machine's
load average is printed with each part: the figures mean little on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from verify_fakes import check, claim_yaml, make_project

REPO = Path(__file__).resolve().parents[1]
HEAVY = "import torch\n\n\ndef noop(ctx):\n    return {'err': 0.0}\n"
CLAIMS = 20
CLUSTER = """
import sys

import distributed

if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as local:
        print(local.scheduler_address, flush=True)
        sys.stdin.read()
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def verify(root: Path, *args: str, env: dict[str, str] | None = None) -> float:
    """Seconds of one `recordtool verify --force ARGS` (a process of its own)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "recordtool", "verify", "--force", "--root", str(root), *args],
                   capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    return time.perf_counter() - start


def per_run(root: Path, runs: int, seeds: int, repeat: int, address: str) -> None:
    """Wall time per run of each way to run them, less a verify that runs nothing."""
    fork = {"RECORDTOOL_FORK_SERVER": "1"}
    fresh = {"RECORDTOOL_FORK_SERVER": "0"}
    cases = [
        ("local runner -j 2, forked", ["-j", "2"], fork),
        ("local runner -j 2, fresh interpreters", ["-j", "2"], fresh),
        ("2-worker cluster, already started", ["--scheduler", address], {}),
        ("--scheduler local:2 (start and stop counted)", ["--scheduler", "local:2"], {}),
    ]
    nothing = statistics.median(verify(root, "--seeds", str(seeds), "-k", "no-such-claim") for _ in range(repeat))
    print(f"  (a verify that selects nothing: {nothing:.2f} s, start-up and reading the record)")
    base = None
    for name, args, env in cases:
        wall = statistics.median(verify(root, "--seeds", str(seeds), *args, env=env) for _ in range(repeat))
        ms = (wall - nothing) / runs * 1000
        base = base if base is not None else ms
        print(f"  {name:<46} {wall:6.2f} s, {ms:6.1f} ms per run ({ms / base:4.1f}x the forked local runner)")


def durations(verdict: dict[str, Any]) -> str:
    runs = [r["duration_s"] for c in verdict["checks"] for r in c["runs"] + [r for k in c["controls"] for r in k["runs"]]]
    return " ".join(f"{d:.1f}" for d in runs)


def shipped(tmp: Path) -> None:
    roots = {}
    for name in ("local", "cluster"):
        root = tmp / f"shipped-{name}"
        root.mkdir()
        shutil.copy(REPO / "pyproject.toml", root)
        for folder in ("record", "checks"):
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "pages"))
        roots[name] = root
    print(f"shipped record, cold `recordtool verify --force` (every model trained); {load()}")
    local = verify(roots["local"], "-j", "2")
    print(f"  -j 2 here:                 {local:6.1f} s; {load()}")
    cluster = verify(roots["cluster"], "--scheduler", "local:2")
    print(f"  --scheduler local:2:       {cluster:6.1f} s; {load()}")
    print(f"  speed-up on the cluster:   {local / cluster:.2f}x")
    same = True
    for path in sorted((roots["local"] / "record" / "verdicts").glob("*.json")):
        mine = json.loads(path.read_text())
        theirs = json.loads((roots["cluster"] / "record" / "verdicts" / path.name).read_text())
        outcomes = [(c["name"], c["outcome"]) for c in mine["checks"]]
        other = [(c["name"], c["outcome"]) for c in theirs["checks"]]
        same &= (mine["outcome"], outcomes) == (theirs["outcome"], other)
        print(f"  {path.stem}: here {mine['outcome']} {outcomes}; cluster {theirs['outcome']} {other} "
              f"(device {theirs['device']!r})")
        print(f"    seconds per run (the check's own, without start-up), here / on the cluster: "
              f"{durations(mine)} / {durations(theirs)}")
    print(f"  same verdicts: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="trivial check runs (a multiple of 20)")
    parser.add_argument("--heavy", type=int, default=20, help="runs of a check whose module imports torch")
    parser.add_argument("--repeat", type=int, default=3, help="medians of this many")
    parser.add_argument("--no-shipped", action="store_true", help="skip the shipped record's cold verify")
    parser.add_argument("--only-shipped", action="store_true", help="only the shipped record's cold verify")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as name:
        tmp = Path(name)
        if args.only_shipped:
            shipped(tmp)
            return
        start = time.perf_counter()
        (tmp / "cluster.py").write_text(CLUSTER, encoding="utf-8")
        cluster = subprocess.Popen([sys.executable, str(tmp / "cluster.py")], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        assert cluster.stdout is not None and cluster.stdin is not None
        address = cluster.stdout.readline().strip()
        print(f"a 2-worker local cluster started in {time.perf_counter() - start:.1f} s at {address}; {load()}")
        try:
            for label, runs, module, repeat in (("trivial", args.runs, "", args.repeat),
                                                ("torch-importing", args.heavy, "heavy", 1)):
                seeds = max(1, runs // CLAIMS)
                root = make_project(tmp / label, {
                    f"THEORY-{i}": claim_yaml(f"THEORY-{i}", check("noop", "noop").replace(
                        "checks.fake", f"checks.{module}" if module else "checks.fake"))
                    for i in range(1, CLAIMS + 1)})
                (root / "checks" / "heavy.py").write_text(HEAVY, encoding="utf-8")
                print(f"{CLAIMS * seeds} {label} check runs ({CLAIMS} claims x {seeds} seeds), median of "
                      f"{repeat}; {load()}")
                per_run(root, CLAIMS * seeds, seeds, repeat, address)
        finally:
            cluster.stdin.close()
            cluster.wait(timeout=60)
        if not args.no_shipped:
            shipped(tmp)


if __name__ == "__main__":
    main()
