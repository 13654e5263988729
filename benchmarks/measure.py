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
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system seconds of the command and the workers it reaped
    peak_mib: float  # the largest process's maximum resident set (os.wait4)
    all_mib: float  # every process of the command together, sampled (PSS summed)
    all_rss_mib: float  # every process of the command together, sampled (RSS summed)
    code: int
    stdout: str
    stderr: str


def tree_kib(pid: int) -> tuple[int, int]:
    """The resident set and proportional set sizes of ``pid`` and its descendants, each summed
    (KiB): RSS counts a page shared by several of them once in each, PSS once in all (the
    memory they hold between them). Linux; (0, 0) elsewhere."""
    rss = pss = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
                        break
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as handle:
                todo.extend(int(c) for c in handle.read().split())
        except (OSError, ValueError):
            continue
    return rss, pss


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
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak_pss / 1024, peak_rss / 1024,
               proc.returncode, b"".join(out).decode(), err.decode())


@dataclass
class Floor:
    yaml_s: float  # yaml.CSafeLoader over every entry file, one process
    markdown_s: float  # markdown-it-py's parse of every body, one process
    files: int

    @property
    def seconds(self) -> float:
        return self.yaml_s + self.markdown_s

    def per(self, processes: int) -> float:
        """The floor shared by ``processes`` processes."""
        return self.seconds / max(1, processes)


def floor(root: Path) -> Floor:
    """The libraries' floor for the record under ``root`` (a project folder), measured in a
    fresh process (this file's ``--floor``)."""
    done = subprocess.run([sys.executable, __file__, "--floor", str(root)], check=True, capture_output=True,
                          text=True)
    return Floor(**json.loads(done.stdout.strip().splitlines()[-1]))


def _floor_here(root: Path) -> dict[str, float]:
    import yaml
    from markdown_it import MarkdownIt

    files = sorted(p for p in (root / "record").rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
                   and p.parent.name not in ("verdicts", "pages"))
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
    print(json.dumps(_floor_here(parser.parse_args().floor)))
