"""Benchmark composing the entry pages: the part of a cold render that comes after reading.

    python3 benchmarks/bench_pages.py [--entries 10000] [--rounds 5] [--record DIR] [--plain]

In one process: writes a synthetic record (``synthetic.py``, research Markdown unless
``--plain``; or takes the project folder ``--record``), opens it as ``render`` does (each body
composed as it is read), then, in rounds, times (a) markdown-it-py's parse of every body, the
Markdown half of the floor that ``measure.py`` sets, and (b) every entry page composed in a
fresh context (``page.render_entry``; nothing written), with how much of that was the graph
view, the backlinks and the properties table when the page modules run from their source
(compiled with mypyc, ``render_entry`` calls them inside the compiled code, past the module
attributes that would time them: ``RECORDTOOL_PURE_PYTHON=1`` times them in pure Python). Prints
each round, the medians, and the pages'
time over the parse's: the machine's speed here moves by up to twice within minutes, and moves
that ratio much less than the seconds. Also a hash of the pages: two commits that should write
the same pages print the same hash. The synthetic record is written into a temporary folder and
deleted at the end; on an ext4 disk without a journal, creating files is then slower for some
minutes (``bench_render.py``'s docstring), so keep one (``synthetic.py OUT N``) and pass it as
``--record`` when other benchmarks follow.

Why this and not ``bench_render.py`` alone: composing the entry pages is about a quarter of a
cold render of 10,000 entries, and two runs of the command minutes apart differ by more than
that. To compare two commits, run this at each (``git stash``, a worktree) one after the other,
and compare the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import positive, record_or_synthetic  # noqa: E402

PARTS = ("graph_view", "_backlinks", "_properties")  # what of ``render_entry`` is timed on its own
NAMES = {"graph_view": "graph view", "_backlinks": "backlinks", "_properties": "properties"}


@contextmanager
def timed_parts(module: Any, spent: dict[str, float]) -> Iterator[None]:
    """``module``'s functions ``PARTS`` wrapped to add their time to ``spent`` while inside."""
    real = {name: getattr(module, name) for name in PARTS}

    def wrap(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t0
        return timed

    try:
        for name, function in real.items():
            setattr(module, name, wrap(name, function))
        yield
    finally:
        for name, function in real.items():
            setattr(module, name, function)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=positive, default=10_000, help="entries of the synthetic record (default 10000)")
    parser.add_argument("--rounds", type=positive, default=5, help="rounds of each (default 5)")
    parser.add_argument("--record", type=Path, help="a project folder to use instead of a synthetic record")
    parser.add_argument("--plain", action="store_true", help="plain-sentence bodies instead of research Markdown")
    args = parser.parse_args()

    from markdown_it import MarkdownIt

    from recordtool import compiled
    from recordtool.record.project import open_project
    from recordtool.render import page
    from recordtool.render.plan import context
    from recordtool.verify.status import assess

    with tempfile.TemporaryDirectory(prefix="bench-pages-") as scratch:
        root, what = record_or_synthetic(args.record, Path(scratch), args.entries, args.plain)
        project = open_project(root=root)
        statuses = assess(project)
        entries = project.record.entries
        ids = list(entries)
        if not ids:
            raise SystemExit(f"{what} has no entry that loads: nothing to compose")
        bodies = [entries[i].body for i in ids]
        parts = not compiled.running_compiled()  # (see above)
        markdown = MarkdownIt("commonmark").enable("table")

        rounds: list[tuple[float, float, dict[str, float]]] = []
        digests = set()
        for _round in range(args.rounds):
            t0 = time.perf_counter()
            for body in bodies:
                markdown.parse(body)
            parse_s = time.perf_counter() - t0
            ctx = context(project, statuses, root / "out-bench-pages")  # fresh: what a render works out once, again
            spent = dict.fromkeys(PARTS, 0.0)
            with timed_parts(page, spent) if parts else contextlib.nullcontext():
                t0 = time.perf_counter()
                pages = [page.render_entry(ctx, entry_id) for entry_id in ids]
                pages_s = time.perf_counter() - t0
            digests.add(hashlib.sha256("\0".join(pages).encode()).hexdigest()[:16])
            rounds.append((parse_s, pages_s, spent))

    print(f"{what}: {len(ids):,} entry pages composed in one process, {args.rounds} rounds "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"the page modules: {compiled.state()}")
    print("(parse: markdown-it-py's parse of every body, the floor's Markdown half; pages: every entry page "
          "composed, nothing written" + (", of which the graph view, the backlinks and the properties table)" if parts
                                          else "; its parts are timed in pure Python only: RECORDTOOL_PURE_PYTHON=1)"))
    shown = PARTS if parts else ()
    header = f"{'round':>6} {'parse s':>8} {'pages s':>8} {'x parse':>8}" + "".join(f" {NAMES[n] + ' s':>14}" for n in shown)
    print(header)

    def row(label: str, parse_s: float, pages_s: float, ratio: float, spent: dict[str, float]) -> str:
        return f"{label:>6} {parse_s:8.2f} {pages_s:8.2f} {ratio:8.2f}" + "".join(f" {spent[n]:14.2f}" for n in shown)

    for n, (parse_s, pages_s, parts) in enumerate(rounds, 1):
        print(row(str(n), parse_s, pages_s, pages_s / parse_s, parts))
    ratios = sorted(r[1] / r[0] for r in rounds)
    print(row("median", statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds),
              statistics.median(ratios), {n: statistics.median(r[2][n] for r in rounds) for n in PARTS}))
    print(f"pages over parse: median {statistics.median(ratios):.2f} ({ratios[0]:.2f} to {ratios[-1]:.2f}); "
          f"pages per entry {statistics.median(r[1] for r in rounds) / len(ids) * 1e6:.0f} µs")
    print(f"pages hash {' '.join(sorted(digests))}" + ("" if len(digests) == 1 else "  (rounds differ: pages are not pure)"))


if __name__ == "__main__":
    main()
