"""`shopify_app` whose ``orders/paid`` handler checks, then inserts (a broken twin, for tests).

`tests.examples.shopify_data_request_check_then_insert`'s race on ``orders/paid``: the order's
event looked up outside any transaction, 40 ms, then the fulfilment (``fulfil:{order id}``)
inserted and the event marked seen. Every other topic is `shopify_app`'s. Copies of one
``orders/paid`` handled together fulfil the order more than once (``duplicated``). Run as
``python -m tests.examples.shopify_paid_check_then_insert`` with the reference receiver's environment.
"""

from __future__ import annotations

from tests.examples.shopify_data_request_check_then_insert import run

if __name__ == "__main__":
    run("orders/paid")
