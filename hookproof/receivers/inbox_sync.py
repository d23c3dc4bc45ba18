"""inbox_sync: dedupe by event id and apply the effect in the same transaction.

The field's standard answer to at-least-once delivery. One transaction does three
things: insert the event id into ``processed_events`` (UNIQUE; ``ON CONFLICT DO NOTHING``),
apply the effect, and write the subscription state only when the object's version is
newer than the stored one. A duplicate finds its id taken and answers 200 with no
effect; a concurrent duplicate waits for the winner's transaction (PostgreSQL's unique
index, SQLite's ``BEGIN IMMEDIATE``), so it can never apply twice. A crash before the
commit leaves nothing behind, so the provider's retry applies the event once. An
invoice's status (``invoice_states``) is kept the same way, newest version wins, in its
own transaction: the versioned upsert makes a redelivery harmless.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, StateChange, WebhookEvent, make_app, run_cli
from hookproof.receivers.business import invoice_state_of
from hookproof.receivers.db import invoice_states


class InboxSync(Receiver):
    """Processed-events table + effect in one transaction; versioned state."""

    name = "inbox_sync"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        invoice = invoice_state_of(event)
        if invoice is not None:
            with self.store.transaction() as conn:
                self.store.write_state(conn, invoice, only_newer=True, event_created=event.created,
                                       table=invoice_states)
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is None and state is None:
            return Reply(200, {"ignored": event.type})
        with self.store.transaction() as conn:
            if not self.store.claim(conn, self.dedupe_key(event), event.id):
                return self.duplicate_reply(event)
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            if state is not None:
                self.save_state(conn, event, state)
        return OK

    def dedupe_key(self, event: WebhookEvent) -> str:
        """What makes two deliveries "the same": the provider's event id."""
        return event.id

    def duplicate_reply(self, event: WebhookEvent) -> Reply:
        """A duplicate was delivered successfully before: acknowledge it again."""
        return Reply(200, {"duplicate": event.id})

    def save_state(self, conn: Connection, event: WebhookEvent, state: StateChange) -> None:
        """Keep the newest version: an older snapshot arriving late is ignored."""
        self.store.write_state(conn, state, only_newer=True, event_created=event.created)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(InboxSync(config))


def app_from_env() -> Any:
    """The app configured from environment variables (``uvicorn --factory …:app_from_env``)."""
    return create_app(ReceiverConfig.from_env())


def main() -> None:
    """Serve this receiver from the command line (``--help`` lists the flags)."""
    run_cli(create_app, InboxSync.name)


if __name__ == "__main__":
    main()
