"""The shop's seed command: its customers, products and prices, as they exist before Stripe sends anything.

Reads hookproof's seed document (``[target.seed]``) on stdin and hands its customers,
products and prices to drf-stripe-subscription's own sync functions (the ones its
``update_stripe_customers`` and ``update_stripe_products`` commands call with
``stripe.Customer.list()``/``Product.list()``/``Price.list()`` answers), so the package
parses them with its own models and links each customer to a Django user
(``USER_CREATE_DEFAULTS_ATTRIBUTE_MAP``: username from the email).
"""

import json
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django  # noqa: E402

django.setup()

from drf_stripe.stripe_api.customers import stripe_api_update_customers  # noqa: E402
from drf_stripe.stripe_api.products import stripe_api_update_products_prices  # noqa: E402


def as_list(objects: list, resource: str) -> dict:
    """A Stripe list answer holding `objects` (what ``stripe.<Resource>.list()`` returns)."""
    return {"object": "list", "url": f"/v1/{resource}", "has_more": False, "data": objects}


document = json.load(sys.stdin)
objects = document["objects"]
stripe_api_update_products_prices(test_products=as_list(objects.get("product", []), "products"),
                                  test_prices=as_list(objects.get("price", []), "prices"))
stripe_api_update_customers(test_data=as_list(objects.get("customer", []), "customers"))
