"""Spreading pure, independent work over the machine's cores, for large records.

Reading 10,000 YAML files or scanning their prose is CPU-bound Python; with two cores it
takes about half the time in two processes. Small inputs stay in this process (a pool costs
more than it saves), and so does everything where ``fork`` is not available. Results stream
back in order, so the caller can drop each one once used and memory stays flat.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 2_000
CHUNK = 128


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def imap_items(fn: Callable[[T], R], items: Sequence[T], *, min_items: int = MIN_ITEMS) -> Iterator[R]:
    """``fn(item)`` for each item, in order, over the available cores when worth it.

    ``fn`` must be a module-level function and its results picklable.
    """
    n = cores()
    if n < 2 or len(items) < min_items or "fork" not in multiprocessing.get_all_start_methods():
        yield from (fn(item) for item in items)
        return
    with multiprocessing.get_context("fork").Pool(n) as pool:
        yield from pool.imap(fn, items, chunksize=CHUNK)


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Build many small, acyclic objects without the cyclic collector rescanning them all
    again and again (which makes loading 100,000 entries several times slower)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
