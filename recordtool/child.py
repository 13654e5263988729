"""The child process that runs one check: ``python -m recordtool.child REQUEST RESULT``.

The parent (``recordtool.runner``) writes a JSON request (the check's ``module:function``,
params, seed, device, folders, threads), starts this module in a fresh process in the
project's root, and reads the JSON result this module writes atomically::

    {"status": "ok", "metrics": {...}, "duration_s": 1.2, "device": "cpu"}
    {"status": "error", "error": "Traceback ...", "duration_s": 0.1}

A crash that leaves no result (``os._exit``, a signal, the OOM killer) is told by the parent
from the exit status. Only modules inside the record's checks package are run: the module
named by ``run`` must be in it, and a check that imports local code from outside it (which
no fingerprint would follow) is refused.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TRACEBACK_CHARS = 6000


class CheckLoadError(Exception):
    """The check cannot be loaded under the contract (outside checks/, no such function)."""


def plain(value: Any, depth: int = 0) -> Any:
    """A returned metric as JSON: numbers, lists of numbers (arrays and tensors via
    ``tolist``), or a short string for anything else (the judge reports it)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth < 8 and hasattr(value, "tolist"):
        try:
            return plain(value.tolist(), depth + 1)
        except Exception:
            pass
    if depth < 8 and isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if hasattr(value, "item"):
        try:
            return plain(value.item(), depth + 1)
        except Exception:
            pass
    text = repr(value)
    return {"__type__": type(value).__name__, "repr": text[:200]}


def load_check(root: Path, package: str, module: str, function: str) -> Any:
    """Import ``module`` (inside ``package``) and return its ``function``."""
    if module.split(".", 1)[0] != package or module == package:
        raise CheckLoadError(f"'{module}:{function}' is outside {package}/; checks run only code inside {package}/")
    before = set(sys.modules)
    mod = importlib.import_module(module)
    package_dir = (root / package).resolve()
    mod_file = Path(getattr(mod, "__file__", "") or "").resolve()
    if not mod_file.is_relative_to(package_dir):
        raise CheckLoadError(f"'{module}' was imported from {mod_file}, not from {package}/")
    outside = _local_imports_outside(root, package_dir, set(sys.modules) - before)
    if outside:
        names = ", ".join(f"'{name}' ({path})" for name, path in outside)
        raise CheckLoadError(
            f"'{module}' imports local code from outside {package}/: {names}; move it into {package}/ "
            "so that its changes make verdicts stale"
        )
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise CheckLoadError(f"'{module}' has no function '{function}'")
    return fn


def _local_imports_outside(root: Path, package_dir: Path, names: set[str]) -> list[tuple[str, str]]:
    root = root.resolve()
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.exec_prefix, sys.base_prefix) if p}
    tool = Path(__file__).resolve().parent
    out = []
    for name in sorted(names):
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file or not os.path.isabs(file) or not os.path.isfile(file):
            continue  # built-in or synthetic modules (torch.ops reports a bare "_ops.py")
        path = Path(file).resolve()
        if not path.is_relative_to(root) or path.is_relative_to(package_dir) or path.is_relative_to(tool):
            continue
        if any(path.is_relative_to(p) for p in prefixes) or "site-packages" in path.parts:
            continue
        out.append((name, path.relative_to(root).as_posix()))
    return out


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Run the requested check; never raises (errors go into the result)."""
    from recordtool.context import CheckContext

    root = Path(request["root"])
    start = time.perf_counter()
    progress_path = Path(request["progress"]) if request.get("progress") else None

    def progress(message: str) -> None:
        line = " ".join(str(message).split())[:300]
        print(line, file=sys.stderr, flush=True)
        if progress_path is not None:
            with open(progress_path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")

    try:
        fn = load_check(root, request["package"], request["module"], request["function"])
        ctx = CheckContext(
            seed=int(request["seed"]),
            device=str(request["device"]),
            cache_dir=Path(request["cache_dir"]),
            figures_dir=Path(request["figures_dir"]),
            threads=int(request["threads"]),
            progress=progress,
        )
        start = time.perf_counter()
        value = fn(ctx, **request["params"])
        duration = time.perf_counter() - start
        if not isinstance(value, Mapping):
            return {"status": "error", "duration_s": duration,
                    "error": f"{request['module']}:{request['function']} returned {type(value).__name__}, "
                             "not a mapping of metric name to number"}
        metrics = {str(k): plain(v) for k, v in value.items()}
        return {"status": "ok", "metrics": metrics, "duration_s": duration, "device": _device(request)}
    except CheckLoadError as exc:
        return {"status": "error", "error": str(exc), "duration_s": time.perf_counter() - start}
    except BaseException:
        text = traceback.format_exc()
        if len(text) > TRACEBACK_CHARS:
            text = "…" + text[-TRACEBACK_CHARS:]
        return {"status": "error", "error": text.rstrip(), "duration_s": time.perf_counter() - start}


def _device(request: dict[str, Any]) -> str:
    device = str(request["device"])
    torch = sys.modules.get("torch")
    if device.startswith("cuda") and torch is not None:
        try:
            return f"cuda ({torch.cuda.get_device_name(0)})"
        except Exception:
            return device
    return device


def main(argv: list[str]) -> None:
    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = json.loads(request_path.read_text(encoding="utf-8"))
    sys.path[0:1] = [request["root"]]
    os.chdir(request["root"])
    result = run(request)
    from recordtool.atomic import write_atomic

    try:
        payload = json.dumps(result)
    except (TypeError, ValueError) as exc:
        payload = json.dumps({"status": "error", "error": f"the metrics cannot be saved: {exc}",
                              "duration_s": result.get("duration_s", 0.0)})
    write_atomic(result_path, payload)
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave at once: a check's stray threads or atexit hooks must not hang the run.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
