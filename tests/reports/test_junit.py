"""junit.xml: golden output and what a JUnit consumer reads from it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace

import pytest

from hookproof.reports import CheckView, FindingView, RunReport, ScenarioReport, render_junit


def test_golden(run_report: RunReport, golden: Callable[[str, str], None]) -> None:
    golden("junit.xml", render_junit(run_report))


def _suites(report: RunReport) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.fromstring(render_junit(report))
    return root, {s.get("name", ""): s for s in root.findall("testsuite")}


def test_one_suite_per_scenario_one_case_per_check(run_report: RunReport) -> None:
    root, suites = _suites(run_report)
    assert root.tag == "testsuites"
    assert list(suites) == [s.id for s in run_report.scenarios]
    for scenario in run_report.scenarios[:2]:
        cases = suites[scenario.id].findall("testcase")
        assert [c.get("name") for c in cases] == [c.check_id for c in scenario.checks]
        assert {c.get("classname") for c in cases} == {scenario.id}


def test_totals_and_times(run_report: RunReport) -> None:
    root, suites = _suites(run_report)
    expected = {  # tests, failures, errors, skipped, time
        "duplicate-sequential": ("5", "0", "0", "0", "0.840"),
        "sender-timeout": ("4", "1", "1", "0", "4.250"),
        "test-mode-to-live": ("1", "0", "0", "1", "0.000"),
    }
    for name, values in expected.items():
        suite = suites[name]
        assert tuple(suite.get(a) for a in ("tests", "failures", "errors", "skipped", "time")) == values
        assert int(suite.get("tests", "")) == len(suite.findall("testcase"))
        assert int(suite.get("failures", "")) == len(suite.findall("testcase/failure"))
        assert int(suite.get("errors", "")) == len(suite.findall("testcase/error"))
        assert int(suite.get("skipped", "")) == len(suite.findall("testcase/skipped"))
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped"), root.get("time")) == (
        "10", "1", "1", "1", "5.090")
    assert suites["sender-timeout"].get("timestamp") == "2024-06-01T12:00:01"


def test_failure_lists_each_finding_with_key_and_attempts(run_report: RunReport) -> None:
    _, suites = _suites(run_report)
    failure = suites["sender-timeout"].find("testcase[@name='duplicated']/failure")
    assert failure is not None
    assert failure.get("type") == "duplicated"
    assert failure.get("message") == (  # a CI's test view shows the message: the count, then the first finding
        '1 key applied more than once: [license:pay_2002] applied 2 times (observation 3 at 1717243202.500); '
        'expected <= 1 & "once" (attempts #3, #4, #5)')
    assert (failure.text or "").splitlines() == [
        '[license:pay_2002] applied 2 times (observation 3 at 1717243202.500); expected <= 1 & "once" '
        "(attempts #3, #4, #5)"
    ]


def test_unknown_is_error_and_not_applicable_is_skipped(run_report: RunReport) -> None:
    _, suites = _suites(run_report)
    error = suites["sender-timeout"].find("testcase[@name='counter']/error")
    assert error is not None and error.get("message") == "the receiver did not settle within 5 s"
    skipped = suites["test-mode-to-live"].find("testcase[@name='scenario']/skipped")
    assert skipped is not None
    assert skipped.get("message") == run_report.scenarios[2].reason


def test_advisory_goes_to_system_out_and_passes(run_report: RunReport) -> None:
    _, suites = _suites(run_report)
    case = suites["duplicate-sequential"].find("testcase[@name='ack_latency']")
    assert case is not None and len(case.findall("failure")) == 0
    assert (case.findtext("system-out") or "").startswith("advisory: [*] p99 ack latency")


def test_not_applicable_checks_are_each_skipped() -> None:
    scenario = ScenarioReport("x", "X", "", "not_applicable", (), checks=(CheckView("lost", "valid"),),
                              reason="needs a sink")
    report = RunReport("0", "t", "p", "test", 0, 0.0, 1.0, "pass", (scenario,), ())
    _, suites = _suites(report)
    assert suites["x"].find("testcase[@name='lost']/skipped").get("message") == "needs a sink"  # type: ignore[union-attr]


def test_errored_scenario_keeps_its_reason_next_to_its_checks() -> None:
    scenario = ScenarioReport("x", "X", "", "error", (), checks=(CheckView("lost", "valid"),),
                              reason="the receiver did not start")
    report = RunReport("0", "t", "p", "test", 0, 0.0, 1.0, "unknown", (scenario,), ())
    root, suites = _suites(report)
    assert [c.get("name") for c in suites["x"].findall("testcase")] == ["lost", "scenario"]
    assert root.get("errors") == "1"


def test_characters_xml_cannot_carry_are_dropped(run_report: RunReport) -> None:
    bad = FindingView("duplicated", "k\x00", "bell\x07 and <tag>", "finding")
    check = CheckView("duplicated", "invalid", findings=(bad,), detail="ctl\x1b")
    scenario = replace(run_report.scenarios[1], checks=(check,))
    _, suites = _suites(replace(run_report, scenarios=(scenario,)))
    failure = suites["sender-timeout"].find("testcase/failure")
    assert failure is not None and failure.text == "[k] bell and <tag>" and failure.get("message") == "ctl: [k] bell and <tag>"


def test_a_long_first_finding_is_cut_in_the_message_never_in_the_text(run_report: RunReport) -> None:
    long = FindingView("lost", "k", "x" * 500, "finding")
    check = CheckView("lost", "invalid", findings=(long,), detail="1 finding(s)")
    _, suites = _suites(replace(run_report, scenarios=(replace(run_report.scenarios[1], checks=(check,)),)))
    failure = suites["sender-timeout"].find("testcase/failure")
    assert failure is not None and failure.text == "[k] " + "x" * 500
    assert failure.get("message") == "1 finding(s): [k] " + "x" * 195 + "…"


def test_each_finding_line_escaped_in_its_case_written_line_by_line(run_report: RunReport) -> None:
    lines = [FindingView("lost", f"k&{i}", "not <applied> & lost", "finding", (i,)) for i in range(3)]
    advice = FindingView("lost", "a>b", "slow & steady", "advisory")
    invalid = CheckView("lost", "invalid", findings=(*lines, advice))
    unknown = CheckView("counter", "unknown", findings=(FindingView("counter", "c<1", "x\x00y", "finding"),))
    scenario = replace(run_report.scenarios[1], checks=(invalid, unknown))
    text = render_junit(replace(run_report, scenarios=(scenario,)))
    assert "\x00" not in text and "k&amp;0] not &lt;applied&gt; &amp; lost (attempts #0)\n[k&amp;1]" in text
    _, suites = _suites(replace(run_report, scenarios=(scenario,)))
    case = suites["sender-timeout"].find("testcase[@name='lost']")
    assert case is not None and (case.findtext("failure") or "").splitlines() == [
        f"[k&{i}] not <applied> & lost (attempts #{i})" for i in range(3)]
    assert case.findtext("system-out") == "advisory: [a>b] slow & steady"
    assert suites["sender-timeout"].findtext("testcase[@name='counter']/error") == "[c<1] xy"


def test_standard_consumer_reads_it(run_report: RunReport, tmp_path) -> None:  # type: ignore[no-untyped-def]
    junitparser = pytest.importorskip("junitparser")
    path = tmp_path / "junit.xml"
    path.write_text(render_junit(run_report), encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (10, 1, 1, 1)
    assert suites["sender-timeout"].time == pytest.approx(4.25)
    results = {(c.classname, c.name): [type(r).__name__ for r in c.result] for s in xml for c in s}
    assert results[("sender-timeout", "duplicated")] == ["Failure"]
    assert results[("sender-timeout", "counter")] == ["Error"]
    assert results[("test-mode-to-live", "scenario")] == ["Skipped"]
    assert results[("duplicate-sequential", "lost")] == []
    recomputed = junitparser.JUnitXml.fromfile(str(path))
    recomputed.update_statistics()
    assert (recomputed.tests, recomputed.failures, recomputed.errors, recomputed.skipped) == (10, 1, 1, 1)
