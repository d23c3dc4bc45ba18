"""last_refund_marker: deduplicates refunds by remembering only the last one it processed.

Exactly inbox_sync, except for ``charge.refunded``: the receiver keeps, per charge, the
cumulative ``amount_refunded`` it last credited (a "last refund" marker, as the
WooCommerce Stripe gateway kept the last refund id, #5697), and skips a refund event
whose amount equals the marker. A copy of the latest refund is caught; but when two
partial refunds R1 and R2 are processed and R1 is then redelivered, R1 no longer matches
the marker (R2 moved it) and is credited a second time.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, select

from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

marker_metadata = MetaData()

#: Per charge: the cumulative refunded amount last credited.
refund_markers = Table(
    "refund_markers", marker_metadata,
    Column("charge_id", String(200), primary_key=True),
    Column("amount_refunded", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)


class LastRefundMarker(InboxSync):
    """inbox_sync, with refunds deduplicated by a per-charge "last refund" marker."""

    name = "last_refund_marker"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        marker_metadata.create_all(self.store.engine)

    def process(self, event: WebhookEvent) -> Reply:
        if event.type != "charge.refunded":
            return super().process(event)
        effect = self.effect_of(event)
        charge, refunded = str(event.object["id"]), int(event.object["amount_refunded"])
        with self.store.transaction() as conn:
            marker = conn.execute(select(refund_markers.c.amount_refunded)
                                  .where(refund_markers.c.charge_id == charge)).scalar()
            if marker == refunded:
                return Reply(200, {"duplicate": event.id})
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            stmt = self.store.dialect_insert(refund_markers).values(charge_id=charge, amount_refunded=refunded,
                                                                    updated_at=time.time())
            conn.execute(stmt.on_conflict_do_update(index_elements=["charge_id"],
                                                    set_={"amount_refunded": refunded, "updated_at": time.time()}))
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(LastRefundMarker(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, LastRefundMarker.name)
