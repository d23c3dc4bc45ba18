"""A test receiver: inbox_queue that applies each event about half a second after answering.

It persists the verified event and answers 200 at once, as inbox_queue does, but its worker
takes an event up only ``apply_after_s`` (option, default 0.5) after it arrived, as a queue
worker with a short delay does (a BullMQ job with a delay, a Celery countdown): correct, only
late. With ``lose_first=1`` it also keeps the effect of the first event it ever received from
the truth (its state is still written), so the scenario delivering that event falls short of
what the receiver owes. Run as ``python -m tests.chaos.late_apply --port P --db URL --secret S``.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from examples.receivers.inbox_queue import InboxQueue
from hookproof.receivers import Effect, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.db import inbox


class LateApply(InboxQueue):
    """inbox_queue whose worker applies each event `apply_after_s` after it arrived."""

    name = "late_apply"

    def __init__(self, config: ReceiverConfig) -> None:
        self.apply_after_s = float(config.option("apply_after_s", 0.5))
        self.lose_first = bool(config.option("lose_first", 0))
        super().__init__(config)

    def process(self, event: WebhookEvent) -> Reply:
        now = time.time()
        stmt = self.store.dialect_insert(inbox).values(event_id=event.id, payload=event.to_json(), state="received",
                                                       attempts=0, available_at=now + self.apply_after_s,
                                                       received_at=now)
        with self.store.transaction() as conn:
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["event_id"]))
        return Reply(200, {"queued": event.id})

    def effect_of(self, event: WebhookEvent) -> Effect | None:
        if self.lose_first and event.id == self._first_event_id():
            return None
        return super().effect_of(event)

    def _first_event_id(self) -> str | None:
        with self.store.transaction() as conn:
            return conn.execute(select(inbox.c.event_id).order_by(inbox.c.received_at).limit(1)).scalar()


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver (starts its worker thread)."""
    return make_app(LateApply(config))


if __name__ == "__main__":
    run_cli(create_app, LateApply.name)
