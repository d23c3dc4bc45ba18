"""fetch_once_by_object: fetches a subscription from the provider API once, then never again.

fetch_state's strategy for effects, but subscriptions are synced once per object: the
first event about a subscription claims its id in ``processed_events`` and fetches it
(``GET /v1/subscriptions/{id}``); every later event about it is acknowledged as
"already synced". Against a provider API that always serves the final version this
looks right; against a real provider, which serves the subscription as it is when the
first event is sent, the receiver stays at that first version: a subscription that was
later canceled stays active.

Stripe profile only. Needs ``--api-base`` and ``--api-key``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete

from examples.receivers.fetch_state import FetchState
from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.db import processed_events


class FetchOnceByObject(FetchState):
    """fetch_state, with subscriptions deduplicated by object id."""

    name = "fetch_once_by_object"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        if self.state_of(event) is not None:
            with self.store.transaction() as conn:
                first = self.store.claim(conn, "synced:" + str(event.object_id), event.id)
            if not first:
                return Reply(200, {"already_synced": event.object_id})
        reply = super().process(event)
        if reply.status != 200 and self.state_of(event) is not None:
            with self.store.transaction() as conn:  # not synced after all: let the retry fetch
                conn.execute(delete(processed_events)
                             .where(processed_events.c.dedupe_key == "synced:" + str(event.object_id)))
        return reply if reply.status != 200 else OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FetchOnceByObject(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FetchOnceByObject.name)
