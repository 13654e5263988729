"""Benchmark `recordtool render` on synthetic records.

    python benchmarks/bench_render.py [--sizes 1000,10000] [--100k] [--jobs 1,2] [--repeat N] [--keep DIR]

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
-o OUT -j J`` in a fresh process for each J of ``--jobs``, into a new folder and without the
entry cache an earlier run left (cold: the command writes the cache again), again
with nothing changed (unchanged), and into another new folder with the entry cache the cold
run wrote (new folder: every page composed, no entry file read again), then with ``--check``
into that folder (its pages as written, every link of every page checked), each with its wall
time and time per entry, and for the
cold render its peak memory: that of its largest process (os.wait4) and that of all its
processes together, the workers included, sampled every 0.1 s from /proc (RSS summed: a page
a worker shares with its parent counted in each; PSS summed: counted once). Just before each
cold run it measures the floor of the record (``measure.floor``: ``yaml.CSafeLoader`` over
every entry file plus markdown-it-py's parse of every body, in one fresh process) and prints
the cold time's ratio to that floor divided over the J processes (at most the cores usable
here).
With J over 1 the floor's work is also done by J fresh processes at once, a share of the files
each (``measure.floor``'s ``together_s``, printed as floor@j), and the command's time over it
(x @j): it tells a machine that gives fewer than J cores at that moment (threads of fewer
physical cores, other work) from a command that does not use them. The aim is judged against
the floor divided over the J processes.
``--repeat N`` runs N rounds per size and prints the medians (this machine's timings vary by
a fifth from one run to the next); ``--100k`` adds a record of 100,000 entries (one round);
``--command-only`` measures the command only.
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

from measure import Floor, Run, compiled, floor, memory_aim, run, set_aside  # noqa: E402
from synthetic import generate_record  # noqa: E402


def measure(n: int, folder: Path, jobs: int, plain: bool = False) -> dict[str, float]:
    from recordtool.record.project import open_project
    from recordtool.render.site import render
    from recordtool.verify.status import assess

    root = folder / f"r{n}"
    generate_record(root, n, plain=plain)
    out = folder / f"out-{n}-inprocess-{os.getpid()}"  # never used before (see main)
    t0 = time.perf_counter()
    project = open_project(root=root, jobs=jobs)  # as the command does, cold
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


def command(root: Path, out: Path, jobs: int, *, cold: bool = False, check: bool = False) -> Run:
    """Run ``recordtool render -j jobs`` in a fresh process, measured (``measure.run``);
    ``cold``: without the entry cache of an earlier run (which it writes again, as a first run
    does; the old one is set aside, not deleted: ``measure.set_aside``); ``check``: with
    ``--check``."""
    if cold:
        set_aside(root / ".recordtool-cache" / "entries", root.parent / ".set-aside")
    done = run([sys.executable, "-m", "recordtool", "render", "--root", str(root), "-o", str(out), "-j", str(jobs),
                *(["--check"] if check else [])])
    if done.code != 0:
        raise SystemExit(f"recordtool render failed ({done.code}): {done.stderr}")
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record sizes (e.g. 1000,10000)")
    parser.add_argument("--100k", dest="large", action="store_true", help="add 100,000 entries (slow: minutes)")
    parser.add_argument("--keep", type=Path, default=None, help="generate records here (default: a temporary folder)")
    parser.add_argument("--jobs", default="1,2", help="comma-separated values of render's -j (e.g. 1,2,4)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the command per size (one at 100,000 "
                        "entries); print the medians")
    parser.add_argument("--plain", action="store_true", help="synthetic bodies of plain sentences instead of "
                        "research Markdown (synthetic.py)")
    parser.add_argument("--command-only", action="store_true", help="leave out the in-process stages (a whole "
                        "render more per size), measure only the command")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")] + ([100_000] if args.large else [])
    usable = len(os.sched_getaffinity(0))
    if args.child is not None:
        print(json.dumps(measure(args.child, args.keep, jobs[-1], args.plain)))
        return
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        folder = args.keep or Path(tmp)
        print(f"synthetic records, bodies of {'plain sentences (--plain)' if args.plain else 'research Markdown'}")
        print(compiled())
        print(f"creating a file here takes {_create_cost_us(folder):.0f} µs (a quiet ext4: about 25 µs; "
              "up to 350 µs in the minutes after many files were deleted: see this script's docstring)\n")
        if not args.command_only:
            print(f"in process, -j {jobs[-1]}")
            print(f"{'entries':>8} {'open s':>8} {'render s':>9} {'ms/entry':>9} {'unchanged s':>12} {'peak MiB':>9}")
        for n in sizes:
            if args.command_only:
                generate_record(folder / f"r{n}", n, plain=args.plain)
                continue
            out = subprocess.run([sys.executable, __file__, "--child", str(n), "--keep", str(folder),
                                  "--jobs", str(jobs[-1]), *(["--plain"] if args.plain else [])],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"{n:>8} {r['open']:>8.2f} {r['render']:>9.2f} {1000 * r['render'] / n:>9.3f} "
                  f"{r['rerender']:>12.2f} {r['peak_mib']:>9.0f}")
        print(f"\nthe command, end to end: python -m recordtool render --root R -o OUT -j J (a fresh process; "
              f"{os.cpu_count()} cores here, {usable} usable)")
        print("(floor: yaml.CSafeLoader over the entry files + markdown-it-py's parse of the bodies, one process, "
              "measured just before each cold run, divided over min(-j, cores) processes; x floor: the cold time over it, "
              "median of the rounds; floor@j: the same work done by min(-j, cores) fresh processes at once, a share of the files each, until the last is done (what this machine gives that many processes at that moment); x @j: the time over it; cpu s: user + system time of all its processes; sys s: the system time of it (the kernel's: files created and written, page faults; it grows when the disk is busy); peak MiB: the largest "
              "process; RSS/PSS MiB: every process of the command together, sampled every 0.1 s, shared pages "
              "in each (RSS) or once (PSS); load: the 1-minute load average after)")
        print(f"{'entries':>8} {'-j':>3} {'cold s':>8} {'ms/entry':>9} {'cpu s':>7} {'sys s':>6} {'yaml s':>7} {'md s':>6} "
              f"{'floor/j':>8} {'x floor':>8} {'floor@j':>8} {'x @j':>5} {'peak MiB':>9} {'RSS MiB':>8} {'PSS MiB':>8} "
              f"{'unchanged s':>12}  load")
        aims: list[str | None] = []
        elsewhere: list[str] = []
        for n in sizes:
            root = folder / f"r{n}"
            # Into a folder never used before: on ext4 (this machine's disk), creating files
            # right after many were deleted costs up to ten times more kernel time, so removing
            # the last run's output just before would measure the removal, not the render.
            # Old outputs are removed at the end instead.
            # Each cold run's floor is measured just before it: this machine's speed drifts by a
            # fifth within minutes, and a ratio of two figures taken far apart carries that drift.
            floors: dict[int, list[Floor]] = {j: [] for j in jobs}
            runs: dict[int, list[tuple[Run, float, float, float]]] = {j: [] for j in jobs}
            for i in range(args.repeat if n < 100_000 else 1):  # rounds interleave each -j, each with its floor
                for j in jobs:
                    floors[j].append(floor(root, min(j, usable)))
                    out = folder / f"out-{n}-{os.getpid()}-j{j}-{i}"
                    cold = command(root, out, j, cold=True)
                    again = command(root, out, j)
                    assert ": 0 written," in again.stdout, again.stdout
                    other = command(root, folder / f"out-{n}-{os.getpid()}-j{j}-{i}-new", j)
                    assert " written, 0 unchanged," in other.stdout, other.stdout
                    checked = command(root, folder / f"out-{n}-{os.getpid()}-j{j}-{i}-new", j, check=True)
                    assert ": 0 written," in checked.stdout, checked.stdout
                    runs[j].append((cold, again.seconds, other.seconds, checked.seconds))
            every = [f for j in jobs for f in floors[j]]
            yaml_s = statistics.median(f.yaml_s for f in every)
            md_s = statistics.median(f.markdown_s for f in every)
            for j in jobs:
                done = [cold for cold, _again, _new, _checked in runs[j]]
                wall = statistics.median(r.seconds for r in done)
                ratios = sorted(r.seconds / f.per(min(j, usable)) for r, f in zip(done, floors[j], strict=True))
                spread = (f"  (cold {min(r.seconds for r in done):.2f}-{max(r.seconds for r in done):.2f} s, "
                          f"x floor {ratios[0]:.2f}-{ratios[-1]:.2f})") if len(done) > 1 else ""
                at_once = [f.together() for f in floors[j]]
                print(f"{n:>8} {j:>3} {wall:>8.2f} {1000 * wall / n:>9.3f} "
                      f"{statistics.median(r.cpu for r in done):>7.2f} {statistics.median(r.system for r in done):>6.2f} "
                      f"{yaml_s:>7.2f} {md_s:>6.2f} "
                      f"{(yaml_s + md_s) / min(j, usable):>8.2f} {statistics.median(ratios):>8.2f} "
                      f"{statistics.median(at_once):>8.2f} "
                      f"{statistics.median(r.seconds / t for r, t in zip(done, at_once, strict=True)):>5.2f} "
                      f"{max(r.peak_mib for r in done):>9.0f} {max(r.all_rss_mib for r in done):>8.0f} "
                      f"{max(r.all_mib for r in done):>8.0f} {statistics.median(a for _c, a, _n, _k in runs[j]):>12.2f}  "
                      f"{os.getloadavg()[0]:4.1f}{spread}", flush=True)
                aims.append(memory_aim("render", n, j, max(r.all_mib for r in done)))
                new = sorted(e for _c, _a, e, _k in runs[j])
                checks = sorted(k for _c, _a, _e, k in runs[j])
                elsewhere.append(f"{n:>8} {j:>3} {statistics.median(new):>13.2f} {statistics.median(new) / wall:>8.2f} "
                                 f"{statistics.median(checks):>10.2f} {statistics.median(checks) / wall:>8.2f}"
                                 + (f"  ({new[0]:.2f}-{new[-1]:.2f} s; --check {checks[0]:.2f}-{checks[-1]:.2f} s)"
                                    if len(new) > 1 else ""))
        print("\ninto another new folder, with the entry cache the cold render wrote (every page composed, "
              "no entry file read again), then --check into that folder (its pages as written, every link of every "
              "page checked); x cold: over the cold render's time")
        print(f"{'entries':>8} {'-j':>3} {'new folder s':>13} {'x cold':>8} {'--check s':>10} {'x cold':>8}")
        for line in elsewhere:
            print(line)
        for line in filter(None, aims):
            print(line)
        for old in folder.glob("out-*"):
            shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(folder / ".set-aside", ignore_errors=True)  # what ``command`` set aside


if __name__ == "__main__":
    main()
