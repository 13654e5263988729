"""Fake projects for the verify tests: a tmp folder with a pyproject.toml, a record of
claims and a ``checks`` package of small fake check functions."""

from __future__ import annotations

import textwrap
from pathlib import Path

CHECKS = '''
import math
import os
import signal
import sys
import time

from checks import helper


def ok(ctx, scale=1.0, broken=False, planted=False):
    ctx.progress("measuring")
    ctx.figure("plot.png", title="A plot", caption="What it shows.").write_bytes(b"png")
    if planted:  # a positive control: the effect planted, the expectation met
        return {"err": 0.0, "curve": [1.0, 2.0]}
    return {"err": helper.small() * scale + (1.0 if broken else 0.0), "curve": [1.0, 2.0]}


def always(ctx, broken=False):
    return {"err": 0.0}


def fail(ctx, broken=False, planted=False):
    return {"err": 0.0 if planted else 0.9}


def nan(ctx, broken=False, planted=False):
    return {"err": 1.0 if broken else 0.0 if planted else float("nan")}  # the control fails on a number: power


def text(ctx):
    return {"err": "small"}


def nothing(ctx):
    return {"other": 1.0}


def notmapping(ctx):
    return [1, 2]


def boom(ctx):
    raise ZeroDivisionError("nope")


def hang(ctx):
    time.sleep(600)


def exit3(ctx):
    os._exit(3)


def killed(ctx):
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)


def chatty(ctx, broken=False):
    for _ in range(40000):
        print("x" * 99)
    return {"err": 1.0 if broken else 0.0}


def hog(ctx):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
    blocks = [bytearray(256 * 1024**2) for _ in range(64)]
    return {"err": float(len(blocks))}


def limits(ctx):
    """The limits the run is held to (RLIMIT_AS in bytes, RLIMIT_CPU in seconds; -1: none)."""
    import resource
    return {"as": float(resource.getrlimit(resource.RLIMIT_AS)[0]), "as_hard": float(resource.getrlimit(resource.RLIMIT_AS)[1]),
            "cpu": float(resource.getrlimit(resource.RLIMIT_CPU)[0])}


def grab(ctx, mb=0):
    block = bytearray(mb * 1024 * 1024)
    return {"err": float(len(block))}


def burn(ctx):
    while True:
        pass


def random(ctx, broken=False):
    return {"err": int.from_bytes(os.urandom(4), "little") / 2**40 + (1.0 if broken else 0.0)}


def seeded(ctx, broken=False):
    return {"err": ctx.seed / 1000 + (1.0 if broken else 0.0)}


def jitter(ctx, rel=0.0, broken=False):
    """0.1 on a first run, 0.1 * (1 + rel) on every later one (a file in the cache counts)."""
    marker = ctx.cache_dir / f"jitter-{ctx.seed}"
    again = marker.exists()
    ctx.cache_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text("ran")
    return {"err": 0.1 * (1 + rel) if again else 0.1, "inf": float("inf"), "nan": float("nan"),
            "zero": 0.0 if not again else 1e-12}


def threads(ctx):
    return {"err": 0.0, "threads": float(ctx.threads)}


def numbers(ctx, broken=False, **values):
    """Returns ``values`` as they are, ``seed_<n>_<metric>`` overriding ``metric`` on seed n;
    a control (``broken``) returns ``broken_<metric>`` instead where given."""
    out = {}
    for key, value in values.items():
        if key.startswith(("seed_", "broken_")):
            continue
        out[key] = value
        if broken and f"broken_{key}" in values:
            out[key] = values[f"broken_{key}"]
        if not broken and f"seed_{ctx.seed}_{key}" in values:
            out[key] = values[f"seed_{ctx.seed}_{key}"]
    return {k: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for k, v in out.items()}


def waitfor(ctx, path="", seconds=60.0):
    """Runs until ``path`` exists (``seconds`` at most): until the test lets it end."""
    end = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.01)
    return {"err": 0.0 if os.path.exists(path) else 1.0}


def meet(ctx, folder="", n=2, seconds=60.0):
    """Notes this run in ``folder``, then waits there for ``n`` runs (``seconds`` at most):
    ``met`` is how many it saw, ``n`` only when that many ran at once."""
    open(os.path.join(folder, str(os.getpid())), "w").close()
    end = time.monotonic() + seconds
    while len(os.listdir(folder)) < n and time.monotonic() < end:
        time.sleep(0.01)
    return {"err": 0.0, "met": float(len(os.listdir(folder)))}


def noop(ctx, broken=False):
    return {"err": 1.0 if broken else 0.0}


def fragile(ctx, broken=False):
    """Holds; its control raises."""
    if broken:
        raise ValueError(f"no control here: {ctx.cache_dir}")
    return {"err": 0.0}


def kernels(ctx, broken=False):
    """Imports torch; seed 1 runs with MKL held to AVX2, as on another machine's kernels."""
    import torch  # noqa: F401

    if ctx.seed == 1:
        os.environ["MKL_CBWR"] = "AVX2"
    return {"err": int.from_bytes(os.urandom(4), "little") / 2**40 + (1.0 if broken else 0.0)}


def torchy(ctx, broken=False):
    import torch  # the check's own process imports torch; the parent must not

    return {"err": float(torch.zeros(1).sum()) + (1.0 if broken else 0.0), "torch": float("torch" in sys.modules),
            "threads": float(torch.get_num_threads())}
'''

HELPER = '''
import os


def small():
    return 0.001


def runner():
    """The process that started this run (verify, a Dask worker, or the fork server): the
    parent, or the grandparent past a fresh run's reaper (recordtool.verify.reaper)."""
    pid = os.getppid()
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        argv = handle.read().split(b"\\0")
    if b"recordtool.verify.child" in argv and b"--serve" not in argv:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            pid = int(handle.read().rsplit(")", 1)[1].split()[1])
    return pid
'''


def claim_yaml(claim_id: str, checks: str, statement: str = "The error is small.", extra: str = "") -> str:
    return (f"id: {claim_id}\nkind: theory\nstatement: {statement}\n{extra}checks:\n"
            + textwrap.indent(textwrap.dedent(checks).strip("\n"), "  ") + "\n")


POWER = "control: {params: {broken: true}}"
"""A control under which the fake checks that take ``broken`` fail ``err < 0.5``: power."""

VALIDATED = POWER + "\npositives: [{name: planted, params: {planted: true}}]"
"""Power, and a positive control under which the fake checks that take ``planted`` (ok, fail,
nan) meet their expectations: sensitivity, so that a failing expectation contradicts."""


def check(name: str, run: str, expect: str = '{err: "< 0.5"}', more: str = "") -> str:
    """One check of a claim's ``checks:`` list, as YAML."""
    out = f"- name: {name}\n  run: checks.fake:{run}\n  expect: {expect}\n"
    if more:
        out += textwrap.indent(textwrap.dedent(more).strip("\n"), "  ") + "\n"
    return out


def make_project(tmp: Path, claims: dict[str, str], timeout: float = 30, checks: str = CHECKS) -> Path:
    """A project at ``tmp/project`` with ``claims`` (id -> YAML text) and the fake checks."""
    root = tmp / "project"
    (root / "record" / "theory").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "pyproject.toml").write_text(f"[tool.recordtool]\ntimeout = {timeout}\n", encoding="utf-8")
    (root / "checks" / "__init__.py").write_text("", encoding="utf-8")
    (root / "checks" / "fake.py").write_text(checks, encoding="utf-8")
    (root / "checks" / "helper.py").write_text(HELPER, encoding="utf-8")
    for claim_id, text in claims.items():
        (root / "record" / "theory" / f"{claim_id}.yaml").write_text(text, encoding="utf-8")
    return root


def one_claim(tmp: Path, *checks: str, claim_id: str = "THEORY-1", timeout: float = 30, extra: str = "") -> Path:
    return make_project(tmp, {claim_id: claim_yaml(claim_id, "".join(checks), extra=extra)}, timeout=timeout)


FAMILY = '''
import os
import time
from pathlib import Path

from checks.helper import runner

with open(Path(__file__).with_name("imports.log"), "a") as _log:
    _log.write("imported\\n")

STATE = []


def family(ctx):
    return {"pid": os.getpid(), "ppid": runner(), "pgid": os.getpgid(0), "sid": os.getsid(0)}


def stateful(ctx):
    STATE.append(ctx.seed)
    print(f"marker-{ctx.seed}")
    return {"seen": len(STATE)}


def killserver(ctx):
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
        forked = b"--serve" in handle.read()
    if forked:
        os.kill(os.getppid(), 9)
        time.sleep(10)
    return {"ppid": runner()}


def hangpid(ctx, path=""):
    Path(path).write_text(f"{os.getpid()} {runner()}")
    time.sleep(600)
'''
"""``checks/family.py``: checks that report where they run (fork server tests)."""

BROKEN = "import checks.helper\n\n1 / 0\n"
"""``checks/broken.py``: a module whose import raises."""

CRASH = "import os\n\nos._exit(3)\n"
"""``checks/crash.py``: a module whose import ends the process that imports it."""

SLOW_IMPORT = "import time\n\ntime.sleep(600)\n"
"""``checks/slowimport.py``: a module whose import hangs."""


def edit_to_verified(path: Path) -> None:
    """Edit the verdict file of a claim whose one check failed, by hand, to say the claim is
    verified: its result, clause, check, expectation and the run's judgement, not its numbers."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    data["result"], data["outcome"] = "verified", "pass"
    data["clauses"][0]["state"] = "verified"
    data["checks"][0]["outcome"] = "pass"
    data["checks"][0]["expectations"][0]["state"] = "holds"
    data["checks"][0]["runs"][0]["expectations"][0]["holds"] = True
    path.write_text(json.dumps(data), encoding="utf-8")
