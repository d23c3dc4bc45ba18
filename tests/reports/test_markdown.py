"""summary.md: golden output, escaping, and what is left out when empty."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hookproof.reports import FindingView, RunReport, render_markdown


def test_golden(run_report: RunReport, golden: Callable[[str, str], None]) -> None:
    golden("summary.md", render_markdown(run_report))


def test_sections_in_order(run_report: RunReport) -> None:
    text = render_markdown(run_report)
    assert text.startswith("## hookproof: FAIL\n")
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == ["### Scenarios", "### Findings", "### Advisories", "### Go-live checklist",
                        "### Not applicable"]


def _rows(text: str, heading: str) -> list[str]:
    section = text.split(heading + "\n\n", 1)[1].split("\n\n", 1)[0]
    return section.splitlines()


def test_table_cells_cannot_break_the_table(run_report: RunReport) -> None:
    hostile = FindingView("duplicated", "key|with|pipes", "a | b\nnext line <img src=x>", "finding")
    check = replace(run_report.scenarios[1].checks[0], findings=(hostile,))
    scenario = replace(run_report.scenarios[1], checks=(check,))
    text = render_markdown(replace(run_report, scenarios=(scenario,)))
    rows = _rows(text, "### Findings")
    assert len(rows) == 3
    assert all(row.replace("\\|", "").count("|") == 5 for row in rows)
    assert "<img" not in text and "&lt;img src=x&gt;" in text


def test_verdict_words(run_report: RunReport) -> None:
    rows = _rows(render_markdown(run_report), "### Scenarios")[2:]
    assert [row.split(" | ")[1] for row in rows] == ["PASS", "FAIL", "N/A"]


def test_a_clean_run_has_no_findings_section(run_report: RunReport) -> None:
    report = replace(run_report, verdict="pass", scenarios=(run_report.scenarios[0],), checklist=())
    text = render_markdown(report)
    assert "### Findings" not in text and "### Not applicable" not in text and "### Go-live" not in text
    assert "1 scenario: 1 PASS." in text


def test_a_state_finding_names_the_provider_s_object(run_report: RunReport) -> None:
    from tests.reports.test_html import _shopify_stale

    md = render_markdown(_shopify_stale(run_report))
    assert "| Scenario | Check | Key | Message |" in md
    assert "| `stale` | order `467561329779` | ends in pending" in md
    assert "| `license:pay_2002` |" in md


def test_a_not_applicable_scenarios_undecided_checks_are_not_findings(run_report: RunReport) -> None:
    """A scenario that does not apply lists its reason under Not applicable, never a Findings row,
    though a check of it was undecided (nothing of it maps to an effect); a run that passes
    has no Findings table."""
    from hookproof.reports import CheckView

    undecided = CheckView("stale", "unknown", detail="no object whose state the observer reads was validly sent")
    skipped = replace(run_report.scenarios[2], checks=(undecided,))
    text = render_markdown(replace(run_report, verdict="pass", scenarios=(run_report.scenarios[0], skipped)))
    assert "### Findings" not in text and "UNKNOWN" not in text
    assert _rows(text, "### Not applicable") == [f"- `{skipped.id}`: the receiver runs in test mode \\| set "
                                                 'environment = "live" to run it']
    # the same check in a scenario that ran is still a Findings row
    ran = replace(run_report.scenarios[0], verdict="unknown", checks=(undecided,))
    assert _rows(render_markdown(replace(run_report, scenarios=(ran,))), "### Findings")[2:] == [
        f"| `{ran.id}` | `stale` |  | UNKNOWN: no object whose state the observer reads was validly sent |"]


def test_one_check_s_many_findings_are_listed_up_to_a_bound_and_counted(run_report: RunReport) -> None:
    """One fault over a 200-event redelivery window: the summary lists the first findings of each
    check and counts the rest in one row (a new user's summary.md had 200 rows for one cause)."""
    from hookproof.reports.markdown import FINDINGS_PER_CHECK

    many = tuple(FindingView("duplicated", f"license:pi_{i}", "applied 2 times instead of once", "finding")
                 for i in range(FINDINGS_PER_CHECK + 15))
    check = replace(run_report.scenarios[1].checks[0], findings=many)
    scenario = replace(run_report.scenarios[1], checks=(check,))
    rows = _rows(render_markdown(replace(run_report, scenarios=(scenario,))), "### Findings")[2:]
    assert len(rows) == FINDINGS_PER_CHECK + 1
    assert rows[-1].endswith("| and 15 more `duplicated` finding(s) of this scenario (report.json and report.html "
                             "list every one) |"), rows[-1]


def _crashed(run_report: RunReport) -> RunReport:
    """A scenario whose receiver answered 500 to every subscription event: stale and lost
    follow from it, and come first in check order."""
    from hookproof.reports import CheckView

    stale = CheckView("stale", "invalid", (FindingView("stale", "sub_1", "object missing after settling", "finding"),))
    lost = CheckView("lost", "invalid", (FindingView("lost", "renewal:in_1", "never applied", "finding"),))
    crash = CheckView("no_server_error", "invalid",
                      (FindingView("no_server_error", "evt_1", "answered 500 to 4 attempt(s)", "finding"),))
    scenario = replace(run_report.scenarios[1], checks=(stale, lost, crash))
    return replace(run_report, scenarios=(scenario,))


def test_the_5xx_finding_leads_its_scenario(run_report: RunReport, capsys: object) -> None:
    """summary.md and the console's table put the receiver's 5xx first: the stale object and
    the lost effect follow from it."""
    import pytest

    from hookproof.terminal import print_report

    report = _crashed(run_report)
    rows = _rows(render_markdown(report), "### Findings")[2:]
    assert [row.split("|")[2].strip() for row in rows[:3]] == ["`no_server_error`", "`stale`", "`lost`"]
    assert isinstance(capsys, pytest.CaptureFixture)
    print_report(report, {}, "title")
    out = capsys.readouterr().out
    assert "no_server_error: evt_1 answered 500 to 4 attempt(s) (+2 more finding(s)" in " ".join(out.split())


def test_an_effect_applied_twice_leads_before_the_5xx(run_report: RunReport, capsys: object) -> None:
    """A racing receiver that also answered 500 (a concurrent first insert): its one console
    line named the 500 and hid the double grant in "+3 more"; the duplicated finding, which no
    5xx causes, now leads, then the 5xx, then what follows from it."""
    import pytest

    from hookproof.reports import CheckView
    from hookproof.terminal import print_report

    crashed = _crashed(run_report)
    twice = CheckView("duplicated", "invalid", (FindingView(
        "duplicated", "access:order_1", "applied 5 times instead of once; 8 delivery attempt(s) carried it",
        "finding"),))
    scenario = replace(crashed.scenarios[0], checks=(*crashed.scenarios[0].checks, twice))
    report = replace(crashed, scenarios=(scenario,))
    rows = _rows(render_markdown(report), "### Findings")[2:]
    assert [row.split("|")[2].strip() for row in rows[:4]] == ["`duplicated`", "`no_server_error`", "`stale`",
                                                               "`lost`"]
    assert isinstance(capsys, pytest.CaptureFixture)
    print_report(report, {}, "title")
    out = " ".join(capsys.readouterr().out.split())
    assert ("duplicated: access:order_1 applied 5 times instead of once; 8 delivery attempt(s) carried it (+3 more "
            "finding(s)") in out


def test_a_passing_scenario_s_advisory_is_shown_in_the_summary_and_on_the_console(
        run_report: RunReport, capsys: object) -> None:
    """An advisory (a receiver stricter than the provider's own verifier; a slow answer) never
    fails a run, but a PASS with nothing beside it hid it in report.json alone: summary.md
    lists it under Advisories and the console's table gives it in the passing row."""
    import pytest

    from hookproof.terminal import print_report

    report = replace(run_report, verdict="pass", scenarios=(run_report.scenarios[0],), checklist=())
    rows = _rows(render_markdown(report), "### Advisories\n\nNot failures: what the checks advise, apart from "
                                          "the verdict.")
    assert rows[2:] == ["| `duplicate-sequential` | `ack_latency` | `*` | p99 ack latency 12.5 ms; fine, but the "
                        "handler does work before answering |"]
    assert isinstance(capsys, pytest.CaptureFixture)
    print_report(report, {}, "title")
    out = " ".join(capsys.readouterr().out.split())
    assert "advisory: ack_latency: * p99 ack latency 12.5 ms; fine, but the handler does work before answering" in out
