"""JUnit XML of a verify run (``--junit-xml PATH``), for CI systems that show test reports.

One test case per check (``classname`` the claim, ``name`` the check), then one per clause
(``clause <id>``), failing, erring or skipped as ``CHECK_TAGS`` and ``CLAUSE_TAGS`` say, each
with the claim's result, and a check's with its setting and expectations, as properties.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from recordtool.verify.status import evidence_text
from recordtool.verify.verdict import CheckVerdict, ClaimStatus

# The element that says how a case ended (none: it passed).
CHECK_TAGS = {"fail": "failure", "no-power": "failure", "error": "error", "timeout": "error", "skipped": "skipped",
              "not-reproduced": "skipped"}
CLAUSE_TAGS = {**CHECK_TAGS, "contradicted": "failure", "observed": "failure", "untested": "failure"}


def junit_xml(statuses: Iterable[ClaimStatus]) -> str:
    suite = ET.Element("testsuite", name="recordtool verify")
    total = 0.0
    for status in statuses:
        verdict = status.verdict
        if verdict is None or status.state == "stale":
            case = ET.SubElement(suite, "testcase", classname=status.claim, name="(claim)", time="0")
            why = "; ".join(status.reasons) or "never verified"
            ET.SubElement(case, "error", type=status.state, message=f"{status.state}: {why}")
            continue
        for check in verdict.checks:
            total += check.duration_s
            case = ET.SubElement(suite, "testcase", classname=status.claim, name=check.name,
                                 time=f"{check.duration_s:.3f}")
            _result(case, verdict.summary, check)
            element = _outcome(case, CHECK_TAGS.get(check.outcome), check.outcome, check.message)
            details = [r.error for r in check.runs if r.error]
            if element is not None and element.tag == "error" and details:
                element.text = "\n\n".join(details)
        for clause in verdict.clauses:
            case = ET.SubElement(suite, "testcase", classname=status.claim, name=f"clause {clause.clause}", time="0")
            _result(case, verdict.summary)
            by = "; ".join(f"{e.check}: {e.metric} {e.state.replace('-', ' ')}" for e in clause.evidence)
            message = f"clause '{clause.clause}' is {clause.state}" + (f" ({by})" if by else
                                                                       ": no expectation or observation names it")
            _outcome(case, CLAUSE_TAGS.get(clause.state), clause.state, message)
    suite.set("tests", str(len(suite)))
    for key, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        suite.set(key, str(sum(1 for case in suite if case.find(tag) is not None)))
    suite.set("time", f"{total:.3f}")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _outcome(case: ET.Element, tag: str | None, state: str, message: str) -> ET.Element | None:
    """The case's ``failure``, ``error`` or ``skipped`` element (a skipped one has no type)."""
    if tag is None:
        return None
    return ET.SubElement(case, tag, {"message": message} if tag == "skipped" else {"type": state, "message": message})


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
