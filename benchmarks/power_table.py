"""Which control gives each expectation its power? A table per check, seeds x runs.

    PYTHONPATH=. python3 benchmarks/power_table.py [record/theory/THEORY-977.yaml ...] [--cache DIR]

Runs each check of the given claims (default: every claim under record/theory) on its seeds,
its main run and every control, in this process (trained models come from ``--cache``, shared
with later calls), and prints for each expectation its value per seed and run with a mark
(``+`` holds, ``-`` fails) and where its power comes from: the controls that make it fail on
every seed, and its declared null when that fails it on every seed of the main run. Prints
the observed metrics too, and the training seconds when models were trained. This reads the
YAML itself and judges as docs/ describes; ``recordtool verify`` is what decides a verdict.
"""

from __future__ import annotations

import argparse
import importlib
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from recordtool import CheckContext
from recordtool.record.expect import parse_expectation

ROOT = Path(__file__).resolve().parents[1]


def expectations(check: dict[str, Any]) -> list[tuple[str, str, list[str], str | None]]:
    """(metric, expectation text, clauses, null metric) for each of the check's expectations."""
    out = []
    for metric, spec in check.get("expect", {}).items():
        if isinstance(spec, dict):
            clauses = spec.get("clause", [])
            out.append((metric, spec["is"], [clauses] if isinstance(clauses, str) else clauses,
                        spec.get("null")))
        else:
            out.append((metric, str(spec), ["statement"], None))
    return out


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def run_check(claim: str, check: dict[str, Any], cache: Path, figures: Path) -> None:
    module_name, function_name = check["run"].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    seeds = range(int(check.get("seeds", 1)))
    threads = int(check.get("threads", 1))
    runs = [("main", dict(check.get("params", {})))] + [
        (c["name"], {**check.get("params", {}), **c.get("params", {})}) for c in check.get("controls", [])
    ]
    results: dict[tuple[str, int], dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    for name, params in runs:
        start = time.perf_counter()
        for seed in seeds:
            ctx = CheckContext(seed=seed, cache_dir=cache, figures_dir=figures / claim / name / str(seed),
                               threads=threads, progress=lambda _m: None)
            results[(name, seed)] = function(ctx, **params)
        seconds[name] = time.perf_counter() - start
    print(f"\n## {claim} / {check['name']}  ({', '.join(f'{n} {s:.0f} s' for n, s in seconds.items())})")
    header = ["metric", "is", "clause"] + [f"{n}:{s}" for n, _ in runs for s in seeds] + ["power"]
    rows = [header]
    for metric, text, clauses, null in expectations(check):
        expectation = parse_expectation(text)
        cells = []
        for name, _ in runs:
            for seed in seeds:
                value = results[(name, seed)][metric]
                cells.append(f"{fmt(value)}{'+' if expectation.holds(float(value)) else '-'}")
        power = [name for name, _ in runs[1:]
                 if not any(expectation.holds(float(results[(name, s)][metric])) for s in seeds)]
        if null and not any(expectation.holds(float(results[("main", s)][null])) for s in seeds):
            power.append(f"null {null}")
        main = [float(results[("main", s)][metric]) for s in seeds]
        held = sum(expectation.holds(v) for v in main)
        spread = f"min {min(main):.4g} med {statistics.median(main):.4g} max {max(main):.4g}"
        verdict = (", ".join(power) or "NO POWER") + f"; main holds {held}/{len(main)}; {spread}"
        rows.append([metric, text, ",".join(clauses), *cells, verdict])
    for metric, clause in check.get("observe", {}).items():
        rows.append([metric, "observe", str(clause),
                     *(fmt(results[(n, s)][metric]) for n, _ in runs for s in seeds), ""])
    for name, condition in check.get("degenerate", {}).items():
        expectation = parse_expectation(condition)
        flagged = (fmt(results[(n, s)][name]) + ("!" if expectation.holds(float(results[(n, s)][name])) else "")
                   for n, _ in runs for s in seeds)
        rows.append([name, f"degenerate {condition}", "", *flagged, ""])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("claims", nargs="*", type=Path)
    parser.add_argument("--cache", type=Path, default=ROOT / ".recordtool-cache")
    parser.add_argument("--figures", type=Path, default=Path("/tmp/power_table_figures"))
    parser.add_argument("--check", help="only the check of this name")
    args = parser.parse_args()
    claims = args.claims or sorted((ROOT / "record" / "theory").glob("*.yaml"))
    for path in claims:
        entry = yaml.safe_load(path.read_text())
        for check in entry.get("checks", []):
            if args.check and check["name"] != args.check:
                continue
            run_check(entry["id"], check, args.cache, args.figures)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
