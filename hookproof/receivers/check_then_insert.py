"""check_then_insert: looks the event up, does the work, then logs it.

The dedupe is a check in code: ``SELECT`` the event id from ``webhook_log``; if absent,
call the fulfilment service (about 50 ms), then insert the effect and the log row.
``webhook_log`` has no UNIQUE constraint (the code "already checked"), so two copies
that arrive within the window both pass the check and both apply: a concurrent burst
grants the license twice. Sequential duplicates are handled fine.

Options: ``fulfilment_call_s`` (0.05).
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert, select

from hookproof.receivers import OK, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.db import webhook_log


class CheckThenInsert(Receiver):
    """SELECT, call the fulfilment service, INSERT: a check-then-act window."""

    name = "check_then_insert"
    framework = "fastapi"

    def process(self, event: WebhookEvent) -> Reply:
        with self.store.transaction() as conn:
            seen = conn.execute(select(webhook_log.c.id).where(webhook_log.c.event_id == event.id)).first()
        if seen is not None:
            return Reply(200, {"duplicate": event.id})
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is not None:
            time.sleep(self.config.option("fulfilment_call_s", 0.05))  # reserve stock at the fulfilment service
        with self.store.transaction() as conn:
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
            conn.execute(insert(webhook_log).values(event_id=event.id, logged_at=time.time()))
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(CheckThenInsert(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


def main() -> None:
    """Serve this receiver from the command line (``--help`` lists the flags)."""
    run_cli(create_app, CheckThenInsert.name)


if __name__ == "__main__":
    main()
