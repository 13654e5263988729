"""Markdown parsers on a record's prose: ours, the parser of record, and a compiled one.

    python3 benchmarks/bench_parsers.py [--entries 10000] [--rounds 4] [--record DIR] [--random 20000]

A cold render of 10,000 entries spends most of its CPU on the bodies' Markdown (docs/performance.md,
"Why the aim at `-j 2` is out of reach"). This measures what a compiled parser from the ecosystem
would change, so that the choice is made on figures. In one process, turn about, CPU time of
every prose text of the record (bodies, statements, status notes):

- markdown-it-py's parse (``MarkdownIt("commonmark").enable("table")``: the floor's Markdown half,
  and the parser of record);
- recordtool's parse (``recordtool.record.mentions.parse``: the same tokens, simple blocks and
  inline runs made without markdown-it-py's parsers);
- ``compose_body``: what a cold render does with each text as it is read (its mentions found and
  its prose written back for its page, from one parse);
- when recordtool's parser and prose writer run compiled with mypyc (``recordtool/compiled.py``),
  the two rows above again with its pure Python modules, ``(pure)``, timed in a fresh process
  each round;
- when installed (``pip install markdown-it-pyrs``, in the ``compare`` extra), markdown-it-pyrs's
  ``tree``: markdown-it's port to Rust, the syntax tree as Python objects.

Then whether markdown-it-pyrs reads the same documents as markdown-it-py: each text's HTML from
each (whitespace between tags ignored: the two renderers lay out empty elements differently), on
the record's texts and on ``--random`` random documents made to be hard (lines of block markup
that interact, runs of inline markup that open and close emphasis, links and code), each
difference or panic counted, the first few printed. A document whose HTML differs was parsed
differently, so a fast path on that parser would need a test that says, for each document,
whether it may be trusted: the grammar that ``recordtool.record.blocks`` and ``inline`` already
know.

The synthetic record is written into a temporary folder and deleted at the end (see
``bench_pages.py`` on passing ``--record`` when other benchmarks follow).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import re
import statistics
import subprocess
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

# Random documents: lines of block markup whose neighbours change what they are (a table's
# delimiter row, lazy lines, list items and their indentation, fences left open, quotes) ...
LINES = ["a", "b *c*", "", " ", "\t", "# h", "### h ##", "#", "```", "```py", "~~~", "    code", "  x", "- a", "- b",
         "* b", "+ c", "-     x", "-", "- *", "1. a", "2) b", "1.", "1234567890. x", "> q", ">", "> - x", "| a | b |",
         "|---|---|", "| :-: | --: |", "| x", "|-|", "a | b", "--- | ---", ":--", "[a]: b", "- [l]: x", "---", "***",
         "===", "<div>", "- a\n  b", "__u__", "`c`"]
# ... and runs of inline markup (emphasis, code, links, autolinks, escapes, entities, breaks).
PIECES = ["a", " ", "*", "**", "_", "__", "`", "``", "\\", "[", "]", "(", ")", "![", "<", ">", "&amp;", "&", "#",
          "http://x.y", "<http://a.b>", "$", "~", "!", "\n", "  \n", "x_y", "THEORY-1", "[a](b)", "[a](<b c>)",
          '[a](b "t")', "&#35;", "*a*", "_a_"]
_BETWEEN_TAGS = re.compile(r">\s+<")


def random_documents(count: int, seed: int = 1) -> list[str]:
    """``count`` documents, half of block lines, half of inline pieces."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        if n % 2 == 0:
            out.append("\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 10))) + rng.choice(["", "\n", "\n\n"]))
        else:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    return out


@contextmanager
def stderr_silenced() -> Iterator[None]:
    """Nothing written to this process's stderr (file descriptor 2) inside: a Rust panic prints
    its message there before Python sees it as an exception, which is counted instead."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def compare(texts: list[str], reference: Callable[[str], str], other: Callable[[str], str]
            ) -> tuple[list[str], list[str]]:
    """The texts whose HTML differs (whitespace between tags ignored), and those ``other`` panics on."""
    differ: list[str] = []
    panics: list[str] = []
    with stderr_silenced():
        for text in texts:
            _compare_one(text, reference, other, differ, panics)
    return differ, panics


def _compare_one(text: str, reference: Callable[[str], str], other: Callable[[str], str],
                 differ: list[str], panics: list[str]) -> None:
    try:
        theirs = other(text)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a Rust panic arrives as pyo3's PanicException, a BaseException
        panics.append(text)
        return
    if _BETWEEN_TAGS.sub("><", theirs).strip() != _BETWEEN_TAGS.sub("><", reference(text)).strip():
        differ.append(text)


def cpu_seconds(run: Callable[[str], Any], texts: list[str]) -> float:
    """CPU seconds of ``run`` over every text (each result dropped: a million tokens kept alive
    slow the collector)."""
    t0 = time.process_time()
    for text in texts:
        run(text)
    return time.process_time() - t0


def time_ours(texts: list[str], pattern: re.Pattern[str]) -> dict[str, float]:
    """CPU seconds of recordtool's parse and of ``compose_body`` over ``texts``, in this process."""
    from recordtool.record.mentions import parse
    from recordtool.render.prose import compose_body

    return {"parse": cpu_seconds(parse, texts),
            "compose_body": cpu_seconds(lambda text: compose_body(text, pattern), texts)}


def _in_pure_python(saved: Path) -> dict[str, float]:
    """``time_ours`` in a fresh process that runs recordtool's pure Python modules."""
    env = {**os.environ, "RECORDTOOL_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, __file__, "--time-ours", str(saved)], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=positive, default=10_000, help="entries of the synthetic record (default 10000)")
    parser.add_argument("--rounds", type=positive, default=4, help="rounds of each, turn about (default 4)")
    parser.add_argument("--record", type=Path, help="a project folder to use instead of a synthetic record")
    parser.add_argument("--random", type=positive, default=20_000, help="random documents compared (default 20000)")
    parser.add_argument("--time-ours", type=Path, help=argparse.SUPPRESS)  # (a child: _in_pure_python)
    args = parser.parse_args()
    if args.time_ours is not None:
        texts, (source, flags) = pickle.loads(args.time_ours.read_bytes())
        print(json.dumps(time_ours(texts, re.compile(source, flags))))
        return

    from markdown_it import MarkdownIt

    from recordtool import compiled as compiled_modules
    from recordtool.record.mentions import parse
    from recordtool.record.project import open_project
    from recordtool.render.prose import compose_body

    try:
        from markdown_it_pyrs import MarkdownIt as CompiledMarkdownIt  # type: ignore[import-not-found]
    except ImportError:
        CompiledMarkdownIt = None

    with tempfile.TemporaryDirectory(prefix="bench-parsers-") as scratch:
        root, what = record_or_synthetic(args.record, Path(scratch), args.entries)
        project = open_project(root=root)
        pattern = project.config.id_pattern
        entries = project.record.entries
        texts = [text for entry_id in list(entries) for _field, text in entries[entry_id].prose()]
    if not texts:
        raise SystemExit(f"{what} holds no prose: nothing to parse")

    reference = MarkdownIt("commonmark").enable("table")
    runs: dict[str, Callable[[str], Any]] = {
        "markdown-it-py parse": reference.parse,
        "recordtool parse": parse,
        "compose_body": lambda text: compose_body(text, pattern),
    }
    compiled = None
    if CompiledMarkdownIt is not None:
        compiled = CompiledMarkdownIt("commonmark").enable("table")
        runs["markdown-it-pyrs tree"] = compiled.tree
    spent: dict[str, list[float]] = {name: [] for name in runs}
    # Compiled, recordtool's rows again with its pure Python modules, in a fresh process each round.
    also_pure = compiled_modules.running_compiled()
    with tempfile.TemporaryDirectory(prefix="bench-parsers-texts-") as scratch:
        saved = Path(scratch) / "texts.pickle"
        saved.write_bytes(pickle.dumps((texts, (pattern.pattern, pattern.flags))))
        for n in range(args.rounds):
            for name, run in list(runs.items())[:: 1 if n % 2 == 0 else -1]:
                spent[name].append(cpu_seconds(run, texts))
            if also_pure:
                for name, seconds in _in_pure_python(saved).items():
                    spent.setdefault(f"{name.replace('parse', 'recordtool parse')} (pure)", []).append(seconds)

    print(f"{what}: {len(texts):,} prose texts, {sum(map(len, texts)) / 1e6:.1f} MB; {args.rounds} round{'s' if args.rounds > 1 else ''} turn about, "
          f"CPU seconds (load {os.getloadavg()[0]:.1f}); recordtool's modules: {compiled_modules.state()}"
          + ("; (pure): its pure Python modules, in a fresh process each round" if also_pure else ""))
    base = statistics.median(spent["markdown-it-py parse"])
    for name, times in spent.items():
        median = statistics.median(times)
        print(f"  {name:24s} {median:7.2f} s  ({' '.join(f'{t:.2f}' for t in times)})  {median / base:5.2f}x markdown-it-py's")
    if compiled is None:
        print("markdown-it-pyrs is not installed (pip install markdown-it-pyrs): its figures left out")
        return

    for label, documents in (("the record's texts", texts), (f"{args.random:,} random documents", random_documents(args.random))):
        differ, panics = compare(documents, reference.render, compiled.render)
        print(f"markdown-it-pyrs against markdown-it-py on {label}: {len(differ):,} of {len(documents):,} parsed "
              f"otherwise (their HTML differs), {len(panics):,} panics")
        for text in differ[:3]:
            print(f"  differs: {text!r}")
        for text in panics[:3]:
            print(f"  panics:  {text!r}")


if __name__ == "__main__":
    main()
