"""Benchmark the commands that find nothing to do against the import floor.

    python3 benchmarks/bench_noop.py [--entries 1000] [--rounds 9] [--plain]

Writes a synthetic record (``synthetic.py``, realistic Markdown unless ``--plain``) with a toy
check module, verifies it once (not timed), runs ``verify``, ``status`` and ``render`` once so
that each keeps its answer, then times, in interleaved rounds, each in a fresh process next to
its floor: bare Python (``python3 -c pass``) and importing click (``python3 -c "import
click"``), which every command pays before it reads a file. Prints the median seconds of each,
its ratio to the click floor, and whether the kept answer was given without loading pydantic or
PyYAML (``-X importtime``), with the machine's load average.
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from measure import compiled  # type: ignore[import-not-found]  # noqa: E402
from synthetic import TOY_CHECK, generate_record  # type: ignore[import-not-found]  # noqa: E402


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def timed(args: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def heavy_modules(args: list[str], cwd: Path) -> list[str]:
    """The heavy packages a run imports (read from ``-X importtime``)."""
    done = subprocess.run([args[0], "-X", "importtime", *args[1:]], cwd=cwd, env=env(), capture_output=True,
                          text=True, check=False)
    found = set()
    for line in done.stderr.splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        if name in ("pydantic", "yaml", "markdown_it", "torch"):
            found.add(name)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--plain", action="store_true", help="plain-sentence bodies instead of research Markdown")
    args = parser.parse_args()
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import click'": [py, "-c", "import click"],
        "verify (nothing changed)": [py, "-m", "recordtool", "verify"],
        "status (nothing changed)": [py, "-m", "recordtool", "status"],
        "render (nothing changed)": [py, "-m", "recordtool", "render"],
    }
    with tempfile.TemporaryDirectory(prefix="bench-noop-") as tmp:
        root = Path(tmp) / "project"
        generate_record(root, args.entries, plain=args.plain)
        (root / "checks").mkdir(exist_ok=True)
        (root / "checks" / "__init__.py").write_text("", encoding="utf-8")
        (root / "checks" / "toy.py").write_text(TOY_CHECK, encoding="utf-8")
        jobs = str(len(os.sched_getaffinity(0)))
        print(compiled(env()))
        first = subprocess.run([py, "-m", "recordtool", "verify", "-j", jobs], cwd=root, env=env(),
                               capture_output=True, text=True, check=False)
        print(f"record: {args.entries} entries ({'plain sentences' if args.plain else 'realistic Markdown'}); "
              f"first verify: {first.stdout.strip().splitlines()[-1] if first.stdout.strip() else first.stderr[-300:]}")
        for name, command in commands.items():  # each command keeps its answer once
            if name.startswith(("verify", "status", "render")):
                subprocess.run(command, cwd=root, env=env(), capture_output=True, check=False)
        times: dict[str, list[float]] = {name: [] for name in commands}
        load = os.getloadavg()
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(timed(command, root))
        load_after = os.getloadavg()
        floor = statistics.median(times["python -c 'import click'"])
        print(f"median of {args.rounds} interleaved rounds; load average {load[0]:.2f} before, "
              f"{load_after[0]:.2f} after ({jobs} cores)")
        for name, command in commands.items():
            median = statistics.median(times[name])
            extra = ""
            if name.startswith(("verify", "status", "render")):
                heavy = heavy_modules(command, root)
                extra = f"  imports {', '.join(heavy) if heavy else 'none of pydantic, yaml, markdown_it, torch'}"
            print(f"  {name:<26} {median:6.3f} s  {median / floor:4.2f}x the click floor  "
                  f"(min {min(times[name]):.3f}, max {max(times[name]):.3f}){extra}")


if __name__ == "__main__":
    main()
