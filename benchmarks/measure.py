"""Running a command in a fresh process and measuring it: wall time, CPU time (all its
processes), the peak resident set of its largest process, and the peak of all its processes
together (proportional set size, summed: pages shared between a parent and its forked workers
counted once). On a busy machine the wall time grows with the load; the CPU time much less."""

from __future__ import annotations

import os
import subprocess
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
    code: int
    stdout: str
    stderr: str


def tree_pss_kib(pid: int) -> int:
    """The proportional set size of ``pid`` and its descendants, summed (KiB): the memory they
    hold between them, shared pages counted once (Linux; 0 elsewhere)."""
    total = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as handle:
                todo.extend(int(c) for c in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


def run(args: list[str], cwd: Path | None = None, every: float = 0.1) -> Run:
    """Run ``args`` and measure it; the processes' PSS is sampled every ``every`` seconds
    (reading it walks their page tables: not much more often)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_pss = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_pss
        while not done.wait(every):
            peak_pss = max(peak_pss, tree_pss_kib(proc.pid))

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
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak_pss / 1024, proc.returncode,
               b"".join(out).decode(), err.decode())
