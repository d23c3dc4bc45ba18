"""A Mercado Pago receiver under a team's own keys: `mercadopago_fetch` granting ``credit:{id}``
once a payment is approved and ``chargeback:{id}`` once it is charged back, nothing for a refund.

Both keys come from ``payment.updated`` (Mercado Pago's one type for a credit, a refund and a
chargeback), so its config declares two rules for that type
(``[[business_keys."payment.updated"]]``, `CONFIG_KEYS`). It fetches, verifies and dedupes
like the reference receiver. ``--no-dedupe`` runs its broken twin: the reference's twin's
rule (the effect of the status it reads, no claim, no unique key) under these keys, so a
redelivered notification repeats its effect. Run as ``python -m tests.examples.mp_credit_chargeback``
with the reference receiver's environment.
"""

from __future__ import annotations

import sys
from typing import Any

import examples.receivers.mercadopago_fetch as reference

#: The keys of this receiver, as hookproof.toml declares them (builtin_keys = false).
CONFIG_KEYS = """builtin_keys = false

[[business_keys."payment.created"]]
key = "credit:{data.id}"
when = { "fetched.status" = "approved" }

[[business_keys."payment.updated"]]
key = "credit:{data.id}"
when = { "fetched.status" = "approved" }

[[business_keys."payment.updated"]]
key = "chargeback:{data.id}"
when = { "fetched.status" = "charged_back" }
"""

_REFERENCE_EFFECTS = reference.effects_of
_REFERENCE_NAIVE = reference.naive_effect


def _own_keys(effects: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """The reference's effects under this team's keys: license → credit, no refund."""
    return [(key.replace("license:", "credit:", 1), amount) for key, amount in effects
            if not key.startswith("refund:")]


def credit_and_chargeback(payment: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The correct receiver's effects of the payment's current state."""
    return _own_keys(_REFERENCE_EFFECTS(payment))


def naive(payment: dict[str, Any]) -> list[tuple[str, int | None]]:
    """The broken twin's effect of the status just read."""
    return _own_keys(_REFERENCE_NAIVE(payment))


if __name__ == "__main__":
    reference.effects_of = credit_and_chargeback
    reference.naive_effect = naive
    reference.main(dedupe="--no-dedupe" not in sys.argv[1:])
