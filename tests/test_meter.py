"""The progress line of a long command: drawn on a terminal only, late, seldom, and erased."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from recordtool import meter as meter_module
from recordtool.meter import ERASE, HEARTBEAT_S, Meter, PlainDisplay
from recordtool.verify.runner import Job, JobResult


@pytest.fixture(autouse=True)
def _a_terminal_that_moves_its_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_drawn_before_the_delay_then_the_stage_and_its_count() -> None:
    out, clock = Terminal(), Clock()
    meter = Meter(out, delay=1.0, every=0.2, clock=clock)
    advance = meter.stage("reading the entry files", 100_000)
    advance(64)
    assert out.getvalue() == ""  # a quick command never shows it
    clock.now += 1.0
    advance(64)
    assert out.getvalue() == f"{ERASE}reading the entry files: 128 of 100,000"
    clock.now += 0.1
    advance(64)  # redrawn at most every 0.2 s
    assert out.getvalue().count(ERASE) == 1
    clock.now += 0.15
    advance(64)
    assert out.getvalue().endswith(f"{ERASE}reading the entry files: 256 of 100,000")
    meter.stage("linking the record")  # a new stage is drawn at once, without a count
    assert out.getvalue().endswith(f"{ERASE}linking the record…")


def test_the_line_is_erased_before_other_output_and_at_the_end() -> None:
    out, clock = Terminal(), Clock()
    clock.now += 5
    with Meter(out, delay=0, every=0, clock=clock) as meter:
        meter.stage("composing the pages", 10)(10)
        assert out.getvalue() == f"{ERASE}composing the pages: 0 of 10{ERASE}composing the pages: 10 of 10"
        meter.erase()
        assert out.getvalue().endswith(ERASE)
        length = len(out.getvalue())
        meter.erase()  # (nothing on the screen: nothing written)
        assert len(out.getvalue()) == length
        meter.stage("planning the pages")
    assert out.getvalue().endswith(f"planning the pages…{ERASE}")


def test_off_a_terminal_nothing_is_written_at_all() -> None:
    out = io.StringIO()  # a pipe, a log, CI
    with Meter(out, delay=0, every=0) as meter:
        meter.stage("reading the entry files", 3)(3)
        meter.erase()
    assert out.getvalue() == ""
    with Meter(None, delay=0) as meter:
        meter.stage("nothing to draw on", 1)(1)


def test_a_dumb_terminal_gets_nothing_either(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")  # (an editor's shell buffer: it would show the escape codes)
    out = Terminal()
    with Meter(out, delay=0, every=0) as meter:
        meter.stage("reading the entry files", 3)(3)
    assert out.getvalue() == ""


def test_the_defaults_are_read_when_the_meter_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meter_module, "DELAY_S", 0.0)
    out = Terminal()
    Meter(out).stage("reading the entry files", 2)
    assert out.getvalue() == f"{ERASE}reading the entry files: 0 of 2"


# Off a terminal, the runs of verify: a line when a run starts and ends, a heartbeat in between.

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
