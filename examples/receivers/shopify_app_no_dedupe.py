"""shopify_app_no_dedupe: `shopify_app` without its dedupe (a broken twin).

It verifies the HMAC and orders states by ``updated_at`` like `shopify_app`, but claims no
``X-Shopify-Event-Id``: a redelivered event repeats its effect (``duplicated``).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(dedupe=False)
