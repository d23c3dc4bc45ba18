"""The go-live checklist never shows a failed scenario passing: a scenario that failed on
another item's check is listed with where it failed, in summary.md and report.html."""

from __future__ import annotations

from dataclasses import replace

from hookproof.reports import RunReport, render_html, render_markdown
from hookproof.reports.model import CheckView, FindingView, ScenarioReport
from hookproof.scenarios.report_views import checklist
from tests.test_readme import assert_checklist_agrees


def _redelivery_failing_on_counter(run_report: RunReport) -> RunReport:
    """`older-after-newer-redelivery` failed on a `counter` finding: a duplicates finding,
    not a reordering one."""
    scenario = ScenarioReport(
        id="older-after-newer-redelivery", title="An older refund redelivered after a newer one",
        description="R1, R2, then R1 again.", verdict="fail",
        checklist=("duplicates-tested", "reordering-tested"),
        checks=(
            CheckView("duplicated", "valid"),
            CheckView("counter", "invalid", findings=(
                FindingView("counter", "refund:ch_1", "refunded 2 times, expected 1", "finding"),)),
            CheckView("stale", "valid"),
        ),
    )
    scenarios = (scenario,)
    return replace(run_report, verdict="fail", scenarios=scenarios, checklist=checklist(scenarios))


def _rows(text: str) -> dict[str, str]:
    section = text.split("### Go-live checklist\n\n", 1)[1].split("\n\n", 1)[0]
    return {row.split(" | ")[0].lstrip("| "): row for row in section.splitlines()[2:]}


def test_a_scenario_failing_on_another_rows_check_is_not_shown_passing(run_report: RunReport) -> None:
    report = _redelivery_failing_on_counter(run_report)
    items = {i.id: i for i in report.checklist}
    assert items["reordering-tested"].verdict == "pass"  # no reordering finding: the item is judged by its checks
    assert items["duplicates-tested"].verdict == "fail"

    rows = _rows(render_markdown(report))
    assert rows["Survives duplicate deliveries"] == (
        "| Survives duplicate deliveries | FAIL | `older-after-newer-redelivery` FAIL |")
    assert rows["Survives reordering"] == (
        "| Survives reordering | PASS | `older-after-newer-redelivery` no finding here; failed on `counter` "
        "(Survives duplicate deliveries) |")
    assert "`older-after-newer-redelivery` PASS" not in render_markdown(report)


def test_an_undecided_item_of_a_failed_scenario_says_where_it_failed(run_report: RunReport) -> None:
    report = _redelivery_failing_on_counter(run_report)
    (scenario,) = report.scenarios
    checks = tuple(replace(c, verdict="unknown", detail="nothing compared") if c.check_id == "stale" else c
                   for c in scenario.checks)
    scenarios = (replace(scenario, checks=checks),)
    report = replace(report, scenarios=scenarios, checklist=checklist(scenarios))
    assert _rows(render_markdown(report))["Survives reordering"] == (
        "| Survives reordering | UNKNOWN | `older-after-newer-redelivery` UNKNOWN here; failed on `counter` "
        "(Survives duplicate deliveries) |")


def test_a_passing_scenario_reads_as_before(run_report: RunReport) -> None:
    report = _redelivery_failing_on_counter(run_report)
    (scenario,) = report.scenarios
    scenarios = (replace(scenario, verdict="pass", checks=(CheckView("counter", "valid"),)),)
    report = replace(report, verdict="pass", scenarios=scenarios, checklist=checklist(scenarios))
    assert _rows(render_markdown(report))["Survives reordering"] == (
        "| Survives reordering | PASS | `older-after-newer-redelivery` PASS |")


def test_the_html_checklist_says_the_same(run_report: RunReport) -> None:
    html = render_html(_redelivery_failing_on_counter(run_report))
    section = html.split('<table id="checklist">', 1)[1].split("</table>", 1)[0]
    reordering = section.split("Survives reordering", 1)[1].split("</tr>", 1)[0].split('class="evidence"', 1)[1]
    assert '">no finding</span>' in reordering
    assert "here; failed on <code>counter</code> (Survives duplicate deliveries)</span>" in reordering
    assert ">PASS<" not in reordering
    assert_checklist_agrees(html)  # the pills are still each item's own evidence
