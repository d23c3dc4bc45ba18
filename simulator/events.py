"""The provider-neutral event: what the world emits and every profile renders.

The world models billing in Stripe's vocabulary (Stripe is the field's reference
domain), so `Event.type` is a Stripe event type and `Event.object` is a Stripe-shaped
object snapshot. Each profile maps these onto its own provider's names and envelope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

#: The Stripe API version the world's objects are shaped at by default: a version of the
#: "dahlia" line, the one stripe-python 15.3.0 pins. Dahlia's later monthly versions (up to
#: 2026-08-26.dahlia) are backward-compatible (Stripe makes breaking changes only with a new
#: major, such as endive), so Stripe's OpenAPI fixtures at commit f6c2a48 (2026-08-21) show its shapes.
LATEST_API_VERSION = "2026-06-24.dahlia"

#: Object types whose events carry an observable state (`Event.stateful`).
STATEFUL_OBJECT_TYPES: frozenset[str] = frozenset({"subscription", "issue", "pull_request", "payment", "order"})


@dataclass(frozen=True)
class Event:
    """One fact the provider emits, with the object snapshot at that version.

    Attributes:
        id: provider event id (`evt_…`), unique in the world.
        type: Stripe event type, e.g. ``"payment_intent.succeeded"``.
        created: unix time in seconds (integer, Stripe's resolution).
        created_us: unix time in microseconds (finer ordering for profiles that carry it).
        object_type: Stripe object name, e.g. ``"payment_intent"``.
        object_id: id of the object the event is about.
        version: the object's version after the change (starts at 1, +1 per change).
        object: the Stripe-shaped snapshot of the object at `version` (``data.object``).
        previous_attributes: the changed fields' previous values (only fields whose value
            changed: `changed_attributes`), or None (creation, and events that are not updates).
        business_key: the effect this event must cause exactly once, or None (state only).
        amount: minor units of money moved by the effect (refunds, payments), or None.
        currency: ISO 4217 lowercase, or None.
        status: the object's status after the change (observed as state).
        livemode: True for live mode events.
        account: the provider account the event belongs to (``acct_…``).
        connected: True for a Stripe Connect event (about a connected account the
            receiver listens to); Stripe sends ``account`` only then.
        api_version: the API version the event is rendered at (``YYYY-MM-DD[.name]``).
        request_id: the API request that caused the event (``req_…``), or None.
        extra: profile-specific facts, by name.
    """

    id: str
    type: str
    created: int
    created_us: int
    object_type: str
    object_id: str
    version: int
    object: Mapping[str, Any]
    previous_attributes: Mapping[str, Any] | None = None
    business_key: str | None = None
    amount: int | None = None
    currency: str | None = None
    status: str | None = None
    livemode: bool = False
    account: str = "acct_hookproof"
    connected: bool = False
    api_version: str = LATEST_API_VERSION
    request_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stateful(self) -> bool:
        """True when the event carries an observable state (subscriptions; GitHub issues
        and pull requests; Mercado Pago payments; Shopify orders)."""
        # a user catalog's types that set a status say so in extra["stateful"] (world/user_catalog.py)
        return self.object_type in STATEFUL_OBJECT_TYPES or bool(self.extra.get("stateful"))


def changed_attributes(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `previous` (values before a change) whose value differs from
    `current`'s: Stripe's ``previous_attributes``, "the names of the updated attributes and
    their values prior to the event" (docs.stripe.com/api/events/object).

    A hash in both is compared key by key and keeps only its changed keys (dropped when none
    changed); a list is compared whole and kept whole ("If an array attribute has any updated
    elements, this object contains the entire array"); a key `current` does not have is
    dropped (the world never removes a field, so it is one the rendered version lacks). Keys
    come alphabetically, as in every hash Stripe renders (`stripe_shapes.stripe_order`).
    """
    out: dict[str, Any] = {}
    for key in sorted(previous):
        before = previous[key]
        if key not in current:
            continue
        now = current[key]
        if isinstance(before, Mapping) and isinstance(now, Mapping):
            inner = changed_attributes(before, now)
            if inner:
                out[key] = inner
        elif before != now:
            out[key] = before
    return out
