"""shopify_app_compliance_unverified: `shopify_app` that checks no HMAC on compliance topics (a broken twin).

It claims ``X-Shopify-Event-Id`` and verifies ``X-Shopify-Hmac-Sha256`` like `shopify_app` on
every topic but the mandatory compliance ones (``customers/data_request``, ``customers/redact``,
``shop/redact``), which it acts on unverified: a forged erasure request erases a customer's data,
where shopify.dev ("Privacy law compliance") requires 401 (``unexpected``).
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(verify_compliance=False)
