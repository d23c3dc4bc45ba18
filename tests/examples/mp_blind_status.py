"""A broken Mercado Pago receiver: `mercadopago_fetch` writing whatever status it fetched.

It verifies, fetches and dedupes like the reference receiver, but stores the fetched status
without comparing ``date_last_updated``: a slow fetch answered after a newer one writes the
older status last. Run as ``python -m tests.examples.mp_blind_status`` with the reference
receiver's environment.
"""

from __future__ import annotations

import examples.receivers.mercadopago_fetch as reference

#: The reference's upsert without its ``WHERE excluded.updated >= payments.updated``.
BLIND_UPSERT = ("INSERT INTO payments (object_id, status, updated) VALUES (?, ?, ?) ON CONFLICT (object_id) "
                "DO UPDATE SET status = excluded.status, updated = excluded.updated")

if __name__ == "__main__":
    reference.STATUS_UPSERT = BLIND_UPSERT
    reference.main()
