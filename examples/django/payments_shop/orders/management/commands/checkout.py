"""The shop's checkout page as a seed command: open the payments hookproof's story will complete.

Reads hookproof's seed document (``[target.seed]``, ``creates = ["checkout.session"]``) on
stdin and, for each checkout session its ``create`` asks for, makes a django-payments
``Payment`` and calls ``payment.get_form()``, as the shop's checkout view does: the
package's ``StripeProviderV3.create_session`` opens the Checkout Session through the
provider API (``POST /v1/checkout/sessions``, ``client_reference_id`` the payment's token,
``metadata.customer_name``) and raises ``RedirectNeeded`` to Stripe's hosted page.
"""

import json
import sys
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError
from payments import RedirectNeeded

from orders.models import Payment


class Command(BaseCommand):
    help = "Open the checkout sessions hookproof's seed document asks for (document on stdin)."

    def handle(self, *args, **options):
        document = json.load(sys.stdin)
        wanted = int(document.get("create", {}).get("checkout.session", 0))
        for i in range(wanted):
            payment = Payment.objects.create(
                variant="stripe", description=f"{document['scenario']} order {i + 1}", total=Decimal("25.00"),
                currency="USD", billing_first_name="Ada", billing_last_name=f"Buyer {i + 1}",
                billing_email=f"buyer{i + 1}@example.com")
            try:
                payment.get_form()
            except RedirectNeeded:
                continue  # to the session's hosted page: the session is open
            raise CommandError(f"payment {payment.pk}: django-payments opened no checkout session")
