"""Spreading pure, independent work over the machine's cores, for large records.

Reading 10,000 YAML files or scanning their prose is CPU-bound Python; with two cores it
takes about half the time in two processes. Small inputs stay in this process (a pool costs
more than it saves), and so does everything where ``fork`` is not available.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 2_000


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def _chunk(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    return [fn(item) for item in items]


def map_items(fn: Callable[[T], R], items: Sequence[T], *, min_items: int = MIN_ITEMS) -> list[R]:
    """``[fn(item) for item in items]``, in order, over the available cores when worth it.

    ``fn`` must be a module-level function and its results picklable.
    """
    n = cores()
    if n < 2 or len(items) < min_items or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    chunks = [items[i::n] for i in range(n)]  # interleaved: every worker gets a similar mix
    with multiprocessing.get_context("fork").Pool(n) as pool:
        parts = pool.starmap(_chunk, [(fn, chunk) for chunk in chunks])
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    for i, part in enumerate(parts):
        out[i::n] = part
    return out
