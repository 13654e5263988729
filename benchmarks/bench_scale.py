"""Validate and render at scale, each beside its floor measured in the same run.

    python3 benchmarks/bench_scale.py [--entries 10000] [--100k] [--jobs 2] [--rounds 3] [--edits 3]
    python3 benchmarks/bench_scale.py --write OUT N [--seed S]    # only write a synthetic record

The record is synthetic, written into benchmarks/out/scale-N/ (``generate_record``, importable
by tests and the other benchmarks): 30% literature, 30% notes, 40% claims; each entry cites one
to four earlier ones with a typed relation, and its body is ordinary research Markdown of 1 to
4 KB (headings, emphasis, links, inline code and math, lists, block quotes, small tables,
fenced code) mentioning two to eight other ids (about 15% also mention one that is not in the
record). One claim in ten names a toy check (``TOY_CHECK``); with ``--verified`` they are
verified first, so that every command reads their verdicts and render copies their figures.

recordtool is driven only through its command line, each run a fresh process, with ``-j J``:

- cold ``validate`` and ``render``: nothing kept from an earlier run (the cache folder set
  aside), render into a folder never used before; its memory is the peak of all its processes'
  proportional set sizes summed (a page shared by a parent and its forked workers counted once),
  sampled every 0.1 s from /proc;
- one edit: one entry's body gets a new word, then ``validate``; another entry's, then
  ``render``; each command sees exactly one edit, its own.

The floors, measured in the same run:

- the one-process floor, in one fresh process: PyYAML's C loader over every entry file,
  markdown-it-py's parse (CommonMark and tables) of every body, and writing the pages the cold
  render wrote (their bytes, into a new folder). A cold validate is compared with the first
  two, a cold render with all three;
- the import floor: a fresh ``python3 -c "import click, pydantic, yaml, markdown_it"``, what
  a command that reads the record imports before it reads a file; the one-edit commands are
  compared with it.

What is set aside is deleted at the end, not just before a run: on an ext4 disk without a
journal, creating files is several times slower in the minutes after many were deleted.
"""

from __future__ import annotations

import argparse
import compileall
import ctypes
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ASIDE = OUT / ".set-aside"

# ---------------------------------------------------------------------------------------------
# The synthetic record

WORDS = ["attention", "head", "circuit", "residual", "stream", "token", "position", "layer", "path", "composition",
         "induction", "previous", "copying", "eigenvalue", "matrix", "query", "key", "value", "output", "embedding",
         "unembedding", "model", "training", "loss", "gradient", "feature", "superposition", "neuron", "activation",
         "probe", "ablation", "patching", "logit", "score", "pattern", "virtual", "direct", "bilinear", "rank",
         "norm", "bias", "softmax", "context", "sequence"]
TAGS = [f"topic-{i}" for i in range(40)] + ["induction-heads", "attention", "composition", "anthology-candidate"]
KINDS = (("LIT", "literature", "literature", 0.3), ("NOTE", "note", "notes", 0.3), ("THEORY", "theory", "theory", 0.4))
RELATIONS = {"LIT": ["extends", "contradicts", "supports"], "NOTE": ["paper"], "THEORY": ["source", "uses", "refines"]}

PYPROJECT = """[tool.recordtool]
record = "record"
checks = "checks"

[tool.recordtool.kinds]
LIT = { kind = "literature", folder = "literature" }
NOTE = { kind = "note", folder = "notes" }
THEORY = { kind = "theory", folder = "theory" }
"""

# The check that one claim in ten names (``checks.toy:measure``), written to checks/toy.py by a
# benchmark that verifies the record. Fast and always the same; each run leaves two figures of
# about 25 KB with a title and a caption, as the shipped record's checks do.
TOY_CHECK = '''"""A toy check: fast and always the same; each run leaves two small figures."""

import random
import struct
import zlib

METRICS = ("error",)


def _png(path, seed: int, width: int = 160, height: int = 120) -> None:
    """A PNG of ``width`` x ``height`` (RGB): noise in two rows of five, blank elsewhere."""
    rng = random.Random(seed)
    rows = []
    for y in range(height):
        row = bytes(rng.getrandbits(8) for _ in range(3 * width)) if y % 5 < 2 else bytes(3 * width)
        rows.append(b"\\0" + row)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def measure(ctx, *, size: int = 1, noise: bool = False) -> dict[str, float]:
    for n, name in enumerate(("error.png", "trace.png")):
        _png(ctx.figure(name, title=f"The {name[:-4]} at size {size}",
                        caption="A toy figure: noise in two rows of five."), ctx.seed * 1000 + size * 10 + n + noise)
    return {"error": 1.0 if noise else 0.0}
'''

SYMBOLS = ["W_{OV}", "W_{QK}", "W_O W_V", "\\lambda_i", "A^{h}", "x_{t-1}", "\\sum_h A^h", "\\|W\\|_F"]
CODE = ["ctx.seed", "model.blocks[0]", "torch.einsum", "W_QK", "attn_only=True", "n_heads=4", "lr=1e-3",
        "cache['pattern']", "seq_len", "layer_norm=False"]
SNIPPETS = [
    ["scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)", "pattern = scores.softmax(dim=-1)",
     "out = pattern @ v"],
    ["def composition(w_a, w_b):", "    num = (w_a @ w_b).norm()", "    return num / (w_a.norm() * w_b.norm())"],
    ["for step in range(steps):", "    loss = model(batch).loss", "    loss.backward()", "    opt.step()",
     "    opt.zero_grad()"],
    ["eig = torch.linalg.eigvals(w_ov)", "ratio = eig.real.sum() / eig.abs().sum()", "print(f\"{ratio:.3f}\")"],
]


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _sentence(rng: random.Random, mention: str | None = None) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    if mention:
        words.insert(rng.randint(1, len(words) - 1), mention)
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))


def _rich_sentence(rng: random.Random, mention: str | None = None) -> str:
    """A sentence with, now and then, emphasis, a link, inline code or inline math."""
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    for _ in range(rng.randint(0, 2)):
        i = rng.randrange(1, len(words))
        kind = rng.random()
        if kind < 0.3:
            words[i] = f"*{words[i]}*" if rng.random() < 0.6 else f"**{words[i]}**"
        elif kind < 0.5:
            words[i] = f"[{words[i]} {rng.choice(WORDS)}](https://example.org/{rng.choice(WORDS)}/{rng.randint(1, 999)})"
        elif kind < 0.75:
            words[i] = f"`{rng.choice(CODE)}`"
        else:
            words[i] = f"${rng.choice(SYMBOLS)}$"
    if mention:
        words.insert(rng.randint(1, len(words) - 1), mention)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _block(rng: random.Random, kind: float, more: Callable[[], str | None], todo: list[str]) -> str:
    """One block of a body: a paragraph, list, quote, table or code (by ``kind``); ``more``
    gives the next id to mention, or None."""
    if kind < 0.45:
        return " ".join(_rich_sentence(rng, more()) for _ in range(rng.randint(2, 5)))
    if kind < 0.57:
        return "\n".join(f"- {_rich_sentence(rng, more())}" for _ in range(rng.randint(2, 5)))
    if kind < 0.67:
        return "\n".join(f"{i}. {_rich_sentence(rng, more())}" for i in range(1, rng.randint(3, 6)))
    if kind < 0.75:
        return "\n".join(f"> {_rich_sentence(rng, more())}" for _ in range(rng.randint(1, 3)))
    if kind < 0.85:
        rows = ["| metric | value | note |", "| --- | ---: | --- |"]
        for _ in range(rng.randint(2, 4)):
            note = more() or _words(rng, 1, 3)
            rows.append(f"| {rng.choice(WORDS)} {rng.choice(WORDS)} | {rng.uniform(0, 10):.3f} | {note} |")
        return "\n".join(rows)
    if kind < 0.93:
        return "\n".join(["```python", *rng.choice(SNIPPETS), "```"])
    return " ".join(_rich_sentence(rng, todo.pop() if todo else None) for _ in range(rng.randint(1, 3)))


def _markdown(rng: random.Random, mentions: list[str], code_id: str | None) -> str:
    """A research note in Markdown of 1 to 4 KB, with every id of ``mentions`` in its prose."""
    target = rng.randint(1024, 3584)  # the last block may add half a kilobyte
    todo = list(mentions)
    rng.shuffle(todo)

    def take() -> str | None:
        return todo.pop() if todo and rng.random() < 0.5 else None

    blocks: list[str] = []
    size = 0
    while size < target or todo:
        kind = rng.random()
        if kind < 0.12 and (not blocks or not blocks[-1].startswith("#")):
            block = f"{'#' * rng.choice([2, 2, 3])} {_words(rng, 2, 5).capitalize()}"
        else:
            block = _block(rng, 0.12 if kind < 0.12 else kind, take, todo)
        blocks.append(block)
        size += len(block) + 2
    if code_id:
        blocks.append(f"The id `{code_id}` in code is not a mention.")
    return "\n\n".join(blocks)


def _entry(rng: random.Random, n: int, prefix: str, kind: str, entry_id: str, ids: list[str]) -> list[str]:
    """The lines of one entry's YAML file."""
    cited = rng.sample(ids, k=min(len(ids), rng.randint(1, 4))) if ids else []
    cited = [c for c in cited if not (prefix == "NOTE" and not c.startswith("LIT"))] or cited[:1]
    mentions = rng.sample(ids, k=min(len(ids), rng.randint(2, 8))) if ids else []
    if rng.random() < 0.15:
        mentions.append(f"THEORY-{10 * n + rng.randint(1, 50)}")  # not in the record
    code_id = rng.choice(ids) if ids and rng.random() < 0.1 else None
    lines = [
        f"id: {entry_id}",
        f"kind: {kind}",
        f"title: {_q(' '.join(rng.choices(WORDS, k=rng.randint(4, 9))).capitalize())}",
        f"status: {rng.choice(['active', 'active', 'active', 'draft', 'superseded'])}",
        f"version: {rng.randint(1, 3)}",
        f"tags: [{', '.join(sorted(set(rng.sample(TAGS, k=rng.randint(1, 3)))))}]",
        f"created: 2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
        "cites:",
        *[f"  - {{id: {c}, as: {rng.choice(RELATIONS[prefix])}}}" for c in cited],
    ]
    if not cited:
        lines[-1] = "cites: []"
    if prefix == "LIT":
        lines += ["reference:", f"  authors: [{_q('Author, A.')}, {_q('Writer, B.')}]",
                  f"  year: {rng.randint(1990, 2026)}", f"  title: {_q(' '.join(rng.choices(WORDS, k=6)))}",
                  "  venue: Synthetic Proceedings", f"  url: https://example.org/{entry_id}"]
    if prefix == "THEORY":
        lines += ["statement: >-", "  " + _sentence(rng, rng.choice(mentions) if mentions else None)]
        if rng.random() < 0.1:
            lines += ["checks:", "  - name: toy", "    run: checks.toy:measure",
                      f"    params: {{size: {rng.randint(1, 9)}}}", "    expect: {error: \"< 1e-9\"}",
                      "    control: {params: {noise: true}}"]
    body = _markdown(rng, mentions, code_id)
    return [*lines, "body: |", *["  " + line if line else "" for line in body.splitlines()]]


def generate_record(root: Path, n: int, seed: int = 0) -> None:
    """Write a synthetic project of ``n`` entries under ``root`` (the same for the same seed)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    counters = {prefix: 0 for prefix, *_ in KINDS}
    ids: list[str] = []
    for _prefix, _kind, folder, _share in KINDS:
        (root / "record" / folder).mkdir(parents=True, exist_ok=True)
    for _ in range(n):
        prefix, kind, folder, _share = rng.choices(KINDS, weights=[k[3] for k in KINDS])[0]
        counters[prefix] += 1
        entry_id = f"{prefix}-{counters[prefix]}"
        lines = _entry(rng, n, prefix, kind, entry_id, ids)
        (root / "record" / folder / f"{entry_id}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        ids.append(entry_id)


# ---------------------------------------------------------------------------------------------
# Measuring a command


@dataclass(slots=True)
class Run:
    seconds: float
    cpu: float  # user + system seconds of the command and the workers it reaped
    pss_mib: float  # every process of the command together, at the peak (PSS summed, sampled)
    code: int
    stdout: str
    stderr: str


_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())  # the kcmp(2) system call's number


def _same_memory(parent: int, child: int) -> bool:
    """Whether ``child`` still shares ``parent``'s address space (a ``vfork`` child before it
    starts its program shows its parent's whole memory in /proc: it must not be counted)."""
    if _KCMP is None:
        return False
    try:
        return bool(ctypes.CDLL(None, use_errno=True).syscall(_KCMP, parent, child, 1, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def tree_pss_kib(pid: int) -> int:
    """The proportional set sizes of ``pid`` and its descendants, summed (KiB; 0 off Linux).
    Every process is listed before any is read, so that a child forked meanwhile is not counted
    beside the parent it shares pages with."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except (OSError, ValueError):
            continue
        pids.append(current)
        todo.extend(c for c in children if not _same_memory(current, c))
    total = 0
    for current in pids:
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except (OSError, ValueError):
            continue
    return total


def run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Run ``args`` in a fresh process: wall and CPU time, and its processes' peak PSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.1):
            peak = max(peak, tree_pss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else b""), daemon=True)
    reader.start()
    err = proc.stderr.read() if proc.stderr else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    reader.join()
    return Run(seconds, usage.ru_utime + usage.ru_stime, peak / 1024, os.waitstatus_to_exitcode(status),
               b"".join(out).decode(errors="replace"), err.decode(errors="replace"))


def recordtool(args: list[str], cwd: Path) -> Run:
    """``python3 -m recordtool ARGS`` in ``cwd``; exit 0 or 1 (a finding) are fine, not a crash."""
    done = run([sys.executable, "-m", "recordtool", *args], cwd)
    if done.code not in (0, 1):
        raise SystemExit(f"recordtool {' '.join(args)} exited {done.code} in {cwd}: {done.stderr[-800:]}")
    return done


def compiled() -> str:
    """Compile recordtool's modules to bytecode, as installing it does (where Python is told
    not to write bytecode, every command would compile them again), and say so."""
    spec = importlib.util.find_spec("recordtool")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("recordtool is not importable here; install it first (see the README)")
    folder = spec.submodule_search_locations[0]
    compileall.compile_dir(folder, quiet=1)
    return f"recordtool from {folder}, compiled to bytecode first"


def set_aside(folder: Path) -> None:
    """Move ``folder`` out of the way, to be deleted at the end (see the docstring above)."""
    if folder.exists():
        ASIDE.mkdir(parents=True, exist_ok=True)
        folder.rename(ASIDE / f"{folder.name}-{time.time_ns()}")


# ---------------------------------------------------------------------------------------------
# The floors

IMPORTS = "import click, pydantic, yaml, markdown_it"


def _floor_here(root: Path, pages: Path, into: Path) -> dict[str, float]:
    """The one-process floor's three parts, in seconds (run in a fresh process: ``--floor``)."""
    import yaml
    from markdown_it import MarkdownIt

    files = sorted(p for p in (root / "record").glob("*/*.yaml") if p.parent.name not in ("verdicts", "pages"))
    written = {p.relative_to(pages): p.read_bytes() for p in pages.rglob("*") if p.is_file()
               and not p.name.startswith(".")}
    t0, cpu0 = time.perf_counter(), time.process_time()
    bodies = []
    for path in files:
        with open(path, "rb") as handle:
            data = yaml.load(handle, Loader=yaml.CSafeLoader)
        bodies.append(data.get("body") or "" if isinstance(data, dict) else "")
    t1 = time.perf_counter()
    parser = MarkdownIt("commonmark").enable("table")
    for body in bodies:
        parser.parse(body)
    t2 = time.perf_counter()
    for name, data in written.items():
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    t3 = time.perf_counter()
    return {"yaml": t1 - t0, "markdown": t2 - t1, "write": t3 - t2, "cpu": time.process_time() - cpu0,
            "files": len(files), "pages": len(written)}


def floor(root: Path, pages: Path) -> dict[str, float]:
    into = OUT / f"floor-pages-{time.time_ns()}"
    done = subprocess.run([sys.executable, __file__, "--floor", str(root), str(pages), str(into)],
                          check=True, capture_output=True, text=True)
    set_aside(into)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# ---------------------------------------------------------------------------------------------
# The benchmark


@dataclass(slots=True)
class Guard:
    what: str
    figure: float
    unit: str  # "s" or "MiB"
    floor: float | None  # in the figure's unit, measured in the same run
    limit: float | None  # issue 62's; None where it sets none
    by_ratio: bool = False  # the limit is on figure / floor, not on the figure itself

    def row(self) -> str:
        ratio = self.figure / self.floor if self.floor else None
        judged = ratio if self.by_ratio else self.figure
        if self.limit is None or judged is None:
            limit, ok = "-", "-"
        else:
            limit = f"<= {self.limit:,g}x floor" if self.by_ratio else f"<= {self.limit:,.4g} {self.unit}"
            ok = "ok" if judged <= self.limit else "NOT MET"
        return (f"| {self.what} | {self.figure:,.2f} {self.unit} | "
                f"{f'{self.floor:,.2f} {self.unit}' if self.floor else '-'} | {f'{ratio:.2f}x' if ratio else '-'} | "
                f"{limit} | {ok} |")


def header() -> None:
    """The first line every benchmark prints: what runs, on how many cores, how busy the machine is."""
    print(f"{compiled()}; {len(os.sched_getaffinity(0))} cores usable; load average {os.getloadavg()[0]:.1f}")


def report(guards: list[Guard]) -> None:
    """The last lines every benchmark prints: how busy the machine was, then the guards' table."""
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end\n")
    print("| guard | figure | floor | ratio | limit | ok? |\n|---|---|---|---|---|---|")
    for guard in guards:
        print(guard.row())


def edit(root: Path, rng: random.Random, word: str) -> None:
    """A new word at the start of the body of an entry picked at random."""
    path = rng.choice(sorted((root / "record").glob("*/*.yaml")))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("body: |\n  ", f"body: |\n  {word} ", 1), encoding="utf-8")


def cold(root: Path, jobs: list[str], rounds: int) -> tuple[list[Run], list[Run], Path]:
    """``rounds`` cold validates and renders; the folder the last render wrote."""
    validates, renders = [], []
    pages = root / "pages-cold"
    for k in range(rounds):
        set_aside(root / ".recordtool-cache")
        validates.append(recordtool(["validate", *jobs], root))
        set_aside(root / ".recordtool-cache")
        pages = root / f"pages-cold-{k}-{time.time_ns()}"
        renders.append(recordtool(["render", "-o", str(pages), *jobs], root))
    return validates, renders, pages


def one_edit(root: Path, jobs: list[str], edits: int) -> tuple[list[float], list[float], list[float]]:
    """Seconds of ``validate`` and ``render`` each after one edit of its own, and the import floor."""
    rng = random.Random(1)
    pages = ["-o", str(root / "pages")]
    recordtool(["render", *pages, *jobs], root)  # what render keeps, as a user's first render left it
    recordtool(["validate", *jobs], root)
    validates, renders, floors = [], [], []
    for k in range(edits):
        edit(root, rng, f"Revised{k}v")
        validates.append(recordtool(["validate", *jobs], root).seconds)
        floors.append(run([sys.executable, "-c", IMPORTS]).seconds)
        recordtool(["render", *pages, *jobs], root)  # takes that edit in, uncounted
        edit(root, rng, f"Revised{k}r")
        renders.append(recordtool(["render", *pages, *jobs], root).seconds)
        floors.append(run([sys.executable, "-c", IMPORTS]).seconds)
        recordtool(["validate", *jobs], root)
    return validates, renders, floors


def size(n: int, args: argparse.Namespace) -> list[Guard]:
    """Measure one size; its guards."""
    root = OUT / f"scale-{n}"
    set_aside(root)
    generate_record(root, n)
    jobs = ["-j", str(args.jobs)]
    if args.verified:
        (root / "checks").mkdir(exist_ok=True)
        (root / "checks" / "__init__.py").write_text("", encoding="utf-8")
        (root / "checks" / "toy.py").write_text(TOY_CHECK, encoding="utf-8")
        print(f"verified first: {recordtool(['verify', *jobs], root).stdout.strip().splitlines()[-1:]}")
    rounds = 1 if n >= 100_000 else args.rounds
    validates, renders, pages = cold(root, jobs, rounds)
    parts = floor(root, pages)
    validate_s, render_s = (statistics.median(r.seconds for r in runs) for runs in (validates, renders))
    read_floor = parts["yaml"] + parts["markdown"]
    page_floor = read_floor + parts["write"]
    memory = max(r.pss_mib for r in renders)
    render_cpu = statistics.median(r.cpu for r in renders)
    print(f"{n:,} entries, -j {args.jobs}, medians of {rounds}: cold validate {validate_s:.2f} s "
          f"(CPU {statistics.median(r.cpu for r in validates):.2f} s), cold render {render_s:.2f} s "
          f"(CPU {render_cpu:.2f} s, {memory:,.0f} MiB PSS at the peak, {int(parts['pages']):,} pages); "
          f"the floor {page_floor:.2f} s: YAML {parts['yaml']:.2f} s + markdown-it-py {parts['markdown']:.2f} s "
          f"+ writing the pages {parts['write']:.2f} s (CPU {parts['cpu']:.2f} s: the render's CPU over the "
          f"floor's, all processes, {render_cpu / parts['cpu']:.2f}x, which a busy machine changes least)", flush=True)
    v_edit, r_edit, imports = one_edit(root, jobs, args.edits)
    import_floor = statistics.median(imports)
    print(f"{n:,} entries, one edit, medians of {args.edits}: validate {statistics.median(v_edit):.2f} s, "
          f"render {statistics.median(r_edit):.2f} s; the import floor ({IMPORTS}) {import_floor:.3f} s", flush=True)
    # issue 62's limits: at 10,000 entries and at 100,000 (none at other sizes)
    tenk, large = n == 10_000, n == 100_000
    label = f"{n:,} entries"
    return [Guard(f"{label}: cold `validate -j {args.jobs}`", validate_s, "s", read_floor, 3.0 if tenk else None),
            Guard(f"{label}: cold `render -j {args.jobs}`", render_s, "s", page_floor,
                  1.5 if tenk else 2.0 if large else None, by_ratio=True),
            Guard(f"{label}: `validate` after a one-entry edit", statistics.median(v_edit), "s", import_floor, None),
            Guard(f"{label}: `render` after a one-entry edit", statistics.median(r_edit), "s", import_floor,
                  1.0 if tenk else 8.0 if large else None),
            Guard(f"{label}: cold `render` memory, all processes", memory, "MiB", None,
                  1.5e9 / 2**20 if large else None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--100k", dest="large", action="store_true", help="also 100,000 entries (one cold round)")
    parser.add_argument("--jobs", type=int, default=2, help="-j of every command")
    parser.add_argument("--rounds", type=int, default=3, help="cold runs of each command")
    parser.add_argument("--edits", type=int, default=3, help="one-edit runs of each command")
    parser.add_argument("--verified", action="store_true", help="verify the claims with a toy check first")
    parser.add_argument("--write", nargs=2, metavar=("OUT", "N"), help="only write a synthetic record of N entries")
    parser.add_argument("--seed", type=int, default=0, help="with --write")
    parser.add_argument("--floor", nargs=3, type=Path, help=argparse.SUPPRESS)  # ROOT PAGES INTO, in a fresh process
    args = parser.parse_args()
    if args.floor:
        print(json.dumps(_floor_here(*args.floor)))
        return
    if args.write:
        generate_record(Path(args.write[0]), int(args.write[1]), args.seed)
        return
    header()
    guards: list[Guard] = []
    try:
        for n in [args.entries] + ([100_000] if args.large else []):
            guards += size(n, args)
    finally:
        shutil.rmtree(ASIDE, ignore_errors=True)
    report(guards)


if __name__ == "__main__":
    main()
