"""Benchmark: how long `recordtool validate` takes, and its peak memory, as the record grows,
against the floor the libraries set on the same record in the same run.

    python benchmarks/bench_validate.py [--sizes 1000,10000] [--100k] [--jobs 1,2] [--repeat 3] [--plain]

Each measurement runs the real command (``recordtool validate -j J`` for each J of
``--jobs``) in a fresh process (imports included), cold (the entry cache an earlier run left
is set aside first, deleted only after all the runs, since creating files just after many were
deleted costs ten times more here: ``measure.set_aside``; the command writes the cache again, as a
first run does), on a synthetic record
(benchmarks/synthetic.py, generated once into benchmarks/out/). Each round measures,
for each J, the floor (``measure.floor``: ``yaml.CSafeLoader`` over every entry file plus
markdown-it-py's parse of every body, in one fresh process) and just after it the command; the
figures are the medians over ``--repeat`` rounds (one round at 100,000 entries, which
``--100k`` adds), each run's ratio taken to the floor measured just before it.
With J over 1 the floor's work is also done by J fresh processes at once, a share of the files
each (``measure.floor``'s ``together_s``, printed as floor@j), and the command's time over it
(x @j): it tells a machine that gives fewer than J cores at that moment (threads of fewer
physical cores, other work) from a command that does not use them. The aim is judged against
the floor divided over the J processes.

Printed per size and J: the median wall time, time per entry (flat when growth is linear),
CPU seconds of all its processes, the floor divided over the J processes (at most the cores
usable here) and the ratio of the time to it, the peak resident memory of the largest of the
command's processes, and the peak of all of them together, the workers included, sampled
every 0.1 s from /proc (RSS summed: a page shared with a forked worker counted in each; PSS
summed: counted once). Also times `recordtool --help` and `validate` on the shipped record.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ASIDE = HERE / "out" / ".set-aside"  # what a cold run replaces, deleted once every run is done
sys.path.insert(0, str(HERE))

from measure import Floor, Run, compiled, floor, memory_aim, run, set_aside  # noqa: E402
from synthetic import generate_record  # noqa: E402


def once(args: list[str], cwd: Path) -> Run:
    """``recordtool ARGS`` in ``cwd``, cold: without the entry cache of an earlier run (which
    it writes again, as a first run does; the old one is set aside, not deleted: ``set_aside``)."""
    set_aside(cwd / ".recordtool-cache" / "entries", ASIDE)
    done = run([sys.executable, "-m", "recordtool", *args], cwd)
    if done.code not in (0, 1):
        raise SystemExit(f"recordtool {' '.join(args)} failed in {cwd}: {done.stderr[-500:]}")
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--100k", dest="large", action="store_true", help="add 100,000 entries (slow: minutes)")
    parser.add_argument("--jobs", default="1,2", help="comma-separated values of validate's -j (e.g. 1,2,4)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size (one at 100,000 entries)")
    parser.add_argument("--plain", action="store_true", help="synthetic bodies of plain sentences instead of "
                        "research Markdown (synthetic.py)")
    args = parser.parse_args()
    root = HERE.parent
    jobs = [int(j) for j in args.jobs.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")] + ([100_000] if args.large else [])
    usable = len(os.sched_getaffinity(0))

    print(compiled())
    help_runs = [once(["--help"], root) for _ in range(args.repeat)]
    print(f"recordtool --help                    {statistics.median(r.seconds for r in help_runs) * 1000:7.0f} ms")
    shipped = [once(["validate"], root) for _ in range(args.repeat)]
    print(f"recordtool validate (shipped record) {statistics.median(r.seconds for r in shipped) * 1000:7.0f} ms  "
          f"{max(r.peak_mib for r in shipped):6.0f} MiB peak")
    print(f"\n{os.cpu_count()} cores here, {usable} usable")
    print("(floor: yaml.CSafeLoader over the entry files + markdown-it-py's parse of the bodies, one process, "
          "measured just before each run, divided over min(-j, cores) processes; x floor: the median of each time over its floor; cpu s: user + system time "
          "of all its processes; sys s: the system time of it (the kernel's: files read, page faults); floor@j: the same work done by min(-j, cores) fresh processes at once, a share of the files each, until the last is done (what this machine gives that many processes at that moment); x @j: the time over it; peak MiB: the largest process; RSS/PSS MiB: every process of the command "
          "together, sampled, shared pages in each (RSS) or once (PSS); load: the 1-minute load average after)")
    print(f"synthetic records, bodies of {'plain sentences (--plain)' if args.plain else 'research Markdown'}")
    print(f"{'entries':>8} {'-j':>3} {'median s':>9} {'us/entry':>9} {'cpu s':>7} {'sys s':>6} {'yaml s':>7} {'md s':>6} "
          f"{'floor/j':>8} {'x floor':>8} {'floor@j':>8} {'x @j':>5} {'peak MiB':>9} {'RSS MiB':>8} {'PSS MiB':>8}  load")
    aims: list[str | None] = []
    for n in sizes:
        folder = HERE / "out" / f"record-{n}-{'plain' if args.plain else 'markdown'}"
        if not (folder / "pyproject.toml").exists():
            generate_record(folder, n, seed=0, plain=args.plain)
        # Each run's floor is measured just before it: this machine's speed drifts by a fifth within
        # minutes, and a ratio of two figures taken far apart carries that drift.
        floors: dict[int, list[Floor]] = {j: [] for j in jobs}
        runs: dict[int, list[Run]] = {j: [] for j in jobs}
        for _ in range(args.repeat if n < 100_000 else 1):  # rounds interleave each -j, each with its floor
            for j in jobs:
                floors[j].append(floor(folder, min(j, usable)))
                runs[j].append(once(["validate", "-j", str(j)], folder))
        every = [f for j in jobs for f in floors[j]]
        yaml_s = statistics.median(f.yaml_s for f in every)
        md_s = statistics.median(f.markdown_s for f in every)
        for j in jobs:
            done = runs[j]
            wall = statistics.median(r.seconds for r in done)
            share = (yaml_s + md_s) / min(j, usable)
            ratios = sorted(r.seconds / f.per(min(j, usable)) for r, f in zip(done, floors[j], strict=True))
            spread = f"  (x floor {ratios[0]:.2f}-{ratios[-1]:.2f})" if len(done) > 1 else ""
            at_once = [f.together() for f in floors[j]]
            print(f"{n:>8} {j:>3} {wall:>9.2f} {wall / n * 1e6:>9.0f} {statistics.median(r.cpu for r in done):>7.2f} "
                  f"{statistics.median(r.system for r in done):>6.2f} {yaml_s:>7.2f} {md_s:>6.2f} {share:>8.2f} {statistics.median(ratios):>8.2f} "
                  f"{statistics.median(at_once):>8.2f} "
                  f"{statistics.median(r.seconds / t for r, t in zip(done, at_once, strict=True)):>5.2f} "
                  f"{max(r.peak_mib for r in done):>9.0f} {max(r.all_rss_mib for r in done):>8.0f} "
                  f"{max(r.all_mib for r in done):>8.0f}  {os.getloadavg()[0]:4.1f}{spread}", flush=True)
            aims.append(memory_aim("validate", n, j, max(r.all_mib for r in done)))
    shutil.rmtree(ASIDE, ignore_errors=True)
    for line in filter(None, aims):
        print(line)


if __name__ == "__main__":
    main()
