"""`shopify_app` ordering an order's states by ``updated_at`` alone with ``<`` (a broken twin, for tests):
of two changes in one ``updated_at`` second it keeps the first delivered, so a cancellation
delivered after the payment of the same second is dropped (``stale``)."""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(same_second="keep")
