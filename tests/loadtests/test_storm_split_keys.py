"""A key two events of one object carry, one of which the storm's end cut, is unknown, not lost.

Stripe sends an invoice paid by a payment as ``invoice.paid`` and ``invoice.payment_succeeded``
(one renewal owed once across both: a receiver may extend access on either alone, as Stripe's
docs advise). A storm's reorder window may send the second while the first is still in its
buffer when the storm ends: the truth owed the renewal on the one delivered, and a correct
receiver applying on ``invoice.paid`` alone was reported ``lost`` and ``counter`` ("acknowledged
1 time(s) but not applied"). Such keys (`ahead.Ahead.split`) are now unknown with a note
(`cut.SplitKeys`); a key applied twice stays a finding, and a storm whose pairs all went out is
judged as before. Deterministic: the storm's history is recorded by hand from its seeded stories.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.loadtests.ahead import ahead_of
from hookproof.loadtests.cut import SplitKeys
from hookproof.loadtests.records import make_attempt
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import StoryBook, process_seed, storm_sends, template_world
from hookproof.loadtests.storm_truth import template_worlds
from hookproof.loadtests.verdict import storm_scenario
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios.findings import Finding
from hookproof.scenarios.observations import Effect, Observation
from hookproof.simulator.events import Event

START_US = 1_790_000_000_000_000
PAID, SUCCEEDED = "invoice.paid", "invoice.payment_succeeded"


def _spec(tmp_path: Path) -> StormSpec:
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", profile="stripe", seed=7, world_start_us=START_US,
                     subscribed=(SUCCEEDED,), out_dir=str(tmp_path / "out"), settle_window_s=0.05,
                     settle_deadline_s=1.0, settle_interval_s=0.01)


def _storm(spec: StormSpec) -> list[Event]:
    """What one sender of `spec` sends, whole: its stories under two copy numbers."""
    profile = spec.sending_profile()
    world = template_world(profile.world, process_seed(spec.seed, 0), start_us=START_US)
    keep = storm_sends(profile, None, spec.keys)
    world.sent_only(keep.sends_type)
    book = StoryBook(world, profile, keep)
    return [item.event for item in book.stream(max_events=2 * sum(map(len, book.templates)))]


def _judged(spec: StormSpec, sent: list[Event], applied: list[Event]) -> ScenarioReport:
    """The storm's verdict over `sent` (each delivered once, acknowledged), the receiver showing
    the effects of `applied`, as the storm's end judges it."""
    templates = template_worlds(spec, 1)
    profile = spec.sending_profile()
    attempts = [make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=1, tags=(), profile=profile,
                             sent_at=1000.0 + i * 0.01, latency_ms=5.0, status=200) for i, e in enumerate(sent)]
    effects = tuple(Effect(e.business_key, e.amount) for e in applied if e.business_key is not None)
    return storm_scenario(spec, sent, attempts, [Observation(2000.0, effects)], settled=True,
                          started_at=1000.0, duration_s=2.0, ahead=ahead_of(sent, templates))


def _verdicts(report: ScenarioReport) -> dict[str, str]:
    """Each check's verdict, but the state checks' (no state is observed here)."""
    return {c.check_id: c.verdict for c in report.checks if c.check_id not in ("stale", "regressed")}


def _on_paid(sent: list[Event]) -> list[Event]:
    """A correct receiver's effects: each key once, a renewal on ``invoice.paid`` alone."""
    seen: set[str] = set()
    out = []
    for e in sent:
        if e.business_key is None or e.type == SUCCEEDED or e.business_key in seen:
            continue
        seen.add(e.business_key)
        out.append(e)
    return out


def test_a_renewal_whose_invoice_paid_never_went_out_is_unknown(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    whole = _storm(spec)
    paid = [e for e in whole if e.type == PAID]
    assert len(paid) >= 2 and [e.business_key for e in whole if e.type == SUCCEEDED] == [e.business_key for e in paid]
    report = _judged(spec, whole, _on_paid(whole))  # every pair sent whole: nothing found
    assert _verdicts(report) == {c: "valid" for c in _verdicts(report)}, [(c.check_id, c.detail) for c in report.checks]
    cut = paid[-1]  # the last invoice's invoice.paid never went out; its invoice.payment_succeeded did
    sent = [e for e in whole if e is not cut]
    report = _judged(spec, sent, _on_paid(sent))
    assert report.findings == (), [(c.check_id, c.verdict, c.detail) for c in report.checks]
    lost = next(c for c in report.checks if c.check_id == "lost")
    assert lost.verdict == "unknown" and lost.detail == (
        f"1 key(s) not applied unknown: {SplitKeys(frozenset({'k'})).note()}; 0 finding(s), 0 advisory(ies)")
    counter = next(c for c in report.checks if c.check_id == "counter")
    assert counter.verdict == "unknown" and counter.detail.startswith("1 counter(s) short unknown: the storm's end cut")
    assert _verdicts(report) == {**{c: "valid" for c in _verdicts(report)}, "lost": "unknown", "counter": "unknown"}
    on_succeeded = [e for e in _on_paid(sent) if e.business_key != cut.business_key] + [
        e for e in sent if e.type == SUCCEEDED and e.business_key == cut.business_key]
    passed = _judged(spec, sent, on_succeeded)  # the receiver applying on the one delivered
    assert _verdicts(passed) == {c: "valid" for c in _verdicts(passed)}
    twice = _judged(spec, sent, _on_paid(sent) + [e for e in sent if e.type == SUCCEEDED and e.business_key
                                                  == paid[0].business_key])
    assert twice.verdict == "fail"
    assert [(f.check_id, f.key) for f in twice.findings] == [("duplicated", paid[0].business_key),
                                                              ("counter", paid[0].business_key)]


def test_the_judge_excuses_a_split_key_not_applied_and_nothing_else() -> None:
    split = SplitKeys(frozenset({"renewal:in_1"}))
    assert split.excuses("lost", Finding("lost", "renewal:in_1", "m", 1, 0))
    assert not split.excuses("lost", Finding("lost", "renewal:in_2", "m", 1, 0))
    assert split.excuses("counter", Finding("counter", "renewal:in_1", "m", 2900, 0))
    assert split.excuses("counter", Finding("counter", "renewal:in_1", "m", 2900, None))
    assert not split.excuses("counter", Finding("counter", "renewal:in_1", "m", 2900, 5800))
    assert not split.excuses("duplicated", Finding("duplicated", "renewal:in_1", "m", 1, 2))
    assert not SplitKeys(frozenset())
