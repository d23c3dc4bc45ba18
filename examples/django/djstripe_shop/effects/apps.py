"""The shop's effects, one per event type, connected to dj-stripe's signals.

dj-stripe sends ``djstripe.signals.WEBHOOK_SIGNALS[<event type>]`` once it has stored a new
``Event`` (inside the same transaction, and only for an event id it had not stored yet). The
shop connects one handler per effectful type; each writes one `Effect` row under the business
key the shop gives that effect:

====================================  ============================================
event type                            business key
====================================  ============================================
payment_intent.succeeded              ``license:<payment intent>``
checkout.session.completed (paid)     ``fulfillment:<checkout session>``
checkout.session.completed (subscription mode, paid or on trial)  ``provision:<checkout session>``
checkout.session.async_payment_succeeded  ``fulfillment:<checkout session>``
invoice.paid                          ``renewal:<invoice>``
invoice.payment_failed                ``dunning:<invoice>:<attempt_count>``
charge.refunded                       ``refund:<charge>:<amount_refunded>``
====================================  ============================================
"""

import os

from django.apps import AppConfig


def _fulfillment(obj):
    if obj.get("mode") == "subscription":  # provisions the subscription it started, paid or on trial
        return f"provision:{obj['id']}" if obj.get("payment_status") in ("paid", "no_payment_required") else None
    return f"fulfillment:{obj['id']}" if obj.get("payment_status") == "paid" else None


#: The description Stripe gives a subscription invoice's payment intent (no field names the
#: invoice from API 2025-03-31.basil on: docs.stripe.com/changelog/basil)
SUBSCRIPTION_PAYMENTS = ("Subscription creation", "Subscription update")

#: event type -> (business key of the event's object or None, the amount it moves)
EFFECTS = {
    # a Checkout Session's intent (payment_intent_data.metadata) is fulfilled on the session's events,
    # an invoice's (a subscription's: "Subscription creation" or "Subscription update") on its invoice.paid
    "payment_intent.succeeded": (lambda o: None if (o.get("metadata") or {}).get("channel") == "checkout"
                                 or o.get("invoice") or o.get("description") in SUBSCRIPTION_PAYMENTS
                                 else f"license:{o['id']}", lambda o: o.get("amount_received")),
    "checkout.session.completed": (_fulfillment, lambda o: o.get("amount_total")),
    "checkout.session.async_payment_succeeded": (lambda o: f"fulfillment:{o['id']}", lambda o: o.get("amount_total")),
    "invoice.paid": (lambda o: f"renewal:{o['id']}", lambda o: o.get("amount_paid")),
    "invoice.payment_failed": (lambda o: f"dunning:{o['id']}:{o['attempt_count']}", lambda o: None),
    "charge.refunded": (lambda o: f"refund:{o['id']}:{o['amount_refunded']}", lambda o: o.get("amount_refunded")),
}


class EffectsConfig(AppConfig):
    name = "effects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        import stripe
        from djstripe.models import Event
        from djstripe.signals import WEBHOOK_SIGNALS

        from effects.models import Effect

        stripe.api_base = os.environ.get("HOOKPROOF_API_BASE", stripe.api_base)

        def connect(event_type, key_of, amount_of):
            def apply(sender, event, **kwargs):
                obj = event.data["object"]
                key = key_of(obj)
                if key is not None:
                    Effect.objects.create(business_key=key, event_id=event.id, amount=amount_of(obj))

            WEBHOOK_SIGNALS[event_type].connect(apply, sender=Event, weak=False,
                                                dispatch_uid=f"effects.{event_type}")

        for event_type, (key_of, amount_of) in EFFECTS.items():
            connect(event_type, key_of, amount_of)
