"""mercadopago_fetch_ack_drop: `mercadopago_fetch` acknowledging a failed fetch (a broken twin).

It validates, dedupes and applies like `mercadopago_fetch`, but when the payment cannot be
fetched (the provider API answers 404 "not visible yet", a 5xx or 429, or is unreachable) it
answers 200 and applies nothing: Mercado Pago takes the notification as delivered and never
retries, so the payment's effect is lost (the catalog's `provider-api-transient`).
"""

from __future__ import annotations

from examples.receivers.mercadopago_fetch import main

if __name__ == "__main__":
    main(ack_fetch_failures=True)
