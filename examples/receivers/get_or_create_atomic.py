"""get_or_create_atomic: mirrors each new object's parent row with an atomic get-or-create.

inbox_sync, plus what most integrations keep: a local row per subscription or payment
(``local_objects``), created by whichever of its events arrives first. The subscription's
``created``, ``updated`` and ``invoice.paid`` events, or a payment's
``payment_intent.succeeded`` and ``charge.succeeded``, often arrive together; each looks
the row up, and when it is missing fetches the details it needs (about 50 ms) and
inserts it with ``INSERT … ON CONFLICT DO NOTHING``, so the events that lose the race
find the row instead of failing.

Options: ``lookup_s`` (0.05), the time spent fetching the row's details.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from sqlalchemy import Column, Float, MetaData, String, Table, insert, select
from sqlalchemy.exc import IntegrityError, ProgrammingError

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

mirror_metadata = MetaData()

#: One row per subscription or payment the integration knows (the shared parent row).
local_objects = Table(
    "local_objects", mirror_metadata,
    Column("object_id", String(200), primary_key=True),
    Column("first_event_type", String(100), nullable=False),
    Column("created_at", Float, nullable=False),
)


def invoice_subscription(invoice: Mapping[str, Any]) -> str | None:
    """The subscription an invoice bills: ``parent.subscription_details.subscription``
    (Stripe API 2025-03-31 and later), or the older top-level ``subscription``."""
    details = (invoice.get("parent") or {}).get("subscription_details") or {}
    return details.get("subscription") or invoice.get("subscription")


def parent_of(event_type: str, obj: Mapping[str, Any]) -> str | None:
    """The new subscription or payment an event announces, or None (the first events of an
    object: a subscription's created/updated and its invoice paid, a payment's succeeded)."""
    if event_type in ("customer.subscription.created", "customer.subscription.updated"):
        return str(obj["id"])
    if event_type == "invoice.paid":
        return invoice_subscription(obj)
    if event_type == "payment_intent.succeeded":
        return str(obj["id"])
    if event_type == "charge.succeeded":
        return obj.get("payment_intent")
    return None


class GetOrCreateAtomic(InboxSync):
    """inbox_sync plus an atomic get-or-create of the parent row."""

    name = "get_or_create_atomic"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        try:
            mirror_metadata.create_all(self.store.engine)
        except (IntegrityError, ProgrammingError):  # another replica created it at the same moment
            mirror_metadata.create_all(self.store.engine)

    def process(self, event: WebhookEvent) -> Reply:
        parent = parent_of(event.type, event.object)
        if parent is not None:
            self.get_or_create(parent, event.type)
        return super().process(event)

    def get_or_create(self, object_id: str, event_type: str) -> None:
        """Make sure the parent row exists (look it up; fetch its details; insert it)."""
        with self.store.transaction() as conn:
            if conn.execute(select(local_objects.c.object_id).where(local_objects.c.object_id == object_id)).first():
                return
        time.sleep(self.config.option("lookup_s", 0.05))  # fetch the customer's details for the new row
        with self.store.transaction() as conn:
            self.insert_row(conn, object_id, event_type)

    def insert_row(self, conn: Any, object_id: str, event_type: str) -> None:
        """Insert the row; a row another event inserted meanwhile is kept."""
        stmt = self.store.dialect_insert(local_objects).values(object_id=object_id, first_event_type=event_type,
                                                               created_at=time.time())
        conn.execute(stmt.on_conflict_do_nothing(index_elements=["object_id"]))


def plain_insert(conn: Any, object_id: str, event_type: str) -> None:
    """A plain INSERT (raises IntegrityError when the row exists)."""
    conn.execute(insert(local_objects).values(object_id=object_id, first_event_type=event_type, created_at=time.time()))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(GetOrCreateAtomic(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, GetOrCreateAtomic.name)
