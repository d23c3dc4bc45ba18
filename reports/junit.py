"""junit.xml: the run as JUnit XML, so CI shows each check as a test.

One ``<testsuite>`` per scenario (name = scenario id), one ``<testcase>`` per check
(classname = scenario id, name = check id):

- valid: a passing test case (advisories go to its ``<system-out>``);
- invalid: ``<failure message=... type=check_id>``, its message the check's detail and its
  first finding (`FIRST_SHOWN` characters), its text the findings, one line each with the
  business key and the attempt indexes;
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TextIO
from xml.sax.saxutils import escape

from hookproof.reports._format import finding_line, one_line, utc_iso
from hookproof.reports.model import CheckView, RunReport, ScenarioReport

__all__ = ["render_junit", "write_junit"]

#: Characters XML 1.0 cannot carry at all (they are dropped from every text and attribute).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

#: Name of the stand-in test case of a scenario without check results.
SCENARIO_CASE = "scenario"

#: Characters of a check's first finding a failure's ``message`` shows after its detail (the
#: attribute a CI's test view shows; the whole findings are the failure's text).
FIRST_SHOWN = 200


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
    at a time, a finding's line at a time in a failure's text: a storm's hundreds of
    thousands of finding lines are never one text, nor a list of lines."""
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    lines = _Lines(out)
    ET.ElementTree(_tree(report, lines)).write(lines, encoding="unicode")
    out.write("\n")


@dataclass
class _Lines:
    """A text file ElementTree serializes into, whose long texts (a check's finding lines)
    are written a line at a time as the serializer reaches them: the tree holds a stand-in
    for each (`stand_in`), a text no real one can be (it holds a character `_x` drops)."""

    out: TextIO
    texts: dict[str, Callable[[], Iterator[str]]] = field(default_factory=dict)

    def stand_in(self, lines: Callable[[], Iterator[str]]) -> str:
        """The text to put in the tree for the lines `lines()` gives (XML-legal, not escaped
        yet; joined by newlines when written)."""
        token = f"\x00{len(self.texts)}\x00"
        self.texts[token] = lines
        return token

    def write(self, piece: str) -> int:
        """Write `piece`, or the lines it stands in for, escaped as ElementTree escapes a text."""
        lines = self.texts.pop(piece, None) if piece[:1] == "\x00" else None
        if lines is None:
            return self.out.write(piece)
        written = 0
        for i, line in enumerate(lines()):
            written += self.out.write(("\n" if i else "") + escape(line))
        return written


def _tree(report: RunReport, lines: _Lines) -> ET.Element:
    """The ``<testsuites>`` element of `report`, indented (long texts `lines`' stand-ins)."""
    root = ET.Element("testsuites", {"name": "hookproof"})
    totals = _Totals()
    for scenario in report.scenarios:
        suite, suite_totals = _suite(report, scenario, lines)
        totals.add(suite_totals)
        root.append(suite)
    # Attribute order: name first, then the totals (ElementTree keeps insertion order).
    for name, value in totals.attrs().items():
        root.set(name, value)
    ET.indent(root, space="  ")
    return root


def _suite(report: RunReport, scenario: ScenarioReport, lines: _Lines) -> tuple[ET.Element, _Totals]:
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
    cases = [_check_case(scenario, check, lines) for check in scenario.checks]
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


def _check_case(scenario: ScenarioReport, check: CheckView, lines: _Lines) -> tuple[ET.Element, str]:
    case = _case(scenario, check.check_id)
    findings, advisories = 0, False  # one pass: a storm's findings are read from its history
    for f in check.findings:
        findings += f.severity == "finding"
        advisories = advisories or f.severity == "advisory"

    def finding_lines() -> Iterator[str]:
        return (_x(finding_line(f)) for f in check.findings if f.severity == "finding")

    def advisory_lines() -> Iterator[str]:
        return (_x(f"advisory: {finding_line(f)}") for f in check.findings if f.severity == "advisory")
    if scenario.verdict == "not_applicable" or check.verdict == "not_applicable":
        kind = "skipped"
        reason = scenario.reason or check.detail or "not applicable"
        ET.SubElement(case, "skipped", {"message": _x(one_line(reason))})
    elif check.verdict == "invalid":
        kind = "failure"
        message = one_line(check.detail) or (f"{findings} finding(s)" if findings else "invalid")
        first = next((f for f in check.findings if f.severity == "finding"), None)
        if first is not None:  # what a CI's test view shows of the case: the count, then the first finding
            said = finding_line(first)
            message += f": {said if len(said) <= FIRST_SHOWN else said[:FIRST_SHOWN - 1] + '…'}"
        failure = ET.SubElement(case, "failure", {"message": _x(message), "type": _x(check.check_id)})
        failure.text = lines.stand_in(finding_lines) if findings else None
    elif check.verdict == "valid":
        kind = "pass"
    else:  # unknown, or a verdict this version does not know: never a silent pass
        kind = "error"
        message = one_line(check.detail) or f"verdict {check.verdict}"
        error = ET.SubElement(case, "error", {"message": _x(message), "type": _x(check.check_id)})
        error.text = lines.stand_in(finding_lines) if findings else None
    if advisories:
        out = ET.SubElement(case, "system-out")
        out.text = lines.stand_in(advisory_lines)
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
