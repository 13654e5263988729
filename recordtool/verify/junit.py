"""JUnit XML of a verify run (``--junit-xml PATH``), for CI systems that show test reports.

One test case per check: ``classname`` the claim, ``name`` the check; ``fail`` and
``no-power`` are failures, ``error`` and ``timeout`` errors, ``skipped`` and
``not-reproduced`` skipped (neither passed nor failed: the test was never shown able to pass).
Then one test case per clause, ``name`` ``clause <id>``: ``verified`` passes, ``contradicted``,
``observed`` and ``untested`` are failures (the claim is not verified), ``not-reproduced``
skipped, the others as their check's. The claim's result (``partly verified: 4 of 5
clauses``) is each case's ``claim-result`` property; a check's case also has its ``setting``
and, per expectation, a property ``expectation <metric>`` with its state, power and
sensitivity.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from recordtool.verify.status import evidence_text
from recordtool.verify.verdict import CheckVerdict, ClaimStatus


def junit_xml(statuses: Iterable[ClaimStatus]) -> str:
    suite = ET.Element("testsuite", name="recordtool verify")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total = 0.0
    for status in statuses:
        verdict = status.verdict
        if verdict is None or status.state == "stale":
            counts["tests"] += 1
            counts["errors"] += 1
            case = ET.SubElement(suite, "testcase", classname=status.claim, name="(claim)", time="0")
            why = "; ".join(status.reasons) or "never verified"
            ET.SubElement(case, "error", type=status.state, message=f"{status.state}: {why}")
            continue
        for check in verdict.checks:
            counts["tests"] += 1
            total += check.duration_s
            case = ET.SubElement(suite, "testcase", classname=status.claim, name=check.name,
                                 time=f"{check.duration_s:.3f}")
            _result(case, verdict.summary, check)
            if check.outcome in ("fail", "no-power"):
                counts["failures"] += 1
                ET.SubElement(case, "failure", type=check.outcome, message=check.message)
            elif check.outcome in ("error", "timeout"):
                counts["errors"] += 1
                element = ET.SubElement(case, "error", type=check.outcome, message=check.message)
                details = [r.error for r in check.runs if r.error]
                if details:
                    element.text = "\n\n".join(details)
            elif check.outcome in ("skipped", "not-reproduced"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=check.message)
        for clause in verdict.clauses:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=status.claim, name=f"clause {clause.clause}", time="0")
            _result(case, verdict.summary)
            by = "; ".join(f"{e.check}: {e.metric} {e.state.replace('-', ' ')}" for e in clause.evidence)
            message = f"clause '{clause.clause}' is {clause.state}" + (f" ({by})" if by else
                                                                       ": no expectation or observation names it")
            if clause.state in ("contradicted", "observed", "untested"):
                counts["failures"] += 1
                ET.SubElement(case, "failure", type=clause.state, message=message)
            elif clause.state in ("error", "timeout"):
                counts["errors"] += 1
                ET.SubElement(case, "error", type=clause.state, message=message)
            elif clause.state in ("skipped", "not-reproduced"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=message)
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{total:.3f}")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _result(case: ET.Element, summary: str, check: CheckVerdict | None = None) -> None:
    properties = ET.SubElement(case, "properties")
    ET.SubElement(properties, "property", name="claim-result", value=summary)
    if check is None:
        return
    if check.setting:
        ET.SubElement(properties, "property", name="setting", value=check.setting)
    for e in check.expectations:
        ET.SubElement(properties, "property", name=f"expectation {e.metric}",
                      value=f"{e.state.replace('-', ' ')}; {evidence_text(e)}")
