"""Benchmark `recordtool render` on synthetic records.

    python benchmarks/bench_render.py [--sizes 1000,10000] [--jobs 1,2] [--repeat N] [--keep DIR]

On this machine's disk (ext4 without a journal), creating a file costs ten times more in
the minutes after many files were deleted: the kernel's inode allocator steps over every
recently deleted inode (``recently_deleted`` in ``perf``). So every render here goes into a
folder never used before, the benchmark removes what it wrote only at the end, and it first
prints what creating a file costs now. Run it again only a few minutes after the last run (or
after deleting many files), or read its figures with that one in mind.

For each size, in a fresh child process (so peak memory is per size): generate a record
with ``benchmarks/synthetic.py``, open it (load + graph), assess the claims, render every page
into an empty folder, then render again unchanged (with the last of ``--jobs``). Prints a
table with the time per entry, so linear growth is visible. Peak memory is the child's
maximum resident set size (its workers not counted: see below for them).

Then the real command, end to end, as a user runs it: ``python -m recordtool render --root R
-o OUT -j J`` in a fresh process for each J of ``--jobs``, into a new folder (cold) and again
with nothing changed (unchanged), each with its wall time and time per entry, and for the
cold render its peak memory: that of its largest process (os.wait4) and that of all its
processes together, the workers included (proportional set size summed, sampled every 0.1 s:
pages a worker shares with its parent count once). ``--repeat N`` runs the command N times
per size and prints the median (this machine's timings vary by a fifth from one run to the
next).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import run  # noqa: E402


def measure(n: int, folder: Path, jobs: int, plain: bool = False) -> dict[str, float]:
    sys.path.insert(0, str(HERE))
    from synthetic import generate_record  # type: ignore[import-not-found]

    from recordtool.record.project import open_project
    from recordtool.render.site import render
    from recordtool.verify.status import assess

    root = folder / f"r{n}"
    generate_record(root, n, plain=plain)
    out = folder / f"out-{n}-inprocess-{os.getpid()}"  # never used before (see main)
    t0 = time.perf_counter()
    project = open_project(root=root, jobs=jobs)
    t1 = time.perf_counter()
    statuses = assess(project)
    t2 = time.perf_counter()
    first = render(project, out, statuses=statuses, jobs=jobs)
    t3 = time.perf_counter()
    again = render(project, out, statuses=statuses, jobs=jobs)
    t4 = time.perf_counter()
    assert not again.written, again.written[:5]
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n": n, "open": t1 - t0, "assess": t2 - t1, "render": t3 - t2, "rerender": t4 - t3,
            "pages": len(first.written), "peak_mib": peak_kib / 1024}


def _create_cost_us(folder: Path, n: int = 2_000) -> float:
    """The median time to create an empty file in ``folder`` now (µs): the state of the file
    system, which this machine's timings depend on. The files stay (deleting them would
    slow what follows); they go with the rest at the end."""
    probe = folder / f"out-probe-{os.getpid()}"
    probe.mkdir(parents=True)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        os.close(os.open(probe / f"{i}.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def command(root: Path, out: Path, jobs: int) -> tuple[float, float, float, float, str]:
    """Run ``recordtool render -j jobs`` in a fresh process: (seconds, CPU seconds of all its
    processes, peak MiB of its largest process, peak MiB of all its processes together, its
    summary line)."""
    done = run([sys.executable, "-m", "recordtool", "render", "--root", str(root), "-o", str(out), "-j", str(jobs)])
    if done.code != 0:
        raise SystemExit(f"recordtool render failed ({done.code}): {done.stderr}")
    return done.seconds, done.cpu, done.peak_mib, done.all_mib, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record sizes (e.g. 1000,10000,100000)")
    parser.add_argument("--keep", type=Path, default=None, help="generate records here (default: a temporary folder)")
    parser.add_argument("--jobs", default="1,2", help="comma-separated values of render's -j (e.g. 1,2,4)")
    parser.add_argument("--repeat", type=int, default=1, help="run the command this many times per size; "
                        "print the medians")
    parser.add_argument("--plain", action="store_true", help="synthetic bodies of plain sentences instead of "
                        "research Markdown (synthetic.py)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    if args.child is not None:
        print(json.dumps(measure(args.child, args.keep, jobs[-1], args.plain)))
        return
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        folder = args.keep or Path(tmp)
        print(f"synthetic records, bodies of {'plain sentences (--plain)' if args.plain else 'research Markdown'}")
        print(f"creating a file here takes {_create_cost_us(folder):.0f} µs (a quiet ext4: about 25 µs; "
              "up to 350 µs in the minutes after many files were deleted: see this script's docstring)\n")
        print(f"{'entries':>8} {'open s':>8} {'render s':>9} {'ms/entry':>9} {'unchanged s':>12} {'peak MiB':>9}")
        for n in [int(s) for s in args.sizes.split(",")]:
            out = subprocess.run([sys.executable, __file__, "--child", str(n), "--keep", str(folder),
                                  "--jobs", str(jobs[-1]), *(["--plain"] if args.plain else [])],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"{n:>8} {r['open']:>8.2f} {r['render']:>9.2f} {1000 * r['render'] / n:>9.3f} "
                  f"{r['rerender']:>12.2f} {r['peak_mib']:>9.0f}")
        print(f"\nthe command, end to end: python -m recordtool render --root R -o OUT -j J (a fresh process; "
              f"{os.cpu_count()} cores here, {len(os.sched_getaffinity(0))} usable)")
        print("(cpu s: user + system time of all its processes; peak MiB: the largest process; all MiB: every "
              "process of the command together, shared pages once; load: the 1-minute load average after)")
        print(f"{'entries':>8} {'-j':>3} {'cold s':>8} {'ms/entry':>9} {'cpu s':>7} {'peak MiB':>9} {'all MiB':>8} "
              f"{'unchanged s':>12} {'ms/entry':>9}  load")
        for n, j in [(int(s), j) for s in args.sizes.split(",") for j in jobs]:
            # Into a folder never used before: on ext4 (this machine's disk), creating files
            # right after many were deleted costs up to ten times more kernel time, so removing
            # the last run's output just before would measure the removal, not the render.
            # Old outputs are removed at the end instead.
            runs = []
            for i in range(args.repeat):
                root, out = folder / f"r{n}", folder / f"out-{n}-{os.getpid()}-j{j}-{i}"
                cold, cpu, cold_mib, cold_all, _line = command(root, out, j)
                again, _again_cpu, _again_mib, _again_all, line = command(root, out, j)
                assert ": 0 written," in line, line
                runs.append((cold, cpu, cold_mib, cold_all, again))
            cold, cpu, cold_mib, cold_all, again = (statistics.median(r[k] for r in runs) for k in range(5))
            spread = f"  (cold {min(r[0] for r in runs):.2f}-{max(r[0] for r in runs):.2f} s)" if len(runs) > 1 else ""
            print(f"{n:>8} {j:>3} {cold:>8.2f} {1000 * cold / n:>9.3f} {cpu:>7.2f} {cold_mib:>9.0f} {cold_all:>8.0f} "
                  f"{again:>12.2f} {1000 * again / n:>9.3f}  {os.getloadavg()[0]:4.1f}{spread}", flush=True)
        for old in folder.glob("out-*"):
            shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    main()
