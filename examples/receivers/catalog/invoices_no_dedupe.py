"""invoices_no_dedupe: `invoices` without its dedupe (a broken twin).

It verifies and orders invoice states like `invoices`, but claims no event ``id``: a
redelivered event repeats its effect (``duplicated``).
"""

from __future__ import annotations

from examples.receivers.catalog.invoices import main

if __name__ == "__main__":
    main(dedupe=False)
