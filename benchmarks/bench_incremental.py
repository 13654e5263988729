"""Benchmark: `recordtool validate` and `render` after editing one entry, against a cold run.

    python benchmarks/bench_incremental.py [--sizes 1000,10000] [--100k] [--jobs 2] [--rounds 5] [--cold-rounds 3] [--verified] [--many]

On a synthetic record of research Markdown (benchmarks/synthetic.py, written afresh into
benchmarks/out/incremental-N/, which this benchmark edits), each command runs in a fresh
process (imports included). What a run replaces (an earlier record, the pages before a cold
render) is set aside and deleted when the benchmark ends, not just before a run: creating files
right after many were deleted costs ten times more here (``measure.set_aside``).

- cold: ``validate --no-cache`` and ``render --no-cache`` into an empty pages folder (every
  file read, every page composed), ``--cold-rounds`` times;
- one edit: an entry picked at random gets a new word at the start of its body (row "body":
  its page changes, and when the first sentence mentions an id, as in about a third of them,
  the pages that quote it or show its mentions are composed again), at a place picked at random
  in its body (row "prose": most places are in sentences that mention no id, and then no
  other page is composed), or in its title and at the start of its body (the index pages that
  list it change too; row "title"), then ``validate``; another entry the same, then
  ``render``; ``--rounds`` times each. Row "cited" is a title edit of one of the 20 entries
  cited most (the record's foundational papers: each of their neighbours' pages shows the new
  title, and the graph is asked about every one of them), which random picks seldom meet.
  Each measured command sees exactly one edit, its own: after the measured ``validate`` an
  uncounted ``render`` takes that edit in, and after the measured ``render`` an uncounted
  ``validate`` (until 3 December 2026 the render measured also met the edit the validate
  before it had read: two edits, two much-cited ones in row "cited").
  The entry cache (.recordtool-cache/entries/), the manifest and the snapshot are those the
  previous runs left, as for a user; before the first, one uncounted edit and render fill what
  render keeps (``--no-cache`` keeps nothing).

Printed per size: the medians (wall time, and CPU time of all the command's processes, which a
busy machine stretches less), the speedup, how many pages the one-edit render wrote, and
whether the last one-edit validate printed exactly what a cold one prints; then whether the
one-edit medians are within what issue 14 aims at (under 1 s at 10,000 entries, 5 s at 100,000),
each beside its anchor, measured in the same run: the import floor, a fresh
``python3 -c "import click, pydantic, yaml, markdown_it"`` (what every one-edit command imports
before it reads a file), timed after each one-edit command. The aims are in seconds and this
machine's speed changes from hour to hour; the floor changes with it, so the one-edit time as a
multiple of the floor says whether the command or the machine was slower.

With ``--many``, last, every other entry gets a new word in its body (as when a checkout of
another branch changes much of the record), then ``validate`` and ``render`` run once each:
their time against the cold runs' (each should take no longer than a cold one).

With ``--verified`` the claims that have checks (one in ten claims: a toy check, one seed and a
control, each run leaving two figures of about 23 KB with a title and caption) are verified
first, so that each command reads and judges their verdicts, and each render has their figures
to copy, as on a record whose claims were verified.

recordtool's modules are compiled first (``measure.compiled``, as installing it does), so that no
run pays for compiling them when the environment says not to write bytecode.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ASIDE = HERE / "out" / ".set-aside"  # what a run replaces, deleted once every run is done
sys.path.insert(0, str(HERE))

from measure import Run, compiled, run, set_aside  # noqa: E402
from synthetic import TOY_CHECK, generate_record  # noqa: E402

FLOOR = "import click, pydantic, yaml, markdown_it"  # what a one-edit command imports before it reads a file


def import_floor() -> float:
    """Seconds a fresh Python takes to import what every one-edit command imports (``FLOOR``)."""
    return run([sys.executable, "-c", FLOOR]).seconds


def once(args: list[str], cwd: Path) -> Run:
    done = run([sys.executable, "-m", "recordtool", *args], cwd)
    if done.code not in (0, 1):
        raise SystemExit(f"recordtool {' '.join(args)} failed in {cwd}: {done.stderr[-500:]}")
    return done


EDITS = ("body", "prose", "title", "cited")  # a new word at the body's start; anywhere in it; in the title too;
# in the title of a much-cited entry
CITED_TOP = 20  # the entries cited most, among which row "cited" picks
_CITED = re.compile(r"\{id: ([A-Z]+-[0-9]+),")


def most_cited(folder: Path) -> list[Path]:
    """The files of the ``CITED_TOP`` entries cited most in the record under ``folder``."""
    files = sorted((folder / "record").glob("*/*.yaml"))
    counts = collections.Counter(i for path in files for i in _CITED.findall(path.read_text(encoding="utf-8")))
    by_id = {path.stem: path for path in files}
    return [by_id[i] for i, _count in counts.most_common() if i in by_id][:CITED_TOP]


def edit(folder: Path, rng: random.Random, round_: int, what: str, cited: list[Path] | None = None) -> Path:
    """A new word at the start of the body (``what`` "body"; with "title", in the title too),
    or between two words picked at random in the body ("prose"), of an entry picked at random;
    with "cited", in the title and at the body's start of one of ``cited`` picked at random."""
    if what == "cited" and cited:
        path = rng.choice(cited)
    else:
        path = rng.choice(sorted((folder / "record").glob("*/*.yaml")))
    text = path.read_text(encoding="utf-8")
    if what == "prose":
        start = text.index("body: |\n") + len("body: |\n")  # (the body is the last field the generator writes)
        spots = [i + 1 for i in range(start + 1, len(text) - 1)
                 if text[i] == " " and text[i - 1].isalpha() and text[i + 1].isalpha()]
        at = rng.choice(spots)
        path.write_text(f"{text[:at]}revised{round_} {text[at:]}", encoding="utf-8")
        return path
    text = text.replace("body: |\n  ", f"body: |\n  Revised{round_} ", 1)
    if what in ("title", "cited"):
        text = text.replace('title: "', f'title: "Revised{round_} ', 1)
    path.write_text(text, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--100k", dest="large", action="store_true", help="add 100,000 entries (slow: the cold runs "
                        "take minutes)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="-j of every command "
                        "(default: every core usable here)")
    parser.add_argument("--rounds", type=int, default=5, help="one-edit runs of each command per size")
    parser.add_argument("--validate-only", action="store_true", help="measure validate alone: the cold run is "
                        "the one that fills the cache (every file parsed), no render (at 100,000 entries a cold "
                        "render takes many minutes)")
    parser.add_argument("--cold-rounds", type=int, default=3, help="cold runs of each command per size (one at "
                                                                      "100,000 entries)")
    parser.add_argument("--many", action="store_true", help="last, a new word in every other entry's body (as a "
                        "checkout of another branch does), then validate and render once each, against the cold runs")
    parser.add_argument("--verified", action="store_true", help="verify the record's claims that have checks first "
                        "(one in ten: a toy check leaving figures), so that every render reads and judges their verdicts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] + ([100_000] if args.large else [])
    j = ["-j", str(args.jobs)]
    print(f"{os.cpu_count()} cores here, {len(os.sched_getaffinity(0))} usable; every command with -j {args.jobs}; "
          "synthetic records, bodies of research Markdown")
    print("(cold: --no-cache, into an empty pages folder; one edit: a new word at the start of one entry's body "
          f"(body; and in its title: title; the same for one of the {CITED_TOP} entries cited most: cited) or anywhere "
          "in it (prose), then the command with the cache, manifest and snapshot of the runs before; medians; load: "
          "1-minute average after)")
    print(compiled())
    print(f"{'entries':>8} {'edit':>6} {'validate cold s':>16} {'one edit s':>11} {'cpu s':>6} {'x':>6}   "
          f"{'render cold s':>14} {'one edit s':>11} {'cpu s':>6} {'x':>6} {'pages written':>14} {'same output':>12}  load")
    aims: list[str] = []
    for n in sizes:
        folder = HERE / "out" / f"incremental-{n}"
        set_aside(folder, ASIDE)  # (not deleted just before: see ``measure.set_aside``)
        generate_record(folder, n, seed=0)
        if args.verified:
            (folder / "checks").mkdir(exist_ok=True)
            (folder / "checks" / "__init__.py").write_text("", encoding="utf-8")
            (folder / "checks" / "toy.py").write_text(TOY_CHECK, encoding="utf-8")
            verified = once(["verify", *j], folder)
            print(f"{n:>8} verified first: {verified.stdout.strip().splitlines()[-1]}", flush=True)
        pages = folder / "record" / "pages"
        cold_validate: list[float] = []
        cold_render: list[float] = []
        for _ in range(0 if args.validate_only else args.cold_rounds if n < 100_000 else 1):
            set_aside(pages, ASIDE)
            cold_render.append(once(["render", "--no-cache", *j], folder).seconds)
            cold_validate.append(once(["validate", "--no-cache", *j], folder).seconds)
        filled = once(["validate", *j], folder)  # the cache, as the last run left it
        if args.validate_only:
            cold_validate.append(filled.seconds)
        else:
            # The cold renders ran with --no-cache, which keeps none of what render works out (the
            # pages' keys), and a render with no input changed since the last answers from its
            # snapshot without working anything out: so one uncounted edit and render first, as a
            # user's first edit after a cold render; else the first render measured works out
            # every page's key (at 100,000 entries, 25 s instead of about 5).
            edit(folder, random.Random(-n), 0, "body")
            once(["render", *j], folder)
        rng = random.Random(n)
        cited = most_cited(folder)
        results = []
        floors: list[float] = []  # the import floor, timed after each one-edit command
        for what in EDITS:
            validate: list[Run] = []
            render: list[Run] = []
            written: list[int] = []
            for round_ in range(args.rounds):
                edit(folder, rng, round_, what, cited)
                validate.append(once(["validate", *j], folder))
                floors.append(import_floor())
                if not args.validate_only:
                    once(["render", *j], folder)  # (uncounted: the render measured sees its own edit only)
                    edit(folder, rng, round_, what, cited)
                    done = once(["render", *j], folder)
                    render.append(done)
                    written.append(int(done.stdout.rsplit(": ", 1)[-1].split(" written")[0]))
                    floors.append(import_floor())
                    once(["validate", *j], folder)  # (uncounted: so does the next validate measured)
            results.append((what, validate, render, written))
        floor = statistics.median(floors)
        aims.append(f"{n:>8} import floor {floor:.3f} s (the median of {len(floors)}, timed after each one-edit command)")
        last = once(["validate", *j], folder)
        cold = once(["validate", "--no-cache", *j], folder)
        same = (last.code, last.stdout, last.stderr) == (cold.code, cold.stdout, cold.stderr)
        cv = statistics.median(cold_validate)
        aim = 1.0 if n <= 10_000 else 5.0
        for what, validate, render, written in results:
            v = statistics.median(r.seconds for r in validate)
            v_cpu = statistics.median(r.cpu for r in validate)
            shown = f"{'-':>14} {'-':>11} {'-':>6} {'-':>6} {'-':>14}"
            if render:
                cr = statistics.median(cold_render)
                rw = statistics.median(r.seconds for r in render)
                r_cpu = statistics.median(r.cpu for r in render)
                shown = f"{cr:>14.2f} {rw:>11.2f} {r_cpu:>6.2f} {cr / rw:>6.1f} {statistics.median(written):>14.0f}"
                aims.append(f"{n:>8} {what:>6} render after one edit {rw:.2f} s, {rw / floor:.1f}x the import floor "
                            f"(aim: under {aim:g} s): {'met' if rw < aim else 'NOT met'}")
            aims.append(f"{n:>8} {what:>6} validate after one edit {v:.2f} s, {v / floor:.1f}x the import floor "
                        f"(aim: under {aim:g} s): {'met' if v < aim else 'NOT met'}")
            print(f"{n:>8} {what:>6} {cv:>16.2f} {v:>11.2f} {v_cpu:>6.2f} {cv / v:>6.1f}   {shown} "
                  f"{'yes' if same else 'NO':>12}  {os.getloadavg()[0]:4.1f}", flush=True)
        if args.many:
            files = sorted((folder / "record").glob("*/*.yaml"))
            for path in files[::2]:
                path.write_text(path.read_text(encoding="utf-8").replace("body: |\n  ", "body: |\n  Branch ", 1),
                                encoding="utf-8")
            many_v = once(["validate", *j], folder).seconds
            line = f"validate {many_v:.2f} s ({many_v / cv:.2f} of a cold one)"
            if not args.validate_only:
                many_r = once(["render", *j], folder).seconds
                line += f", render {many_r:.2f} s ({many_r / statistics.median(cold_render):.2f} of a cold one)"
            print(f"{n:>8} after {len(files[::2])} of {len(files)} entries changed: {line}", flush=True)
    print("\nissue 14's aims, by the median wall time after one edit (a busy machine stretches it), each beside "
          f"the import floor measured between the runs ({FLOOR!r} in a fresh Python; median per size):")
    for line in aims:
        print(line)
    shutil.rmtree(ASIDE, ignore_errors=True)


if __name__ == "__main__":
    main()
