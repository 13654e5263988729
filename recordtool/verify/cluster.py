"""Running checks on a Dask cluster: one task per run, each in a child process on its worker.

``recordtool verify --scheduler ADDRESS`` (or ``scheduler = ADDRESS`` in ``[tool.recordtool]``)
sends every run of a check (each seed, each control) to a Dask scheduler as one task; ADDRESS
is a scheduler (``tcp://host:8786``) or ``local:N``, a local cluster of N worker processes
that recordtool starts and stops (``local``: one per core). docs/cluster.md says how to start
workers on one machine, on several and on Slurm, and what must be the same on all of them.

The contract of the local runner holds on a worker, because the worker runs each task with
that runner (``recordtool.verify.runner.Runner``, one job, a fresh interpreter): the run is a
child process in a session of its own, its timeout kills its process group, its traceback or
the signal that killed it is kept. What the task sends back is the run's result, its log's
tail, the figures it wrote and, from a worker that does not share the model cache, the files
it added there; only the client writes (verdicts, figures, models), atomically, as a local
verify does.

Workers need the project's code: the same checkout at the same path, on a shared filesystem
(nothing is shipped). Before anything runs, every worker compares what the client would run
(the check modules' sources, recordtool's own, the versions of Python and of the packages the
checks import: the fingerprint's parts) with what it has; a difference stops the verify with
the worker and the difference named. Each task checks again, for a worker that joined later.

Checks that ``need: [gpu]`` are sent with the Dask resource ``GPU: 1``, so they run only on
workers started with ``--resources GPU=1``, with ``ctx.device == "cuda"``; the verdict's
device names the workers' hosts. A worker that dies during a run: the scheduler runs it once more
elsewhere (``allowed-failures: 1``, set for ``local:N``; docs/cluster.md for a scheduler of
your own), then the run ends in ``error`` naming the last worker. Ctrl-C cancels every task;
each worker kills its run's process group; the verdicts already finished are kept.

``distributed`` is imported here only inside functions, so importing this module (and the
CLI) stays cheap; it is the optional extra ``pip install "recordtool[dask]"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import platform
import queue
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

from recordtool.atomic import write_atomic
from recordtool.verify.fingerprint import Scanner, diff, digest, package_version
from recordtool.verify.runner import Display, Job, JobResult, NoDisplay, Runner
from recordtool.verify.verdict import RunOutcome

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

CONNECT_TIMEOUT_S = 5.0  # to reach a scheduler, before anything runs
CANCEL_POLL_S = 0.2  # how often a task looks whether it was cancelled
DRAIN_S = 10.0  # after Ctrl-C, how long workers get to stop their runs
POLL_S = 0.05
CAPACITY_S = 1.0  # how often the cluster's threads and GPUs are counted again
GPU = "GPU"
CACHE_ID = ".recordtool-cache-id"  # in the client's model cache: a worker that reads it shares it
WORKER_CACHE_ENV = "RECORDTOOL_WORKER_CACHE"  # a worker's own model cache (not shared)
EXTRA_HINT = 'install the dask extra: python3 -m pip install -e ".[dask]"'


class ClusterError(Exception):
    """The cluster cannot be used: unreachable, or workers that differ from the client (exit 2)."""


def parse_address(address: str) -> tuple[str, int | None]:
    """``local:N`` -> ("local", N); ``local`` -> one worker per core; anything else is a
    scheduler's address, passed on to Dask."""
    text = address.strip()
    if text.lower() == "local":
        return "local", max(1, os.cpu_count() or 1)
    if text.lower().startswith("local:"):
        count = text.split(":", 1)[1]
        if not count.isdigit() or int(count) < 1:
            raise ClusterError(f"scheduler '{address}': local:N needs a number of workers N of at least 1, "
                               "e.g. local:4")
        return "local", int(count)
    return text, None


@cache
def tool_digest() -> str:
    """A digest of recordtool's own sources (on disk), which the runs on a worker use."""
    package = Path(__file__).resolve().parents[1]
    parts = [f"{path.relative_to(package).as_posix()}\0{digest(path.read_bytes())}"
             for path in sorted(package.rglob("*.py"))]
    return digest("\n".join(parts))


def identity(root: Path, package: str, modules: Iterable[str]) -> dict[str, str]:
    """What a run of ``modules`` depends on at ``root``, keyed as in a fingerprint: the
    sources of the modules and of what they import, recordtool's, and the versions of Python
    and of the third-party packages they import."""
    from recordtool.record.config import load_config

    config = load_config(root)
    scanner = Scanner(replace(config, checks=package))
    out = {"version:python": platform.python_version(), "source:recordtool/": tool_digest()}
    for module in sorted(set(modules)):
        scan = scanner.scan(module)
        out.update({f"source:{rel}": scanner.digest(path) for rel, path in scan.files.items()})
        out.update({f"source:{rel}": "missing" for rel in scan.missing})
        for name in sorted(scan.packages):
            out[f"version:{name}"] = package_version(name) or "absent"
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


@dataclass
class TaskResult:
    """What a task sends back: the run's result, where it ran, and the files it made."""

    outcome: str
    metrics: dict[str, Any]
    duration_s: float
    error: str | None
    log: str
    device: str
    host: str
    worker: str
    figures: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes
    models: dict[str, bytes] = field(default_factory=dict)  # new in a cache the client does not see


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


def run_task(job: Job, setup: Setup) -> TaskResult:
    """On a worker: run ``job`` as the local runner would, in a child process of its own."""
    from distributed import get_worker

    worker = get_worker()
    host = socket.gethostname()
    where = f"worker {worker.address} ({host})"
    start = time.perf_counter()
    problem = differences(setup)
    if problem is not None:
        return TaskResult("error", {}, time.perf_counter() - start,
                          f"{where} differs from the client: {problem}; see docs/cluster.md", "", "", host,
                          worker.address)
    _without_nanny_environ()
    cache_dir, shared = _cache_dir(setup)
    before = {} if shared else _listing(cache_dir)
    gpu = "gpu" in job.needs
    tmp = Path(tempfile.mkdtemp(prefix="recordtool-run-", dir=worker.local_directory))
    try:
        local = replace(job, figures_dir=tmp / "figures")
        runner = Runner(root=setup.root, package=setup.package, workdir=tmp / "work", cache_dir=cache_dir,
                        device="cuda" if gpu else setup.device, jobs=1,
                        display=_Watch(worker, worker.get_current_task(), setup.topic), serve=False)
        results = runner.run([local])
        try:
            result = next(results)
        finally:
            results.close()
        models = {} if shared else {rel: (cache_dir / rel).read_bytes() for rel in _changed(cache_dir, before)}
        return TaskResult(result.outcome, result.metrics, result.duration_s, result.error, result.log,
                          result.device, host, worker.address, _files(local.figures_dir), models)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _without_nanny_environ() -> None:
    """Runs get the worker's environment less what Dask's nanny set for the worker process
    itself (``distributed.nanny.pre-spawn-environ``): its ``MALLOC_TRIM_THRESHOLD_=65536``
    makes PyTorch training about twice as slow, and the thread counts are the runner's to set.
    Read once at the worker's start, they no longer matter to the worker itself."""
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


def _files(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _write_under(folder: Path, files: dict[str, bytes], keep_existing: bool = False) -> None:
    """Write ``files`` (relative paths) under ``folder``, atomically, never outside it."""
    for rel, data in files.items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            continue
        target = folder.joinpath(*parts)
        if keep_existing and target.is_file():
            continue  # another run made the same file: the first one stays
        write_atomic(target, data)


async def _until_idle(dask_worker: Any, keys: list[Any], seconds: float) -> int:
    """On a worker, after a cancel: wait until none of ``keys`` is still executing."""
    wanted = set(keys)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        busy = [k for k in wanted if k in dask_worker.state.tasks
                and dask_worker.state.tasks[k].state in ("executing", "cancelled", "long-running")]
        if not busy:
            return 0
        await asyncio.sleep(POLL_S)
    return len(wanted)


def _worker_differences(dask_worker: Any, setup: Setup) -> str | None:
    return differences(setup)


class ClusterRunner:
    """Runs jobs as tasks on a Dask cluster; yields each one's result as it comes back."""

    def __init__(self, client: Client, cluster: LocalCluster | None, address: str, setup: Setup,
                 display: Display) -> None:
        self.client, self.cluster, self.address, self.setup, self.display = client, cluster, address, setup, display
        workers = client.scheduler_info().get("workers", {})
        self.gpus = sum(1 for w in workers.values() if (w.get("resources") or {}).get(GPU, 0) >= 1)

    @classmethod
    def connect(cls, address: str, *, root: Path, package: str, cache_dir: Path, device: str = "cpu",
                display: Display | None = None) -> ClusterRunner:
        """Connect to the scheduler at ``address`` (or start ``local:N``); ``ClusterError`` when
        it cannot be reached within ``CONNECT_TIMEOUT_S``."""
        name, count = parse_address(address)
        try:
            import distributed
        except ImportError:
            raise ClusterError(f"--scheduler needs the distributed package; {EXTRA_HINT}") from None
        cluster: LocalCluster | None = None
        try:
            if count is not None:
                cluster = _local_cluster(count)
                client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT_S)
            else:
                client = distributed.Client(name, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError, RuntimeError) as exc:
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            if count is not None:
                raise ClusterError(f"cannot start a local cluster ({address}): {reason}") from None
            if isinstance(exc, ValueError):
                raise ClusterError(f"--scheduler {address}: not a Dask scheduler's address ({reason}); "
                                   "write tcp://host:8786, local:N or none") from None
            raise ClusterError(f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT_S:g} s; "
                               "start one (docs/cluster.md) or run here with --scheduler none") from None
        setup = Setup(root=root.resolve(), package=package, cache_dir=cache_dir.resolve(),
                      cache_id=_cache_id(cache_dir), device=device)
        return cls(client, cluster, address, setup, display or NoDisplay())

    def run(self, jobs: list[Job]) -> Generator[JobResult, None, None]:
        """Run every job, yield each result as it finishes. On KeyboardInterrupt (or when
        the generator is closed) the tasks are cancelled and the workers' runs stopped.

        Jobs are submitted, the slowest first, only while the cluster has a thread free for
        them (and a GPU, for those that need one), as the local runner starts them only
        while fewer than ``-j`` run: Dask would otherwise place every task at once, before
        it knows how long any takes, and two long trainings could queue on one worker
        while another idles. The capacity is read again as workers come and go."""
        from distributed import as_completed

        if not jobs:
            return
        batch = uuid.uuid4().hex[:8]
        modules = tuple(sorted({j.module for j in jobs}))
        setup = replace(self.setup, modules=modules, topic=f"recordtool-{batch}",
                        expected=identity(self.setup.root, self.setup.package, modules))
        self._refuse_differences(setup)
        events: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.client.subscribe_topic(setup.topic, lambda event: events.put(event[1]))
        pending = sorted(jobs, key=lambda j: -j.expected_s)  # the slowest first
        futures: dict[Future, Job] = {}
        by_key: dict[str, Job] = {}
        running: dict[str, list[Any]] = {}  # key -> [started (monotonic), last progress]
        done = as_completed()
        counter, looked = 0, -math.inf
        threads = gpus = 1
        try:
            while pending or futures:
                if pending and time.monotonic() - looked > CAPACITY_S:
                    threads, gpus = self._capacity()
                    looked = time.monotonic()
                gpu_busy = sum(1 for j in futures.values() if "gpu" in j.needs)
                for job in list(pending):
                    if len(futures) >= threads:
                        break
                    gpu = "gpu" in job.needs
                    if gpu and gpu_busy >= gpus:
                        continue
                    pending.remove(job)
                    key = f"recordtool-{batch}-{counter}"
                    counter += 1
                    future = self.client.submit(run_task, job, setup, key=key, pure=False, retries=1,
                                                resources={GPU: 1} if gpu else None)
                    futures[future], by_key[key] = job, job
                    gpu_busy += gpu
                    done.add(future)
                while not events.empty():
                    self._event(events.get(), by_key, running)
                if not done.has_ready():
                    time.sleep(POLL_S)
                    now = time.monotonic()
                    self.display.tick([(by_key[k], now - t, said) for k, (t, said) in running.items()])
                    continue
                for future in done.next_batch(block=False):
                    job = futures.pop(future)
                    if future.key not in running:  # it ended before its start was heard of
                        self._event({"key": future.key, "started": True}, by_key, running)
                    started, _ = running.pop(future.key)
                    del by_key[future.key]  # news of it that comes late is dropped
                    result = self._result(job, future, time.monotonic() - started)
                    self.display.finished(result)
                    yield result
        finally:
            if futures:
                self._cancel(list(futures))
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(setup.topic)

    def _capacity(self) -> tuple[int, int]:
        """How many runs the cluster can take at once (its workers' threads), and how many of
        them may need a GPU (its workers' GPU resources); at least one each."""
        workers = self.client.scheduler_info().get("workers", {}).values()
        threads = sum(int(w.get("nthreads", 1)) for w in workers)
        gpus = sum(int((w.get("resources") or {}).get(GPU, 0)) for w in workers)
        return max(1, threads), max(1, gpus)

    def _event(self, event: dict[str, Any], by_key: dict[str, Job], running: dict[str, list[Any]]) -> None:
        """A worker's news of a run: it started (again, on a retry), or reported progress."""
        key = str(event.get("key"))
        job = by_key.get(key)
        if job is None:
            return
        if event.get("started"):
            if key not in running:
                self.display.started(job)
            running[key] = [time.monotonic(), ""]
        elif key in running and isinstance(event.get("progress"), str):
            running[key][1] = event["progress"]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()

    def _refuse_differences(self, setup: Setup) -> None:
        """Ask every worker now connected whether it has what the client runs."""
        try:
            answers = self.client.run(_worker_differences, setup=setup)
        except Exception as exc:  # a worker that cannot answer at all
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            raise ClusterError(f"the workers of {self.address} could not be asked for their code ({reason}); "
                               "is recordtool installed in the workers' environment? (docs/cluster.md)") from None
        problems = [f"worker {address}: {problem}" for address, problem in sorted(answers.items()) if problem]
        if problems:
            raise ClusterError("workers differ from this checkout, nothing was run:\n  " + "\n  ".join(problems)
                               + "\nevery worker needs the same checkout at the same path and the same packages "
                               "(docs/cluster.md)")

    def _result(self, job: Job, future: Future, elapsed: float) -> JobResult:
        from distributed.scheduler import KilledWorker

        try:
            task: TaskResult = future.result()
        except KilledWorker as exc:
            last = getattr(exc.last_worker, "address", None) or str(exc.last_worker)
            tries = exc.allowed_failures + 1
            return JobResult(job, "error", {}, elapsed,
                             f"the worker running it died: tried on {tries} workers, the last {last}; "
                             "that worker's log says why (out of memory?)")
        except Exception as exc:
            text = " ".join(str(exc).split())[:500]
            return JobResult(job, "error", {}, elapsed, f"the task failed on the cluster: {type(exc).__name__}: {text}")
        _write_under(job.figures_dir, task.figures)
        _write_under(self.setup.cache_dir, task.models, keep_existing=True)
        outcome = cast(RunOutcome, task.outcome if task.outcome in get_args(RunOutcome) else "error")
        return JobResult(job, outcome, task.metrics, task.duration_s, task.error, task.log, task.device, task.host)

    def _cancel(self, futures: list[Future]) -> None:
        """Cancel ``futures`` and give the workers a moment to stop their runs."""
        keys = [f.key for f in futures]
        with contextlib.suppress(Exception):
            self.client.cancel(futures, force=True)
        with contextlib.suppress(Exception):
            self.client.run(_until_idle, keys=keys, seconds=DRAIN_S)


def _local_cluster(count: int) -> LocalCluster:
    """A cluster of ``count`` worker processes on this machine, one run at a time each.

    The workers ignore SIGINT (a Ctrl-C reaches the whole foreground process group): the
    client cancels their runs and then stops them, so none is left without its worker."""
    import signal
    import threading

    import dask
    import distributed

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        # A worker takes a run only when it has a thread free for it: none waits behind another.
        with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
            return distributed.LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.ERROR,
                                            scheduler_kwargs={"allowed_failures": 1})
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


def _cache_id(cache_dir: Path) -> str:
    """The model cache's id (made once): a worker that reads the same id shares the cache."""
    path = cache_dir / CACHE_ID
    with contextlib.suppress(OSError):
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    text = uuid.uuid4().hex
    with contextlib.suppress(OSError):  # a cache nobody can write: workers keep their own
        write_atomic(path, text + "\n")
    return text

