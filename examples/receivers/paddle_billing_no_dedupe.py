"""paddle_billing_no_dedupe: `paddle_billing` without its dedupe (a broken twin).

It verifies, parses and orders subscription states like `paddle_billing`, but claims no
``event_id``: a redelivered event repeats its effect (``duplicated``).
"""

from __future__ import annotations

from examples.receivers.paddle_billing import main

if __name__ == "__main__":
    main(dedupe=False)
