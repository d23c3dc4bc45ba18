"""What findings say of a provider: its own time of an event, and what it does with an
event its retries did not deliver.

Each profile sets these from providers.md (the source of each beside it);
`Profile.words` hands them to the checks (`scenarios.observations.Expectations.provider`),
so a ``regressed`` or ``stale`` finding names the provider's events and their times, not
hookproof's versions, and a ``lost`` one says what the provider would really do next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, Sequence

from hookproof.simulator.profiles.formats import rfc3339_ns, rfc3339_us


@dataclass(frozen=True, slots=True)
class BodyTime:
    """A coarser time in the event's body beside the provider's event clock, by which receivers
    order an object's events and on which two of them can tie while the clock tells them apart
    (Shopify's ``updated_at``, whole seconds, beside ``X-Shopify-Triggered-At``).

    Attributes:
        name: the body field (``updated_at``).
        step_us: its resolution in microseconds (``1_000_000``: whole seconds); the events of a
            world that has one carry their own time (`EventClock`) in the step of this field,
            so two events tie on it exactly when their clock times share a step.
        utc_offset_s: the UTC offset it is written with, seconds (a shop's ``-05:00``: -18000).
        advice: what to order by when it ties, with the source.
    """

    name: str
    step_us: int
    utc_offset_s: int
    advice: str

    def render(self, at_us: int) -> str:
        """``updated_at 2024-10-02T08:59:11-05:00`` for `at_us` (unix microseconds); in UTC,
        ``updated_at 2024-10-02T13:59:11Z``."""
        at = datetime.fromtimestamp(at_us // self.step_us * self.step_us / 1_000_000,
                                    tz=timezone(timedelta(seconds=self.utc_offset_s)))
        text = at.isoformat()
        return f"{self.name} {text[:-6] + 'Z' if self.utc_offset_s == 0 else text}"  # UTC as GitHub writes it

    def ties(self, a_us: int, b_us: int) -> bool:
        """True when events at `a_us` and `b_us` carry the same value of this field."""
        return a_us // self.step_us == b_us // self.step_us


@dataclass(frozen=True, slots=True)
class EventClock:
    """The provider's own time of an event, where a receiver reads it to order one
    object's events.

    Attributes:
        name: the field or header it is read from (``created``, ``occurred_at``…).
        form: how the provider writes it: ``unix_s`` (integer unix seconds),
            ``rfc3339_us`` / ``rfc3339_ns`` (UTC, six or nine fractional digits).
        step_us: its resolution in microseconds: two events within one step carry the same
            value (``1_000_000``: whole seconds, Stripe's ``created``).
        advice: what the provider's documentation advises when two events of an object
            carry the same time (a receiver cannot order them by it), with its source.
        body_time: a coarser time of the body receivers order by, which may tie where this
            clock does not (`BodyTime`: Shopify's ``updated_at``), or None.
        advises_fetch: whether `advice` is to fetch the object from the provider's API (Stripe's,
            Paddle's, Standard Webhooks'): a receiver that did fetch followed it, and its finding
            says what it was served.
    """

    name: str
    form: Literal["unix_s", "rfc3339_us", "rfc3339_ns"]
    step_us: int
    advice: str
    body_time: BodyTime | None = None
    advises_fetch: bool = False

    def render(self, at_us: int) -> str:
        """`at_us` (unix microseconds, the world's `Event.created_us`) as the provider
        writes this field: ``created 1764000001``, ``occurred_at 2026-…Z``."""
        if self.form == "unix_s":
            value = str(at_us // 1_000_000)
        elif self.form == "rfc3339_us":
            value = rfc3339_us(at_us)
        else:
            value = rfc3339_ns(at_us)
        return f"{self.name} {value}"

    def overlap_advice(self) -> str:
        """What a state finding ends with when the deliveries of its two events overlapped and
        the older one's write landed last: with a clock finer than a millisecond, ordering by it
        works once the comparison and the write are one (Paddle's "use occurred_at ... to reason
        about event order", developer.paddle.com "How webhooks work"); with a coarser one, where
        events of one object share a value, the provider's own `advice`."""
        if self.step_us <= 1_000:
            return (f"compare {self.name} and write in one statement (an update conditional on the stored "
                    f"{self.name} being older) or under a row lock")
        return self.advice

    def ties(self, a_us: int, b_us: int) -> bool:
        """True when events at `a_us` and `b_us` carry the same value of this field."""
        return a_us // self.step_us == b_us // self.step_us


@dataclass(frozen=True, slots=True)
class ProviderWords:
    """A profile's facts as findings word them (`Profile.words`).

    Attributes:
        title: the provider's name for people (``Stripe``).
        attempts: how many attempts the provider makes of one delivery (1 + its retries).
        retrying: what the provider does with an event not yet acknowledged while retries
            remain (``Stripe would keep retrying it for up to 3 days``).
        gives_up: what it does once every retry failed.
        clock: the event's own time (`EventClock`), or None when the provider's events
            carry none a receiver orders by (GitHub, Mercado Pago's thin notifications).
        body_time: where `clock` is None, the body's time receivers order an object's events
            by (`BodyTime`: GitHub's ``updated_at``, whole seconds), on which two events can tie
            with nothing of the provider's to tell them apart; or None.
        future: why refusing a future-dated delivery is stricter than the provider, naming its
            verifier(s) and the seconds ahead it was signed (`Profile.future_words`), or None
            where an official verifier refuses one.
        rotation: why refusing a secret rotation's signatures with the receiver's own first is
            not required (`Profile.rotation_dispute`: an official verifier reads only the last),
            or None where every official verifier reads them all.
        replay: what the provider's manual replay of an event is, where it is a new delivery
            entity (`Profile.replay_words`: Paddle's ``a manual replay: a new notification_id,
            the same event_id``), or None where it sends the same delivery again.
        size_cap: the payload cap the provider documents, with its source (`Profile.size_cap`:
            GitHub's 25 MB), or None where it documents none.
        success: the statuses the provider counts as delivered where it does not take any 2xx
            (`Profile.success_words`: Mercado Pago's ``200 or 201``, a generic-hmac sender's
            ``success_statuses``), or None.
    """

    title: str
    attempts: int
    retrying: str
    gives_up: str
    clock: EventClock | None = None
    future: str | None = None
    replay: str | None = None
    rotation: str | None = None
    body_time: BodyTime | None = None
    size_cap: str | None = None
    success: str | None = None

    def after_failures(self, most_attempts: int) -> str:
        """What the provider does next with an event none of whose deliveries was
        acknowledged, the most attempts of one of them being `most_attempts`: it keeps
        retrying (`retrying`), or its retries ran out (`gives_up`)."""
        if most_attempts < self.attempts:
            return self.retrying
        if self.attempts == 1:
            return self.gives_up
        return f"all {self.attempts} of {self.title}'s attempts failed: {self.gives_up}"


__all__: Sequence[str] = ["BodyTime", "EventClock", "ProviderWords"]
