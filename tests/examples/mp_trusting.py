"""A broken Mercado Pago receiver: `mercadopago_fetch` trusting the notification instead of the API.

It verifies ``x-signature`` and dedupes like the reference receiver, but never asks the
provider API: it takes a payment notification for an approved payment of its own seller
and licenses ``data.id`` (a receiver that "knows" what a notification means). Another
seller's notification is licensed too: the fetch a docs-following receiver makes would
have been answered 404. Run as ``python -m tests.examples.mp_trusting`` with the
reference receiver's environment (``MP_USER_ID`` unset: it checks no seller).
"""

from __future__ import annotations

from typing import Any

import examples.receivers.mercadopago_fetch as reference


class _Payments:
    def get(self, payment_id: str) -> dict[str, Any]:
        """An approved payment made up from the notification's id, the API never asked."""
        return {"status": 200, "response": {"id": int(payment_id), "status": "approved", "status_detail": "accredited",
                                            "transaction_amount": 0, "refunds": [],
                                            "date_last_updated": "1970-01-01T00:00:00.000-04:00"}}


class _TrustingSdk:
    def payment(self) -> _Payments:
        return _Payments()


def trusting_sdk(api_base: str, access_token: str) -> _TrustingSdk:
    """An SDK stand-in that answers from the notification alone."""
    return _TrustingSdk()


if __name__ == "__main__":
    reference.sdk_for = trusting_sdk  # type: ignore[assignment]
    reference.main()
