"""Running a command in a fresh process and measuring it: wall time, CPU time (all its
processes), the peak resident set of its largest process, and the peak of all its processes
together, sampled every 0.1 s from /proc: their resident sets summed (RSS: a page shared
between a parent and its forked workers counted in each, so an upper bound) and their
proportional set sizes summed (PSS: such a page counted once). On a busy machine the wall
time grows with the load; the CPU time much less.

Also the floor the libraries set (``floor``): in one fresh process, ``yaml.CSafeLoader`` alone
over every entry file of a record, and markdown-it-py's parse (CommonMark plus tables, the
parser the pages are written from) of every entry's body. A command's time divided by the
floor (over its processes) is a ratio that the machine's load changes much less than the
time itself: measure the floor in the same run.

    python benchmarks/measure.py --floor RECORD_ROOT   # prints the floor as JSON
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def compiled(env: dict[str, str] | None = None, cwd: Path | None = None, more: tuple[Path, ...] = ()) -> str:
    """Compiles the modules of the recordtool that ``python -m recordtool`` imports with ``env``
    (asked of a fresh Python in ``cwd``, by default this folder, where ``-m`` puts it first on
    the path, and in another, where an installed one is found), and those under ``more``, to
    bytecode, as installing a package does; gives a line that says so, for the benchmark's
    header. Where the environment says not to write bytecode (``PYTHONDONTWRITEBYTECODE``, set
    on our machines) an editable install never gets any, and every command compiled
    recordtool's modules again: 0.13 s of a render after one edit of 10,000 entries (0.70 s
    instead of 0.57 s), which a recordtool installed from a wheel, or a second run where Python
    writes bytecode, does not pay."""
    import compileall

    folders: list[Path] = []
    for here in (cwd or Path.cwd(), Path(tempfile.gettempdir())):
        where = subprocess.run([sys.executable, "-c", "import os, recordtool; print(os.path.dirname(recordtool.__file__))"],
                               cwd=here, env=env, capture_output=True, text=True, check=False)
        if where.returncode != 0:
            continue
        folder = where.stdout.splitlines()[0]
        if Path(folder) not in folders:
            folders.append(Path(folder))
    if not folders:
        raise SystemExit("recordtool is not importable here; install it first (see the README)")
    folders += more
    for folder in folders:
        compileall.compile_dir(str(folder), quiet=1)
    written = "does not write" if sys.flags.dont_write_bytecode else "writes"
    return (f"modules compiled to bytecode first, as an install does ({', '.join(map(str, folders))}; "
            f"Python here {written} bytecode itself)")


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system seconds of the command and the workers it reaped
    system: float  # of which system seconds (the kernel's: creating and writing files, page faults)
    peak_mib: float  # the largest process's maximum resident set (os.wait4)
    all_mib: float  # every process of the command together, sampled (PSS summed)
    all_rss_mib: float  # every process of the command together, sampled (RSS summed)
    code: int
    stdout: str
    stderr: str


def tree_kib(pid: int) -> tuple[int, int]:
    """The resident set and proportional set sizes of ``pid`` and its descendants, each summed
    (KiB): RSS counts a page shared by several of them once in each, PSS once in all (the
    memory they hold between them). Linux; (0, 0) elsewhere.

    Two moments would count memory twice, so neither is read: (1) the processes are all
    listed before any is read (a child forked after its parent was read would be read sharing
    pages its parent was counted with whole); (2) a child that shares its parent's address space is left out (``same_memory``):
    a process starting a program (``subprocess``, and ``multiprocessing``'s ``spawn``, which
    starts fresh interpreters) uses ``vfork``, and until the child runs the new program its
    /proc files show the whole of its parent's memory. On a busy machine that moment lasts
    long enough to be sampled: ``validate -j 2`` of 100,000 entries once printed 1,397 MiB
    PSS where it holds about 1,000 (the main process, about 700 MiB when it starts its
    workers, counted twice)."""
    pids: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as handle:
                children = [int(c) for c in handle.read().split()]
        except (OSError, ValueError):
            continue
        pids.append(current)
        todo.extend(c for c in children if not same_memory(current, c))
    rss = pss = 0
    for current in pids:
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return rss, pss


_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())  # the kcmp(2) system call's number
_KCMP_VM = 1


def same_memory(parent: int, child: int) -> bool:
    """Whether ``child`` shares ``parent``'s address space (a ``vfork`` child that has not yet
    started its program), by ``kcmp(2)``; False where that cannot be told."""
    if _KCMP is None:
        return False
    try:
        return bool(_libc().syscall(_KCMP, parent, child, _KCMP_VM, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


MEMORY_AIM = 1.5e9  # bytes: issue 14's aim for a cold validate and render of 100,000 entries, all processes
AIM_ENTRIES = 100_000


def memory_aim(command: str, entries: int, jobs: int, pss_mib: float) -> str | None:
    """A line saying whether ``pss_mib`` (the peak PSS of all of a command's processes) meets
    the aim of 1.5 GB (1.5e9 bytes, 1,430 MiB) at 100,000 entries (beyond, the aim grown in
    proportion); None below 100,000 entries, where the interpreter's own memory weighs too much
    for a share of the aim to mean anything."""
    if entries < AIM_ENTRIES:
        return None
    aim = MEMORY_AIM / 2**20 * entries / AIM_ENTRIES
    verdict = "met" if pss_mib < aim else "NOT met"
    return (f"memory: {command} -j {jobs} of {entries:,} entries held {pss_mib:,.0f} MiB PSS summed over its "
            f"processes ({pss_mib * 2**20 / 1e9:.2f} GB) against the aim of {MEMORY_AIM * entries / AIM_ENTRIES / 1e9:.1f}"
            f" GB ({aim:,.0f} MiB): {verdict}, {aim - pss_mib:+,.0f} MiB to spare")


def tree_pss_kib(pid: int) -> int:
    """The proportional set size of ``pid`` and its descendants, summed (KiB)."""
    return tree_kib(pid)[1]


def run(args: list[str], cwd: Path | None = None, every: float = 0.1) -> Run:
    """Run ``args`` and measure it; the processes' PSS is sampled every ``every`` seconds
    (reading it walks their page tables: not much more often)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_pss = peak_rss = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_pss, peak_rss
        while not done.wait(every):
            rss, pss = tree_kib(proc.pid)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)

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
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024, peak_pss / 1024, peak_rss / 1024,
               proc.returncode, b"".join(out).decode(), err.decode())


def set_aside(folder: Path, bin_: Path) -> None:
    """Move ``folder`` (what an earlier run left: the entry cache, the pages, a whole record) into
    ``bin_`` (a folder on the same file system), instead of deleting it just before a run: on this
    machine's disk (ext4 without a journal) creating a file costs up to ten times more in the
    minutes after many files were deleted (``bench_render.py`` says why), and a cold run creates
    hundreds (the entry cache of 10,000 entries is 770 files), which a user's first run on a fresh
    clone does not pay for. The caller deletes ``bin_`` once every run is done."""
    if folder.exists():
        bin_.mkdir(parents=True, exist_ok=True)
        folder.rename(bin_ / f"{folder.name}-{time.time_ns()}")


def positive(text: str) -> int:
    """An argument that is a whole number of at least 1 (argparse's ``type``)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not at least 1")
    return value


def record_or_synthetic(record: Path | None, scratch: Path, entries: int, plain: bool = False) -> tuple[Path, str]:
    """The project folder a benchmark measures and how it names it: ``record`` when given (a
    ``--record`` folder), else a synthetic record of ``entries`` entries written into
    ``scratch`` (``synthetic.py``, seed 0; bodies of research Markdown unless ``plain``)."""
    if record is not None:
        root = record.resolve()
        return root, f"the record at {root}"
    from synthetic import generate_record  # type: ignore[import-not-found]

    generate_record(scratch, entries, seed=0, plain=plain)
    return scratch, f"a synthetic record of {entries:,} entries, bodies of " + (
        "plain sentences" if plain else "research Markdown")


@dataclass
class Floor:
    yaml_s: float  # yaml.CSafeLoader over every entry file, one process
    markdown_s: float  # markdown-it-py's parse of every body, one process
    files: int
    # the same work shared by ``floor``'s ``processes`` at once (a slice of the files each), the
    # wall time until the last was done; None for one process
    together_s: float | None = None

    @property
    def seconds(self) -> float:
        return self.yaml_s + self.markdown_s

    def per(self, processes: int) -> float:
        """The floor shared by ``processes`` processes."""
        return self.seconds / max(1, processes)

    def together(self) -> float:
        """The floor as the processes ``floor`` was given did it at once (one: ``seconds``)."""
        return self.together_s if self.together_s is not None else self.seconds


def floor(root: Path, processes: int = 1) -> Floor:
    """The libraries' floor for the record under ``root`` (a project folder), measured in a
    fresh process (this file's ``--floor``); with ``processes`` over 1, also the same work done
    by that many fresh processes at once, each on its share of the files (``together_s``): how
    much faster this machine does it with that many processes at that moment. (Its cores may
    be threads of fewer physical cores, or busy with other work: then ``together_s`` is more
    than ``seconds / processes``, and so is a command's time at that ``-j``.)"""
    done = subprocess.run([sys.executable, __file__, "--floor", str(root)], check=True, capture_output=True,
                          text=True)
    found = Floor(**json.loads(done.stdout.strip().splitlines()[-1]))
    if processes > 1:
        shares = [subprocess.Popen([sys.executable, __file__, "--floor", str(root), "--share", f"{k}/{processes}"],
                                   stdout=subprocess.PIPE, text=True) for k in range(processes)]
        outs = [share.communicate()[0] for share in shares]
        if any(share.returncode for share in shares):
            raise SystemExit(f"the floor's shares failed for {root}")
        parts = [json.loads(out.strip().splitlines()[-1]) for out in outs]
        found.together_s = max(part["yaml_s"] + part["markdown_s"] for part in parts)
    return found


def _floor_here(root: Path, share: tuple[int, int] = (0, 1)) -> dict[str, float]:
    import yaml
    from markdown_it import MarkdownIt

    files = sorted(p for p in (root / "record").rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
                   and p.parent.name not in ("verdicts", "pages"))
    files = files[share[0]::share[1]]
    t0 = time.perf_counter()
    bodies = []
    for path in files:
        with open(path, "rb") as handle:
            data = yaml.load(handle, Loader=yaml.CSafeLoader)
        body = data.get("body") if isinstance(data, dict) else None
        bodies.append(body if isinstance(body, str) else "")
    t1 = time.perf_counter()
    parser = MarkdownIt("commonmark").enable("table")
    for body in bodies:
        parser.parse(body)
    t2 = time.perf_counter()
    return {"yaml_s": t1 - t0, "markdown_s": t2 - t1, "files": len(files)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--floor", type=Path, required=True, help="a project folder: print its floor as JSON")
    parser.add_argument("--share", default="0/1", help="K/N: only the K-th of every N entry files (0-based)")
    args = parser.parse_args()
    k, n = (int(x) for x in args.share.split("/"))
    print(json.dumps(_floor_here(args.floor, (k, n))))
