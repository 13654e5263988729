"""The bad-input and fault corpus: run a command, and hold it to one clear message.

Every case of ``tests/record/test_shapes.py`` and ``tests/test_faults.py`` runs a command on a
small project and asserts the exit code, the first line of what it printed on stderr (with its
place), that no traceback was printed or raised, and that nothing on disk changed but what the
case allows.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from recordtool.cli import cli

Snapshot = dict[str, tuple[int, str]]
# verify's progress on stderr: "THEORY-1 small [control c] seed 0: started", "THEORY-1: verified"
PROGRESS = re.compile(r"^[A-Z][A-Z0-9]*-[0-9]+(?: \S+(?: \[[^]]*\])? seed [0-9]+)?: ")


def snapshot(root: Path) -> Snapshot:
    """Every file, folder and link under ``root``: its mode and what it holds (a digest of
    its bytes, the target of a link)."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                out[rel] = (info.st_mode, os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                out[rel] = (info.st_mode, hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest())
            else:
                out[rel] = (info.st_mode, "")
    return out


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def first(self) -> str:
        """The first line on stderr that is not verify's progress (the message that must say
        what is wrong, and where)."""
        return next((line for line in self.err.split("\n") if not PROGRESS.match(line)), "")


def invoke(*args: str) -> Outcome:
    """Run the command line in this process; an exception that escapes it fails the case."""
    result: Result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: raised {result.exception!r}") from result.exception
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return Outcome(result.exit_code, result.stdout, result.stderr)


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The paths that were added, removed or changed, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
