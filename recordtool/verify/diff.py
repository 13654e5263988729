"""What changed between two sets of verdicts (``recordtool diff``): those committed at a git
revision, or those of the working tree: each claim's result and clauses, and the numbers that
moved beyond the check's tolerance. Worse off is the rule ``verify`` applies to a rerun
(``report.worse_off``); a removed claim is listed but is not worse.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from recordtool.record.schema import Tolerance
from recordtool.verify.report import worse_off
from recordtool.verify.rules import close, number_text
from recordtool.verify.verdict import ClaimVerdict, VerdictError, json_ready


class DiffError(Exception):
    """The verdicts cannot be read: not a git repository, an unknown revision, a damaged file."""


@dataclass(slots=True)
class Moved:
    """An expectation whose spread over the seeds moved beyond its check's tolerance."""

    check: str
    metric: str
    expect: str
    before: list[float] | None
    after: list[float] | None
    machines: tuple[str, str]


@dataclass(slots=True)
class ClaimDiff:
    """One claim that changed: its result before and after (None: not there), the clauses
    whose state changed, the numbers that moved, and why it is worse off (None: it is not)."""

    claim: str
    before: str | None
    after: str | None
    clauses: list[tuple[str, str, str]] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)
    worse: str | None = None


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=False)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise DiffError(said[-1] if said else f"git {args[0]} failed")
    return done.stdout


def git_verdicts(root: Path, folder: Path, rev: str) -> dict[str, ClaimVerdict]:
    """The verdicts in ``folder`` (under the project ``root``) as committed at ``rev``: every
    ``ID.json`` file of that folder's tree, read in one ``git cat-file --batch``."""
    try:
        _git(root, "rev-parse", "--git-dir")
    except DiffError:
        raise DiffError(f"not a git repository: {root}") from None
    try:
        _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except DiffError:
        raise DiffError(f"unknown revision: {rev}") from None
    place = f"{rev}:./{folder.relative_to(root).as_posix()}"
    try:
        tree = _git(root, "ls-tree", "-z", "--end-of-options", place).decode()
    except DiffError:
        return {}  # no verdicts at that revision
    files = []  # (blob, claim id)
    for line in filter(None, tree.split("\0")):  # "<mode> <type> <blob>\t<name>"
        info, name = line.split("\t", 1)
        if info.split()[1] == "blob" and name.endswith(".json"):
            files.append((info.split()[2], name[: -len(".json")]))
    data = _git(root, "cat-file", "--batch", stdin="".join(f"{blob}\n" for blob, _ in files).encode())
    verdicts: dict[str, ClaimVerdict] = {}
    at = 0
    for _blob, claim in files:  # each answer: "<blob> blob <size>\n<content>\n", in order
        header_end = data.index(b"\n", at)
        size = int(data[at:header_end].split()[2])
        text = data[header_end + 1: header_end + 1 + size]
        at = header_end + 2 + size
        try:
            verdicts[claim] = ClaimVerdict.from_json(text.decode("utf-8"))
        except (VerdictError, UnicodeDecodeError) as exc:
            raise DiffError(f"{place}/{claim}.json: {exc}") from None
    return verdicts


def _moved(before: ClaimVerdict, after: ClaimVerdict, tolerances: Mapping[str, Tolerance]) -> list[Moved]:
    machines = (before.device, after.device)
    old = {(c.name, e.metric, e.expect): e.spread for c in before.checks for e in c.expectations}
    moved = []
    for check in after.checks:
        for e in check.expectations:
            key = (check.name, e.metric, e.expect)
            if key not in old or (old[key] is None and e.spread is None):
                continue
            was = old[key]
            if was is None or e.spread is None or not close(was, e.spread, tolerances.get(check.name, Tolerance())):
                moved.append(Moved(check.name, e.metric, e.expect, was, e.spread, machines))
    return moved


def compare(before: Mapping[str, ClaimVerdict], after: Mapping[str, ClaimVerdict],
            tolerances: Mapping[str, Mapping[str, Tolerance]]) -> list[ClaimDiff]:
    """Every claim that is new, removed or changed from ``before`` to ``after``, by id;
    ``tolerances``: claim -> check name -> its tolerance (the default for one not given)."""
    diffs = []
    for claim in sorted(set(before) | set(after)):
        old, new = before.get(claim), after.get(claim)
        if new is None:
            assert old is not None
            diffs.append(ClaimDiff(claim, old.summary, None))
            continue
        if old is None:
            verified = new.result in ("verified", "skipped")
            diffs.append(ClaimDiff(claim, None, new.summary,
                                   worse=None if verified else f"{new.summary}, with no verdict before"))
            continue
        states = {c.clause: c.state for c in old.clauses}, {c.clause: c.state for c in new.clauses}
        clauses = [(c, states[0].get(c, "absent"), states[1].get(c, "absent"))
                   for c in sorted(set(states[0]) | set(states[1]))]
        clauses = [c for c in clauses if c[1] != c[2]]
        diff = ClaimDiff(claim, old.summary, new.summary, clauses, _moved(old, new, tolerances.get(claim, {})),
                         worse_off(old, new))
        if diff.before != diff.after or diff.clauses or diff.moved:
            diffs.append(diff)
    return diffs


def _numbers(spread: list[float] | None) -> str:
    if spread is None:
        return "no number"
    low, median, high = spread
    return number_text(median) if low == high else f"{number_text(median)} ({number_text(low)}..{number_text(high)})"


def format_diff(diffs: list[ClaimDiff], quote: Callable[[str], str], bullet: str = "") -> list[str]:
    """The changes as lines, a claim's details indented under it; ``quote`` marks what comes
    from the record (a code span in Markdown), ``bullet`` starts each line (``- ``)."""
    lines = []
    for d in diffs:
        what = (f"new: {d.after}" if d.before is None else f"removed (was {d.before})" if d.after is None
                else f"{d.before} -> {d.after}" if d.before != d.after else d.after)
        lines.append(f"{bullet}{quote(d.claim)}: {what}{' — worse: ' + d.worse if d.worse else ''}")
        for clause, was, now in d.clauses:
            lines.append(f"  {bullet}clause {quote(clause)}: {was} -> {now}")
        for m in d.moved:
            where = f"on {quote(m.machines[0])}" + (f" -> {quote(m.machines[1])}" if m.machines[1] != m.machines[0]
                                                     else "")
            lines.append(f"  {bullet}{quote(m.check)}: {quote(m.metric + ' ' + m.expect)}: "
                         f"{_numbers(m.before)} -> {_numbers(m.after)} ({where})")
    worse = sum(1 for d in diffs if d.worse)
    summary = f"{len(diffs)} claim{'s' if len(diffs) != 1 else ''} changed, {worse} worse off"
    return [*lines, "", summary] if bullet and diffs else [*lines, summary if diffs else "no verdict changed"]


def diff_json(diffs: list[ClaimDiff]) -> dict[str, Any]:
    """The changes as plain data (non-finite numbers as ``"nan"``, ``"inf"``: strict JSON)."""
    return {"claims": [json_ready(asdict(d)) for d in diffs], "worse": [d.claim for d in diffs if d.worse]}
