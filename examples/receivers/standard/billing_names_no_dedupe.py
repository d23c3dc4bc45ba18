"""billing_names_no_dedupe: `billing_names` without its dedupe (a broken twin).

It verifies and orders subscription states like `billing_names`, but claims no
``webhook-id``: a redelivered event repeats its effect (``duplicated``).
"""

from __future__ import annotations

from examples.receivers.standard.billing_names import main

if __name__ == "__main__":
    main(dedupe=False)
