"""shopify_app_dedupe_by_event_id_alone: `shopify_app` deduplicating on ``X-Shopify-Event-Id`` alone (a broken twin).

It verifies the HMAC and orders states like `shopify_app`, but claims ``X-Shopify-Event-Id``
without ``X-Shopify-Topic``. The Event-Id is "a unique ID shared across all deliveries produced
by the same merchant action" (shopify.dev/docs/apps/build/webhooks/delivery-structure): a
checkout's ``orders/create`` and ``orders/paid`` carry one, as do a refund's ``refunds/create``
and ``orders/updated``. The second topic of an action is taken for a duplicate of the first and
never applied: a paid order is never fulfilled (``lost``), a refunded order's state stays behind.
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(dedupe_by_event_id_alone=True)
