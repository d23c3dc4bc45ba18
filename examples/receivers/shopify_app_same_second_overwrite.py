"""shopify_app_same_second_overwrite: `shopify_app` ordering an order's states by ``updated_at`` alone, with ``<=`` (a broken twin).

It verifies the HMAC and claims ``X-Shopify-Event-Id`` like `shopify_app`, but replaces an
order's stored state whenever the stored ``updated_at`` is the same as or older than the
incoming one. Shopify's ``updated_at`` counts whole seconds: an order paid, partly refunded and
cancelled within one second carries one ``updated_at`` in each event, and the partial refund's
``orders/updated`` arriving after the cancellation brings back ``partially_refunded``
(``stale``, ``regressed``). ``X-Shopify-Triggered-At`` tells the two apart.
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(same_second="overwrite")
