"""Limits on what a run of a check may use, and on what it returns: a verdict is committed, so
it stays small (docs/checks.md, "Limits").

Each run is held to an address space and a CPU time (``run_limits``, set in the run's own
process by ``hold_to_limits``); its metrics are bounded in number, list length and text length.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recordtool.record.schema import CheckSpec

MIN_MEMORY_MB = 4096  # the least address space a run gets by default: torch alone maps about 1 GiB
MAX_METRICS = 100
MAX_VALUES = 50
MAX_KEPT_VALUES = 10_000
MAX_TEXT = 200
MAX_ERROR = 4_000


def run_limits(check: CheckSpec, timeout: float, device: str) -> dict[str, Any]:
    """Each run's limits: the check's ``limits:``, else half the machine's memory (none on a GPU,
    whose driver maps far more than it uses) and twice the CPU time its threads can use."""
    memory = check.limits.memory_mb
    if memory is None and not device.startswith("cuda"):
        memory = max(MIN_MEMORY_MB, physical_memory_mb() // 2)
    cpu = check.limits.cpu_s if check.limits.cpu_s is not None else 2 * timeout * check.threads
    return {"memory_mb": memory, "cpu_s": cpu}


def physical_memory_mb() -> int:
    """This machine's memory in MiB (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return 0


def hold_to_limits(request: dict[str, Any]) -> None:
    """Hold this process (the run's) to its address space (``memory_mb``) and CPU time
    (``cpu_s``), soft and hard limits both, so that the check cannot raise them."""
    import resource

    for name, key, scale, grace in (("RLIMIT_AS", "memory_mb", 2**20, 0), ("RLIMIT_CPU", "cpu_s", 1, 1)):
        value = request.get(key)
        if value is None or not hasattr(resource, name):
            continue
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        soft = math.ceil(float(value) * scale)
        limits = (soft, soft + grace) if hard == resource.RLIM_INFINITY else (min(soft, hard), min(soft + grace, hard))
        resource.setrlimit(which, limits)


def plain(value: Any, depth: int = 0) -> Any:
    """A returned metric as JSON: numbers, lists of numbers (arrays and tensors via
    ``tolist``), or a short string for anything else (the judge reports it)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth < 8 and hasattr(value, "tolist"):
        with contextlib.suppress(Exception):
            return plain(value.tolist(), depth + 1)
    if depth < 8 and isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if hasattr(value, "item"):
        with contextlib.suppress(Exception):
            return plain(value.item(), depth + 1)
    text = repr(value)
    return {"__type__": type(value).__name__, "repr": text[:200]}


def metric_problem(key: Any, value: Any) -> str | None:
    """What is wrong with the metric ``key`` of value ``value`` (as ``plain`` made it), or None
    when it is a name with a number, a list of numbers or a string."""
    if not isinstance(key, str):
        return f"metric key {key!r} is a {type(key).__name__}, not a name; return a mapping of metric names (strings)"
    if _number(value) or isinstance(value, str):
        return None
    if isinstance(value, list) and all(_number(v) or (isinstance(v, list) and all(map(_number, v))) for v in value):
        return None
    if isinstance(value, float) or (isinstance(value, list) and any(isinstance(v, float) for v in value)):
        what = f"{value}" if isinstance(value, float) else "a list holding something other than finite numbers"
    elif isinstance(value, dict) and "__type__" in value:
        what = f"a {value['__type__']}"
    else:
        what = "None" if value is None else f"a {type(value).__name__}"
    return (f"metric '{key}' is {what}, not a finite number (or NaN), a list of numbers or a string; "
            "return one of those")


def _number(value: Any) -> bool:
    """A number a verdict keeps: a bool, an int, or a float that is not infinite."""
    return isinstance(value, (bool, int)) or (isinstance(value, float) and not math.isinf(value))


def bound_metrics(metrics: Mapping[str, Any], named: Collection[str], keep: Collection[str]
                  ) -> tuple[dict[str, Any], str | None]:
    """The metrics as a verdict keeps them, and what is wrong when they are over a bound
    (``named``: the metrics the claim names, kept even then; ``keep``: lists kept in full)."""
    if len(metrics) > MAX_METRICS:
        kept = {name: bound_value(metrics[name]) for name in named if name in metrics}
        return kept, (f"the check returned {len(metrics):,} metrics, over the {MAX_METRICS} a verdict keeps; "
                      "return the few the claim is about, and summarize the rest")
    out: dict[str, Any] = {}
    for name, value in metrics.items():
        if name in keep and isinstance(value, (list, tuple)):
            if len(value) > MAX_KEPT_VALUES:
                out[name] = bound_value(value)
                return out | {k: bound_value(v) for k, v in metrics.items() if k not in out}, (
                    f"metric '{name}' has {len(value):,} values, over the {MAX_KEPT_VALUES:,} a check may keep in "
                    "full (keep:); return fewer, or leave it out of keep: to keep a summary")
            out[name] = [bound_value(v) for v in value]
        else:
            out[name] = bound_value(value)
    return out, None


def bound_error(error: str | None) -> str | None:
    """An error (a traceback) within the bounds: each line cut to ``MAX_TEXT`` * 2
    characters, then its last ``MAX_ERROR`` characters (the end says what happened)."""
    if error is None or len(error) <= MAX_ERROR:
        return error
    lines = [line if len(line) <= 2 * MAX_TEXT else line[: 2 * MAX_TEXT - 1] + "…" for line in error.split("\n")]
    error = "\n".join(lines)
    return error if len(error) <= MAX_ERROR else "…" + error[-MAX_ERROR:]


def bound_value(value: Any) -> Any:
    """``value`` within the bounds: a long list summarized, long text cut."""
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"
    if isinstance(value, (list, tuple)):
        if len(value) <= MAX_VALUES:
            return [bound_value(v) for v in value]
        return summary(value)
    if isinstance(value, dict):
        if len(value) <= MAX_VALUES:
            return {str(k)[:MAX_TEXT]: bound_value(v) for k, v in value.items()}
        return {"summary": "mapping", "count": len(value)}
    return value


def summary(values: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    """A long list as its count and, when its values are numbers, min, median and max."""
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    out: dict[str, Any] = {"summary": "list", "count": len(values)}
    finite = [v for v in numbers if not math.isnan(v)]
    if len(numbers) == len(values) and finite:
        out |= {"min": min(finite), "median": statistics.median(finite), "max": max(finite)}
        if len(finite) < len(numbers):
            out["nan"] = len(numbers) - len(finite)
    return out


def is_summary(value: Any) -> bool:
    return isinstance(value, dict) and value.get("summary") in ("list", "mapping") and "count" in value
