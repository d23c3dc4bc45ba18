"""The shop's own code on top of django-payments: ship the order when its payment is confirmed.

django-payments' hook is its ``status_changed`` signal (``payments.signals``), sent by
``BasePayment.change_status``. The shop ships (here: one `Fulfilment` row, the effect
hookproof observes, keyed ``fulfillment:<checkout session id>``, the payment's
``transaction_id``) when the signal says the payment is confirmed.

stripe-python's ``api_base`` points at ``HOOKPROOF_API_BASE`` (its documented setting;
django-payments itself sets only ``stripe.api_key``).
"""

import os

from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import stripe
        from payments import PaymentStatus
        from payments.signals import status_changed

        from orders.models import Fulfilment, Payment

        stripe.api_base = os.environ.get("HOOKPROOF_API_BASE", stripe.api_base)

        def ship(sender, instance, **kwargs):
            if instance.status == PaymentStatus.CONFIRMED:
                Fulfilment.objects.create(business_key=f"fulfillment:{instance.transaction_id}", payment=instance)

        status_changed.connect(ship, sender=Payment, weak=False, dispatch_uid="orders.ship")
