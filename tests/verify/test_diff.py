"""`recordtool diff`: the verdicts committed at a revision against the working tree's, or two
revisions against each other, in a temporary git repository whose verdicts `verify` wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner
from verify_fakes import check, claim_yaml, make_project

from recordtool.cli import cli

MORE = ("params: {err: 0.1, other: 0.2, broken_err: 1.0, broken_other: 1.0}\ncontrol: {params: {broken: true}}\n"
        "positives: [{name: planted, params: {err: 0.0, other: 0.0}}]")
EXPECT = '{err: {is: "< 0.5", clause: a}, other: {is: "< 0.5", clause: b}}'


def claim(claim_id: str, more: str = MORE) -> str:
    return claim_yaml(claim_id, check("small", "numbers", expect=EXPECT, more=more), statement="A and B.",
                      extra="clauses: {a: A holds., b: B holds.}\n")


def invoke(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args[:1], "--root", str(root), *args[1:]])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=root, check=True,
                   capture_output=True)


def committed(tmp_path: Path) -> Path:
    """Two verified claims, their verdicts committed."""
    root = make_project(tmp_path, {"THEORY-1": claim("THEORY-1"), "THEORY-2": claim("THEORY-2")})
    assert invoke(root, "verify")[0] == 0
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "verified")
    return root


def test_a_claim_made_worse_shows_its_clause_both_numbers_and_exits_1(tmp_path: Path) -> None:
    root = committed(tmp_path)
    device = json.loads((root / "record" / "verdicts" / "THEORY-1.json").read_text())["device"]
    assert invoke(root, "diff") == (0, "no verdict changed\n", "")

    (root / "record" / "theory" / "THEORY-1.yaml").write_text(claim("THEORY-1", MORE.replace("err: 0.1", "err: 0.9")))
    assert invoke(root, "verify")[0] == 1
    code, out, err = invoke(root, "diff")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "THEORY-1: verified: 2 of 2 clauses -> contradicted: 1 of 2 clauses — worse: verified: 2 of 2 clauses "
        "before, contradicted: 1 of 2 clauses now",
        "  clause a: verified -> contradicted",
        f"  small: err < 0.5: 0.1 -> 0.9 (on {device})",
        "1 claim changed, 1 worse off"]

    code, out, _ = invoke(root, "diff", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["worse"] == ["THEORY-1"]
    assert data["claims"][0]["clauses"] == [["a", "verified", "contradicted"]]
    assert data["claims"][0]["moved"] == [{"check": "small", "metric": "err", "expect": "< 0.5", "before": [0.1] * 3,
                                           "after": [0.9] * 3, "machines": [device, device]}]

    # Committed, the change is between two revisions; the working tree then has none.
    git(root, "commit", "-qam", "worse")
    assert invoke(root, "diff")[0] == 0
    code, out, _ = invoke(root, "diff", "HEAD~1", "HEAD", "--format", "markdown")
    assert code == 1
    assert out.splitlines()[:4] == [
        "### Verdicts: `HEAD~1` → `HEAD`", "",
        "- `THEORY-1`: verified: 2 of 2 clauses -> contradicted: 1 of 2 clauses — worse: verified: 2 of 2 "
        "clauses before, contradicted: 1 of 2 clauses now",
        "  - clause `a`: verified -> contradicted"]
    assert out.splitlines()[-1] == "1 claim changed, 1 worse off"
    # Made better again: a change, and no claim worse off.
    assert invoke(root, "diff", "HEAD", "HEAD~1")[0] == 0


def test_new_and_removed_claims(tmp_path: Path) -> None:
    root = committed(tmp_path)
    (root / "record" / "theory" / "THEORY-2.yaml").unlink()
    (root / "record" / "verdicts" / "THEORY-2.json").unlink()
    (root / "record" / "theory" / "THEORY-3.yaml").write_text(claim("THEORY-3", MORE.replace("err: 0.1", "err: 0.9")))
    assert invoke(root, "verify")[0] == 1
    code, out, _ = invoke(root, "diff")
    assert code == 1
    assert out.splitlines() == [
        "THEORY-2: removed (was verified: 2 of 2 clauses)",
        "THEORY-3: new: contradicted: 1 of 2 clauses — worse: contradicted: 1 of 2 clauses, with no verdict before",
        "2 claims changed, 1 worse off"]


def test_bad_usage_exits_2_with_one_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"THEORY-1": claim("THEORY-1")})
    assert invoke(root, "diff") == (2, "", f"error: not a git repository: {root}\n")
    git(root, "init", "-q")
    assert invoke(root, "diff") == (2, "", "error: unknown revision: HEAD\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "no verdicts yet")
    assert invoke(root, "diff", "nosuch") == (2, "", "error: unknown revision: nosuch\n")
    assert invoke(root, "diff") == (0, "no verdict changed\n", "")
    code, _, err = invoke(root, "diff", "HEAD", "HEAD", "HEAD")
    assert code == 2 and err.splitlines()[-1] == "Error: give at most two revisions: REV_A [REV_B]"
