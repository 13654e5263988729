"""Benchmark: how long `recordtool validate` takes, and its peak memory, as the record grows.

    python benchmarks/bench_validate.py [--sizes 1000,10000,100000] [--jobs 1,2] [--repeat 3]

Each measurement runs the real command (``recordtool validate -j J`` for each J of
``--jobs``) in a fresh process (imports included) on a synthetic record
(benchmarks/synthetic.py, generated once into benchmarks/out/). Prints the median wall time,
time per entry (flat when growth is linear), the peak resident memory of the largest of the
command's processes, and the peak of all of them together, the workers included
(proportional set size summed, sampled every 0.1 s: pages a worker shares with its parent
count once). Also times `recordtool --help` and `validate` on the shipped record.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import Run, run  # noqa: E402
from synthetic import generate_record  # noqa: E402


def median_of(args: list[str], cwd: Path, repeat: int) -> tuple[float, float, float, float]:
    """(median wall seconds, median CPU seconds of all processes, peak MiB of the largest
    process, peak MiB of all processes)."""
    runs: list[Run] = [run([sys.executable, "-m", "recordtool", *args], cwd) for _ in range(repeat)]
    if any(r.code not in (0, 1) for r in runs):
        raise SystemExit(f"recordtool {' '.join(args)} failed in {cwd}: {runs[0].stderr[-500:]}")
    return (statistics.median(r.seconds for r in runs), statistics.median(r.cpu for r in runs),
            max(r.peak_mib for r in runs), max(r.all_mib for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--jobs", default="1,2", help="comma-separated values of validate's -j (e.g. 1,2,4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (one at 100,000 entries)")
    parser.add_argument("--plain", action="store_true", help="synthetic bodies of plain sentences instead of "
                        "research Markdown (synthetic.py)")
    args = parser.parse_args()
    root = HERE.parent
    jobs = [int(j) for j in args.jobs.split(",")]

    wall, _, _, _ = median_of(["--help"], root, args.repeat)
    print(f"recordtool --help                    {wall * 1000:7.0f} ms")
    wall, _, mem, _ = median_of(["validate"], root, args.repeat)
    print(f"recordtool validate (shipped record) {wall * 1000:7.0f} ms  {mem:6.0f} MiB peak")
    print(f"\n{os.cpu_count()} cores here, {len(os.sched_getaffinity(0))} usable")
    print("(cpu s: user + system time of all its processes; peak MiB: the largest process; all MiB: every "
          "process of the command together, shared pages once; load: the 1-minute load average after)")
    print(f"synthetic records, bodies of {'plain sentences (--plain)' if args.plain else 'research Markdown'}")
    print(f"{'entries':>8} {'-j':>3} {'median s':>9} {'us/entry':>9} {'cpu s':>7} {'peak MiB':>9} {'all MiB':>8}  load")
    for n in (int(s) for s in args.sizes.split(",")):
        folder = HERE / "out" / f"record-{n}-{'plain' if args.plain else 'markdown'}"
        if not (folder / "pyproject.toml").exists():
            generate_record(folder, n, seed=0, plain=args.plain)
        for j in jobs:
            wall, cpu, mem, total = median_of(["validate", "-j", str(j)], folder, args.repeat if n < 100_000 else 1)
            print(f"{n:>8} {j:>3} {wall:>9.2f} {wall / n * 1e6:>9.0f} {cpu:>7.2f} {mem:>9.0f} {total:>8.0f}  "
                  f"{os.getloadavg()[0]:4.1f}", flush=True)


if __name__ == "__main__":
    main()
