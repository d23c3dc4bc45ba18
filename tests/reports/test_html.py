"""report.html: golden output, self-containment and escaping."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser

from hookproof.reports import FindingView, RunReport, render_html


def test_golden(run_report: RunReport, golden: Callable[[str, str], None]) -> None:
    golden("report.html", render_html(run_report))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_self_contained(run_report: RunReport) -> None:
    html = render_html(run_report)
    tags = _tags(html)
    names = {t for t, _ in tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed"}
    for _, attrs in tags:
        for name in ("src", "href"):
            assert attrs.get(name) is None, attrs
    assert "@import" not in html and "url(" not in html


def test_sections(run_report: RunReport) -> None:
    html = render_html(run_report)
    tags = _tags(html)
    ids = [a.get("id") for _, a in tags if a.get("id")]
    assert {"overall-verdict", "verdicts", "checklist", "findings", "advisories", "checks"} <= set(ids)
    assert [a.get("class") for t, a in tags if t == "svg"] == ["timeline"]
    verdicts = html.split('<table id="verdicts">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'class="badge v-(\w+)"', verdicts) == ["pass", "fail", "not_applicable"]
    for text in ("stripe", "20240601", "2024-06-01 12:00:00Z", "license:pay_2002", "#3",
                 "the receiver did not settle within 5 s", "Persists before acknowledging"):
        assert text in html


def test_everything_is_escaped(run_report: RunReport) -> None:
    evil = "<script>alert(1)</script>"
    finding = FindingView("duplicated", evil, evil + '" onload="x', "finding", attempts=(3,))
    check = replace(run_report.scenarios[1].checks[0], findings=(finding,))
    attempts = tuple(replace(a, business_key=evil, delivery_id=evil) for a in run_report.scenarios[1].attempts)
    scenario = replace(run_report.scenarios[1], checks=(check,), attempts=attempts, title=evil)
    html = render_html(replace(run_report, scenarios=(scenario,), target=evil))
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '" onload="' not in html


def test_target_with_markup_is_text(run_report: RunReport) -> None:
    assert "stripe?x=&lt;1&gt;&amp;y=2" in render_html(run_report)


def test_many_finding_keys_draw_the_first_fifty_and_count_the_rest(run_report: RunReport) -> None:
    from hookproof.reports.html import MAX_DETAILED_KEYS

    base = run_report.scenarios[1]
    template = base.attempts[0]
    attempts = tuple(replace(template, index=i, business_key=f"license:pi_{i:03d}") for i in range(60))
    findings = tuple(FindingView("duplicated", f"license:pi_{i:03d}", "applied 2 times", "finding", attempts=(i,))
                     for i in range(60))
    check = replace(base.checks[0], findings=findings)
    scenario = replace(base, checks=(check,), attempts=attempts, effects=())
    html = render_html(replace(run_report, scenarios=(scenario,)))
    assert MAX_DETAILED_KEYS == 50
    assert html.count("<h4>Business key") == 50
    assert "license:pi_049" in html and "license:pi_050" not in html
    assert "and 10 more business keys with findings" in html


def test_per_key_lookups_match_a_scan_of_the_scenario(run_report: RunReport) -> None:
    for s in run_report.scenarios:
        for key in {*s.finding_keys, *(a.business_key for a in s.attempts if a.business_key)}:
            named = {i for f in s.findings if f.key == key for i in f.attempts}
            assert s.attempts_for(key) == tuple(a for a in s.attempts if a.business_key == key or a.index in named)
            assert s.findings_for(key) == tuple(f for f in s.findings if f.key == key)
            assert s.effects_for(key) == tuple(sorted((e for e in s.effects if e.business_key == key),
                                                      key=lambda e: (e.at, e.count)))


def _shopify_stale(run_report: RunReport) -> RunReport:
    """The sample run as a Shopify one whose second scenario has a ``stale`` finding about an
    order (its key the order's id; its attempts ``orders/*`` topics) beside a business key's."""
    base = run_report.scenarios[1]
    order = "467561329779"
    attempts = tuple(replace(a, object_id=order, business_key=None, event_type=t)
                     for a, t in zip(base.attempts[:2], ("orders/paid", "orders/create")))
    attempts += tuple(replace(a, index=a.index + 100) for a in base.attempts)
    stale = FindingView("stale", order, "ends in pending, the provider's final state is refunded", "finding")
    check = replace(base.checks[0], findings=(*base.checks[0].findings, stale))
    scenario = replace(base, checks=(check, *base.checks[1:]), attempts=attempts)
    return replace(run_report, profile="shopify", scenarios=(run_report.scenarios[0], scenario))


def test_a_state_finding_is_headed_by_the_provider_s_object_not_business_key(run_report: RunReport) -> None:
    html = render_html(_shopify_stale(run_report))
    assert "<h4>Order <code>467561329779</code></h4>" in html
    assert "Business key <code>467561329779</code>" not in html
    assert "<h4>Business key <code>license:pay_2002</code></h4>" in html


def test_object_nouns_are_the_providers() -> None:
    from hookproof.reports._format import object_noun

    assert [object_noun(t) for t in ("orders/updated", "refunds/create", "customer.subscription.updated",
                                     "invoice.paid", "payment_intent.succeeded", "checkout.session.completed",
                                     "issues.opened", "pull_request.closed", "subscription.past_due",
                                     "payment.updated", "push")] == [
        "order", "refund", "subscription", "invoice", "payment intent", "checkout session", "issue",
        "pull request", "subscription", "payment", "object"]


def test_a_not_applicable_scenario_is_no_problem_in_findings(run_report: RunReport) -> None:
    """A passing run whose n/a scenario had an undecided check draws no Findings section."""
    from hookproof.reports import CheckView

    undecided = CheckView("lost", "unknown", detail="nothing to compare")
    skipped = replace(run_report.scenarios[2], checks=(undecided,))
    html = render_html(replace(run_report, verdict="pass", scenarios=(run_report.scenarios[0], skipped)))
    assert 'id="findings"' not in html and "findings-test-mode-to-live" not in html
    ran = replace(run_report.scenarios[0], verdict="unknown", checks=(undecided,))
    assert f'id="findings-{ran.id}"' in render_html(replace(run_report, scenarios=(ran,)))
