"""``manage.py register_endpoint UUID``: the webhook endpoint dj-stripe verifies deliveries with.

dj-stripe serves ``/stripe/webhook/<uuid>/`` for each ``WebhookEndpoint`` row and checks the
``Stripe-Signature`` with that row's secret (``HOOKPROOF_SECRET``), as after ``stripe listen``
or creating the endpoint in the dashboard.
"""

import os

from django.core.management.base import BaseCommand
from djstripe.models import WebhookEndpoint


class Command(BaseCommand):
    help = "Register the shop's webhook endpoint (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("uuid")

    def handle(self, *args, **options):
        WebhookEndpoint.objects.update_or_create(
            djstripe_uuid=options["uuid"],
            defaults={"id": "we_hookproofshop00000000", "secret": os.environ["HOOKPROOF_SECRET"],
                      "url": "https://shop.example/stripe/webhook/", "livemode": False, "api_version": "",
                      "enabled_events": ["*"], "status": "enabled"},
        )
