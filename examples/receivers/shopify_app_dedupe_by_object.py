"""shopify_app_dedupe_by_object: `shopify_app` deduplicating on the topic and the order (a broken twin).

It verifies the HMAC and orders states by ``updated_at`` like `shopify_app`, but claims
``{topic}:{order id}`` (a refund's ``order_id``, else the resource's ``id``) instead of
``X-Shopify-Event-Id``: redeliveries are caught, and so is every later, distinct event of
one topic about an order. An order paid, noted, then partly refunded keeps ``paid`` (its
second ``orders/updated`` is dropped; ``stale``), and its second refund is never recorded
(``lost``). An order that ends cancelled still ends right: ``orders/cancelled`` is the
first of its topic.
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(dedupe_by_object=True)
