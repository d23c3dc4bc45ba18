"""A state finding says when the deliveries of its two events were in flight at once.

``stale: … final state is active (event evt_a …), the provider's is past_due (event evt_b …)``
leaves a developer comparing ``created`` asking how the older event beat the newer one; when
an attempt of each was in flight while the other was, the finding adds that the deliveries
overlapped and what loses a write then. Sequential deliveries (one answered before the other
was sent) add nothing.
"""

from __future__ import annotations

from dataclasses import replace

from hookproof.scenarios.checks import run_checks
from hookproof.scenarios.observations import ObjectState, Observation, expectations_from
from hookproof.scenarios.state_words import OVERLAP_SENTENCE, STALE_OVERLAP_SENTENCE
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.registry import get_profile

T0 = 1_764_000_000
STRIPE = get_profile("stripe").words()
UPDATED = "customer.subscription.updated"
EVENTS = [Event(id=f"evt_{n}", type=UPDATED, created=T0 + 2 * v, created_us=(T0 + 2 * v) * 10**6,
                object_type="subscription", object_id="sub_1", version=v, object={"id": "sub_1"}, status=s)
          for n, v, s in (("a", 1, "active"), ("b", 2, "past_due"))]


def _attempt(event: Event, i: int, sent_at: float, answered_at: float) -> Attempt:
    return Attempt(event_id=event.id, delivery_id=f"dlv_{event.id}_0", attempt=1, business_key=None,
                   object_id=event.object_id, object_version=event.version, event_type=event.type, faults=(),
                   valid=True, sent_at=sent_at, answered_at=answered_at, status=200, outcome=Outcome.ACKED,
                   completion=Completion.OK, latency_ms=(answered_at - sent_at) * 1000, index=i)


def _messages(check: str, spans: list[tuple[float, float]], *statuses: str) -> list[str]:
    history = [_attempt(e, i, T0 + a, T0 + b) for i, (e, (a, b)) in enumerate(zip(EVENTS, spans))]
    expectations = expectations_from(EVENTS, history, sender_timeout_s=20, max_attempts_per_event=None,
                                     provider=STRIPE)
    observations = [Observation(T0 + 10 + i, (), (ObjectState("sub_1", s),)) for i, s in enumerate(statuses)]
    (result,) = run_checks([check], history, expectations, observations)
    return [f.message for f in result.findings]


ACTIVE = f"active (event evt_a, {UPDATED}, created {T0 + 2})"
PAST_DUE = f"past_due (event evt_b, {UPDATED}, created {T0 + 4})"
OVERLAPPING = [(0.0, 1.2), (0.3, 0.5)]  # evt_b sent and answered while evt_a was in flight
SEQUENTIAL = [(0.0, 0.2), (0.3, 0.5)]


#: Stripe's advice on ordering an object's events, which an overlap finding ends with.
ADVICE = STRIPE.clock.advice if STRIPE.clock is not None else ""


def test_stale_after_overlapping_deliveries_says_they_overlapped() -> None:
    """Both receivers that lose the newer state to an overlap are named (one writing each event's
    state as it arrives; one comparing without a row lock), then the provider's advice: a new
    user's blind-writing receiver was told only of a row lock, which would not have mended it."""
    assert _messages("stale", OVERLAPPING, "active") == [
        f"final state is {ACTIVE}, the provider's is {PAST_DUE}; {STALE_OVERLAP_SENTENCE}; {ADVICE}"]
    # a final state that is the older event's: its newer one was overwritten, or never written (a new
    # user's twin deduplicating on type and object was told only of a row lock it had)
    assert STALE_OVERLAP_SENTENCE == (
        "the deliveries of the two events overlapped (both in flight at once): the older one's state was kept, as "
        "it is by a receiver writing each event's state as it arrives, reading, comparing and writing without a "
        "row lock, or taking the newer event for one it already handled (deduplicating on something other than the "
        "event's own id)")
    # a state seen going back: the newer one was written, then overwritten
    assert OVERLAP_SENTENCE == ("the deliveries of the two events overlapped (both in flight at once): the older "
                                "one's write landed last, as it does in a receiver writing each event's state as "
                                "it arrives, or reading, comparing and writing without a row lock")
    assert ADVICE.startswith("Stripe advises fetching the object from the API when an event arrives")


def test_stale_after_sequential_deliveries_says_nothing_of_overlap() -> None:
    assert _messages("stale", SEQUENTIAL, "active") == [f"final state is {ACTIVE}, the provider's is {PAST_DUE}"]


def test_regressed_after_overlapping_deliveries_says_they_overlapped() -> None:
    assert _messages("regressed", OVERLAPPING, "past_due", "active") == [
        f"went back from {PAST_DUE} to {ACTIVE}; {OVERLAP_SENTENCE}; {ADVICE}"]
    assert _messages("regressed", SEQUENTIAL, "past_due", "active") == [f"went back from {PAST_DUE} to {ACTIVE}"]


def test_deliveries_that_only_touch_do_not_overlap() -> None:
    touching = [(0.0, 0.3), (0.3, 0.5)]  # the second sent the instant the first was answered
    assert _messages("stale", touching, "active") == [f"final state is {ACTIVE}, the provider's is {PAST_DUE}"]


def test_stale_whose_newest_event_was_never_acknowledged_says_so_not_that_writes_raced() -> None:
    """The provider's final event timed out on every attempt (a receiver too slow under a storm):
    its state may never have been applied, which no row lock would change; the finding says
    that and what Stripe does next, not that two writes overlapped, though the deliveries did."""
    history = [_attempt(EVENTS[0], 0, T0, T0 + 1.2)]
    history += [replace(_attempt(EVENTS[1], i, T0 + a, T0 + b), attempt=i, status=None, outcome=Outcome.TIMEOUT,
                        completion=Completion.UNKNOWN)
                for i, (a, b) in enumerate([(0.3, 0.9), (2.0, 7.0)], start=1)]
    expectations = expectations_from(EVENTS, history, sender_timeout_s=20, max_attempts_per_event=None,
                                     provider=STRIPE)
    (result,) = run_checks(["stale"], history, expectations, [Observation(T0 + 10, (), (ObjectState("sub_1", "active"),))])
    (message,) = [f.message for f in result.findings]
    assert message == (f"final state is {ACTIVE}, the provider's is {PAST_DUE}; its event evt_b was never "
                       f"acknowledged (timeout): the receiver may never have applied it; "
                       + STRIPE.after_failures(2))
    assert OVERLAP_SENTENCE not in message and STALE_OVERLAP_SENTENCE not in message


def test_a_paddle_overlap_advises_comparing_occurred_at_in_one_write_not_fetching() -> None:
    """A new user's Paddle twin was told "Paddle documents no other order; fetch the entity"
    after two overlapping deliveries whose occurred_at differed: Paddle orders by occurred_at
    (microseconds), so the advice is to compare it in the write itself; fetching is the advice
    only where the provider's clock cannot tell two events apart (Stripe's whole seconds)."""
    paddle = get_profile("paddle").words()
    history = [_attempt(e, i, T0 + a, T0 + b) for i, (e, (a, b)) in enumerate(zip(EVENTS, OVERLAPPING))]
    expectations = expectations_from(EVENTS, history, sender_timeout_s=5, max_attempts_per_event=None,
                                     provider=paddle)
    (result,) = run_checks(["stale"], history, expectations, [Observation(T0 + 10, (), (ObjectState("sub_1", "active"),))])
    (message,) = [f.message for f in result.findings]
    assert message.endswith(f"; {STALE_OVERLAP_SENTENCE}; compare occurred_at and write in one statement (an update "
                            "conditional on the stored occurred_at being older) or under a row lock"), message
    assert "fetch" not in message
