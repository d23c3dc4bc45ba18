"""shopify_app_fetch_ack_drop: `shopify_app_fetch` acknowledging a failed fetch (a broken twin).

When the Admin API cannot be read (404 "not visible yet", a 5xx or 429, unreachable) it
answers 200 and applies nothing: Shopify takes the webhook as delivered and never retries,
so the order's effect is lost (the catalog's `provider-api-transient`).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(fetch=True, ack_fetch_failures=True)
