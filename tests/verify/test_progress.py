"""Progress off a terminal: a line when a run starts and ends, a heartbeat in between."""

from __future__ import annotations

import io
from pathlib import Path

from recordtool.verify.progress import HEARTBEAT_S, PlainDisplay
from recordtool.verify.runner import Job, JobResult


def job(seed: int = 0, variant: str = "") -> Job:
    return Job("THEORY-1", "exact", variant, seed, "checks.demo", "measure", {}, 60.0, Path("figures"))


def test_a_log_says_when_each_run_starts_beats_while_it_runs_and_ends() -> None:
    out = io.StringIO()
    display = PlainDisplay(out)
    first, second = job(0), job(0, "untrained")
    display.started(first)
    display.started(second)
    display.tick([(first, 1.0, ""), (second, 1.0, "")])  # nothing new to say yet
    display.tick([(first, HEARTBEAT_S + 0.5, "step 300/1000, loss 2.31"), (second, HEARTBEAT_S - 1, "step 1")])
    display.tick([(first, HEARTBEAT_S + 10, "step 400/1000, loss 2.10"), (second, HEARTBEAT_S, "")])
    display.tick([(first, 2 * HEARTBEAT_S + 1, "step 900/1000, loss 1.20")])
    display.finished(JobResult(first, "ok", {}, 2 * HEARTBEAT_S + 2))
    assert out.getvalue().splitlines() == [
        "THEORY-1 exact seed 0: started",
        "THEORY-1 exact [control untrained] seed 0: started",
        "THEORY-1 exact seed 0: running 30 s, step 300/1000, loss 2.31",
        "THEORY-1 exact [control untrained] seed 0: running 30 s, nothing reported yet",
        "THEORY-1 exact seed 0: running 61 s, step 900/1000, loss 1.20",
        "THEORY-1 exact seed 0: done (62.0 s)",
    ]
