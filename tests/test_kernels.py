"""recordtool.verify.kernels: the CPU kernels a run's numbers came from, named and probed."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from recordtool.verify.kernels import describe, probe  # noqa: E402

PROBE = "import sys, torch; from recordtool.verify.kernels import describe; sys.stdout.write(describe(torch))"


@functools.cache
def _describe(env: tuple[tuple[str, str], ...]) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    return subprocess.run([sys.executable, "-c", PROBE], env=clean | dict(env), capture_output=True, text=True,
                          check=True).stdout


def _describe_in(env: dict[str, str]) -> str:
    """``describe`` in a fresh process with ``env`` set (torch reads it when imported)."""
    return _describe(tuple(sorted(env.items())))


def test_the_probe_is_the_same_on_one_machine_whatever_the_threads() -> None:
    """Taken on one thread (a run's own thread count is its fingerprint's business), and put
    back: the same in every call and process, and torch's thread count as it was."""
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        two = probe(torch)
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        assert probe(torch) == two == probe(torch)
        assert _describe_in({}) == describe(torch)  # another process: the same name, level and probe
    finally:
        torch.set_num_threads(before)
    assert re.fullmatch(r"[0-9a-f]{8}", two)


def test_other_kernels_give_another_probe_and_say_so() -> None:
    """Scalar kernels instead of this CPU's vector ones group the sums differently: the probe
    tells, and so does the description (a machine whose own kernels are scalar has nothing to
    compare)."""
    native = _describe_in({})
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("this CPU's own kernels are the scalar ones")
    scalar = _describe_in({"ATEN_CPU_CAPABILITY": "default"})
    name, _level, kernels = native.split(", ")
    assert scalar.split(", ")[0] == name and scalar.split(", ")[1] == "DEFAULT"
    assert scalar.split(", ")[2] != kernels
    assert _describe_in({"MKL_CBWR": "COMPATIBLE"}).endswith(", MKL_CBWR=COMPATIBLE")


def test_a_probe_is_made_once_per_machine_and_settings_then_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs of one verify pass their descriptions on: a run finds this machine's there and
    does not probe again; under other settings (another key) it probes and adds its own."""
    from recordtool.verify import kernels

    made: list[str] = []
    monkeypatch.setattr(kernels, "probe", lambda torch: made.append("probe") or f"{len(made):08x}")
    monkeypatch.delenv("MKL_CBWR", raising=False)
    known: dict[str, str] = {}
    first = describe(torch, known)
    assert describe(torch, known) == first and first.endswith(", kernels 00000001") and len(made) == 1
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    assert describe(torch, known).endswith(", kernels 00000002, MKL_CBWR=COMPATIBLE")
    assert len(known) == 2 and len(made) == 2
    assert describe(torch, {}).endswith(", kernels 00000003, MKL_CBWR=COMPATIBLE")  # nothing known: probed
