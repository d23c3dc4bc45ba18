"""shopify_app_fulfillment_by_arrival: `shopify_app` writing an order's ``fulfillment_status`` by arrival (a broken twin).

It verifies the HMAC, claims the event and keeps ``financial_status`` newest-first like
`shopify_app`, but writes ``fulfillment_status`` from whichever order event arrives last: an
``orders/create`` (null) or ``orders/partially_fulfilled`` (``partial``) delivered after the
order's ``orders/fulfilled`` leaves a shipped order behind (``stale``). Shopify delivers out of
order (shopify.dev, "Webhooks delivery structure": compare ``updated_at``).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(fulfillment_by_arrival=True)
