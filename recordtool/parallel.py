"""Work spread over the cores: standard-library process pools, results in order.

Opening and rendering a large record is many independent small steps (parse a file, scan a
text for ids, compose and write a page). They are cut into chunks (``CHUNK`` items each) and
the chunks shared by ``min(cores(), jobs)`` processes (``jobs``: ``-j``, by default every core
this process may run on, from ``os.sched_getaffinity``): a
``concurrent.futures.ProcessPoolExecutor`` of workers and, when the caller would only wait
for the results, the caller itself, which then takes the next chunk no worker has been handed.
The chunks are taken in order and the last ones are small (``chunked``), so that the processes
end together. The results come back in the order of the chunks, so what the caller builds from
them is the same, byte for byte, whatever the number of processes.

Two kinds of workers, for two kinds of input:

- **Forked workers** (``chunk_results``, ``map_chunks``) for work whose input is small beside
  what the caller will hold later: reading, parsing and validating the entry files and
  scanning each entry's prose (``load_record``'s ``each``), for which the files' paths are
  all a worker needs. They inherit the work function and the chunks as they are, copy-on-write, so nothing
  is pickled on the way in but chunk numbers. When the caller has work of its own with each
  result, all ``jobs`` processes are forked workers; otherwise (``helping``, as when
  reading the record) ``jobs - 1`` and the caller. Python 3.11 and later fork all the workers at once, before the pool starts its
  threads.
- **Fresh interpreters** (``map_shipped``, the ``SHIPPED`` start method, ``spawn``) for work
  that reads a small part of a large state the caller holds: composing the pages from the
  record and its graph, scanning the prose of entries loaded without their mentions. A forked
  worker shares the caller's memory only until it touches it, and reading a Python object
  writes its reference count: a forked worker composing half of the pages copied most of
  what it read, so ``render -j 2`` of 100,000 entries held 2.5 GB between its processes
  where one process held 1.4 GB. A fresh interpreter holds nothing of the caller; it gets
  the state every chunk shares once, and each chunk's part of the rest pickled as the
  chunk is handed out (the prose of its entries; its pages' slice of the project,
  ``recordtool.render.slices``), and lets it go when the chunk is done. Starting one costs
  about half a second of CPU (an interpreter and its imports), which only a large record
  (``min_items``) repays. They are started by ``spawn`` with two of its faults mended
  (``recordtool.fresh``): a worker that ends as it starts no longer hangs the caller, and the
  caller's script is not run again in each worker (a script that calls recordtool needs no
  ``if __name__ == "__main__":``, except on Windows); the workers also start the standard
  library's resource tracker, a small process that lives as long as the caller. Where the
  caller is small enough that its forked workers could copy all of it within
  ``FORK_BUDGET`` (``fork_fits``: 10,000 entries at ``-j 2``), composing the pages goes to
  forked workers after all: nothing is then packed, pickled or started but a fork.

Why the pools are configured as they are:

- **The caller works too** when it would only wait: with ``-j 2`` one worker is started,
  not two; a forked worker costs memory in proportion to what it reads, the caller's pages
  cost nothing more.
- **A window of chunks in flight** (``WINDOW`` per worker): chunks are handed out (and for
  ``map_shipped`` packed) as results are taken, so the results of fast workers never pile up
  ahead of a slow caller (the parsed YAML of a whole record, say) and memory stays that of
  a few chunks per worker.
- **A roomy pipe for the results** (``roomy_results``): a worker hands a chunk's results
  over at once and goes on, instead of waiting for this process's pool thread, which reads
  them a turn at a time between this process's own work.
- **Workers ignore Ctrl-C**; this process decides. On an interrupt (or any error) here, the
  chunks not yet started are cancelled, those running finish (a page being written is
  written whole), and every worker is joined before the interrupt goes on: no stray workers,
  no half-written files. On Linux a worker also dies with this process if it is killed.
- **Failures cost nothing but time**: a chunk that fails in a worker (an exception, a worker
  that died, a chunk or shared state that does not pickle) is done again here, so the
  outcome never depends on the workers; a side effect of ``work`` (writing a file) may then
  happen twice for an item.
- No ``maxtasksperchild``: a pool lives for one piece of work, and replacing a worker would
  fork from the pool's thread.

The work is done here, in order, without a pool, below ``min_items`` items, with one chunk,
one job or one core, inside a worker, and (forked workers only) without ``fork`` (Windows)
or while other threads run (forking those is unsafe).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

# ``multiprocessing`` and ``concurrent.futures`` (about 20 ms to import) are imported where a
# pool starts: a command after one edit, or on a small record, starts none.

T = TypeVar("T")
Progress = Callable[[int], None]  # told how many more items are done (``chunk_results``)

CHUNK = 64  # items per chunk: small enough to share evenly, large enough to cost nothing
MIN_CHUNK = 4  # items in the last chunks at least (``chunked``): a few milliseconds of work
WINDOW = 4  # chunks in flight per worker
# This process's own work between two looks at its workers (the ``steps`` of ``chunk_results``
# and ``map_chunks``: the page keys, ``recordtool.render.plan.entry_keys_in_steps``): shorter
# than the chunks a worker has in hand (``WINDOW`` pages' chunks, about 25 ms each at 10,000
# entries), so that none runs out. Steps of 500 entries' keys took 20 to 280 ms there (the first
# worked out what each neighbour shows for most of the record) and left a worker idle 0.2 s.
STEP_SECONDS = 0.01
SHIPPED = "spawn"  # how map_shipped's workers start: fresh interpreters, holding nothing of this process

_job: tuple[Callable[[list[Any]], list[Any]], list[list[Any]]] | None = None  # in a worker: its work
_shipped: tuple[Callable[[Any, Any], list[Any]], Any] | None = None  # in a worker of map_shipped: its work


def finished(steps: Generator[object, None, T]) -> T:
    """What the generator ``steps`` (work done a step at a time, as ``STEP_SECONDS`` asks)
    gives when it is done, its steps all taken at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            made: T = done.value
            return made


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def workers(jobs: int | None) -> int:
    """How many processes share the work for ``-j jobs`` (None: every core)."""
    return max(1, min(cores(), jobs if jobs is not None else cores()))


def chunked(items: list[T], size: int | None = None, *, jobs: int | None = None) -> list[list[T]]:
    """``items`` cut into lists of ``size`` (default ``CHUNK``); given ``jobs`` (as the pool that
    shares them is), the last ones smaller: none more than what is left divided over twice the
    chunks ``workers(jobs)`` processes hold at once, nor less than ``MIN_CHUNK``. The chunks are
    taken in order, so whichever process takes the last ones takes small ones, and the processes
    end within a small chunk of one another (not ``WINDOW`` whole chunks: a fifth of the reading
    on sixteen cores)."""
    size = max(1, size or CHUNK)
    if jobs is None:
        return [items[i:i + size] for i in range(0, len(items), size)]
    held = 2 * WINDOW * workers(jobs)
    out: list[list[T]] = []
    i, count = 0, len(items)
    while i < count:
        step = min(size, max(MIN_CHUNK, -(-(count - i) // held)))
        out.append(items[i:i + step])
        i += step
    return out


def map_items(work: Callable[[list[T]], list[Any]], items: list[T], *, jobs: int | None,
              min_items: int = 2) -> list[Any]:
    """``work(items)``, one result per item in order, shared by a pool when there are at least
    ``min_items`` items (see ``chunk_results``)."""
    return map_chunks(work, chunked(items, jobs=jobs), jobs=jobs, min_items=min_items)


def map_chunks(work: Callable[[list[T]], list[Any]], chunks: list[list[T]], *, jobs: int | None,
               min_items: int, meanwhile: Iterable[object] = (), progress: Progress | None = None,
               own: int = 0) -> list[Any]:
    """``work`` of every chunk, the results of all chunks one after the other; this process,
    which would only wait, is one of the ``workers(jobs)`` (see ``chunk_results``).
    ``meanwhile``: work of this process's own, in steps, as ``map_shipped`` takes it;
    ``progress`` and ``own``: as ``chunk_results`` takes them."""
    steps = iter(meanwhile)
    with chunk_results(work, chunks, jobs=jobs, min_items=min_items, helping=True, steps=steps,
                       progress=progress, own=own) as results:
        done = [result for done in results for result in done]
    for _step in steps:
        pass
    return done


@contextlib.contextmanager
def chunk_results(work: Callable[[list[T]], list[Any]], chunks: list[list[T]], *, jobs: int | None,
                  min_items: int, helping: bool = False, steps: Iterator[object] | None = None,
                  progress: Progress | None = None, own: int = 0) -> Iterator[Iterator[list[Any]]]:
    """An iterator of ``work(chunk)`` for every chunk, in order, shared by ``workers(jobs)``
    processes when the chunks hold at least ``min_items`` items: as many forked workers, or
    with ``helping`` one fewer and this process, which then, while the results it waits for
    are not ready, takes the next of its own ``steps`` (a step of other work; all of them
    first when no pool is started), then the last ``own`` chunks (work only it does), then the
    next chunk no worker has been handed (``_in_order``).
    ``work`` gives one result per item; results made in a worker must pickle. Leaving the
    ``with`` block stops the pool (chunks running finish, the others are cancelled) and joins
    its workers. ``progress``: called in this process with the number of items of each chunk
    once that chunk is done, here or by a worker (in the order they are done, not the chunks'),
    for a progress line (``recordtool.meter``)."""
    count = workers(jobs)
    forked = min(count - 1 if helping else count, len(chunks))
    if count < 2 or len(chunks) < 2 or sum(map(len, chunks)) < min_items or not _forkable():
        for _step in steps or ():
            pass
        yield _counted(work, chunks, progress)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(forked, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_worker, initargs=(work, chunks))
    roomy_results(pool)

    def submit(number: int) -> Future[list[Any]]:
        return pool.submit(_run, number)

    try:
        yield _in_order(submit, work, chunks, WINDOW * forked, helping, steps, progress, own)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _counted(work: Callable[[list[T]], list[Any]], chunks: list[list[T]], progress: Progress | None
             ) -> Iterator[list[Any]]:
    """``work`` of each chunk, in order, here, each chunk counted as done (``progress``)."""
    for chunk in chunks:
        result = work(chunk)
        if progress is not None:
            progress(len(chunk))
        yield result


# How much the pipe that brings the workers' results back may hold (where the system lets it be
# set: Linux; at most its ``/proc/sys/fs/pipe-max-size``, 1 MiB by default). See ``roomy_results``.
RESULT_PIPE = 1 << 20


def roomy_results(pool: Any) -> None:
    """Let the pipe that carries ``pool``'s results hold ``RESULT_PIPE`` bytes, so that a worker
    hands a chunk's results over without waiting and goes on with its next chunk.

    A chunk of entries read and scanned is about 250 KB of results (64 files), and a pipe holds
    64 KiB unless told otherwise. The pool's thread in this process reads the pipe as it fills,
    at most that much a turn, and needs the GIL for each turn, which this process's own work (it
    does chunks too) gives up only every switch interval (5 ms): so a forked worker stood idle
    about 10 ms after each chunk, a seventh of its time (``validate -j 2`` of 10,000 entries:
    0.5 to 0.8 s of a worker's 4.5 to 5.7 s). All the workers share that pipe (the standard
    library's pool has one, with a lock on it): with more workers, more would wait. Nothing
    changes where the size cannot be set (not Linux, or a pool made otherwise): the results come
    all the same, later."""
    try:
        import fcntl

        fd = pool._result_queue._writer.fileno()
        try:
            with open("/proc/sys/fs/pipe-max-size", "rb") as handle:
                most = int(handle.read())
        except (OSError, ValueError):
            most = RESULT_PIPE
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(RESULT_PIPE, most))
    except (ImportError, AttributeError, OSError, ValueError):
        pass


def fork_fits(jobs: int | None) -> bool:
    """Whether work that reads much of what this process holds (composing pages from the
    whole project) may go to forked workers (``map_chunks``) rather than fresh interpreters
    (``map_shipped``): a forked worker needs nothing packed, pickled or imported, but may come
    to copy all it reads (reading an object writes its reference count). So only while the
    ``workers(jobs) - 1`` workers, each copying at most this process's resident memory, stay
    within ``FORK_BUDGET`` between them; where ``fork`` is offered and no other thread runs."""
    forked = workers(jobs) - 1
    return forked >= 1 and _forkable() and forked * resident() <= FORK_BUDGET


def _forkable() -> bool:
    """Whether this process may fork workers: not inside a worker, ``fork`` offered, and no
    other thread running (forking one is unsafe)."""
    import multiprocessing

    return _job is None and "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


# What forked workers may come to copy of this process between them (``fork_fits``): 10,000
# realistic entries hold about 170 MiB once opened, 100,000 about 1.2 GiB, against the 1.5 GB
# that issue 14 allows all of a render's processes together at 100,000 entries.
FORK_BUDGET = 512 * 2**20


def resident() -> int:
    """This process's resident memory now, in bytes (its peak where /proc is not read; a
    great number where neither is known: then nothing is forked for it)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    except (ImportError, OSError):
        return 1 << 62


def map_shipped(local: Callable[[list[T]], list[Any]], remote: Callable[[Any, Any], list[Any]],
                pack: Callable[[list[T]], Any], shared: Callable[[], Any], chunks: list[list[T]], *,
                jobs: int | None, min_items: int, meanwhile: Iterable[object] = (),
                progress: Progress | None = None, own: int = 0) -> list[Any]:
    """Like ``map_chunks``, for work whose inputs are a small part of a large state held here:
    the workers hold nothing of this process. Each is a fresh interpreter (the ``SHIPPED``
    start method), gets ``shared()`` once (pickled) and each chunk's ``pack(chunk)`` (pickled,
    made here as the chunk is handed out), and gives back ``remote(shared, packed)``, one
    result per item; ``remote`` is found by name (a function of a module). This process, one
    of the ``workers(jobs)``, does chunks with ``local(chunk)`` as ``chunk_results`` says (the
    last ``own`` of them always), and any chunk a worker could not do (``pack`` or ``remote``
    failed, the worker died). Where ``map_chunks``
    would not start a pool, every chunk is done here with ``local``; and no more workers start
    than there are ``min_items // 2`` items (each must repay its start). ``meanwhile``: work
    of this process's own, in steps (each item of the iterable one step): done once the
    workers have their first chunks, while they start (an interpreter takes about half a
    second) and work, a step at a time whenever this process would wait on them (before it
    does any chunk itself), so that they are handed chunks between its steps; whatever is left
    when the chunks are done, then. First when no pool is started. ``progress``: as
    ``chunk_results`` takes it."""
    count = workers(jobs)
    total = sum(map(len, chunks))
    # One fresh interpreter per ``min_items // 2`` items at most: starting one costs about half
    # a second of CPU, which 1,000 entries repay (render of 2,000 entries, -j 2 on our two
    # cores: one worker took half, 3.66 s -> 2.96 s), and 15 of them for a 2,000-entry record
    # on a 16-core machine would not.
    forked = min(count - 1, len(chunks), max(1, total // max(1, min_items // 2)))
    if count < 2 or len(chunks) < 2 or total < min_items or _job is not None:
        for _step in meanwhile:
            pass
        return [result for results in _counted(local, chunks, progress) for result in results]
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from recordtool import fresh

    started = fresh.context() if SHIPPED == "spawn" else multiprocessing.get_context(SHIPPED)  # (some tests fork)
    pool = ProcessPoolExecutor(forked, mp_context=started, initializer=_start_shipped, initargs=(remote, shared()))
    roomy_results(pool)

    def submit(number: int) -> Future[list[Any]]:
        try:
            packed = pack(chunks[number])
        except Exception as exc:  # the chunk is done here
            failed: Future[list[Any]] = Future()
            failed.set_exception(exc)
            return failed
        try:
            return pool.submit(_run_shipped, packed)
        except Exception as exc:  # a worker could not be started (``shared()`` does not pickle, say)
            raise BrokenProcessPool(str(exc)) from exc

    steps = iter(meanwhile)
    try:
        done = [result for results in _in_order(submit, local, chunks, WINDOW * forked, True, steps, progress, own)
                for result in results]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for _step in steps:  # what is left of this process's own work
        pass
    return done


def _in_order(submit: Callable[[int], Future[list[Any]]], work: Callable[[list[T]], list[Any]],
              chunks: list[list[T]], window: int, helping: bool,
              steps: Iterator[object] | None = None, progress: Progress | None = None,
              own: int = 0) -> Iterator[list[Any]]:
    """The chunks' results in order. The pool is handed the chunks in order (``submit(i)``
    hands it chunk i), at most ``window`` ahead of the one taken, all but the last ``own``,
    which are this process's. While the one taken is not ready, a ``helping`` caller takes the
    next of its own ``steps`` (a step of other work), then its own chunks, then the next chunk
    not handed out yet, which it does itself (so that all processes take the chunks in order,
    and the last, small ones, end together: ``chunked``). A chunk the pool could not do is done
    here; ``progress`` is told of each chunk once it is done. (A chunk handed to the pool is
    never taken back with ``Future.cancel``: a worker that dies then makes the pool's thread set
    an error on the cancelled future, which Python 3.11 refuses, and that thread ends with its
    workers and threads left behind.)"""
    from concurrent.futures.process import BrokenProcessPool

    pending: dict[int, Future[list[Any]]] = {}  # the pool's, by chunk
    here: dict[int, list[Any]] = {}  # done here, ahead of the one taken
    last = len(chunks) - own  # the chunks from here on are this process's
    handed = 0  # the chunks before this one are handed out (to the pool, or taken here)
    mine = len(chunks)  # this process's own chunks from here on are done
    broken = False

    def take(n: int) -> None:
        here[n] = work(chunks[n])
        if progress is not None:
            progress(len(chunks[n]))

    for i, chunk in enumerate(chunks):
        while not broken and handed < last and len(pending) < window:
            try:
                pending[handed] = submit(handed)
            except (BrokenProcessPool, RuntimeError):
                broken = True
            else:
                handed += 1
        if i in here:
            yield here.pop(i)
            continue
        result: list[Any] | None = None
        future = pending.pop(i, None)
        if future is not None:
            while helping and not future.done():
                if steps is not None:
                    if next(steps, _DONE) is _DONE:
                        steps = None
                elif mine > last:
                    mine -= 1
                    take(mine)
                elif handed < last:
                    handed += 1
                    take(handed - 1)
                else:
                    break
            with contextlib.suppress(Exception):  # done again here
                result = future.result()
        else:  # this process's own chunk, or one never handed out (the pool broke)
            handed = max(handed, min(i + 1, last))
        if not isinstance(result, list) or len(result) != len(chunk):
            result = work(chunk)
        if progress is not None:
            progress(len(chunk))
        yield result


_DONE = object()  # (no step left)


def _start_worker(work: Callable[[list[Any]], list[Any]], chunks: list[list[Any]]) -> None:
    """In each worker, first: keep the work (inherited, not pickled), leave Ctrl-C to the
    parent, and (Linux) end when the parent does."""
    global _job
    _job = (work, chunks)
    _detach()


def _start_shipped(remote: Callable[[Any, Any], list[Any]], shared: Any) -> None:
    """In each worker of ``map_shipped``, first: keep the work and its shared state, and
    detach as ``_start_worker`` does."""
    global _job, _shipped
    _job = (_nothing, [])
    _shipped = (remote, shared)
    _detach()


def _nothing(items: list[Any]) -> list[Any]:
    return items


def _detach() -> None:
    """Leave Ctrl-C to the parent, and (Linux) end when the parent does."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:  # the parent is already gone
                os._exit(1)


def _run_shipped(packed: Any) -> list[Any]:
    """In a worker of ``map_shipped``: the results of one chunk, from what was packed for it."""
    assert _shipped is not None
    remote, shared = _shipped
    return remote(shared, packed)


def _run(number: int) -> list[Any]:
    """In a worker: the results of chunk ``number``."""
    assert _job is not None
    work, chunks = _job
    return work(chunks[number])
