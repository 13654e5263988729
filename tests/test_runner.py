"""Every check runs in a child process: crashes and hangs cost that check, not the run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from verify_fakes import CHECKS, HELPER

from recordtool.runner import Job, JobResult, Runner, exit_message


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "__init__.py").write_text("")
    (tmp_path / "checks" / "fake.py").write_text(CHECKS)
    (tmp_path / "checks" / "helper.py").write_text(HELPER)
    (tmp_path / "outside.py").write_text("X = 1\n")
    (tmp_path / "checks" / "leaky.py").write_text("import outside\n\ndef measure(ctx):\n    return {'err': 0.0}\n")
    return tmp_path


def job(name: str, function: str, timeout: float = 20, module: str = "checks.fake", **params: object) -> Job:
    return Job("THEORY-1", name, "", 0, module, function, dict(params), timeout, Path("/nonexistent"))


def run_all(root: Path, jobs: list[Job], workers: int = 8) -> dict[str, JobResult]:
    for j in jobs:
        j.figures_dir = root / "figures" / j.check
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=workers)
    return {r.job.check: r for r in runner.run(jobs)}


def test_every_kind_of_ending_is_kept_apart(root: Path) -> None:
    start = time.monotonic()
    results = run_all(root, [
        job("ok", "ok"), job("boom", "boom"), job("hang", "hang", timeout=1), job("exit3", "exit3"),
        job("killed", "killed"), job("chatty", "chatty"), job("hog", "hog"), job("notmapping", "notmapping"),
        job("outside", "measure", module="checks.leaky"), job("missing", "nope"),
        job("escape", "x", module="os"),
    ], workers=11)
    assert time.monotonic() - start < 15
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
    assert len(results["chatty"].log) <= 4001
    assert results["hog"].outcome == "error"
    assert "MemoryError" in (results["hog"].error or "")
    assert results["notmapping"].error == "checks.fake:notmapping returned list, not a mapping of metric name to number"
    assert results["outside"].error == (
        "'checks.leaky' imports local code from outside checks/: 'outside' (outside.py); "
        "move it into checks/ so that its changes make verdicts stale")
    assert results["missing"].error == "'checks.fake' has no function 'nope'"
    assert results["escape"].error == "'os:x' is outside checks/; checks run only code inside checks/"


def test_parallel_workers_overlap(root: Path) -> None:
    start = time.monotonic()
    results = run_all(root, [job(f"s{i}", "spin", seconds=1.0) for i in range(2)], workers=2)
    assert all(r.outcome == "ok" for r in results.values())
    assert time.monotonic() - start < 1.9


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


def test_closing_the_run_stops_children(root: Path) -> None:
    runner = Runner(root=root, package="checks", workdir=root / "work", cache_dir=root / "cache", jobs=2)
    jobs = [job("a", "noop"), job("h", "hang", timeout=60)]
    for j in jobs:
        j.figures_dir = root / "figures"
    gen = runner.run(jobs)
    first = next(gen)
    assert first.job.check == "a"
    start = time.monotonic()
    gen.close()
    assert time.monotonic() - start < 5


def test_exit_messages() -> None:
    assert exit_message(-9) == "killed by signal SIGKILL (9) (out of memory?)"
    assert exit_message(2, "a\nlast words\n") == (
        "the check's process exited with code 2 before returning; last output: last words")
