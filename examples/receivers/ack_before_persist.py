"""ack_before_persist: answers 200 first and processes from an in-memory queue.

Verification is done and duplicates are deduplicated in the database (as inbox_sync),
but the handler only puts the event on a ``queue.Queue`` and answers 200; a worker
thread applies it a moment later (option ``apply_delay_s``, default 0: how long the worker
takes to get to an event, like a worker that polls its queue). The queue lives in process memory: a crash, OOM
kill or deploy between the answer and the worker loses every queued event, and the
provider, having seen 200, never sends them again (a paid renewal never recorded).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync

log = logging.getLogger(__name__)


class AckBeforePersist(InboxSync):
    """Acknowledge, enqueue in memory, apply later (with inbox_sync's transaction)."""

    name = "ack_before_persist"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.queue: queue.Queue[WebhookEvent | None] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name=f"{self.name}-worker", daemon=True)
        self._worker.start()

    def process(self, event: WebhookEvent) -> Reply:
        self.queue.put(event)
        return Reply(200, {"accepted": event.id})

    def _run(self) -> None:
        delay_s = self.config.option("apply_delay_s", 0.0)
        while (event := self.queue.get()) is not None:
            if delay_s:
                time.sleep(delay_s)
            try:
                super().process(event)
            except Exception:
                log.exception("processing %s failed", event.id)

    def close(self) -> None:
        self.queue.put(None)
        self._worker.join(timeout=5)
        super().close()


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(AckBeforePersist(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, AckBeforePersist.name)
