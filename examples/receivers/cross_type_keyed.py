"""cross_type_keyed: grants one effect from either of two event types, claimed by business key.

Some integrations act on ``charge.succeeded`` as well as ``payment_intent.succeeded``
(whichever comes first grants the license), since both announce one payment. The two
events have different ids, so deduplicating by event id alone would grant it twice. This
receiver claims the *business key* (``license:{payment_intent}``) in ``processed_events``
in the effect's transaction (UNIQUE, ``ON CONFLICT DO NOTHING``), so the second event of
the pair, even when it arrives at the same instant, finds the key taken. Duplicates of
one event are deduplicated by event id as in inbox_sync.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import OK, Effect, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import made_by_invoice


def license_of(event: WebhookEvent) -> Effect | None:
    """The license a payment's event grants: from the payment intent, or from its charge."""
    obj = event.object
    if (obj.get("metadata") or {}).get("channel") == "checkout":
        return None  # a Checkout Session's payment (its intent's metadata): fulfilled on the session's events
    if made_by_invoice(obj):
        return None  # an invoice's payment (a subscription's): its renewal, on the invoice's invoice.paid
    if event.type == "payment_intent.succeeded":
        return Effect(f"license:{obj['id']}", obj.get("amount"))
    if event.type == "charge.succeeded" and obj.get("payment_intent"):
        return Effect(f"license:{obj['payment_intent']}", obj.get("amount"))
    return None


class CrossTypeKeyed(Receiver):
    """Event-id dedupe plus a UNIQUE claim of the business key, one transaction."""

    name = "cross_type_keyed"
    framework = "fastapi"

    def effect_of(self, event: WebhookEvent) -> Effect | None:  # type: ignore[override]
        return license_of(event) if event.type in ("payment_intent.succeeded", "charge.succeeded") \
            else Receiver.effect_of(event)

    def process(self, event: WebhookEvent) -> Reply:
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is None and state is None:
            return Reply(200, {"ignored": event.type})
        with self.store.transaction() as conn:
            if not self.store.claim(conn, event.id, event.id):
                return Reply(200, {"duplicate": event.id})
            if effect is not None and self.store.claim(conn, "effect:" + effect.business_key, event.id):
                self.store.apply_effect(conn, effect, event.id)
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(CrossTypeKeyed(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, CrossTypeKeyed.name)
