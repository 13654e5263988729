"""Running checks on a Dask cluster: one task per run, each in a child process on its worker.

``recordtool verify --scheduler ADDRESS`` sends every run to a Dask scheduler
(``tcp://host:8786``) or to ``local:N`` worker processes here; a worker runs it with the local
runner (``recordtool.verify.task``) and only the client writes. docs/cluster.md says how to
start workers. ``distributed`` (the extra ``recordtool[dask]``) is imported only when asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import queue
import socket
import time
import uuid
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordtool.atomic import write_atomic
from recordtool.parallel import cores
from recordtool.verify.runner import Display, Job, JobResult
from recordtool.verify.task import CACHE_ID, Setup, differences, identity, run_task

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

CONNECT_TIMEOUT_S = 5.0  # to reach a scheduler, before anything runs
HANDSHAKE_MAX = 2**20  # bytes: a scheduler's handshake is a few hundred
DRAIN_S = 10.0  # after Ctrl-C, how long workers get to stop their runs
POLL_S = 0.05
CAPACITY_S = 1.0  # how often the cluster's threads and GPUs are counted again
GPU = "GPU"
EXTRA_HINT = 'install the dask extra: python3 -m pip install -e ".[dask]"'


class ClusterError(Exception):
    """The cluster cannot be used: unreachable, or workers that differ from the client (exit 2)."""


def parse_address(address: str) -> tuple[str, int | None]:
    """``local:N`` -> ("local", N); ``local`` -> one worker per core; anything else is a
    scheduler's address, passed on to Dask."""
    text = address.strip()
    if text.lower() == "local":
        return "local", cores()
    if text.lower().startswith("local:"):
        count = text.split(":", 1)[1]
        if not count.isdigit() or int(count) < 1:
            raise ClusterError(f"scheduler '{address}': local:N needs a number of workers N of at least 1, "
                               "e.g. local:4")
        if int(count) > cores():  # each worker is a process: more than the cores only waits, or never starts
            raise ClusterError(f"scheduler '{address}': local:N starts N worker processes on this machine, "
                               f"which has {cores()} cores; give N of at most {cores()}")
        return "local", int(count)
    return text, None


def _probe(address: str) -> None:
    """``ClusterError`` when the TCP port at ``address`` accepts but is not a Dask scheduler's,
    said within ``CONNECT_TIMEOUT_S``. Dask's ``Client`` times out the connection but not the
    handshake after it: a silent port hangs it for ever, and an HTTP answer is read as a
    frame's length (a MemoryError). A scheduler speaks first, its first 8 bytes a small length."""
    from distributed.comm import parse_address as split
    from distributed.comm import parse_host_port

    try:
        scheme, where = split(address)
        host, port = parse_host_port(where)
        if scheme != "tcp":
            return
        probe = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError, TypeError):
        return
    end, first = time.monotonic() + CONNECT_TIMEOUT_S, b""
    with probe, contextlib.suppress(OSError):
        while len(first) < 8 and (left := end - time.monotonic()) > 0:
            probe.settimeout(left)
            got = probe.recv(8 - len(first))
            if not got:
                break
            first += got
    hint = "a Dask scheduler listens on 8786 by default (8787 is its dashboard)"
    if not first:
        raise ClusterError(f"--scheduler {address}: the port accepts connections but says nothing within "
                           f"{CONNECT_TIMEOUT_S:g} s: not a Dask scheduler; {hint}")
    if len(first) < 8 or int.from_bytes(first, "little") > HANDSHAKE_MAX:
        what = " (it speaks HTTP)" if first.startswith(b"HTTP") else ""
        raise ClusterError(f"--scheduler {address}: the port answers, but not as a Dask scheduler{what}; {hint}")


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


async def _until_idle(dask_worker: Any, keys: list[Any], seconds: float) -> None:
    """On a worker, after a cancel: wait (at most ``seconds``) until none of ``keys`` is still executing."""
    tasks, end = dask_worker.state.tasks, time.monotonic() + seconds
    while time.monotonic() < end and any(
            k in tasks and tasks[k].state in ("executing", "cancelled", "long-running") for k in keys):
        await asyncio.sleep(POLL_S)


class ClusterRunner:
    """Runs jobs as tasks on a Dask cluster; yields each one's result as it comes back."""

    def __init__(self, client: Client, cluster: LocalCluster | None, address: str, setup: Setup,
                 display: Display) -> None:
        self.client, self.cluster, self.address, self.setup, self.display = client, cluster, address, setup, display
        workers = client.scheduler_info().get("workers", {})
        self.gpus = sum(1 for w in workers.values() if (w.get("resources") or {}).get(GPU, 0) >= 1)
        self._submitted = 0  # tasks submitted so far: their keys are numbered

    @classmethod
    def connect(cls, address: str, *, root: Path, package: str, cache_dir: Path, device: str,
                display: Display) -> ClusterRunner:
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
                _probe(name)
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
        return cls(client, cluster, address, setup, display)

    def run(self, jobs: list[Job]) -> Generator[JobResult, None, None]:
        """Run every job, yield each result as it finishes. On KeyboardInterrupt (or when
        the generator is closed) the tasks are cancelled and the workers' runs stopped. Jobs
        are submitted, the slowest first, only while a thread (and a GPU, where needed) is
        free: Dask would otherwise queue two long trainings on one worker while another idles."""
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
        looked = -math.inf
        threads = gpus = 1
        try:
            while pending or futures:
                if pending and time.monotonic() - looked > CAPACITY_S:
                    threads, gpus = self._capacity()
                    looked = time.monotonic()
                for future, job in self._submit(pending, futures, threads, gpus, setup, batch):
                    futures[future], by_key[future.key] = job, job
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

    def _submit(self, pending: list[Job], futures: dict[Future, Job], threads: int, gpus: int, setup: Setup,
                batch: str) -> list[tuple[Future, Job]]:
        """Submit, from ``pending`` (removed from it), the jobs the cluster has room for now:
        fewer than ``threads`` in all, and than ``gpus`` that need a GPU."""
        submitted: list[tuple[Future, Job]] = []
        gpu_busy = sum(1 for j in futures.values() if "gpu" in j.needs)
        for job in list(pending):
            if len(futures) + len(submitted) >= threads:
                break
            gpu = "gpu" in job.needs
            if gpu and gpu_busy >= gpus:
                continue
            pending.remove(job)
            self._submitted += 1
            future = self.client.submit(run_task, job, setup, key=f"recordtool-{batch}-{self._submitted}", pure=False,
                                        retries=1, resources={GPU: 1} if gpu else None)
            submitted.append((future, job))
            gpu_busy += gpu
        return submitted

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
            answers = self.client.run(differences, setup=setup)
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
            task: JobResult = future.result()
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
        return replace(task, figures={}, models={})

    def _cancel(self, futures: list[Future]) -> None:
        """Cancel ``futures`` and give the workers a moment to stop their runs."""
        keys = [f.key for f in futures]
        with contextlib.suppress(Exception):
            self.client.cancel(futures, force=True)
        with contextlib.suppress(Exception):
            self.client.run(_until_idle, keys=keys, seconds=DRAIN_S)


def _local_cluster(count: int) -> LocalCluster:
    """A cluster of ``count`` worker processes on this machine, one run at a time each. The
    workers inherit ignoring SIGINT from this process while it starts them: on Ctrl-C the
    client cancels their runs, then stops them, so none is left without its worker.

    A Ctrl-C pressed during the start (seconds: ``local:N`` is never more workers than cores)
    is lost. Keeping it for later is not reliable: with SIGINT blocked and ignored, a thread
    started by a C library, which does not block it, takes it and drops it; with a handler
    instead, a worker spawned before it can ignore SIGINT dies of it and the start fails."""
    import signal
    import threading

    import dask
    import distributed

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        # A worker takes a run only when it has a thread free for it: none waits behind another.
        # The scheduler's HTTP server, which Dask starts even without a dashboard, takes a free
        # port (else 8787, and a warning when another cluster holds it); no dashboard is served.
        with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
            return distributed.LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                            dashboard_address=":0", silence_logs=logging.ERROR,
                                            scheduler_kwargs={"allowed_failures": 1, "dashboard": False})
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

