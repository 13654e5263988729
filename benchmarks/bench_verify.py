"""Benchmark of `recordtool verify`: the fixed cost per check and the speed-up of -j 2.

    .venv/bin/python benchmarks/bench_verify.py [--noop 8] [--spin 4] [--seconds 1.0]

Prints (1) the fixed overhead per check run: the median wall time of a no-op check, which is
process start, imports and the result's round trip; (2) the wall time of verifying a set of
CPU-bound fake checks with -j 1 and with -j 2, and their ratio; (3) the time of a
`recordtool verify` with every verdict fresh (nothing runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from verify_fakes import check, claim_yaml, make_project

from recordtool.progress import PlainDisplay
from recordtool.project import open_project
from recordtool.verify import Options, verify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noop", type=int, default=8, help="no-op checks for the overhead")
    parser.add_argument("--spin", type=int, default=4, help="CPU-bound checks for -j 1 vs -j 2")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU time of each spinning check")
    args = parser.parse_args()
    quiet = PlainDisplay(open(os.devnull, "w"))  # noqa: SIM115
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp:
        root = make_project(Path(tmp) / "noop", {
            f"THEORY-{i}": claim_yaml(f"THEORY-{i}", check("noop", "noop")) for i in range(1, args.noop + 1)})
        report = verify(open_project(root=root), Options(jobs=1), quiet)
        walls = []
        for i in range(1, args.noop + 1):
            t = time.perf_counter()
            verify(open_project(root=root), Options(ids=[f"THEORY-{i}"], force=True), quiet)
            walls.append(time.perf_counter() - t)
        inside = statistics.median(
            c.duration_s for r in report.results if r.status.verdict for c in r.status.verdict.checks)
        print(f"fixed overhead per check: median {statistics.median(walls) * 1000:.0f} ms wall per no-op check "
              f"(open project + process start + imports + judging; the check itself {inside * 1000:.2f} ms), "
              f"n={args.noop}")

        spin = make_project(Path(tmp) / "spin", {
            f"THEORY-{i}": claim_yaml(f"THEORY-{i}", check("spin", "spin", more=f"params: {{seconds: {args.seconds}}}"))
            for i in range(1, args.spin + 1)})
        times = {}
        for jobs in (1, 2):
            t = time.perf_counter()
            verify(open_project(root=spin), Options(jobs=jobs, force=True), quiet)
            times[jobs] = time.perf_counter() - t
        print(f"{args.spin} CPU-bound checks of {args.seconds:g} s: -j 1 {times[1]:.2f} s, -j 2 {times[2]:.2f} s, "
              f"speed-up {times[1] / times[2]:.2f}x")

        fresh = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "recordtool", "verify", "--root", str(spin)], check=True,
                           capture_output=True)
            fresh.append(time.perf_counter() - t)
        print(f"`recordtool verify` with {args.spin} fresh verdicts: median {statistics.median(fresh):.2f} s "
              "(process start included)")


if __name__ == "__main__":
    main()
