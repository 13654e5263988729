"""`verify` on a Dask cluster: the same verdicts as the local runner, on real local clusters
(worker processes), with GPU resources, dying workers, Ctrl-C and workers that differ."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from verify_fakes import CHECKS, POWER, VALIDATED, check, claim_yaml, make_project

# Dask is never imported here: its threads would stay in the tests' process (and keep the
# tests that fork from forking). Clusters and clients run in processes of their own.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason='the dask extra is not installed: python3 -m pip install -e ".[dask]"')

RECORDTOOL = [sys.executable, "-m", "recordtool"]

MORE_CHECKS = CHECKS + '''

def gpuonly(ctx, broken=False):
    (ctx.cache_dir / "models").mkdir(parents=True, exist_ok=True)
    (ctx.cache_dir / "models" / f"gpu-{ctx.seed}.bin").write_bytes(b"weights")
    return {"err": 1.0 if broken else 0.0, "cuda": float(ctx.device == "cuda"), "worker": helper.runner(),
            "trim": float("MALLOC_TRIM_THRESHOLD_" in os.environ)}


def killworker(ctx, once="", after=""):
    from pathlib import Path
    if once and Path(once).exists():
        Path(once + ".done").write_text("ran again")
        return {"err": 0.0}
    if once:
        Path(once).write_text("killed once")
    end = time.monotonic() + 30
    while after and not Path(after).exists() and time.monotonic() < end:
        time.sleep(0.05)  # a worker's death takes the runs waiting there with it
    os.kill(helper.runner(), signal.SIGKILL)
    time.sleep(10)
    return {"err": 0.0}


def leaveslink(ctx, secret=""):
    ctx.figures_dir.mkdir(parents=True, exist_ok=True)
    os.symlink(secret, ctx.figures_dir / "leak.png")
    return {"err": 0.0}


def hangpid(ctx, path=""):
    from pathlib import Path
    Path(path).write_text(str(os.getpid()))
    time.sleep(600)
'''

CONTROL = "control: {params: {broken: true}}"


CLUSTER = """
import copy, json, os, sys

import distributed

if __name__ == "__main__":
    local = distributed.LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     scheduler_kwargs={"allowed_failures": 1, "dashboard": False}, silence_logs=50)
    (_, spec), = local.new_worker_spec().items()
    gpu = copy.deepcopy(spec)
    gpu["options"].update(resources={"GPU": 1}, env={"RECORDTOOL_WORKER_CACHE": sys.argv[1]})
    local.worker_spec.update({"cpu": copy.deepcopy(spec), "gpu": gpu})
    local.sync(local._correct_state)
    with distributed.Client(local) as client:
        client.wait_for_workers(2, timeout=60)
        names = {w["name"]: address for address, w in client.scheduler_info()["workers"].items()}
        pids = client.run(os.getpid)
        print(json.dumps({"address": local.scheduler_address, "workers": sorted(pids),
                          **{n: pids[a] for n, a in names.items()}}), flush=True)
        sys.stdin.read()
    local.close()
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A scheduler and two worker processes, started in a process of their own (the tests'
    process stays free of Dask's threads): "cpu", and "gpu" that declares a GPU and keeps
    its own model cache (it does not see the client's). Gives the scheduler's address, the
    workers' pids by name and the GPU worker's cache."""
    folder = tmp_path_factory.mktemp("cluster")
    (folder / "cluster.py").write_text(CLUSTER)
    proc = subprocess.Popen([sys.executable, str(folder / "cluster.py"), str(folder / "cache")], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        info = json.loads(proc.stdout.readline())
        yield {**info, "cache": folder / "cache"}
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def cli(root: Path, *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    """``recordtool verify --root ROOT ARGS`` in a process of its own (after ``code``)."""
    script = f"{code}\nfrom recordtool.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", script, "verify", "--root", str(root), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def project(tmp: Path, claims: dict[str, str]) -> Path:
    return make_project(tmp, {cid: claim_yaml(cid, text) for cid, text in claims.items()}, checks=MORE_CHECKS)


def verdicts(root: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((root / "record" / "verdicts").glob("*.json"))}


def judged(verdict: dict[str, Any]) -> tuple[Any, ...]:
    """What a verdict says, without when, how long and where."""
    def runs(rs: list[dict[str, Any]]) -> list[Any]:
        return [(r["seed"], r["outcome"], r["metrics"], r["error"], r["expectations"]) for r in rs]

    return (verdict["outcome"], [(c["name"], c["outcome"], c["message"], runs(c["runs"]), c["figures"],
                                  [(k["name"], k["outcome"], runs(k["runs"])) for k in c["controls"]])
                                 for c in verdict["checks"]])


def test_every_outcome_is_the_local_runners(tmp_path: Path, cluster: dict[str, Any]) -> None:
    claims = {
        "THEORY-1": check("small", "ok", more=CONTROL),
        "THEORY-2": check("small", "fail", more=VALIDATED),
        "THEORY-3": check("small", "always", more=CONTROL),
        "THEORY-4": check("boom", "boom") + check("exit3", "exit3") + check("killed", "killed"),
        "THEORY-5": check("hang", "hang", more="timeout: 1"),
        "THEORY-6": check("link", "leaveslink", more=f"params: {{secret: '{tmp_path / 'secret.png'}'}}"),
    }
    (tmp_path / "secret.png").write_bytes(b"the secret")
    here = project(tmp_path / "here", claims)
    there = project(tmp_path / "there", claims)
    local = cli(here, "--seeds", "2", "-j", "2", "--format", "json")
    remote = cli(there, "--seeds", "2", "--scheduler", cluster["address"], "--format", "json")
    assert remote.returncode == local.returncode == 1, remote.stderr
    states = [(c["claim"], c["state"]) for c in json.loads(remote.stdout)["claims"]]
    assert states == [(c["claim"], c["state"]) for c in json.loads(local.stdout)["claims"]]
    assert [state for _, state in states] == ["verified", "contradicted", "no-power", "error", "timeout", "error"]
    said = [line.partition(": ")[::2] for line in remote.stderr.splitlines() if " seed " in line.split(":")[0]]
    started = sorted(label for label, what in said if what == "started")
    ended = sorted(label for label, what in said if what != "started" and not what.startswith("running "))
    assert len(started) == 24 and started == ended  # (a heartbeat, "running 30 s", is neither)
    mine, theirs = verdicts(here), verdicts(there)
    for claim, verdict in mine.items():  # tracebacks name the project's folder
        assert json.dumps(judged(theirs[claim])).replace(str(there), "ROOT") == \
            json.dumps(judged(verdict)).replace(str(here), "ROOT"), claim
    assert theirs["THEORY-1"]["device"] == f"cpu, worker {socket.gethostname()}"
    assert mine["THEORY-1"]["device"] == "cpu"
    figures = sorted(p.relative_to(there).as_posix() for p in (there / "record").rglob("*.png"))
    assert figures == sorted(p.relative_to(here).as_posix() for p in (here / "record").rglob("*.png"))
    assert len(figures) == 4  # two seeds, the check and its control
    assert all((there / f).read_bytes() == b"png" for f in figures)
    link = theirs["THEORY-6"]["checks"][0]["runs"][0]["error"]  # (issue 66, class 2: refused on the worker too)
    assert link.startswith("check 'link' left 'leak.png', which is a symbolic link;")


def test_a_gpu_check_runs_on_the_gpu_worker_and_its_model_comes_back(tmp_path: Path, cluster: dict[str, Any]) -> None:
    root = project(tmp_path, {"THEORY-1": check("gpu", "gpuonly", more=f"needs: [gpu]\n{POWER}")
                              + check("small", "ok", more=POWER)})
    assert cli(root).returncode == 0
    local = verdicts(root)["THEORY-1"]
    assert (local["outcome"], local["checks"][0]["message"]) == (
        "skipped", "needs a GPU; run with --device cuda on a machine with one")

    result = cli(root, "--scheduler", cluster["address"])
    assert result.returncode == 0, result.stderr
    verdict = verdicts(root)["THEORY-1"]
    gpu = verdict["checks"][0]
    assert (verdict["outcome"], gpu["outcome"]) == ("pass", "pass")
    # not the nanny's MALLOC_TRIM_THRESHOLD_ (for the worker itself; it halves training's speed)
    assert gpu["runs"][0]["metrics"] == {"err": 0.0, "cuda": 1.0, "worker": cluster["gpu"], "trim": 0.0}
    assert verdict["device"].endswith(f", worker {socket.gethostname()}")
    # The GPU worker keeps its own cache: the model it trained is in the client's cache too.
    assert (cluster["cache"] / "models" / "gpu-0.bin").read_bytes() == b"weights"
    assert (root / ".recordtool-cache" / "models" / "gpu-0.bin").read_bytes() == b"weights"


def test_workers_that_differ_are_refused_before_anything_runs(tmp_path: Path, cluster: dict[str, Any]) -> None:
    root = project(tmp_path, {"THEORY-1": check("small", "ok")})
    # as if the client had another Python and other check code than the workers
    code = ("import recordtool.verify.cluster as c\nreal = c.identity\n"
            "c.identity = lambda *a: {**real(*a), 'version:python': '3.9.0', 'source:checks/fake.py': '0' * 16}")
    result = cli(root, "--scheduler", cluster["address"], code=code)
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert lines[0] == "error: workers differ from this checkout, nothing was run:"
    python = sys.version.split()[0]
    assert sorted(lines[1:3]) == sorted(f"  worker {address}: checks/fake.py changed; python 3.9.0 -> {python}"
                                        for address in cluster["workers"])
    assert lines[3:] == ["every worker needs the same checkout at the same path and the same packages "
                         "(docs/cluster.md)"]
    assert not (root / "record" / "verdicts").exists()

    # A worker that joined after that question: each task asks again, and its run is an error.
    late = code + "\nc.ClusterRunner._refuse_differences = lambda self, setup: None"
    result = cli(root, "--scheduler", cluster["address"], code=late)
    assert result.returncode == 1, result.stderr
    error = verdicts(root)["THEORY-1"]["checks"][0]["runs"][0]["error"]
    assert error.startswith("worker tcp://127.0.0.1:") and error.endswith(
        f"differs from the client: checks/fake.py changed; python 3.9.0 -> {python}; see docs/cluster.md")


def test_a_worker_that_dies_is_retried_once_elsewhere_then_error(tmp_path: Path) -> None:
    once = tmp_path / "once"
    root = project(tmp_path, {"THEORY-1": check("dies", "killworker", more=f"params: {{after: {once}.done}}")
                              + check("dies-once", "killworker", more=f"params: {{once: {once}}}")})
    result = subprocess.run([*RECORDTOOL, "verify", "--root", str(root), "--scheduler", "local:2"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1, result.stderr
    checks = {c["name"]: c for c in verdicts(root)["THEORY-1"]["checks"]}
    assert once.read_text() == "killed once"
    assert checks["dies-once"]["runs"][0]["outcome"] == "ok"  # its worker died once: it ran again elsewhere
    error = checks["dies"]["runs"][0]["error"]
    assert checks["dies"]["outcome"] == "error"
    assert error.startswith("the worker running it died: tried on 2 workers, the last tcp://127.0.0.1:")
    assert error.endswith("; that worker's log says why (out of memory?)")


def test_ctrl_c_cancels_the_runs_and_keeps_finished_verdicts(tmp_path: Path) -> None:
    pid = tmp_path / "hang.pid"
    root = project(tmp_path, {"THEORY-1": check("small", "ok"),
                              "THEORY-2": check("hang", "hangpid", more=f"params: {{path: {pid}}}")})
    proc = subprocess.Popen([*RECORDTOOL, "verify", "--root", str(root), "--scheduler", "local:2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    said: list[str] = []  # stderr, read as it comes: "THEORY-1: <state>" follows the verdict's keeping
    reader = threading.Thread(target=lambda: said.extend(iter(proc.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + 60
    while not (pid.exists() and any(line.startswith("THEORY-1: ") for line in said)) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # as a Ctrl-C on the terminal: the whole process group
    out = proc.stdout.read()  # type: ignore[union-attr]
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = "".join(said)
    assert proc.returncode == 130, err
    assert out.splitlines()[-1] == "interrupted: kept 1 finished verdict"
    assert sorted(verdicts(root)) == ["THEORY-1"]
    run = int(pid.read_text())
    deadline = time.monotonic() + 30  # killed, it may take a moment to be reaped (it sleeps 600 s)
    while os.path.exists(f"/proc/{run}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{run}"), "the cancelled run was left running"


def test_an_unreachable_scheduler_exits_2_before_anything_runs(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    root = project(tmp_path, {"THEORY-1": check("small", "ok")})
    spent = tmp_path / "spent"  # how long connecting took, measured around it (not the interpreter's start)
    code = textwrap.dedent(f"""
        import time
        import recordtool.verify.cluster as c
        real = c.ClusterRunner.connect

        def timed(*args, **kwargs):
            start = time.monotonic()
            try:
                return real(*args, **kwargs)
            finally:
                open({str(spent)!r}, "w").write(str(time.monotonic() - start))

        c.ClusterRunner.connect = timed
    """)
    result = cli(root, "--scheduler", f"tcp://127.0.0.1:{port}", code=code)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"error: cannot reach the Dask scheduler at tcp://127.0.0.1:{port} within 5 s; "
                             "start one (docs/cluster.md) or run here with --scheduler none\n")
    assert float(spent.read_text()) < 20  # its 5 s, not Dask's default of 30 s (room for a busy machine)
    assert not (root / "record" / "verdicts").exists()


def test_the_project_can_name_the_scheduler_and_the_command_line_overrides_it(tmp_path: Path) -> None:
    root = project(tmp_path, {"THEORY-1": check("small", "ok", more=POWER)})
    with open(root / "pyproject.toml", "a", encoding="utf-8") as handle:
        handle.write('scheduler = "local:0"\n')
    result = subprocess.run([*RECORDTOOL, "verify", "--root", str(root)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert (result.returncode, result.stderr) == (
        2, "error: scheduler 'local:0': local:N needs a number of workers N of at least 1, e.g. local:4\n")
    result = subprocess.run([*RECORDTOOL, "verify", "--root", str(root), "--scheduler", "none"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads((root / "record" / "verdicts" / "THEORY-1.json").read_text())["device"] == "cpu"


@contextlib.contextmanager
def _serving(answer: bytes | None) -> Iterator[int]:
    """A port on this machine that accepts connections and says ``answer`` on each (None:
    nothing); at the end its thread is woken and joined (a thread left behind keeps the
    tests' process from forking pools) and its connections are closed."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                held.append(conn)  # (kept open: silent, or said and left open)
                if answer is not None:
                    conn.sendall(answer)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # (wakes the accept: closing alone does not)
        server.close()
        thread.join(timeout=10)
        for conn in held:
            conn.close()


NOT_DASK = "a Dask scheduler listens on 8786 by default (8787 is its dashboard)"


@pytest.mark.parametrize("port", ["silent", "http", "http.server"])
def test_class_10_a_port_that_is_not_dask_exits_2_in_one_line_within_the_timeout(tmp_path: Path, port: str) -> None:
    """Issue 66, class 10 (cluster addresses): a port that accepts but stays silent hung verify
    for ever; one that answers with HTTP bytes gave a traceback (a 3 EiB allocation). Each is
    one line and exit 2, within the connect timeout."""
    root = project(tmp_path, {"THEORY-1": check("small", "ok")})
    with contextlib.ExitStack() as stack:
        if port == "http.server":
            with socket.socket() as free:
                free.bind(("127.0.0.1", 0))
                number = free.getsockname()[1]
            server = stack.enter_context(subprocess.Popen(
                [sys.executable, "-m", "http.server", str(number), "--bind", "127.0.0.1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            stack.callback(server.kill)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with socket.socket() as probe, contextlib.suppress(OSError):
                    probe.connect(("127.0.0.1", number))
                    break
                time.sleep(0.05)
        else:
            number = stack.enter_context(_serving(None if port == "silent" else b"HTTP/1.0 400 Bad request\r\n\r\n"))
        address = f"tcp://127.0.0.1:{number}"
        start = time.monotonic()
        result = cli(root, "--scheduler", address)
        spent = time.monotonic() - start
    said = ("the port answers, but not as a Dask scheduler (it speaks HTTP)" if port == "http" else
            "the port accepts connections but says nothing within 5 s: not a Dask scheduler")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: --scheduler {address}: {said}; "
                                                                 f"{NOT_DASK}\n")
    assert spent < 30  # its 5 s and Python's start, not for ever (room for a busy machine)
    assert not (root / "record" / "verdicts").exists()


def test_class_3_local_n_above_the_cores_is_refused(tmp_path: Path) -> None:
    """Issue 66, class 3 (processes outlive their parent): ``local:100000`` started nothing for
    45 s and ignored Ctrl-C and SIGTERM. More workers than cores is refused, in one line."""
    root = project(tmp_path, {"THEORY-1": check("small", "ok")})
    cores = len(os.sched_getaffinity(0))
    result = cli(root, "--scheduler", "local:100000")
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"error: scheduler 'local:100000': local:N starts N worker processes on this machine, which has "
        f"{cores} cores; give N of at most {cores}\n")


def test_a_local_cluster_takes_a_free_port_where_8787_is_held(tmp_path: Path) -> None:
    """Dask starts an HTTP server even without a dashboard, on 8787 unless told otherwise: with
    that port held (another cluster's dashboard), a local cluster takes a free one, silently."""
    root = project(tmp_path, {"THEORY-1": check("holds", "ok", more=POWER)})
    with socket.socket() as held:
        try:
            held.bind(("127.0.0.1", 8787))
        except OSError:
            pytest.skip("port 8787 is taken on this machine already")
        held.listen()
        result = subprocess.run([*RECORDTOOL, "verify", "--root", str(root), "--scheduler", "local:1"],
                                capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "8787" not in result.stderr and "dashboard" not in result.stderr.lower()
