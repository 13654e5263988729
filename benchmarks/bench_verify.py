"""`recordtool verify`, cold and warm, each beside its floor measured in the same run.

    python3 benchmarks/bench_verify.py [--jobs 2] [--seeds 1,declared] [--against REV] [--runs 40] [--no-cold]

Cold: the shipped record verified as on a clean clone. A fresh ``git clone`` of HEAD (only what
is committed, no model cache), then ``recordtool verify --force --try -j J`` there, with
``--seeds 1`` and with the seeds the claims declare (``--try`` keeps the clone's verdicts).
Its floor is the checks' own work: the durations of the runs as verify reports them, summed and
divided over the J cores; the ratio says what scheduling, process starts and judging add. With
``--against REV`` a clone of REV is verified the same way, turn about, and the ratio of the two
wall times is judged against "no slower".

Warm, on a small project written here (one claim, its check returning at once, in a module
that imports torch where it is installed, as the shipped checks do, and a control):

- the fixed cost of an isolated run: ``verify --force -j 1 --seeds RUNS``, less the same with
  ``--seeds 1``, per run in between (each seed runs the check and its control); its floor is
  forking and reaping a process that has imported the check module, in a fresh interpreter;
- ``verify`` with nothing changed, in rounds turn about with its floor, a fresh
  ``python3 -c "import click"`` (what every command imports).

recordtool is driven only through its command line.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import Guard, header, report, run

REPO = Path(__file__).resolve().parents[1]
DONE = re.compile(r"^(?P<label>.+): (?P<state>\S+) \((?P<seconds>[0-9.]+) s\)$")

NOOP = '''"""A check that returns at once (its module imports torch, as a real check's does)."""

try:
    import torch  # noqa: F401
except ImportError:
    pass

METRICS = ("err",)


def noop(ctx, *, fail: bool = False):
    return {"err": 2.0 if fail else 0.0}
'''

FORK_FLOOR = """
import os, statistics, time
try:
    import torch  # noqa: F401
except ImportError:
    pass
gaps = []
for _ in range(40):
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    gaps.append(time.perf_counter() - t)
print(statistics.median(gaps))
"""


@dataclass(slots=True)
class Cold:
    wall: float
    cpu: float
    busy: float  # the runs' own durations, summed
    runs: int
    code: int
    summary: str


def cold(rev: str, jobs: int, seeds: str) -> Cold:
    """``verify --force --try`` of the record at ``rev`` in a fresh clone (``seeds``: N or "declared")."""
    with tempfile.TemporaryDirectory(prefix="verify-cold-") as tmp:
        clone = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", rev], cwd=clone, check=True)
        env = {**os.environ, "PYTHONPATH": str(clone)}
        subprocess.run([sys.executable, "-m", "compileall", "-q", "recordtool", "checks"], cwd=clone, env=env,
                       check=False, stdout=subprocess.DEVNULL)
        command = [sys.executable, "-m", "recordtool", "verify", "--force", "--try", "-j", str(jobs)]
        if seeds != "declared":
            command += ["--seeds", seeds]
        done = run(command, clone, env)
    runs = [float(m["seconds"]) for m in map(DONE.match, done.stderr.splitlines()) if m]
    lines = [line for line in done.stdout.splitlines() if line.startswith("verified ")]
    return Cold(done.seconds, done.cpu, sum(runs), len(runs), done.code, lines[-1] if lines else done.stderr[-300:])


def cold_guards(args: argparse.Namespace) -> list[Guard]:
    guards = []
    for seeds in args.seeds.split(","):
        here = cold("HEAD", args.jobs, seeds)
        shown = f"--seeds {seeds}" if seeds != "declared" else "the declared seeds"
        print(f"cold `verify --force --try -j {args.jobs}`, {shown}: {here.wall:.1f} s wall, {here.cpu:.1f} s CPU, "
              f"{here.runs} runs taking {here.busy:.1f} s together, exit {here.code}: {here.summary}", flush=True)
        guards.append(Guard(f"cold verify of the shipped record, {shown}, -j {args.jobs}", here.wall, "s",
                            here.busy / args.jobs, None))
        if args.against:
            base = cold(args.against, args.jobs, seeds)
            print(f"  at {args.against}: {base.wall:.1f} s wall, {base.cpu:.1f} s CPU, {base.runs} runs", flush=True)
            guards.append(Guard(f"  the same against {args.against} (x its wall time)", here.wall, "s", base.wall, 1.0,
                                by_ratio=True))
    return guards


def project(root: Path) -> Path:
    """One claim with one no-op check and a control that fails it (so that it has power)."""
    (root / "checks").mkdir(parents=True)
    (root / "record" / "theory").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.recordtool]\nrecord = "record"\nchecks = "checks"\n', encoding="utf-8")
    (root / "checks" / "__init__.py").write_text("", encoding="utf-8")
    (root / "checks" / "noop.py").write_text(NOOP, encoding="utf-8")
    (root / "record" / "theory" / "THEORY-1.yaml").write_text(
        "id: THEORY-1\nkind: theory\ntitle: No-op\nstatement: A no-op check passes.\nchecks:\n"
        "  - name: noop\n    run: checks.noop:noop\n    expect: {err: \"< 1\"}\n"
        "    control: {params: {fail: true}}\n", encoding="utf-8")
    return root


def warm_guards(args: argparse.Namespace) -> list[Guard]:
    py = [sys.executable, "-m", "recordtool", "verify"]
    with tempfile.TemporaryDirectory(prefix="verify-warm-") as tmp:
        root = project(Path(tmp) / "project")
        run(py, root)  # the verdict, then what verify keeps
        run(py, root)
        many, one, forks = [], [], []
        for _ in range(3):
            many.append(run([*py, "--force", "-j", "1", "--seeds", str(args.runs)], root).seconds)
            one.append(run([*py, "--force", "-j", "1", "--seeds", "1"], root).seconds)
            forks.append(float(subprocess.run([sys.executable, "-c", FORK_FLOOR], capture_output=True, text=True,
                                              check=True).stdout))
        run(py, root)  # its own seeds again, then what verify keeps
        run(py, root)
        warm, click = [], []
        for _ in range(args.rounds):
            warm.append(run(py, root).seconds)
            click.append(run([sys.executable, "-c", "import click"]).seconds)
    # each seed is a run of the check and one of its control
    per_run = (statistics.median(many) - statistics.median(one)) / (2 * (args.runs - 1))
    print(f"warm: `verify --force -j 1` of one claim, {2 * args.runs} runs in {statistics.median(many):.2f} s, "
          f"2 runs in {statistics.median(one):.2f} s (medians of 3); nothing changed: median "
          f"{statistics.median(warm):.3f} s of {args.rounds} (min {min(warm):.3f}, max {max(warm):.3f})", flush=True)
    return [Guard("per isolated run (no-op check, `verify --force -j 1`)", per_run * 1000, "ms",
                  statistics.median(forks) * 1000, 15.0),
            Guard("warm `verify` (nothing changed)", statistics.median(warm), "s", statistics.median(click), 0.1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-j", "--jobs", type=int, default=2, help="verify's -j for the cold runs")
    parser.add_argument("--seeds", default="1,declared", help="the cold runs' seeds: counts or 'declared', by commas")
    parser.add_argument("--against", metavar="REV", help="also verify REV cold, turn about: is HEAD no slower?")
    parser.add_argument("--runs", type=int, default=40, help="seeds of the no-op check (each a run and its control's)")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the nothing-changed verify")
    parser.add_argument("--no-cold", action="store_true", help="only the warm figures (the cold ones train models)")
    args = parser.parse_args()
    header()
    report(warm_guards(args) + ([] if args.no_cold else cold_guards(args)))


if __name__ == "__main__":
    main()
