"""refund_amounts: inbox_sync recording each ``charge.refunded`` effect with the charge's
cumulative ``amount_refunded`` (docs.stripe.com/api/charges/object: the amount refunded so far),
not that refund's own amount. Both readings are correct: one effect row per refund event, under
the built-in key ``refund:{charge}:{amount_refunded}``.

With ``--option whole_charge=1`` (the broken twin) the row records the charge's whole
``amount`` on every refund, a partial refund booked as a full one.
Run as ``python -m tests.examples.refund_amounts`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import Effect, effect_of
from hookproof.receivers.inbox_sync import InboxSync


class RefundAmounts(InboxSync):
    """inbox_sync whose refund effects carry the charge's ``amount_refunded`` (or, broken,
    its ``amount``)."""

    __test__ = False  # not a pytest test class
    name = "refund_amounts"
    framework = "fastapi"

    def effect_of(self, event: WebhookEvent) -> Effect | None:  # type: ignore[override]
        effect = effect_of(event)
        if effect is None or event.type != "charge.refunded":
            return effect
        field = "amount" if self.config.option("whole_charge", 0) else "amount_refunded"
        return Effect(effect.business_key, int(event.object[field]))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(RefundAmounts(config))


if __name__ == "__main__":
    run_cli(create_app, RefundAmounts.name)
