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


def _persisting(scenario_id: str, verdict: str = "pass", findings: tuple[FindingView, ...] = ()) -> ScenarioReport:
    return ScenarioReport(id=scenario_id, title=scenario_id, description="", verdict=verdict,
                          checklist=("persists-before-ack",),
                          checks=(CheckView("lost", "invalid" if findings else "valid", findings=findings),))


def test_persisting_before_the_answer_passes_only_on_a_crash_after_it(run_report: RunReport) -> None:
    """Two new users' receivers answered 200 and stored the effect in a background thread:
    plain certify's checklist said "Persists before acknowledging: PASS" from sender-timeout and
    provider-api-transient, which such a receiver passes. Only certify --chaos's crashes can pass
    the item; without them it is untested, the crashes listed as not run; a finding elsewhere
    still fails it."""
    plain = (_persisting("sender-timeout"), _persisting("provider-api-transient"))
    report = replace(run_report, verdict="pass", scenarios=plain, checklist=checklist(plain))
    item = next(i for i in report.checklist if i.id == "persists-before-ack")
    assert (item.verdict, item.scenarios) == ("untested", ("sender-timeout", "provider-api-transient",
                                                           "crash-after-ack", "kill-during-processing"))
    assert _rows(render_markdown(report))["Persists before acknowledging"] == (
        "| Persists before acknowledging | UNTESTED | `sender-timeout` PASS, `provider-api-transient` PASS, "
        "`crash-after-ack` not run, `kill-during-processing` not run |")
    assert report.verdict == "pass"  # the run's verdict is its scenarios'

    lost = (FindingView("lost", "renewal:in_1", "acknowledged 1 time(s) but not applied", "finding"),)
    failing = (_persisting("sender-timeout", "fail", lost), _persisting("provider-api-transient"))
    assert next(i for i in checklist(failing) if i.id == "persists-before-ack").verdict == "fail"

    chaos = (*plain, _persisting("crash-after-ack"))
    item = next(i for i in checklist(chaos) if i.id == "persists-before-ack")
    assert (item.verdict, item.scenarios) == ("pass", ("sender-timeout", "provider-api-transient", "crash-after-ack"))
    crashed = (*plain, _persisting("crash-after-ack", "fail", lost))
    assert next(i for i in checklist(crashed) if i.id == "persists-before-ack").verdict == "fail"


def test_certify_says_which_run_decides_the_untested_item(run_report: RunReport) -> None:
    from hookproof.certify import crash_untested_note

    plain = (_persisting("sender-timeout"),)
    note = crash_untested_note(replace(run_report, scenarios=plain, checklist=checklist(plain)))
    assert note is not None and note.startswith("Persists before acknowledging is untested: ")
    assert "`certify --chaos` kills it right after its answer" in note
    chaos = (*plain, _persisting("crash-after-ack"))
    assert crash_untested_note(replace(run_report, scenarios=chaos, checklist=checklist(chaos))) is None
    unrelated = (replace(_persisting("reorder"), checklist=("reordering-tested",)),)
    assert crash_untested_note(replace(run_report, scenarios=unrelated, checklist=checklist(unrelated))) is None
