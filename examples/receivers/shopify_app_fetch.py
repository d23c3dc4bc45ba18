"""shopify_app_fetch: `shopify_app` reading each order it is told about through the Admin API.

On an ``orders/*`` topic it fetches ``GET /admin/api/2024-10/orders/{id}.json`` (the
order as Shopify has it now) and stores that order's ``financial_status`` unless a newer
``updated_at`` is stored; when the API fails it answers 503 before claiming the event, so
Shopify's retry applies it. Dedupe and effects are `shopify_app`'s.
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(fetch=True)
