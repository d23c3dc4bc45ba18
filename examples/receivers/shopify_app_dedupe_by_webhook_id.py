"""shopify_app_dedupe_by_webhook_id: `shopify_app` deduplicating on ``X-Shopify-Webhook-Id`` (a broken twin).

It verifies the HMAC and orders states like `shopify_app`, but claims ``X-Shopify-Webhook-Id``
instead of ``X-Shopify-Event-Id``. A retry of one delivery keeps its Webhook-Id and is caught;
the same event delivered through a second subscription to its topic carries a new Webhook-Id
and the same Event-Id (shopify.dev, "Ignore duplicate webhooks": "If you have more than one
subscription for the same topic, then you'll receive several webhooks for the same event (one
per subscription)"), so its effect is applied again (``duplicated``; a refund's ``counter``).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(dedupe_by_webhook_id=True)
