"""A correct receiver that starts slowly and refuses what it may refuse (a test fixture).

inbox_sync (persists, then acknowledges; dedupes by event id) that answers 413 to a body
over 1 MB and, with ``REFUSE_UNKNOWN=1``, 400 to an event type
it does not handle (a real ``valid_not_rejected`` finding, which makes certify compress
later retry schedules). It sleeps ``START_DELAY_S`` seconds (default 3) before it listens,
like a Django receiver whose start runs its migrations and then gunicorn.
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, handles, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

#: Bodies longer than this are answered 413.
MAX_BODY_BYTES = 1024 * 1024


class SlowStartRefusesBig(InboxSync):
    """inbox_sync with a body-size limit and, optionally, a 400 for unhandled types."""

    name = "slow_start_refuses_big"

    def handle(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        if len(body) > MAX_BODY_BYTES:
            return Reply(413, {"error": "payload too large"})
        return super().handle(body, headers)

    def process(self, event: WebhookEvent) -> Reply:
        if os.environ.get("REFUSE_UNKNOWN") == "1" and not handles(event.type):
            return Reply(400, {"error": f"unsupported event type {event.type}"})
        return super().process(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(SlowStartRefusesBig(config))


if __name__ == "__main__":
    time.sleep(float(os.environ.get("START_DELAY_S", "3")))
    run_cli(create_app, SlowStartRefusesBig.name)
