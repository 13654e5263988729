"""The commands that find nothing to do, each beside its floor measured in the same run.

    python3 benchmarks/bench_noop.py [--entries 1000] [--rounds 9]

On a synthetic record (``bench_scale.generate_record``, research Markdown) whose claims with a
toy check are verified first, ``verify``, ``status`` and ``render`` each run once so that each
keeps its answer; then, in rounds turn about, each runs again in a fresh process with nothing
changed, beside its floors: bare Python (``python3 -c pass``) and importing click (``python3 -c
"import click"``, what every command pays before it reads a file). Prints the medians, each
command's ratio to the click floor, and which of pydantic, PyYAML, markdown-it and torch it
imported (``-X importtime``): a kept answer needs none of them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import TOY_CHECK, Guard, generate_record, header, run

HEAVY = ("pydantic", "yaml", "markdown_it", "torch")
LIMITS = {"verify": 0.1, "status": 0.1, "render": None}  # issue 62's, in seconds


def heavy_modules(args: list[str], cwd: Path) -> list[str]:
    """The heavy packages a run imports (read from ``-X importtime``)."""
    done = subprocess.run([args[0], "-X", "importtime", *args[1:]], cwd=cwd, capture_output=True, text=True,
                          check=False)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [name for name in HEAVY if name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    py = sys.executable
    floors = {"python -c pass": [py, "-c", "pass"], "python -c 'import click'": [py, "-c", "import click"]}
    commands = {name: [py, "-m", "recordtool", name] for name in LIMITS}
    header()
    with tempfile.TemporaryDirectory(prefix="bench-noop-") as tmp:
        root = Path(tmp) / "project"
        generate_record(root, args.entries)
        (root / "checks").mkdir()
        (root / "checks" / "__init__.py").write_text("", encoding="utf-8")
        (root / "checks" / "toy.py").write_text(TOY_CHECK, encoding="utf-8")
        first = run([py, "-m", "recordtool", "verify", "-j", "2"], root)
        print(f"{args.entries:,} entries; verified first: {(first.stdout.strip().splitlines() or [''])[-1]}")
        for command in commands.values():  # each keeps its answer
            run(command, root)
        times: dict[str, list[float]] = {name: [] for name in [*floors, *commands]}
        for _ in range(args.rounds):
            for name, command in [*floors.items(), *commands.items()]:
                times[name].append(run(command, root).seconds)
        heavy = {name: heavy_modules(command, root) for name, command in commands.items()}
    median = {name: statistics.median(values) for name, values in times.items()}
    click = median["python -c 'import click'"]
    print(f"medians of {args.rounds} rounds; load average {os.getloadavg()[0]:.1f} at the end")
    for name, values in times.items():
        extra = f"; imports {', '.join(heavy[name]) or 'none of ' + ', '.join(HEAVY)}" if name in heavy else ""
        print(f"  {name:<26} {median[name]:6.3f} s (min {min(values):.3f}, max {max(values):.3f}){extra}")
    print("\n| guard | figure | floor | ratio | limit | ok? |\n|---|---|---|---|---|---|")
    for name in commands:
        print(Guard(f"`{name}`, nothing changed, {args.entries:,} entries", median[name], "s", click,
                    LIMITS[name]).row())


if __name__ == "__main__":
    main()
