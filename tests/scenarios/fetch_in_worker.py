"""fetch_in_worker: a test receiver that answers 200 at once and applies in a worker, late.

Stripe's advice (answer 2xx quickly, then run the slow logic): the handler verifies the event,
puts it on a queue and answers 200; two worker threads take events and apply each
``apply_delay_s`` after it arrived (default 0.7 s: longer than certify's default settle window,
0.3 s; a delay from arrival, so a scenario sending an object's whole story is not held up by a
wait per event queued before it), as
`examples.receivers.fetch_state` does (the subscription and the effect's object fetched from
the provider API, the effect claimed once per business key). A fetch the provider API fails
(404 not yet visible, 5xx, 429) is tried again by the worker, after 0.5 s then 1 s (a Stripe
SDK's backoff), so an effect lands a second or more after its answer.

``--option fault=1`` gives its broken twin: the worker gives up on an event whose fetch failed,
already acknowledged, so its effect and state are lost for good.

The queue is in memory, as in `examples.receivers.ack_before_persist` (a crash would lose it);
the catalog's scenarios do not crash the receiver. Run as ``python -m
tests.scenarios.fetch_in_worker`` from the repository root.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from examples.receivers.fetch_state import FetchState
from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, run_cli

log = logging.getLogger(__name__)

#: Seconds the worker waits before each further try of an event whose fetch failed.
BACKOFF_S = (0.5, 1.0, 2.0)


class FetchInWorker(FetchState):
    """fetch_state, applied by two worker threads after the answer."""

    name = "fetch_in_worker"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.queue: queue.Queue[tuple[float, WebhookEvent] | None] = queue.Queue()
        self._workers = [threading.Thread(target=self._run, name=f"{self.name}-worker-{i}", daemon=True)
                         for i in range(2)]
        for worker in self._workers:
            worker.start()

    def process(self, event: WebhookEvent) -> Reply:
        self.queue.put((time.monotonic(), event))
        return Reply(200, {"accepted": event.id})

    def _get(self, path: str, *, tries: int = 3, account: str | None = None) -> Any:
        return super()._get(path, tries=1, account=account)  # the worker tries the whole event again

    def _run(self) -> None:
        delay_s = self.config.option("apply_delay_s", 0.7)
        gives_up = self.config.option("fault", 0.0) == 1
        while (item := self.queue.get()) is not None:
            arrived, event = item
            time.sleep(max(0.0, arrived + delay_s - time.monotonic()))
            for backoff_s in (*BACKOFF_S, None):
                try:
                    reply = super().process(event)
                except Exception:
                    log.exception("processing %s failed", event.id)
                    break
                if reply.status < 500 or gives_up or backoff_s is None:
                    break
                time.sleep(backoff_s)

    def close(self) -> None:
        for _ in self._workers:
            self.queue.put(None)
        for worker in self._workers:
            worker.join(timeout=5)
        super().close()


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FetchInWorker(config))


if __name__ == "__main__":
    run_cli(create_app, FetchInWorker.name)
