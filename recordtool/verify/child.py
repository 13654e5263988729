"""The processes that run checks: one check per process, started fresh or forked warm.

The runner (``recordtool.verify.runner``) writes a JSON request per run (the check's
``module:function``, params, seed, device, folders, threads) and reads back the JSON result
written here atomically: ``{"status": "ok", "metrics": {...}, "duration_s": 1.2, "device":
"cpu"}`` or ``{"status": "error", "error": "Traceback ...", "duration_s": 0.1}``. A crash that
leaves no result is told from the exit status. Only modules inside the checks package run.

``python -m recordtool.verify.child REQUEST RESULT`` runs one check in a fresh interpreter.
``--serve`` is the fork server: per JSON line on stdin (``{"id": 3, "request": PATH, "result":
PATH, "log": PATH}``) it imports the check's module once, forks a child in a session of its own,
and answers ``{"id": 3, "pid": 4242}``, then ``{"id": 3, "exit": -9}`` when reaped, or ``{"id":
3, "fresh": REASON}`` when the run must go to a fresh interpreter (the server has threads, or a
failed import left local code from outside the checks package loaded).

Why a fork server of our own: a fresh interpreter pays Python's start and torch's import on
every run. The standard library's ``forkserver`` imports only what it was told at its start and
does not say a run's pid as it forks, which the runner's timeouts and Ctrl-C need.
``RECORDTOOL_FORK_SERVER=0`` runs every check fresh.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from recordtool.atomic import write_atomic
from recordtool.verify import reaper
from recordtool.verify.context import CheckContext
from recordtool.verify.limits import hold_to_limits, metric_problem, plain
from recordtool.verify.loading import (
    CheckLoadError,
    check_function,
    import_check,
    load_check,
    local_imports_outside,
    refuse_outside,
)

# oneMKL and OpenMP may otherwise use fewer threads than asked, which groups float sums
# differently; read when the libraries load, so the runner sets them for the server too.
FIXED_THREADS = {"MKL_DYNAMIC": "FALSE", "OMP_DYNAMIC": "FALSE"}
THREAD_COUNTS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")  # each run's, set by the runner too

TRACEBACK_CHARS = 6000
SERVER_ARGS = ["-m", "recordtool.verify.child", "--serve"]  # how the runner starts the server
STOP_S = 5.0  # how long the server gets to end at the end of its input

Loader = Callable[[Path, str, str, str], Any]


def run(request: dict[str, Any], load: Loader = load_check) -> dict[str, Any]:
    """Run the requested check; never raises (errors go into the result). ``load`` returns
    the check function (``load_check``, or the fork server's view of its imported modules)."""
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
        hold_to_limits(request)  # before the check's module loads: its imports count too
        fn = load(root, request["package"], request["module"], request["function"])
        ctx = CheckContext(
            seed=int(request["seed"]),
            device=str(request["device"]),
            cache_dir=Path(request["cache_dir"]),
            figures_dir=Path(request["figures_dir"]),
            threads=int(request["threads"]),
            progress=progress,
        )
        # A forked run starts with the server's thread count: give it the job's, for libraries the
        # check imports from now on and for torch if its module imported it already.
        os.environ.update(dict.fromkeys(THREAD_COUNTS, str(ctx.threads)) | FIXED_THREADS)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(ctx.threads)
        start = time.perf_counter()
        value = fn(ctx, **request["params"])
        duration = time.perf_counter() - start
        if not isinstance(value, Mapping):
            return {"status": "error", "duration_s": duration,
                    "error": f"{request['module']}:{request['function']} returned {type(value).__name__}, "
                             "not a mapping of metric name to number"}
        metrics = {k: plain(v) for k, v in value.items()}
        problems = [why for k, v in metrics.items() if (why := metric_problem(k, v)) is not None]
        if problems:  # checked here, at the boundary: only names, numbers, lists of them and text go on
            return {"status": "error", "duration_s": duration, "error": "; ".join(problems[:3])}
        probes = dict(request.get("kernels") or {})
        return {"status": "ok", "metrics": metrics, "duration_s": duration, "device": _device(request, probes),
                "kernels": probes}
    except CheckLoadError as exc:
        return {"status": "error", "error": _in_project(str(exc), root), "duration_s": time.perf_counter() - start}
    except MemoryError:
        return {"status": "error", "duration_s": time.perf_counter() - start,
                "error": f"MemoryError: ran out of memory within its limit of {request.get('memory_mb')} MiB of "
                         "address space; raise 'limits: {memory_mb: ...}' in the check's YAML if it needs more"}
    except BaseException:
        text = _traceback(root)
        if len(text) > TRACEBACK_CHARS:
            text = "…" + text[-TRACEBACK_CHARS:]
        return {"status": "error", "error": text.rstrip(), "duration_s": time.perf_counter() - start}


def _traceback(root: Path) -> str:
    """The exception being handled, each file named relative to the project root or its import
    path, else by its name: never an absolute path, which a committed verdict would carry."""
    kind, exc, frames = sys.exc_info()
    text = "".join(traceback.format_exception(kind, exc, frames.tb_next if frames is not None else None))
    bases = {os.path.abspath(p).rstrip(os.sep) + os.sep for p in [str(root), *sys.path] if p}
    for base in sorted(bases, key=len, reverse=True):  # the deepest first: site-packages inside the project
        text = text.replace(f'File "{base}', 'File "')
    return _in_project(_ABSOLUTE_FILE.sub(r'File "\1"', text), root)


_ABSOLUTE_FILE = re.compile(r'File "/[^"\n]*/([^"/\n]+)"')  # a file on no import path: its name


def _in_project(text: str, root: Path) -> str:
    """``text`` with the project root's path left out of the paths inside it (a message
    naming a file: ``No such file: '.recordtool-cache/x.pt'``)."""
    return text.replace(f"{os.path.abspath(root).rstrip(os.sep)}{os.sep}", "")


def _device(request: dict[str, Any], probes: dict[str, str]) -> str:
    """Where the run's numbers were computed: ``cuda (NVIDIA H200)``, the CPU described by
    ``recordtool.verify.kernels`` (with ``probes``), or plain ``cpu`` when torch was not loaded."""
    device = str(request["device"])
    torch = sys.modules.get("torch")
    if torch is None:
        return device
    from recordtool.verify.kernels import describe  # (the fork server imported it already)

    with contextlib.suppress(Exception):  # what torch cannot name: as asked
        if device.startswith("cuda"):
            return f"cuda ({torch.cuda.get_device_name(0)})"
        return f"{device} ({describe(torch, probes)})"
    return device


def write_result(path: Path, result: dict[str, Any]) -> None:
    """Write ``result`` atomically (a result that is not JSON becomes an error)."""
    try:
        payload = json.dumps(result)
    except (TypeError, ValueError) as exc:
        payload = json.dumps({"status": "error", "error": f"the metrics cannot be saved: {exc}",
                              "duration_s": result.get("duration_s", 0.0)})
    write_atomic(path, payload)


class Server:
    """The fork server: imports check modules once, forks one child per run (see the module's
    docstring for the protocol)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, ModuleType | BaseException] = {}  # first import's outcome
        self.tainted = ""  # a module whose failed import left local code from outside loaded
        self.children: dict[int, int] = {}  # pid -> run id
        self.pid = os.getpid()
        self.proto = -1
        self.wake = (-1, -1)

    def serve(self) -> NoReturn:
        # The protocol keeps the real stdout; anything printed here (an import's output)
        # goes to stderr, the server's log.
        self.proto = os.dup(1)
        os.dup2(2, 1)
        sys.path[0:1] = [str(self.root)]
        # What every run imports, imported once here: the limits' module and the kernels' describer.
        import resource  # noqa: F401

        import recordtool.verify.kernels  # noqa: F401

        gc.disable()  # no holes in shared pages; forked children enable it again
        warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
        self.wake = os.pipe()
        for fd in self.wake:
            os.set_blocking(fd, False)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # (not SIG_IGN: that reaps them)
        signal.set_wakeup_fd(self.wake[1])
        buffer = b""
        try:
            while True:
                readable, _, _ = select.select([0, self.wake[0]], [], [])
                if self.wake[0] in readable:
                    with contextlib.suppress(BlockingIOError):  # empty the wakeup pipe
                        while os.read(self.wake[0], 4096):
                            pass
                self.reap()
                if 0 not in readable:
                    continue
                data = os.read(0, 65536)
                if not data:
                    break
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        self.handle(json.loads(line))
                    self.reap()
        except OSError:
            pass  # the parent is gone
        finally:
            self.stop()
        os._exit(0)

    def handle(self, message: dict[str, Any]) -> None:
        job = int(message["id"])
        request = json.loads(Path(message["request"]).read_text(encoding="utf-8"))
        package, module = str(request["package"]), str(request["module"])
        inside = module.split(".", 1)[0] == package and module != package
        if inside and module not in self.modules:
            if self.tainted:
                self.send({"id": job, "fresh": f"'{self.tainted}' left local code from outside {package}/ loaded"})
                return
            self.load(package, module)
        if threading.active_count() > 1:
            self.send({"id": job, "fresh": "the server has started threads: forking is unsafe"})
            return
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()
        # SIGTERM is blocked across the fork: the child has this server's handler (a parent
        # that died: kill every run) until it sets the default, and a SIGTERM meant for the
        # run (its timeout, on a busy machine before it got that far) must not run it there.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            pid = os.fork()
            if pid == 0:
                self.child(message, request)
        finally:  # here only: the child leaves with os._exit
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self.children[pid] = job
        self.send({"id": job, "pid": pid})

    def load(self, package: str, module: str) -> None:
        """Import ``module`` once, keeping the module or the reason it cannot run."""
        before = set(sys.modules)
        try:
            self.modules[module] = import_check(self.root, package, module)
        except BaseException as exc:
            self.modules[module] = exc
            package_dir = (self.root / package).resolve()
            if local_imports_outside(self.root, package_dir, set(sys.modules) - before):
                self.tainted = module

    def loader(self, root: Path, package: str, module: str, function: str) -> Any:
        refuse_outside(package, module, function)
        loaded = self.modules[module]
        if isinstance(loaded, BaseException):
            raise loaded
        return check_function(loaded, module, function)

    def child(self, message: dict[str, Any], request: dict[str, Any]) -> NoReturn:
        """In the forked child: become a fresh-looking check process, run, leave."""
        code = 0
        try:
            os.setsid()
            reaper.die_with_parent(self.pid)
            reaper.adopt_orphans()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one sent meanwhile ends the run now
            for fd in (self.proto, *self.wake):
                os.close(fd)
            log = os.open(message["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.close(log)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            gc.enable()
            random.seed()  # as a fresh interpreter would: not the server's state
            write_result(Path(message["result"]), run(request, self.loader))
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            reaper.end_children()
            # Leave at once: a check's stray threads or atexit hooks must not hang the run.
            os._exit(code)

    def reap(self) -> None:
        """Report each run that ended; kill what the runs that ended left behind (the server
        adopts it, ``recordtool.verify.reaper``), and reap that too."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            job = self.children.pop(pid, None)
            if job is not None:
                self.send({"id": job, "exit": os.waitstatus_to_exitcode(status)})
        reaper.end_children(keep=frozenset(self.children), wait=False)

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.proto, (json.dumps(message) + "\n").encode())

    def kill_runs(self) -> None:
        """Kill every run still going, with its process group."""
        for pid in self.children:
            reaper.signal_group(pid, signal.SIGKILL)

    def stop(self) -> None:
        """Kill every child still running (by its process group), all they left, and reap them."""
        self.kill_runs()
        reaper.end_children()
        self.children.clear()


class ServerProcess:
    """The runner's end of the fork server (``Server``, started as ``SERVER_ARGS``): requests
    in, pids and exit statuses out."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.buffer = b""
        self.alive = True
        assert proc.stdout is not None
        self.out = proc.stdout.fileno()
        os.set_blocking(self.out, False)

    @classmethod
    def start(cls, root: Path, env: dict[str, str], log: Path) -> ServerProcess | None:
        try:
            with open(log, "wb") as errors:
                proc = subprocess.Popen([sys.executable, *SERVER_ARGS], cwd=root, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=errors, start_new_session=True,
                                        bufsize=0)
        except OSError:
            return None
        return cls(proc)

    def submit(self, number: int, files: dict[str, Path]) -> bool:
        """Ask for run ``number`` (its ``request``, ``result`` and ``log`` files) to be forked;
        False when the server is gone."""
        line = json.dumps({"id": number, "request": str(files["request"]),
                           "result": str(files["result"]), "log": str(files["log"])}) + "\n"
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode())
        except OSError:
            self.alive = False
        return self.alive

    def wait(self, timeout: float) -> None:
        select.select([self.out], [], [], timeout)

    def messages(self) -> list[dict[str, Any]]:
        """What the server said since last asked; at its end ``alive`` turns False."""
        while True:
            try:
                data = os.read(self.out, 65536)
            except BlockingIOError:
                break
            if not data:
                self.alive = False
                break
            self.buffer += data
        lines = self.buffer.split(b"\n")
        self.buffer = lines.pop()
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict):
                    out.append(message)
        return out

    def kill(self) -> None:
        """Kill the server and every process below it: its runs and what they started."""
        if self.proc.poll() is None and reaper.end_tree(self.proc.pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stop(self) -> None:
        """End the server: at the end of its input it kills and reaps its children."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=STOP_S)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.alive = False


def main(argv: list[str]) -> None:
    parent = reaper.parent_pid()
    if argv[:1] == ["--serve"]:
        server = Server(Path.cwd())
        reaper.adopt_orphans()
        reaper.watch_parent(parent, server.kill_runs)
        server.serve()
    reaper.supervise(parent)  # Linux: the check runs in a child; this process stays its reaper
    reaper.adopt_orphans()
    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = json.loads(request_path.read_text(encoding="utf-8"))
    sys.path[0:1] = [request["root"]]
    os.chdir(request["root"])
    try:
        write_result(result_path, run(request))
    finally:
        reaper.end_children()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave at once: a check's stray threads or atexit hooks must not hang the run.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
