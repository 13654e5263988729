"""Benchmark: how long `recordtool validate` takes, and its peak memory, as the record grows.

    python benchmarks/bench_validate.py [--sizes 1000,10000,100000] [--repeat 3]

Each measurement runs the real command in a fresh process (imports included) on a
synthetic record (benchmarks/synthetic.py, generated once into benchmarks/out/). Prints the
median wall time, time per entry (flat when growth is linear) and peak resident memory
(of the largest of the command's processes: on a large record a forked second process reads
half of the files, early, while the first holds little). Also times `recordtool --help` and
`validate` on the shipped record.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import generate_record  # noqa: E402


def measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of ``python -m recordtool ARGS``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "recordtool", *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def median_of(args: list[str], cwd: Path, repeat: int) -> tuple[float, float]:
    runs = [measure(args, cwd) for _ in range(repeat)]
    if any(code not in (0, 1) for _w, _m, code in runs):
        raise SystemExit(f"recordtool {' '.join(args)} failed in {cwd}")
    return statistics.median(w for w, _m, _c in runs), max(m for _w, m, _c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = HERE.parent

    wall, _ = median_of(["--help"], root, args.repeat)
    print(f"recordtool --help                    {wall * 1000:7.0f} ms")
    wall, mem = median_of(["validate"], root, args.repeat)
    print(f"recordtool validate (shipped record) {wall * 1000:7.0f} ms  {mem:6.0f} MB peak")
    print()
    print(f"{'entries':>8} {'median s':>9} {'us/entry':>9} {'peak MB':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        folder = HERE / "out" / f"record-{n}"
        if not (folder / "pyproject.toml").exists():
            generate_record(folder, n, seed=0)
        wall, mem = median_of(["validate"], folder, args.repeat if n < 100_000 else 1)
        print(f"{n:>8} {wall:>9.2f} {wall / n * 1e6:>9.0f} {mem:>8.0f}")


if __name__ == "__main__":
    main()
