"""Benchmark `recordtool render` on synthetic records.

    python benchmarks/bench_render.py [--sizes 1000,10000] [--keep DIR]

For each size, in a fresh child process (so peak memory is per size): generate a record
with ``benchmarks/synthetic.py``, open it (load + graph), assess the claims, render every page
into an empty folder, then render again unchanged. Prints a table with the time per entry,
so linear growth is visible. Peak memory is the child's maximum resident set size.

Then the real command, end to end, as a user runs it: ``python -m recordtool render --root R
-o OUT`` in a fresh process, into an empty folder (cold) and again with nothing changed
(unchanged), each with its wall time, time per entry and peak resident memory (os.wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(n: int, folder: Path) -> dict[str, float]:
    sys.path.insert(0, str(HERE))
    from synthetic import generate_record  # type: ignore[import-not-found]

    from recordtool.project import open_project
    from recordtool.site import render
    from recordtool.status import assess

    root = folder / f"r{n}"
    generate_record(root, n)
    t0 = time.perf_counter()
    project = open_project(root=root)
    t1 = time.perf_counter()
    statuses = assess(project)
    t2 = time.perf_counter()
    first = render(project, statuses=statuses)
    t3 = time.perf_counter()
    again = render(project, statuses=statuses)
    t4 = time.perf_counter()
    assert not again.written, again.written[:5]
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n": n, "open": t1 - t0, "assess": t2 - t1, "render": t3 - t2, "rerender": t4 - t3,
            "pages": len(first.written), "peak_mib": peak_kib / 1024}


def command(root: Path, out: Path) -> tuple[float, float, str]:
    """Run ``recordtool render`` in a fresh process: (seconds, peak MiB, its summary line)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "recordtool", "render", "--root", str(root), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"recordtool render failed ({proc.returncode}): {stderr}")
    return seconds, usage.ru_maxrss / 1024, stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record sizes (e.g. 1000,10000,100000)")
    parser.add_argument("--keep", type=Path, default=None, help="generate records here (default: a temporary folder)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.keep)))
        return
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        folder = args.keep or Path(tmp)
        print(f"{'entries':>8} {'open s':>8} {'render s':>9} {'ms/entry':>9} {'unchanged s':>12} {'peak MiB':>9}")
        for n in [int(s) for s in args.sizes.split(",")]:
            out = subprocess.run([sys.executable, __file__, "--child", str(n), "--keep", str(folder)],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"{n:>8} {r['open']:>8.2f} {r['render']:>9.2f} {1000 * r['render'] / n:>9.3f} "
                  f"{r['rerender']:>12.2f} {r['peak_mib']:>9.0f}")
        print("\nthe command, end to end: python -m recordtool render --root R -o OUT (a fresh process)")
        print(f"{'entries':>8} {'cold s':>8} {'ms/entry':>9} {'peak MiB':>9} {'unchanged s':>12} {'ms/entry':>9} "
              f"{'peak MiB':>9}")
        for n in [int(s) for s in args.sizes.split(",")]:
            root, out = folder / f"r{n}", folder / f"out{n}"
            shutil.rmtree(out, ignore_errors=True)
            cold, cold_mib, _line = command(root, out)
            again, again_mib, line = command(root, out)
            assert ": 0 written," in line, line
            print(f"{n:>8} {cold:>8.2f} {1000 * cold / n:>9.3f} {cold_mib:>9.0f} {again:>12.2f} "
                  f"{1000 * again / n:>9.3f} {again_mib:>9.0f}")


if __name__ == "__main__":
    main()
