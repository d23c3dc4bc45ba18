"""junit.xml: the run as JUnit XML, so CI shows each check as a test.

One ``<testsuite>`` per scenario (name = scenario id), one ``<testcase>`` per check
(classname = scenario id, name = check id):

- valid: a passing test case (advisories go to its ``<system-out>``);
- invalid: ``<failure message=... type=check_id>`` whose text is the findings, one line
  each with the business key and the attempt indexes;
- unknown: ``<error>``, with the check's detail and findings;
- not applicable: ``<skipped message=reason>``.

A scenario without check results (not applicable, or failed to run) gets a test case
named ``scenario`` carrying its verdict, so every scenario shows up in CI; so does a
scenario whose verdict is ``error`` (with its reason), next to its checks.
Checks carry no timing of their own: test cases have ``time="0.000"`` and each suite
the scenario's duration; the ``<testsuites>`` totals are the sums over the suites.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TextIO

from hookproof.reports._format import finding_line, one_line, utc_iso
from hookproof.reports.model import CheckView, RunReport, ScenarioReport

__all__ = ["render_junit", "write_junit"]

#: Characters XML 1.0 cannot carry at all (they are dropped from every text and attribute).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

#: Name of the stand-in test case of a scenario without check results.
SCENARIO_CASE = "scenario"


@dataclass
class _Totals:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    time_s: float = 0.0

    def add(self, other: _Totals) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors
        self.skipped += other.skipped
        self.time_s += other.time_s

    def attrs(self) -> dict[str, str]:
        return {"tests": str(self.tests), "failures": str(self.failures), "errors": str(self.errors),
                "skipped": str(self.skipped), "time": f"{self.time_s:.3f}"}


def render_junit(report: RunReport) -> str:
    """The report as JUnit XML text (with an XML declaration; ends with a newline)."""
    text = io.StringIO()
    write_junit(report, text)
    return text.getvalue()


def write_junit(report: RunReport, out: TextIO) -> None:
    """`render_junit`'s text written to `out` as ElementTree serializes it, a tag or a text
    at a time: a storm's thousands of finding lines are never also one document's text."""
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    ET.ElementTree(_tree(report)).write(out, encoding="unicode")
    out.write("\n")


def _tree(report: RunReport) -> ET.Element:
    """The ``<testsuites>`` element of `report`, indented."""
    root = ET.Element("testsuites", {"name": "hookproof"})
    totals = _Totals()
    for scenario in report.scenarios:
        suite, suite_totals = _suite(report, scenario)
        totals.add(suite_totals)
        root.append(suite)
    # Attribute order: name first, then the totals (ElementTree keeps insertion order).
    for name, value in totals.attrs().items():
        root.set(name, value)
    ET.indent(root, space="  ")
    return root


def _suite(report: RunReport, scenario: ScenarioReport) -> tuple[ET.Element, _Totals]:
    first_sent = min((a.sent_at for a in scenario.attempts), default=report.started_at)
    suite = ET.Element("testsuite", {"name": _x(scenario.id)})
    totals = _Totals(time_s=max(0.0, scenario.duration_s))
    properties = ET.SubElement(suite, "properties")
    for name, value in (("title", scenario.title), ("verdict", scenario.verdict),
                        ("settled", str(scenario.settled).lower()),
                        ("checklist", " ".join(scenario.checklist)),
                        ("target", report.target), ("profile", report.profile),
                        ("environment", report.environment), ("seed", str(report.seed)),
                        *((("config", report.config),) if report.config else ())):
        ET.SubElement(properties, "property", {"name": name, "value": _x(value)})
    cases = [_check_case(scenario, check) for check in scenario.checks]
    if not cases or scenario.verdict == "error":  # the run's own error must show, too
        cases.append(_scenario_case(scenario))
    for case, kind in cases:
        suite.append(case)
        totals.tests += 1
        if kind == "failure":
            totals.failures += 1
        elif kind == "error":
            totals.errors += 1
        elif kind == "skipped":
            totals.skipped += 1
    for name, value in totals.attrs().items():
        suite.set(name, value)
    suite.set("timestamp", utc_iso(first_sent))
    return suite, totals


def _case(scenario: ScenarioReport, name: str) -> ET.Element:
    return ET.Element("testcase", {"classname": _x(scenario.id), "name": _x(name), "time": "0.000"})


def _check_case(scenario: ScenarioReport, check: CheckView) -> tuple[ET.Element, str]:
    case = _case(scenario, check.check_id)
    findings = [f for f in check.findings if f.severity == "finding"]
    advisories = [f for f in check.findings if f.severity == "advisory"]
    lines = [finding_line(f) for f in findings]
    if scenario.verdict == "not_applicable" or check.verdict == "not_applicable":
        kind = "skipped"
        reason = scenario.reason or check.detail or "not applicable"
        ET.SubElement(case, "skipped", {"message": _x(one_line(reason))})
    elif check.verdict == "invalid":
        kind = "failure"
        message = one_line(check.detail) or (f"{len(findings)} finding(s)" if findings else "invalid")
        failure = ET.SubElement(case, "failure", {"message": _x(message), "type": _x(check.check_id)})
        failure.text = _x("\n".join(lines)) or None
    elif check.verdict == "valid":
        kind = "pass"
    else:  # unknown, or a verdict this version does not know: never a silent pass
        kind = "error"
        message = one_line(check.detail) or f"verdict {check.verdict}"
        error = ET.SubElement(case, "error", {"message": _x(message), "type": _x(check.check_id)})
        error.text = _x("\n".join(lines)) or None
    if advisories:
        out = ET.SubElement(case, "system-out")
        out.text = _x("\n".join(f"advisory: {finding_line(f)}" for f in advisories))
    return case, kind


def _scenario_case(scenario: ScenarioReport) -> tuple[ET.Element, str]:
    case = _case(scenario, SCENARIO_CASE)
    reason = one_line(scenario.reason or "")
    if scenario.verdict == "pass":
        return case, "pass"
    if scenario.verdict == "not_applicable":
        ET.SubElement(case, "skipped", {"message": _x(reason or "not applicable")})
        return case, "skipped"
    if scenario.verdict == "fail":
        ET.SubElement(case, "failure", {"message": _x(reason or "failed"), "type": SCENARIO_CASE})
        return case, "failure"
    ET.SubElement(case, "error", {"message": _x(reason or f"verdict {scenario.verdict}"),
                                  "type": SCENARIO_CASE})
    return case, "error"


def _x(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (ElementTree escapes the rest)."""
    return _XML_ILLEGAL.sub("", text)
