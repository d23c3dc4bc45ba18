"""The state findings name the provider's events and their times; `lost` says what the
provider does next (retries left, or spent)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from hookproof.reports.html import _finding_notes
from hookproof.scenarios.checks import run_checks
from hookproof.scenarios.findings import CheckResult
from hookproof.scenarios.observations import ObjectState, Observation, expectations_from
from hookproof.scenarios.report_views import check_view
from hookproof.scenarios.state_words import NamedState
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope
from hookproof.simulator.profiles.registry import get_profile
from hookproof.simulator.world.registry import emit_events, new_world, world_event_types

T0 = 1_764_000_000
STRIPE, PADDLE, GITHUB = (get_profile(n).words() for n in ("stripe", "paddle", "github"))


def _event(event_id: str, version: int, status: str, at_us: int) -> Event:
    return Event(id=event_id, type="customer.subscription.updated", created=at_us // 1_000_000, created_us=at_us,
                 object_type="subscription", object_id="sub_1", version=version, object={"id": "sub_1"},
                 status=status)


def _attempt(event: Event, i: int, *, status: int = 200, attempt: int = 1, key: str | None = None) -> Attempt:
    outcome, completion = (Outcome.ACKED, Completion.OK) if status < 300 else (Outcome.SERVER_ERROR, Completion.UNKNOWN)
    return Attempt(event_id=event.id, delivery_id=f"dlv_{event.id}_0", attempt=attempt, business_key=key,
                   object_id=event.object_id, object_version=event.version, event_type=event.type, faults=(),
                   valid=True, sent_at=T0 + i, answered_at=T0 + i + 0.1, status=status, outcome=outcome,
                   completion=completion, latency_ms=100.0, index=i)


def _states(*statuses: str) -> list[Observation]:
    return [Observation(T0 + 10 + i, (), (ObjectState("sub_1", s),)) for i, s in enumerate(statuses)]


def _run(check: str, provider: object, events: list[Event], observations: list[Observation]) -> list[str]:
    history = [_attempt(e, i) for i, e in enumerate(events)]
    expectations = expectations_from(events, history, sender_timeout_s=20, max_attempts_per_event=None,
                                      provider=provider)  # type: ignore[arg-type]
    (result,) = run_checks([check], history, expectations, observations)
    return [f.message for f in result.findings]


SPREAD = [_event("evt_a", 1, "active", T0 * 10**6), _event("evt_b", 2, "past_due", (T0 + 2) * 10**6 + 5),
          _event("evt_c", 3, "canceled", (T0 + 4) * 10**6)]
TIED = [_event("evt_a", 1, "active", T0 * 10**6), _event("evt_b", 2, "past_due", (T0 + 2) * 10**6 + 5),
        _event("evt_c", 3, "canceled", (T0 + 2) * 10**6 + 900)]
UPDATED = "customer.subscription.updated"
TIE = (f"both carry created {T0 + 2}, so a receiver cannot order them by created alone: Stripe advises fetching "
       "the object from the API when an event arrives (docs.stripe.com/webhooks, Event ordering)")


def test_a_regression_names_each_state_s_event_and_its_created() -> None:
    assert _run("regressed", STRIPE, SPREAD, _states("past_due", "active")) == [
        f"went back from past_due (event evt_b, {UPDATED}, created {T0 + 2}) to active (event evt_a, {UPDATED}, "
        f"created {T0})"]


def test_a_regression_between_events_of_one_second_says_created_cannot_order_them() -> None:
    assert _run("regressed", STRIPE, TIED, _states("canceled", "past_due")) == [
        f"went back from canceled (event evt_c, {UPDATED}, created {T0 + 2}) to past_due (event evt_b, {UPDATED}, "
        f"created {T0 + 2}); {TIE}"]


def test_paddle_s_microseconds_order_events_of_one_second() -> None:
    assert _run("regressed", PADDLE, TIED, _states("canceled", "past_due")) == [
        f"went back from canceled (event evt_c, {UPDATED}, occurred_at 2025-11-24T16:00:02.000900Z) to past_due "
        f"(event evt_b, {UPDATED}, occurred_at 2025-11-24T16:00:02.000005Z)"]


def test_a_provider_without_an_event_time_names_the_events_only() -> None:
    assert _run("regressed", GITHUB, SPREAD, _states("past_due", "active")) == [
        f"went back from past_due (event evt_b, {UPDATED}) to active (event evt_a, {UPDATED})"]


def test_a_stale_state_names_the_event_it_came_from_and_the_provider_s_last() -> None:
    assert _run("stale", STRIPE, SPREAD, _states("past_due")) == [
        f"final state is past_due (event evt_b, {UPDATED}, created {T0 + 2}), the provider's is canceled "
        f"(event evt_c, {UPDATED}, created {T0 + 4})"]
    assert _run("stale", STRIPE, TIED, _states("past_due")) == [
        f"final state is past_due (event evt_b, {UPDATED}, created {T0 + 2}), the provider's is canceled "
        f"(event evt_c, {UPDATED}, created {T0 + 2}); {TIE}"]


def test_a_receiver_keeping_the_newest_state_has_no_finding() -> None:
    for check in ("regressed", "stale"):
        assert _run(check, STRIPE, TIED, _states("active", "past_due", "canceled")) == []


def _lost(provider: object, attempts: int) -> list[str]:
    event = replace(SPREAD[0], business_key="provision:sub_1")
    history = [_attempt(event, i, status=500, attempt=i + 1, key="provision:sub_1") for i in range(attempts)]
    expectations = expectations_from([event], history, sender_timeout_s=20, max_attempts_per_event=None,
                                     provider=provider)  # type: ignore[arg-type]
    (result,) = run_checks(["lost"], history, expectations, [Observation(T0 + 60, (), ())])
    return [f.message for f in result.findings]


NEVER = "never applied and never acknowledged: every valid delivery went unanswered or was refused ("


@pytest.mark.parametrize(("provider", "attempts", "then"), [
    (STRIPE, 3, "Stripe would keep retrying it for up to 3 days (live mode)"),
    (STRIPE, 11, "all 11 of Stripe's attempts failed: Stripe retries it no more, and e-mails about an endpoint "
                 "failing for days, then may disable it"),
    (GITHUB, 1, "GitHub never retries: it stays lost unless redelivered by hand or through the REST API within 3 days"),
    (None, 3, "the provider would retry it on its schedule"),
])
def test_a_never_acknowledged_key_says_what_the_provider_does_next(provider: object, attempts: int,
                                                                   then: str) -> None:
    assert _lost(provider, attempts) == [f"{NEVER}500); {then}"]


def _run_served(events: list[Event], servable: tuple[tuple[int, str], ...], statuses: tuple[str, ...],
                fetched: frozenset[str] = frozenset({"sub_1"})) -> list[str]:
    history = [_attempt(e, i) for i, e in enumerate(events)]
    expectations = replace(expectations_from(events, history, sender_timeout_s=20, max_attempts_per_event=None,
                                             provider=STRIPE), servable={"sub_1": servable}, fetched=fetched)
    (result,) = run_checks(["regressed"], history, expectations, _states(*statuses))
    return [f.message for f in result.findings]


def test_a_status_mapped_to_a_version_only_the_api_served_names_the_event_that_carried_that_status() -> None:
    events = [SPREAD[0], SPREAD[1], _event("evt_d", 4, "canceled", (T0 + 6) * 10**6)]
    served = ((1, "active"), (2, "past_due"), (3, "past_due"), (4, "canceled"))
    assert _run_served(events, served, ("canceled", "past_due")) == [
        f"went back from canceled (event evt_d, {UPDATED}, created {T0 + 6}) to past_due (event evt_b, {UPDATED}, "
        f"created {T0 + 2})"]
    served = ((1, "active"), (2, "past_due"), (3, "unpaid"), (4, "canceled"))
    assert _run_served(events, served, ("canceled", "unpaid")) == [
        f"went back from canceled (event evt_d, {UPDATED}, created {T0 + 6}) to unpaid (served by the provider API; "
        "no delivered event carried it)"]
    # a receiver that fetched nothing (a mix of two events' fields) was served nothing: the version is named
    assert _run_served(events, served, ("canceled", "unpaid"), frozenset()) == [
        f"went back from canceled (event evt_d, {UPDATED}, created {T0 + 6}) to unpaid (hookproof_version 3; "
        "no delivered event carried it)"]


@pytest.mark.parametrize(("name", "read"), [
    ("stripe", lambda envelope: f"created {json.loads(envelope.body)['created']}"),
    ("paddle", lambda envelope: f"occurred_at {json.loads(envelope.body)['occurred_at']}"),
    ("standard-webhooks", lambda envelope: f"timestamp {json.loads(envelope.body)['timestamp']}"),
    ("svix", lambda envelope: f"timestamp {json.loads(envelope.body)['timestamp']}"),
    ("shopify", lambda envelope: f"X-Shopify-Triggered-At {envelope.headers['X-Shopify-Triggered-At']}"),
])
def test_the_time_a_finding_names_is_the_one_the_receiver_reads(name: str, read: Callable[[Envelope], str]) -> None:
    """Each profile's clock renders an event's time as its envelope carries it."""
    profile = get_profile(name)
    clock = profile.words().clock
    assert clock is not None
    world = new_world(profile.world, seed=5)
    events = [e for t in world_event_types(profile.world)[:3] for e in emit_events(world, t)]
    sent = [e for e in events if profile.provider_type(e.type) is not None or name in ("paddle", "shopify")]
    assert sent and [clock.render(e.created_us) for e in sent] == [read(profile.envelope(e)) for e in sent]


@pytest.mark.parametrize("name", ["github", "mercadopago", "generic-hmac"])
def test_a_profile_whose_events_carry_no_time_of_their_own_has_no_clock(name: str) -> None:
    assert get_profile(name).words().clock is None


def _found(check: str, events: list[Event], observations: list[Observation]) -> CheckResult:
    history = [_attempt(e, i) for i, e in enumerate(events)]
    expectations = expectations_from(events, history, sender_timeout_s=20, max_attempts_per_event=None,
                                      provider=STRIPE)
    (result,) = run_checks([check], history, expectations, observations)
    return result


PAST_DUE = f"past_due (event evt_b, {UPDATED}, created {T0 + 2})"
CANCELED = f"canceled (event evt_c, {UPDATED}, created {T0 + 4})"
ACTIVE = f"active (event evt_a, {UPDATED}, created {T0})"


def test_a_state_finding_s_expected_and_actual_name_the_events_as_its_message_does() -> None:
    """No ``v7``: a user cannot find hookproof's versions in their logs; the structured fields
    carry the status (read by a storm's `ahead`) and the message's words."""
    stale = _found("stale", SPREAD, _states("past_due"))
    (f,) = stale.findings
    assert (f.expected, f.actual) == (NamedState("canceled", CANCELED), NamedState("past_due", PAST_DUE))
    regressed = _found("regressed", SPREAD, _states("past_due", "active"))
    (g,) = regressed.findings
    assert (g.expected, g.actual) == (NamedState("past_due", f"{PAST_DUE} or later"), NamedState("active", ACTIVE))
    missing = _found("stale", SPREAD, [Observation(T0 + 10, (), (ObjectState("sub_2", "active"),))])
    assert [(h.message, h.expected, h.actual) for h in missing.findings] == [
        ("object missing after settling", NamedState("canceled", CANCELED), None)]
    # every report shows the words: report.json and report.html read the check's view
    for result, (expected, actual) in ((stale, (CANCELED, PAST_DUE)), (regressed, (f"{PAST_DUE} or later", ACTIVE))):
        (view,) = check_view(result).findings
        assert (view.expected, view.actual) == (expected, actual)
        assert json.loads(json.dumps(view.expected)) == expected
        assert _finding_notes(view).endswith(f"; expected {expected}, actual {actual}")


def test_a_status_stored_beside_another_event_s_version_says_what_that_event_carried() -> None:
    """A receiver that moves a status from one kind of event and keeps the version another
    wrote (an invoice.paid marking a subscription active, kept at its deletion's version) shows
    a state no event carried: the finding names the version's event and its own status."""
    stored = [Observation(T0 + 10, (), (ObjectState("sub_1", "active", version=3),))]
    assert _run("stale", STRIPE, SPREAD, stored) == [
        f"final state is active (stored with the version of event evt_c, {UPDATED}, created {T0 + 4}, which "
        f"carried canceled), the provider's is canceled (event evt_c, {UPDATED}, created {T0 + 4})"]


@pytest.mark.parametrize(("profile", "advises_fetch"), [
    ("stripe", True), ("paddle", True), ("standard-webhooks", True), ("shopify", False), ("github", None),
    ("mercadopago", None),
])
def test_each_provider_s_clock_says_whether_its_advice_is_to_fetch(profile: str, advises_fetch: bool | None) -> None:
    """Stripe, Paddle and the Standard Webhooks spec advise fetching the object when events of it
    cannot be ordered (the advice's source in each profile); Shopify advises comparing updated_at;
    GitHub and Mercado Pago give events no clock a receiver orders by."""
    clock = get_profile(profile).event_clock
    assert (clock.advises_fetch if clock is not None else None) is advises_fetch
    if clock is not None:
        assert ("fetch" in clock.advice) is clock.advises_fetch
