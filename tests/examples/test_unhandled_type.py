"""A receiver that does not handle a type the endpoint is sent: every key of that type is lost.

A Stripe SaaS billing plans alone never handles ``payment_intent.succeeded``
(tests/examples/no_one_off.py). Certified with `enabled_events` left out (the template's
default: every type), every one-off payment's ``license:`` ended ``lost``, each finding
suspecting a deduplication on the wrong field, and nothing said what to do. The run now says in
its headline that the receiver applied no effect of that type and how to tell hookproof it is
not subscribed to it; listed, the run passes with no headline. A receiver that applies nothing
at all gets no such line (nothing was applied elsewhere: the type is not the cause).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.headline import HEADLINE_PREFIX

SECRET = "whsec_no_one_off_0123456789"
SCENARIOS = ["duplicate-sequential", "distinct-events-same-object", "mass-redelivery"]
HEADLINE = (f"{HEADLINE_PREFIX}the receiver applied no effect of payment_intent.succeeded in the whole run: every one "
            "owed ({n} payment_intent.succeeded, keys license:…) was acknowledged and lost, while other types' effects "
            "were applied. If the receiver does not handle payment_intent.succeeded (the endpoint is not subscribed to "
            "it), list the types it handles in target.enabled_events, or set \"payment_intent.succeeded\" = false "
            "under [business_keys]; if it does, it drops every one")


def _certify(tmp_path: Path, module: str, enabled: list[str] | None) -> Any:
    cfg = receiver_config("no_one_off", tmp_path, SECRET, seed=5, scenarios=SCENARIOS, settle_window_s=0.15,
                          module=module, cwd=PROJECT_ROOT)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": enabled,
                                                                         "checkout_modes": ["subscription"]})})
    return certify(cfg, out_dir=tmp_path / "report").report


@pytest.mark.slow
def test_a_type_the_receiver_never_applies_gets_the_headline(tmp_path: Path) -> None:
    report = _certify(tmp_path, "tests.examples.no_one_off", None)
    lost = {(s.id, f.key) for s in report.scenarios for f in s.findings if f.check_id == "lost"}
    assert lost and all(key.startswith("license:pi_") for _, key in lost), lost
    owed = {(s.id, a.business_key) for s in report.scenarios for a in s.attempts
            if a.event_type == "payment_intent.succeeded" and a.valid and a.business_key}
    assert owed == lost and len(owed) >= 2
    assert report.notes[0] == HEADLINE.format(n=len(owed))


@pytest.mark.slow
def test_listed_out_the_run_passes_with_no_headline(tmp_path: Path) -> None:
    enabled = ["checkout.session.completed", "customer.subscription.created", "customer.subscription.updated",
               "customer.subscription.deleted", "invoice.paid", "invoice.payment_failed", "charge.refunded"]
    report = _certify(tmp_path, "tests.examples.no_one_off", enabled)
    assert {s.id: s.verdict for s in report.scenarios} == {s: "pass" for s in SCENARIOS}, report.notes
    assert not any(n.startswith(HEADLINE_PREFIX) for n in report.notes)


def test_the_headline_needs_other_types_applied_and_every_key_of_its_own_lost() -> None:
    """Pure: over hand-built reports, a type with one key applied, or a run applying nothing at all,
    or a single owed key, gets no line."""
    from hookproof.reports.model import AttemptView, CheckView, FindingView, RunReport, ScenarioReport
    from hookproof.unhandled import unhandled_headline

    def attempt(i: int, event_type: str, key: str) -> AttemptView:
        return AttemptView(i, f"evt_{i}", event_type, f"d{i}", 1, key, None, (), True, 1.0, 1.1, 200, "acked", "ok",
                           1.0)

    def scenario(lost_keys: set[str], attempts: list[AttemptView], check_id: str = "lost") -> ScenarioReport:
        findings = tuple(FindingView(check_id, k, f"{k} lost", "finding") for k in sorted(lost_keys))
        check = CheckView(check_id, "invalid" if findings else "valid", findings)
        return ScenarioReport(f"s-{check_id}", "S", "", "fail" if findings else "pass", (), checks=(check,),
                              attempts=tuple(attempts))

    def report(lost_keys: set[str], attempts: list[AttemptView], *more: ScenarioReport) -> RunReport:
        first = scenario(lost_keys, attempts)
        return RunReport("0", "t", "stripe", "test", 5, 0.0, 1.0, first.verdict, (first, *more), ())

    pays = [attempt(i, "payment_intent.succeeded", f"license:pi_{i}") for i in range(3)]
    paid = attempt(9, "invoice.paid", "renewal:in_9")
    all_lost = {a.business_key or "" for a in pays}
    assert unhandled_headline(report(all_lost, [*pays, paid])) is not None
    assert unhandled_headline(report(all_lost | {"renewal:in_9"}, [*pays, paid])) is None  # nothing applied at all
    assert unhandled_headline(report(all_lost - {"license:pi_0"}, [*pays, paid])) is None  # one applied
    assert unhandled_headline(report({"license:pi_0"}, [pays[0], paid])) is None  # one owed
    # every key of every type lost where ``lost`` is checked; another type's key acknowledged in a
    # scenario that does not check it (future-timestamp's) is not known applied: no "applied elsewhere"
    # (a trial's receiver keying every effect under the wrong account was told it did not handle refunds)
    unchecked = scenario(set(), [attempt(10, "invoice.paid", "renewal:in_10")], "at_most_once")
    assert unhandled_headline(report(all_lost | {"renewal:in_9"}, [*pays, paid], unchecked)) is None
    assert unhandled_headline(report(all_lost, [*pays, paid], unchecked)) is not None
