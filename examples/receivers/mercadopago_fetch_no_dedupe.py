"""mercadopago_fetch_no_dedupe: `mercadopago_fetch` without its dedupe (a broken twin).

It validates and fetches like `mercadopago_fetch`, but claims no notification id and
keeps no unique business key: it applies the effect of the status it reads (approved: a
license; refunded or partially refunded: the newest refund; charged back: a
chargeback) every time. A redelivered notification repeats its effect (``duplicated``),
and a late notification re-applies the effect of the newest status.
"""

from __future__ import annotations

from examples.receivers.mercadopago_fetch import main

if __name__ == "__main__":
    main(dedupe=False)
