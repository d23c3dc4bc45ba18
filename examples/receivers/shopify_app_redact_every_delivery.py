"""shopify_app_redact_every_delivery: `shopify_app` that claims no compliance event (a broken twin).

It verifies the HMAC of every topic and claims ``X-Shopify-Event-Id`` like `shopify_app`, except
on the mandatory compliance topics (``customers/data_request``, ``customers/redact``,
``shop/redact``): an erasure looks harmless to repeat, so each delivery is acted on, and a
redelivered request sends its data report or erases again (``duplicated``).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(claim_compliance=False)
