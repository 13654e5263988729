"""Every check runs in a child process: crashes and hangs cost that check, not the run.

Runs are forked from one warm server per run of the runner; when it cannot serve, they run in
fresh interpreters with the same results."""

from __future__ import annotations

import json
import os
import textwrap
import time
from collections.abc import Generator
from pathlib import Path

import pytest
from pydantic import ValidationError
from verify_fakes import BROKEN, CHECKS, CRASH, FAMILY, HELPER, SLOW_IMPORT, check, one_claim

from recordtool.record.config import load_config
from recordtool.record.project import open_project
from recordtool.record.schema import CheckSpec
from recordtool.verify import child as child_module
from recordtool.verify.limits import MIN_MEMORY_MB, physical_memory_mb, run_limits
from recordtool.verify.reaper import running
from recordtool.verify.runner import Job, JobResult, Runner, exit_message
from recordtool.verify.session import Options, verify
from recordtool.verify.store import read_store


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "__init__.py").write_text("")
    (tmp_path / "checks" / "fake.py").write_text(CHECKS)
    (tmp_path / "checks" / "helper.py").write_text(HELPER)
    (tmp_path / "outside.py").write_text("X = 1\n")
    (tmp_path / "checks" / "leaky.py").write_text("import outside\n\ndef measure(ctx):\n    return {'err': 0.0}\n")
    (tmp_path / "checks" / "leaky2.py").write_text("import outside\n\ndef measure(ctx):\n    return {'err': 0.0}\n")
    for name, text in {"family": FAMILY, "broken": BROKEN, "crash": CRASH, "slowimport": SLOW_IMPORT}.items():
        (tmp_path / "checks" / f"{name}.py").write_text(text)
    return tmp_path


def job(name: str, function: str, timeout: float = 20, module: str = "checks.fake", **params: object) -> Job:
    return Job("THEORY-1", name, "", 0, module, function, dict(params), timeout, Path("/nonexistent"))


def run_all(root: Path, jobs: list[Job], workers: int = 8, serve: bool = True) -> dict[str, JobResult]:
    for j in jobs:
        j.figures_dir = root / "figures" / j.check
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=workers,
                    serve=serve)
    return {r.job.check: r for r in runner.run(jobs)}


def in_order(*jobs: Job) -> list[Job]:
    """Jobs that a runner starts in this order (slowest first)."""
    for i, j in enumerate(jobs):
        j.expected_s = float(len(jobs) - i)
    return list(jobs)


@pytest.mark.parametrize("serve", [True, False], ids=["forked", "fresh"])
def test_every_kind_of_ending_is_kept_apart(root: Path, serve: bool) -> None:
    start = time.monotonic()
    results = run_all(root, [
        job("ok", "ok"), job("boom", "boom"), job("hang", "hang", timeout=1), job("exit3", "exit3"),
        job("killed", "killed"), job("chatty", "chatty"), job("hog", "hog"), job("notmapping", "notmapping"),
        job("outside", "measure", module="checks.leaky"), job("missing", "nope"),
        job("escape", "x", module="os"),
    ], workers=11, serve=serve)
    assert time.monotonic() - start < 120  # the hang cost its timeout, not its 600 s (room for a busy machine)
    assert results["ok"].outcome == "ok"
    assert results["ok"].metrics == {"err": 0.001, "curve": [1.0, 2.0]}
    assert (root / "figures" / "ok" / "plot.png").read_bytes() == b"png"
    assert results["boom"].outcome == "error"
    assert "Traceback" in (results["boom"].error or "")
    assert (results["boom"].error or "").endswith("ZeroDivisionError: nope")
    assert results["hang"].outcome == "timeout"
    assert results["hang"].error == "ran past its 1 s timeout and was stopped"
    assert results["exit3"].outcome == "error"
    assert results["exit3"].error == "the check's process exited with code 3 before returning"
    assert results["killed"].outcome == "error"
    assert (results["killed"].error or "").startswith("killed by signal SIGSEGV (11)")
    assert results["chatty"].outcome == "ok"
    chatty = results["chatty"].log  # 4 MB printed: the last 4000 characters are kept
    assert len(chatty) == 4001 and chatty.startswith("…") and chatty.endswith("x" * 99 + "\n")
    assert results["hog"].outcome == "error"
    assert "MemoryError" in (results["hog"].error or "")
    assert results["notmapping"].error == "checks.fake:notmapping returned list, not a mapping of metric name to number"
    assert results["outside"].error == (
        "'checks.leaky' imports local code from outside checks/: 'outside' (outside.py); "
        "move it into checks/ so that its changes make verdicts stale")
    assert results["missing"].error == "'checks.fake' has no function 'nope'"
    assert results["escape"].error == "'os:x' is outside checks/; checks run only code inside checks/"


def test_parallel_workers_overlap(root: Path, tmp_path: Path) -> None:
    """-j 2: two runs at once, each of which waits until both have started (run one after the
    other, the first would see only itself)."""
    (tmp_path / "met").mkdir()
    results = run_all(root, [job(f"m{i}", "meet", folder=str(tmp_path / "met"), n=2) for i in range(2)], workers=2)
    assert [r.metrics["met"] for r in results.values()] == [2.0, 2.0]


def test_slowest_start_first(root: Path) -> None:
    order: list[str] = []

    class Recorder:
        def started(self, j: Job) -> None:
            order.append(j.check)

        def finished(self, result: JobResult) -> None:
            pass

        def tick(self, running: list[tuple[Job, float, str]]) -> None:
            pass

    jobs = [job("fast", "noop"), job("slow", "noop"), job("new", "noop")]
    jobs[0].expected_s, jobs[1].expected_s = 0.1, 5.0
    for j in jobs:
        j.figures_dir = root / "figures"
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=1,
                    display=Recorder())
    list(runner.run(jobs))
    assert order == ["new", "slow", "fast"]


def test_runs_start_while_their_threads_fit_in_j(root: Path) -> None:
    """-j 2: two one-thread runs at once, a two-thread run alone, a three-thread run alone too."""
    events: list[tuple[str, str]] = []

    class Recorder:
        def started(self, j: Job) -> None:
            events.append(("start", j.check))

        def finished(self, result: JobResult) -> None:
            events.append(("end", result.job.check))

        def tick(self, running: list[tuple[Job, float, str]]) -> None:
            pass

    jobs = in_order(job("wide", "noop"), job("one", "noop"), job("two", "noop"), job("widest", "noop"),
                    job("three", "noop"))
    for j, threads in zip(jobs, [2, 1, 1, 3, 1], strict=True):
        j.threads, j.figures_dir = threads, root / "figures"
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=2,
                    display=Recorder())
    assert all(r.outcome == "ok" for r in runner.run(jobs))
    busy, most = {}, 0
    for event, name in events:
        if event == "start":
            busy[name] = next(j.threads for j in jobs if j.check == name)
            most = max(most, sum(busy.values()) if len(busy) > 1 else 0)
        else:
            del busy[name]
    assert most <= 2  # never more threads than -j, but for a wide run alone
    assert events[:2] == [("start", "wide"), ("end", "wide")]  # 2 threads: nothing beside it
    assert ("start", "two") in events[events.index(("start", "one")):events.index(("end", "one"))]


def hanging_run(root: Path, pidfile: Path, *, serve: bool) -> tuple[Generator[JobResult, None, None], int, int]:
    """A run of a quick check and one that hangs, started: the run (the quick one's result
    taken), the hanging check's pid and its parent's (the server's, when forked from one)."""
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=2,
                    serve=serve)
    jobs = [job("a", "noop"), job("h", "hangpid", timeout=60, module="checks.family", path=str(pidfile))]
    for j in jobs:
        j.figures_dir = root / "figures"
    gen = runner.run(jobs)
    assert next(gen).job.check == "a"
    deadline = time.monotonic() + 60
    while len(pidfile.read_text().split() if pidfile.exists() else []) < 2:
        assert time.monotonic() < deadline, "the hanging check never started"
        time.sleep(0.01)
    pid, parent = map(int, pidfile.read_text().split())
    return gen, pid, parent


def test_closing_the_run_stops_fresh_children(root: Path, tmp_path: Path) -> None:
    """Without the server (each run its own interpreter), closing the run stops them too."""
    gen, pid, _parent = hanging_run(root, tmp_path / "hang.pid", serve=False)
    start = time.monotonic()
    gen.close()
    assert time.monotonic() - start < 60  # it did not wait for the check's 600 s
    assert not running(pid)  # killed (a zombie is dead: init reaps it, as it is not ours)


def test_exit_messages() -> None:
    assert exit_message(-9) == "killed by signal SIGKILL (9) (out of memory?)"
    assert exit_message(2, "a\nlast words\n") == (
        "the check's process exited with code 2 before returning; last output: last words")


ENV_CHECK = """
import json
import os


def measure(ctx):
    # what the process started with (what a library loaded by the server read), and what is set now
    with open("/proc/self/environ", "rb") as handle:
        started = dict(item.split(b"=", 1) for item in handle.read().split(b"\\0") if b"=" in item)
    out = {}
    for name, want in [("MKL_DYNAMIC", "FALSE"), ("OMP_DYNAMIC", "FALSE"), ("MKL_NUM_THREADS", str(ctx.threads))]:
        out[name] = float(os.environ.get(name) == want)
        out["started " + name] = float(started.get(name.encode()) == want.encode())
    return out
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("serve", [True, False], ids=["forked", "fresh"])
def test_a_run_uses_exactly_its_threads(root: Path, monkeypatch: pytest.MonkeyPatch, serve: bool) -> None:
    """The run's thread count, and oneMKL and OpenMP told not to use fewer threads at run time
    (which groups float sums differently), whatever the caller's environment says."""
    monkeypatch.setenv("MKL_DYNAMIC", "TRUE")
    monkeypatch.setenv("OMP_DYNAMIC", "TRUE")
    (root / "checks" / "envcheck.py").write_text(ENV_CHECK)
    results = run_all(root, [job("env", "measure", module="checks.envcheck")], serve=serve)
    assert results["env"].metrics == {f"{when}{name}": 1.0 for when in ("", "started ")
                                      for name in ("MKL_DYNAMIC", "OMP_DYNAMIC", "MKL_NUM_THREADS")}, \
        results["env"].error


def test_runs_are_forked_from_one_server(root: Path) -> None:
    results = run_all(root, [job(f"f{i}", "family", module="checks.family") for i in range(3)], workers=2)
    parents = {r.metrics["ppid"] for r in results.values()}
    assert len(parents) == 1 and parents != {os.getpid()}
    assert len({r.metrics["pid"] for r in results.values()}) == 3
    # each run leads its own session and process group
    assert all(r.metrics["pid"] == r.metrics["pgid"] == r.metrics["sid"] for r in results.values())
    assert (root / "checks" / "imports.log").read_text() == "imported\n"  # one import, in the server
    with pytest.raises(ProcessLookupError):  # the server is gone with the run
        os.kill(parents.pop(), 0)


def test_the_first_run_probes_the_kernels_and_the_next_take_its_probe(root: Path) -> None:
    """A probe costs more than the rest of a short run: the first run on torch makes it, the
    runner passes it on, and every run names the same kernels."""
    pytest.importorskip("torch")
    for j in (jobs := [job(f"t{i}", "torchy") for i in range(3)]):
        j.figures_dir = root / "figures" / j.check
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=1)
    devices = {r.device for r in runner.run(jobs)}
    (described,) = runner.kernels.values()
    assert devices == {f"cpu ({described})"} and ", kernels " in described
    requests = [json.loads((root / "work" / f"job-{n}.request").read_text())["kernels"] for n in (1, 2, 3)]
    assert requests == [{}, runner.kernels, runner.kernels]


def test_forked_runs_share_neither_memory_nor_output(root: Path) -> None:
    jobs = [job(f"s{seed}", "stateful", module="checks.family") for seed in range(3)]
    for seed, j in enumerate(jobs):
        j.seed = seed
    results = run_all(root, [*jobs, job("chatty", "chatty")], workers=1)
    for seed in range(3):
        assert results[f"s{seed}"].metrics == {"seen": 1}
        assert results[f"s{seed}"].log.split() == [f"marker-{seed}"]


@pytest.mark.parametrize("server", ["raise SystemExit(1)", "import os, time; os.close(0); time.sleep(1)"],
                         ids=["exits", "deaf"])
def test_without_a_server_runs_start_fresh(root: Path, monkeypatch: pytest.MonkeyPatch, server: str) -> None:
    monkeypatch.setattr(child_module, "SERVER_ARGS", ["-c", server])
    results = run_all(root, [job(f"f{i}", "family", module="checks.family") for i in range(2)]
                      + [job("boom", "boom")], workers=2)
    assert {r.metrics["ppid"] for r in results.values() if r.outcome == "ok"} == {os.getpid()}
    assert (results["boom"].error or "").endswith("ZeroDivisionError: nope")
    monkeypatch.setenv("RECORDTOOL_FORK_SERVER", "0")
    assert not Runner(root=root, package="checks", workdir=root / "w", cache_dir=root / "c").serve


def test_a_module_that_fails_to_import_is_an_error_and_the_server_goes_on(root: Path) -> None:
    results = run_all(root, in_order(job("b1", "measure", module="checks.broken"),
                                     job("b2", "measure", module="checks.broken"),
                                     job("after", "family", module="checks.family")), workers=1)
    for name in ("b1", "b2"):
        assert results[name].outcome == "error"
        assert (results[name].error or "").startswith("Traceback")
        assert (results[name].error or "").endswith("ZeroDivisionError: division by zero")
        assert 'checks/broken.py", line 3' in (results[name].error or "")
    assert results["after"].metrics["ppid"] != os.getpid()  # forked: the server lives on


def test_an_import_that_kills_the_server_falls_back_to_fresh_runs(root: Path) -> None:
    results = run_all(root, in_order(job("before", "family", module="checks.family"),
                                     job("crash", "measure", module="checks.crash"),
                                     job("after", "family", module="checks.family")), workers=1)
    assert results["before"].outcome == "ok" and results["before"].metrics["ppid"] != os.getpid()
    assert results["crash"].error == "the check's process exited with code 3 before returning"
    assert results["after"].metrics["ppid"] == os.getpid()


def test_runs_of_a_dead_server_run_again_fresh(root: Path) -> None:
    results = run_all(root, [job("k", "killserver", module="checks.family"), job("f", "family", module="checks.family")],
                      workers=2)
    assert results["k"].outcome == "ok" and results["k"].metrics["ppid"] == os.getpid()
    assert results["f"].outcome == "ok"


def test_local_imports_outside_checks_are_found_on_every_module(root: Path) -> None:
    results = run_all(root, in_order(job("leaky", "measure", module="checks.leaky"),
                                     job("leaky2", "measure", module="checks.leaky2"),
                                     job("ok", "ok")), workers=1)
    for name in ("leaky", "leaky2"):
        assert results[name].error == (
            f"'checks.{name}' imports local code from outside checks/: 'outside' (outside.py); "
            "move it into checks/ so that its changes make verdicts stale")
    assert results["ok"].outcome == "ok"


def test_a_forked_hang_is_killed_at_its_timeout(root: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "hang.pid"
    start = time.monotonic()
    results = run_all(root, [job("hang", "hangpid", timeout=0.5, module="checks.family", path=str(pidfile))])
    assert time.monotonic() - start < 60  # at its timeout, not after its 600 s
    assert results["hang"].outcome == "timeout"
    pid, ppid = map(int, pidfile.read_text().split())
    assert ppid != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_import_that_hangs_times_out(root: Path) -> None:
    start = time.monotonic()
    results = run_all(root, in_order(job("slow", "measure", timeout=1, module="checks.slowimport"),
                                     job("ok", "ok")), workers=2)
    assert time.monotonic() - start < 60  # at its timeout, not after the import's 600 s
    assert results["slow"].outcome == "timeout"
    assert results["ok"].outcome == "ok"


def test_ctrl_c_stops_forked_runs_and_the_server(root: Path, tmp_path: Path) -> None:
    gen, pid, server = hanging_run(root, tmp_path / "hang.pid", serve=True)
    gen.close()
    for gone in (pid, server):
        with pytest.raises(ProcessLookupError):
            os.kill(gone, 0)


def test_a_sigterm_that_reaches_a_forked_run_before_it_is_set_up_ends_that_run_alone(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's SIGTERM at a run's timeout can reach the run (on a busy machine, with a short
    timeout) right after the server forked it, while it still has the server's handler for the
    death of verify, which kills every run the server knows. It must end that run alone. Here
    the server's child sends it to itself at that moment, before anything else."""
    server = textwrap.dedent("""
        import os, signal
        from recordtool.verify import child
        real = child.Server.child

        def early(self, message, request):
            if request["function"] == "victim":
                os.kill(os.getpid(), signal.SIGTERM)
            real(self, message, request)

        child.Server.child = early
        child.main(["--serve"])
    """)
    monkeypatch.setattr(child_module, "SERVER_ARGS", ["-c", server])
    go = tmp_path / "go"
    jobs = in_order(job("sibling", "waitfor", path=str(go)), job("victim", "victim"))
    for j in jobs:
        j.figures_dir = root / "figures"
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=2)
    run = runner.run(jobs)
    first = next(run)  # the sibling runs until it is let go
    go.touch()
    results = {r.job.check: r for r in [first, *run]}
    assert (results["sibling"].outcome, results["sibling"].error, results["sibling"].metrics) == (
        "ok", None, {"err": 0.0})
    assert (results["victim"].outcome, results["victim"].error) == ("error", "killed by signal SIGTERM (15)")


def _returning(value: object, tmp_path: Path) -> dict[str, object]:
    """What a run of a check that returns ``value`` gives, as the check's process says it."""
    request = {"root": str(tmp_path), "package": "checks", "module": "checks.fake", "function": "f", "seed": 0,
               "device": "cpu", "cache_dir": str(tmp_path / "cache"), "figures_dir": str(tmp_path / "figures"),
               "threads": 1, "params": {}}
    return child_module.run(request, load=lambda *_: lambda ctx: value)


@pytest.mark.parametrize(("value", "error"), [
    ({"gain": float("inf")}, "metric 'gain' is inf, not a finite number (or NaN), a list of numbers or a string"),
    ({"gain": -float("inf")}, "metric 'gain' is -inf, not a finite number (or NaN)"),
    ({"curve": [1.0, float("inf")]}, "metric 'curve' is a list holding something other than finite numbers"),
    ({"f": lambda: 1}, "metric 'f' is a function, not a finite number (or NaN)"),
    ({"nothing": None}, "metric 'nothing' is None, not a finite number (or NaN)"),
    ({"nested": {"a": 1.0}}, "metric 'nested' is a dict, not a finite number (or NaN)"),
    ({3: 1.0}, "metric key 3 is a int, not a name; return a mapping of metric names (strings)"),
])
def test_class_6_hostile_or_odd_results_are_an_error_that_names_the_metric(
        value: object, error: str, tmp_path: Path) -> None:
    """Issue 66, class 6: a result is checked where the check returns it; an infinity (which
    would pass '> 0'), a function (kept as its repr, then flagged nondeterministic), an int
    key, ``None`` or a mapping are an error naming the metric, never evidence."""
    result = _returning(value, tmp_path)
    assert result["status"] == "error" and str(result["error"]).startswith(error), result


def test_class_6_numbers_nan_lists_and_text_are_results(tmp_path: Path) -> None:
    value = {"err": 0.1, "n": 3, "ok": True, "undefined": float("nan"), "curve": [1.0, 2.5], "grid": [[1, 2], [3, 4]],
             "note": "text"}
    result = _returning(value, tmp_path)
    assert result["status"] == "ok", result
    metrics = result["metrics"]
    assert isinstance(metrics, dict) and sorted(metrics) == sorted(value)


@pytest.mark.parametrize("serve", [True, False], ids=["forked", "fresh"])
def test_class_7_each_run_is_held_to_its_memory_and_cpu_time(root: Path, serve: bool) -> None:
    """Issue 66, class 7: a check ran without limits and reserved 20 GB. Each run now has an
    address space and a CPU time, soft and hard alike (the check cannot raise them); past
    them the run is an error that says which limit and how to raise it."""
    jobs = [job("limits", "limits"), job("grab", "grab", mb=2048), job("burn", "burn", timeout=60)]
    jobs[0].memory_mb, jobs[0].cpu_s = 3000, 50.5
    jobs[1].memory_mb = 1500  # (the server's own address space, torch-free here, fits well below)
    jobs[2].cpu_s = 1
    results = run_all(root, jobs, workers=3, serve=serve)
    assert results["limits"].metrics == {"as": 3000 * 2**20, "as_hard": 3000 * 2**20, "cpu": 51.0}
    assert results["grab"].outcome == "error"
    assert (results["grab"].error or "").startswith(
        "MemoryError: ran out of memory within its limit of 1500 MiB of address space; raise 'limits: "
        "{memory_mb: ...}' in the check's YAML if it needs more")
    assert results["burn"].outcome == "error"
    assert (results["burn"].error or "").startswith(
        "killed by signal SIGXCPU (24) (past its CPU-time limit: raise 'limits: {cpu_s: ...}' in the check's YAML)")


def test_class_7_the_limits_a_run_gets_by_default_and_from_the_yaml() -> None:
    spec = {"name": "small", "run": "checks.fake:ok", "expect": {"err": "< 0.5"}, "threads": 2}
    plain = CheckSpec.model_validate(spec)
    assert run_limits(plain, 30.0, "cpu") == {"memory_mb": max(MIN_MEMORY_MB, physical_memory_mb() // 2),
                                              "cpu_s": 120.0}
    assert run_limits(plain, 30.0, "cuda")["memory_mb"] is None  # the GPU driver maps far more than it uses
    given = CheckSpec.model_validate({**spec, "limits": {"memory_mb": 512, "cpu_s": 7.5}})
    assert run_limits(given, 30.0, "cuda") == {"memory_mb": 512, "cpu_s": 7.5}
    with pytest.raises(ValidationError, match="greater than 0"):
        CheckSpec.model_validate({**spec, "limits": {"memory_mb": 0}})


def test_class_7_verify_holds_each_run_to_the_limits_its_yaml_gives(tmp_path: Path) -> None:
    root = one_claim(tmp_path, check("lim", "limits", expect='{cpu: "> 0"}', more="limits: {memory_mb: 3000, cpu_s: 40}"))
    verify(open_project(root=root), Options())
    verdict = read_store(load_config(root), ["THEORY-1"]).verdicts["THEORY-1"]
    assert {k: v for k, v in verdict.checks[0].runs[0].metrics.items() if k in ("as", "cpu")} == {
        "as": 3000 * 2**20, "cpu": 40.0}


LEAVES = '''
import json
import os
import shutil


def leave(ctx, kind="", secret=""):
    """Leaves ``plot.png`` and, beside it, what ``kind`` names."""
    folder = ctx.figures_dir
    ctx.figure("plot.png").write_bytes(b"png")
    if kind == "link-out":
        os.symlink(secret, folder / "leak.png")
    elif kind == "link-in":
        os.symlink("plot.png", folder / "again.png")
    elif kind == "caption-link":
        os.symlink(secret, folder / "plot.png.json")
    elif kind == "hard-link":
        os.link(secret, folder / "hard.png")
    elif kind == "fifo":
        os.mkfifo(folder / "pipe.png")
    elif kind == "folder":
        (folder / "loss.png").mkdir()
        (folder / "loss.png" / "inside.png").write_bytes(b"png")
    elif kind == "folder-link":
        shutil.rmtree(folder)
        os.symlink(os.path.dirname(secret), folder)
    elif kind == "deep-link":
        (folder / "more").mkdir()
        os.symlink(secret, folder / "more" / "leak.png")
    return {"err": 0.0}
'''

LEFT = {  # kind: (what it left, why it is refused)
    "link-out": ("leak.png", "is a symbolic link"),
    "link-in": ("again.png", "is a symbolic link"),
    "caption-link": ("plot.png.json", "is a symbolic link"),
    "hard-link": ("hard.png", "is a hard link (the file has another name, maybe outside)"),
    "fifo": ("pipe.png", "is a named pipe"),
    "folder": ("loss.png", "is a folder where a file is expected"),
    "folder-link": ("figures/folder-link", "is a symbolic link"),
    "deep-link": ("more/leak.png", "is a symbolic link"),
}


def test_class_2_what_a_check_leaves_is_a_regular_file_inside_its_run(root: Path) -> None:
    """Issue 66, class 2 (something from outside is still published): a check wrote its figure
    as a link to a file outside, and verify kept the target's content. What a run leaves in its
    folder must be regular files there; anything else is an error naming the file and the check,
    and is removed (the files beside it stay), so nothing of it is kept or published."""
    (root / "checks" / "leaves.py").write_text(LEAVES)
    secret = root.parent / "outside" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes(b"the secret")
    jobs = [job(kind, "leave", module="checks.leaves", kind=kind, secret=str(secret)) for kind in [*LEFT, "plain"]]
    results = run_all(root, jobs, workers=3)
    for kind, (name, why) in LEFT.items():
        assert (results[kind].outcome, results[kind].error) == ("error", (
            f"check '{kind}' left '{name}', which {why}; what a check leaves (figures, captions, artefacts) must be "
            "regular files in its run's folder: nothing of it is kept")), kind
        assert not os.path.lexists(root / name if kind == "folder-link" else root / "figures" / kind / name), kind
    assert results["plain"].outcome == "ok"
    assert sorted(p.relative_to(root / "figures").as_posix() for p in (root / "figures").rglob("*") if p.is_file()) \
        == sorted(f"{kind}/plot.png" for kind in [*LEFT, "plain"] if kind != "folder-link")
    assert secret.read_bytes() == b"the secret"


def test_class_2_a_runs_folder_holds_those_of_its_other_runs_without_answering_for_them(root: Path) -> None:
    """A run's folder holds the folders of its check's other seeds and controls: each run answers
    for its own files only."""
    (root / "checks" / "leaves.py").write_text(LEAVES)
    secret = root.parent / "secret.png"
    secret.write_bytes(b"the secret")
    main, other = job("main", "leave", module="checks.leaves"), job("other", "leave", module="checks.leaves",
                                                                       kind="link-out", secret=str(secret))
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=2)
    main.figures_dir, other.figures_dir = root / "figures" / "c", root / "figures" / "c" / "seed-1"
    results = {r.job.check: r for r in runner.run([main, other])}
    assert results["main"].outcome == "ok" and results["other"].outcome == "error"
    assert (root / "figures" / "c" / "plot.png").is_file() and not os.path.lexists(root / "figures" / "c" / "seed-1" /
                                                                                     "leak.png")
