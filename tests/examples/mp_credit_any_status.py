"""A broken Mercado Pago receiver: `mercadopago_fetch` crediting a payment whatever its status.

It fetches, verifies and dedupes like the reference receiver, but licenses every payment it
reads, rejected or pending ones included (a receiver that takes "a payment notification" for
"a payment"). Run as ``python -m tests.examples.mp_credit_any_status`` with the reference
receiver's environment.
"""

from __future__ import annotations

from typing import Any

import examples.receivers.mercadopago_fetch as reference

_REFERENCE_EFFECTS = reference.effects_of


def credit_any_status(payment: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The reference receiver's effects, with a license for every status."""
    effects = _REFERENCE_EFFECTS(payment)
    licence = f"license:{payment['id']}"
    if all(key != licence for key, _ in effects):
        effects.insert(0, (licence, reference.cents(payment["transaction_amount"])))
    return effects


if __name__ == "__main__":
    reference.effects_of = credit_any_status
    reference.main()
