"""What runs on a Dask worker (``recordtool.verify.cluster``): one run of a check, as the local
runner runs it, in a child process of its own, after the worker has compared what it has with
what the client runs. What the task sends back is the run's result, its log's tail, the
figures it wrote and, from a worker that does not share the model cache, the files it added
there; only the client writes.

``distributed`` is imported here only inside functions, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recordtool.record.config import load_config
from recordtool.store import code_digest
from recordtool.verify.fingerprint import Scanner, diff, with_sources
from recordtool.verify.runner import Job, JobResult, NoDisplay, Runner
from recordtool.verify.store import files_under

CANCEL_POLL_S = 0.2  # how often a task looks whether it was cancelled
CACHE_ID = ".recordtool-cache-id"  # in the client's model cache: a worker that reads it shares it
WORKER_CACHE_ENV = "RECORDTOOL_WORKER_CACHE"  # a worker's own model cache (not shared)


def identity(root: Path, package: str, modules: Iterable[str]) -> dict[str, str]:
    """What a run of ``modules`` depends on at ``root``, keyed as in a fingerprint: their
    sources, recordtool's, and the versions of Python and of the packages they import."""
    scanner = Scanner(replace(load_config(root), checks=package))
    out, packages = with_sources({}, sorted(set(modules)), scanner)
    out["source:recordtool/"] = code_digest()  # (recordtool's own sources, which the runs use)
    for name in packages:  # (a package the client lacks differs from one it has)
        out.setdefault(f"version:{name}", "absent")
    return out


def differences(setup: Setup) -> str | None:
    """How this machine differs from what the client runs (``setup.expected``), or None."""
    root, package, expected = setup.root, setup.package, setup.expected
    if not (root / package).is_dir():
        return f"no checkout at {root} (every worker needs the client's checkout at the same path)"
    here = identity(root, package, setup.modules)
    reasons = diff(expected, {k: v for k, v in here.items() if k in expected})
    return "; ".join(reasons) if reasons else None


@dataclass
class Setup:
    """What every task of a verify carries besides its job: where the project is and what
    the client runs, so that the worker can refuse when it has something else."""

    root: Path
    package: str
    cache_dir: Path
    cache_id: str
    device: str
    topic: str = ""  # the Dask event topic on which runs say they started, and their progress
    modules: tuple[str, ...] = ()  # the check modules that the tasks run
    expected: dict[str, str] = field(default_factory=dict)  # their ``identity`` on the client


class _Cancelled(Exception):
    """The task was cancelled (Ctrl-C on the client, or the client went away)."""


class _Watch(NoDisplay):
    """The worker-side display of the runner: tells the client when the run starts and what
    it last reported (Dask events on ``topic``), and ends the run when its task is cancelled."""

    def __init__(self, worker: Any, key: Any, topic: str) -> None:
        self.worker, self.key, self.topic = worker, key, topic
        self.last, self.said = time.monotonic(), ""

    def started(self, job: Job) -> None:
        self.worker.log_event(self.topic, {"key": self.key, "started": True})

    def tick(self, running: list[tuple[Job, float, str]]) -> None:
        now = time.monotonic()
        if now - self.last < CANCEL_POLL_S:
            return
        self.last = now
        task = self.worker.state.tasks.get(self.key)
        if task is None or task.state in ("cancelled", "released", "forgotten"):
            raise _Cancelled()
        progress = running[0][2] if running else ""
        if progress and progress != self.said:
            self.said = progress
            self.worker.log_event(self.topic, {"key": self.key, "progress": progress})


def run_task(job: Job, setup: Setup) -> JobResult:
    """On a worker: run ``job`` as the local runner would, in a child process of its own; the
    result carries the figures it made and the files it added to a model cache the client
    does not see."""
    from distributed import get_worker

    worker = get_worker()
    host = socket.gethostname()
    where = f"worker {worker.address} ({host})"
    start = time.perf_counter()
    problem = differences(setup)
    if problem is not None:
        return JobResult(job, "error", {}, time.perf_counter() - start,
                         f"{where} differs from the client: {problem}; see docs/cluster.md", host=host)
    _without_nanny_environ()
    cache_dir, shared = _cache_dir(setup)
    before = {} if shared else _listing(cache_dir)
    tmp = Path(tempfile.mkdtemp(prefix="recordtool-run-", dir=worker.local_directory))
    try:
        local = replace(job, figures_dir=tmp / "figures")
        runner = Runner(root=setup.root, package=setup.package, workdir=tmp / "work", cache_dir=cache_dir,
                        device="cuda" if "gpu" in job.needs else setup.device, jobs=1,
                        display=_Watch(worker, worker.get_current_task(), setup.topic), serve=False)
        results = runner.run([local])
        try:
            result = next(results)
        finally:
            results.close()
        models = {} if shared else {rel: (cache_dir / rel).read_bytes() for rel in _changed(cache_dir, before)}
        figures = {path.relative_to(local.figures_dir).as_posix(): path.read_bytes()
                   for path in files_under(local.figures_dir)}
        return replace(result, job=job, host=host, figures=figures, models=models)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _without_nanny_environ() -> None:
    """Runs get the worker's environment less what Dask's nanny set for the worker process
    (``distributed.nanny.pre-spawn-environ``): its ``MALLOC_TRIM_THRESHOLD_=65536`` slows
    PyTorch training down, and the thread counts are the runner's to set."""
    import dask

    for name, value in (dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {}).items():
        if os.environ.get(name) == str(value):
            os.environ.pop(name, None)


def _cache_dir(setup: Setup) -> tuple[Path, bool]:
    """The model cache this worker uses, and whether the client sees it too."""
    own = os.environ.get(WORKER_CACHE_ENV)
    if own:
        path = Path(own)
        return path, path.resolve() == setup.cache_dir.resolve()
    with contextlib.suppress(OSError):
        if (setup.cache_dir / CACHE_ID).read_text(encoding="utf-8").strip() == setup.cache_id:
            return setup.cache_dir, True
    return Path(tempfile.gettempdir()) / f"recordtool-cache-{setup.cache_id}", False


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` (not temporary files or locks): its size and mtime."""
    out: dict[str, tuple[int, int]] = {}
    if not folder.is_dir():
        return out
    for path in folder.rglob("*"):
        if path.name.startswith(".") or path.suffix in (".lock", ".tmp"):
            continue
        with contextlib.suppress(OSError):
            stat = path.stat()
            if path.is_file():
                out[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def _changed(folder: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(rel for rel, stat in _listing(folder).items() if before.get(rel) != stat)

