"""How the state findings (``regressed``, ``stale``) name an object's states: by the
provider's events that carried them, not by hookproof's versions.

A receiver never sees ``hookproof_version`` from a real provider; it sees events, each with
its id, its type and, where the provider has one, its own time (Stripe's ``created``,
Paddle's ``occurred_at``…: `simulator.profiles.provider_words.EventClock`). So a state is
named ``past_due (event evt_…, customer.subscription.updated, created 1764000001)``; when the
two events a finding compares carry the same time, the finding says a receiver cannot order
them by it, and what the provider's documentation advises instead; when the deliveries of the two
events were in flight at once, that they overlapped (`overlap_words`: how an older state can beat
a newer one whatever their times), unless the provider's final event was never acknowledged
(`unacknowledged_words`: the receiver may never have applied it). One line, bounded: ids,
types and times are short, and nothing of unbounded length is quoted.

A finding's structured ``expected`` and ``actual`` say the same (`NamedState`: the status,
and the words the sentence gives it), so a report's "expected …, actual …" names events a
user can find in their logs, and a reader of the finding (a storm's `loadtests.ahead`)
takes the status from its field, never from the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from hookproof.scenarios.observations import Expectations, ObjectState, ObjectTruth

if TYPE_CHECKING:
    from hookproof.scenarios.check_index import CheckIndex


@dataclass(frozen=True)
class NamedState:
    """An object's state as a ``regressed`` or ``stale`` finding's ``expected`` or ``actual``.

    Attributes:
        status: the state's status (``past_due``; with declared state fields, the combined
            state, ``active, price=price_1``).
        words: how the finding's message names it (`state_words`): ``past_due (event evt_2,
            customer.subscription.updated, created 1764000001)``; ``regressed``'s expected
            adds ``or later``.

    Rendered (``str``, and in report.json) as `words`."""

    status: str
    words: str

    def __str__(self) -> str:
        return self.words


def carrier(truth: ObjectTruth | None, version: int | None, status: str, *, exact: bool) -> int | None:
    """The version whose event names the state `status` at `version`: `version` itself when
    an event carried it; else, unless the receiver reported that very version (`exact`), the
    newest version at or below it with that status that an event carried, else the oldest
    above it (a status-only state mapped to a version the provider API served: the receiver
    shows the status that event carried); None when no event carried the status."""
    if truth is None or version is None:
        return None
    if truth.event_id_at(version):
        return version
    if exact:
        return None
    carried = [v for (v, known), event_id in zip(truth.versions, truth.event_ids) if known == status and event_id]
    below = [v for v in carried if v <= version]
    return below[-1] if below else (carried[0] if carried else None)


def state_words(status: str, truth: ObjectTruth | None, version: int | None, idx: "CheckIndex",
                expectations: Expectations, *, exact: bool = False) -> str:
    """`status` with the event that carried it (`carrier`): ``past_due (event evt_1,
    customer.subscription.updated, created 1764000001)``; the event's type is the provider's
    (its first attempt's), its time rendered as the profile's clock (`Expectations.provider`)
    when it has one; a status stored with the version of an event that carried another status
    says so (``active (stored with the version of event evt_9, customer.subscription.deleted,
    created 1764000009, which carried canceled)``). A state no delivered event carried is said to come from the provider
    API when the API could have served it and did serve the object (`Expectations.fetched`: a
    fetching receiver stored what it was served), else is named by its ``hookproof_version``
    (a receiver that fetched nothing mixed fields of two events, reported it, or a hand-built truth)."""
    named = carrier(truth, version, status, exact=exact)
    if named is None or truth is None:
        if version is None:
            return status
        served = truth is not None and truth.object_id in expectations.fetched and any(
            v == version for v, _ in (expectations.servable or {}).get(truth.object_id, ()))
        if served:
            return f"{status} (served by the provider API; no delivered event carried it)"
        return f"{status} (hookproof_version {version}; no delivered event carried it)"
    event_id = truth.event_id_at(named)
    parts = [f"event {event_id}"]
    positions = idx.by_event.get(event_id, ()) if event_id else ()
    if positions:
        parts.append(idx.history[positions[0]].event_type)
    clock = expectations.provider.clock if expectations.provider is not None else None
    at_us = truth.event_time_at(named)
    if clock is not None and at_us is not None:
        parts.append(clock.render(at_us))
    carried = next((known for v, known in truth.versions if v == named), status)
    if carried != status:  # the receiver stored this event's version beside a status it did not carry
        return f"{status} (stored with the version of {', '.join(parts)}, which carried {carried})"
    return f"{status} ({', '.join(parts)})"


def tie_words(truth: ObjectTruth | None, versions: Sequence[int | None], expectations: Expectations) -> str:
    """``""``, or when the two events that carried `versions` (as `carrier` names them) are
    distinct and carry the same time by the profile's clock: ``"; both carry created
    1764000001, so a receiver cannot order them by created alone: <the provider's advice>"``;
    or, where the clock tells them apart and the body's coarser time ties (`BodyTime`, Shopify's
    ``updated_at``): ``"; both carry updated_at 2026-…-05:00, so a receiver cannot order them by
    updated_at alone: <the advice>"`` (each state already names its clock time, which differ);
    or, where the provider has no clock and the body's time ties (GitHub's ``updated_at``,
    `ProviderWords.body_time`), the same words with what alone breaks the tie."""
    provider = expectations.provider
    clock = provider.clock if provider is not None else None
    body = clock.body_time if clock is not None else (provider.body_time if provider is not None else None)
    if (clock is None and body is None) or truth is None or None in versions or len(set(versions)) != 2:
        return ""
    times = [truth.event_time_at(v) for v in versions if v is not None]
    if None in times or len(times) != 2:
        return ""
    a, b = times
    assert a is not None and b is not None
    if clock is not None and clock.ties(a, b):
        return f"; both carry {clock.render(a)}, so a receiver cannot order them by {clock.name} alone: {clock.advice}"
    if body is not None and body.ties(a, b):  # Shopify's updated_at, told apart by the clock; GitHub's, by nothing
        return f"; both carry {body.render(a)}, so a receiver cannot order them by {body.name} alone: {body.advice}"
    return ""


#: What `overlap_words` adds when the deliveries of a finding's two events were in flight at once.
OVERLAP_SENTENCE = ("the deliveries of the two events overlapped (both in flight at once): the older one's write "
                    "landed last, as it does in a receiver writing each event's state as it arrives, or reading, "
                    "comparing and writing without a row lock")

#: What `overlap_words` says instead of `OVERLAP_SENTENCE` of a final state that is the older event's
#: (``stale``): nothing tells whether the newer state was written and overwritten, or never written
#: because the receiver took the newer event for one it already handled.
STALE_OVERLAP_SENTENCE = ("the deliveries of the two events overlapped (both in flight at once): the older one's "
                          "state was kept, as it is by a receiver writing each event's state as it arrives, reading, "
                          "comparing and writing without a row lock, or taking the newer event for one it already "
                          "handled (deduplicating on something other than the event's own id)")


def overlap_words(truth: ObjectTruth | None, versions: Sequence[int | None], idx: "CheckIndex",
                  advice: str | None = None, *, kept_older: bool = False) -> str:
    """``""``, or when the two distinct events that carried `versions` (as `carrier` names them)
    each have an attempt and one attempt of each was in flight while the other was (sent before
    the other was answered, by the history's ``sent_at``/``answered_at``): ``"; "`` and
    `OVERLAP_SENTENCE` (`STALE_OVERLAP_SENTENCE` when `kept_older`: a final state that is the
    older event's), then ``": "`` and `advice` (`EventClock.overlap_advice`) when given.
    Sequential deliveries (one answered before the other was sent) say nothing."""
    if truth is None or None in versions or len(set(versions)) != 2:
        return ""
    event_ids = [e for v in versions if v is not None and (e := truth.event_id_at(v))]
    if len(set(event_ids)) != 2:
        return ""
    spans = [[(idx.history[p].sent_at, idx.history[p].answered_at) for p in idx.by_event.get(e, ())]
             for e in event_ids]
    if any(a_sent < b_answered and b_sent < a_answered
           for a_sent, a_answered in spans[0] for b_sent, b_answered in spans[1]):
        return "; " + (STALE_OVERLAP_SENTENCE if kept_older else OVERLAP_SENTENCE) + (f"; {advice}" if advice else "")
    return ""


def _advice(ties: str, expectations: Expectations) -> str | None:
    """The advice on ordering an object's overlapping events (`EventClock.overlap_advice`),
    unless `ties` (`tie_words`) said the provider's."""
    clock = expectations.provider.clock if expectations.provider is not None else None
    return clock.overlap_advice() if clock is not None and not ties else None


def unacknowledged_words(truth: ObjectTruth | None, version: int | None, idx: "CheckIndex") -> str:
    """``""``, or when the event that carried the provider's `version` of the object has valid
    attempts and none was acknowledged: ``"; its event … was never acknowledged (timeout): the
    receiver may never have applied it; "`` and what the provider does next
    (`key_loops.after_failures`), so a state left behind by a delivery that failed is not
    blamed on a race between two writes (`overlap_words` is not said then)."""
    from hookproof.scenarios.key_loops import after_failures

    event_id = truth.event_id_at(version) if truth is not None and version is not None else None
    if not event_id:
        return ""
    completions = idx.completions
    valid = [p for p in idx.by_event.get(event_id, ()) if completions[p] is not None]
    if not valid or idx.acked(valid):
        return ""
    return (f"; its event {event_id} was never acknowledged ({idx.answer_summary(valid)}): the receiver may "
            f"never have applied it; " + after_failures(idx, valid))


def regressed_words(prev: tuple[int, str], st: ObjectState, version: int, truth: ObjectTruth | None,
                    idx: "CheckIndex", expectations: Expectations) -> tuple[str, NamedState, NamedState]:
    """``regressed``'s (message, expected, actual) for an object whose state `st` (mapped to
    `version`) is older than the highest seen before, `prev` = (version, status): ``went
    back from past_due (event …) to active (event …)``, and the tie when both events carry
    one time; expected ``past_due (event …) or later``, actual ``active (event …)``."""
    exact = st.version is not None
    was = state_words(prev[1], truth, prev[0], idx, expectations)
    now = state_words(st.status, truth, version, idx, expectations, exact=exact)
    carried = (carrier(truth, prev[0], prev[1], exact=False), carrier(truth, version, st.status, exact=exact))
    ties = tie_words(truth, carried, expectations)
    message = f"went back from {was} to {now}" + ties + overlap_words(truth, carried, idx, _advice(ties, expectations))
    return message, NamedState(prev[1], f"{was} or later"), NamedState(st.status, now)


#: A ``stale`` finding's message for an object the receiver does not hold at all (`stale_words`).
OBJECT_MISSING = "object missing after settling"


def stale_words(st: ObjectState | None, truth: ObjectTruth, idx: "CheckIndex",
                expectations: Expectations) -> tuple[str, NamedState, NamedState | None]:
    """``stale``'s (message, expected, actual) for an object whose settled state `st` is not
    the provider's final one (`truth`): ``final state is active (event …), the provider's
    is past_due (event …)``, and the tie when both events carry one time; expected the
    provider's final state, actual the observed one, each named as in the message. The
    observed state is the version it reported, else the newest version of the truth (or of
    what the provider API could serve) with its status. `st` None (the object missing):
    ``object missing after settling``, actual None."""
    final = state_words(truth.final_status, truth, truth.final_version, idx, expectations)
    expected = NamedState(truth.final_status, final)
    if st is None:
        return OBJECT_MISSING, expected, None
    servable = (expectations.servable or {}).get(truth.object_id)
    seen = truth.with_servable(servable)
    exact = st.version is not None
    version = st.version if exact else seen.version_for(st.status, truth.final_version)
    got = state_words(st.status, seen, version, idx, expectations, exact=exact)
    carried = (carrier(seen, version, st.status, exact=exact), truth.final_version)
    unacked = unacknowledged_words(truth, truth.final_version, idx)
    ties = tie_words(seen, carried, expectations)
    message = (f"final state is {got}, the provider's is {final}"
               + ties + (unacked or overlap_words(seen, carried, idx, _advice(ties, expectations), kept_older=True)))
    return message, expected, NamedState(st.status, got)


__all__: Sequence[str] = ["NamedState", "OBJECT_MISSING", "OVERLAP_SENTENCE", "STALE_OVERLAP_SENTENCE", "carrier", "overlap_words", "regressed_words", "stale_words",
                          "unacknowledged_words",
                          "state_words", "tie_words"]
