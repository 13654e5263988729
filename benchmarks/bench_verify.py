"""Benchmark of `recordtool verify`: the fixed cost per check, -j 2 against -j 1, the shipped record.

    .venv/bin/python benchmarks/bench_verify.py [--noop 8] [--spin 4] [--seconds 1.0] [--no-shipped]
    .venv/bin/python benchmarks/bench_verify.py --cold [-j 2] [--seeds 1,declared]

Prints (1) the fixed overhead per check run: the median wall time between the ends of
consecutive no-op checks in one `verify -j 1` (fork or process start, imports, the result's
round trip, judging and the verdict's write), for checks in a module that imports torch as
the shipped checks do; runs forked from the fork server, then fresh interpreters
(RECORDTOOL_FORK_SERVER=0), each with the time to the first result (the server's start and
the module's import); (2) the wall time of verifying CPU-bound fake checks with -j 1 and
-j 2; (3) `recordtool verify --force` on the shipped record at -j 1 and -j 2, forked and
fresh (it reuses the trained models in .recordtool-cache/models: warm that cache first, or
the first run trains; it rewrites record/verdicts); (4) `recordtool verify` with every
verdict fresh (nothing runs).

With --cold, instead: the shipped record verified from nothing, as on a clean clone. For each
seeds setting, a fresh `git clone` of this repository's HEAD into a temporary folder (no model
cache, nothing uncommitted), then `recordtool verify --force --try -j J` there (`--seeds 1`, or
the seeds the claims declare), timed by the wall clock, with the CPU time of everything it ran,
the load average before and after, and each run's duration as verify reports it (slowest first).
--try keeps the clone's verdicts as they are; the clone is deleted afterwards. The clone's
modules (recordtool's and the checks') are compiled to bytecode first, as an install does
(``measure.compiled``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import compiled
from verify_fakes import check, claim_yaml, make_project

from recordtool.meter import PlainDisplay
from recordtool.record.project import open_project
from recordtool.verify.runner import JobResult
from recordtool.verify.session import Options, verify

REPO = Path(__file__).resolve().parents[1]
HEAVY = "import torch\n\n\ndef noop(ctx):\n    return {'err': 0.0}\n"


class Clock(PlainDisplay):
    """A quiet display that notes when each run ends."""

    def __init__(self) -> None:
        super().__init__(open(os.devnull, "w"))  # noqa: SIM115
        self.ends: list[float] = []

    def finished(self, result: JobResult) -> None:
        self.ends.append(time.perf_counter())


def overhead(root: Path, serve: bool) -> tuple[float, float]:
    """(median ms between consecutive no-op results, ms to the first result) in one -j 1 run."""
    os.environ["RECORDTOOL_FORK_SERVER"] = "1" if serve else "0"
    clock = Clock()
    start = time.perf_counter()
    verify(open_project(root=root), Options(jobs=1, force=True), clock)
    gaps = [b - a for a, b in itertools.pairwise(clock.ends)]
    return statistics.median(gaps) * 1000, (clock.ends[0] - start) * 1000


def shipped(jobs: int, serve: bool) -> tuple[float, str]:
    env = {**os.environ, "RECORDTOOL_FORK_SERVER": "1" if serve else "0"}
    t = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "recordtool", "verify", "--force", "--root", str(REPO), "-j", str(jobs)],
                         capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    last = run.stdout.strip().splitlines()[-1:] or [run.stderr.strip()[-200:]]
    return wall, last[0]


RESULT_LINE = re.compile(r"^(?P<label>.+): (?P<state>\S+) \((?P<seconds>[0-9.]+) s\)")


def cold(jobs: int, seeds: str) -> None:
    """verify --force --try of the shipped record in a fresh clone (``seeds``: a number or "declared")."""
    with tempfile.TemporaryDirectory(prefix="verify-cold-") as tmp:
        clone = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        command = [sys.executable, "-m", "recordtool", "verify", "--force", "--try", "-j", str(jobs)]
        if seeds != "declared":
            command += ["--seeds", seeds]
        env = {**os.environ, "PYTHONPATH": str(clone)}
        made = compiled(env, cwd=clone, more=(clone / "checks",))
        before = os.getloadavg()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
        runs = [(float(m["seconds"]), m["label"], m["state"]) for m in map(RESULT_LINE.match, run.stderr.splitlines()) if m]
        models = len(list((clone / ".recordtool-cache" / "models").glob("*.safetensors")))
    shown = "--seeds " + seeds if seeds != "declared" else "the declared seeds"
    print(f"cold `recordtool verify --force --try -j {jobs}` with {shown} (fresh clone, empty model cache): "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU, exit {run.returncode}, {len(runs)} runs, {models} models trained; "
          f"load average {before[0]:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores); {made}")
    for seconds, label, state in sorted(runs, reverse=True):
        if seconds >= 1.0:
            print(f"  {seconds:6.1f} s  {label}" + ("" if state == "done" else f"  ({state})"))
    rest = [seconds for seconds, _, _ in runs if seconds < 1.0]
    if rest:
        print(f"  {sum(rest):6.1f} s  the other {len(rest)} runs together (each under 1 s)")
    summary = [line for line in run.stdout.splitlines() if line.startswith("THEORY-")]
    for line in summary:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--noop", type=int, default=8, help="no-op checks for the overhead")
    parser.add_argument("--spin", type=int, default=4, help="CPU-bound checks for -j 1 vs -j 2")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU time of each spinning check")
    parser.add_argument("--no-shipped", action="store_true", help="skip verifying the shipped record")
    parser.add_argument("--cold", action="store_true", help="only the cold figures: the shipped record in a fresh clone")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="verify's -j for --cold")
    parser.add_argument("--seeds", default="1,declared", help="for --cold: comma-separated seed counts or 'declared'")
    args = parser.parse_args()
    if args.cold:
        for seeds in args.seeds.split(","):
            cold(args.jobs, seeds.strip())
        return
    quiet = PlainDisplay(open(os.devnull, "w"))  # noqa: SIM115
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp:
        root = make_project(Path(tmp) / "noop", {
            f"THEORY-{i}": claim_yaml(f"THEORY-{i}", check("noop", "noop").replace("checks.fake", "checks.heavy"))
            for i in range(1, args.noop + 1)})
        (root / "checks" / "heavy.py").write_text(HEAVY, encoding="utf-8")
        results: dict[str, Any] = {}
        for serve in (True, False):
            results["forked" if serve else "fresh"] = overhead(root, serve)
        os.environ.pop("RECORDTOOL_FORK_SERVER")
        for name, (per_check, first) in results.items():
            how = "forked from the server" if name == "forked" else "fresh interpreter per check"
            print(f"fixed overhead per check, {how}: median {per_check:.0f} ms (no-op checks importing torch, "
                  f"n={args.noop}, -j 1; first result after {first:.0f} ms)")

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

        if not args.no_shipped:
            for jobs in (1, 2):
                for serve in (True, False):
                    wall, line = shipped(jobs, serve)
                    how = "forked" if serve else "fresh "
                    print(f"shipped record, `recordtool verify --force -j {jobs}`, {how}: {wall:.1f} s wall ({line})")

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
