"""inbox_queue: persist the verified event, answer 200 at once, process it in a worker.

The webhook handler only verifies and inserts the event into the ``inbox`` table
(``ON CONFLICT DO NOTHING``: a duplicate is already there) and answers 200 well within
any sender timeout. A worker thread claims one row at a time with a compare-and-set
(``received``/``retry`` -> ``processing``), then in one transaction applies the effect
(skipped if its business key already has one) and the versioned state and marks the
row ``processed``. Transient errors (database locked, connection lost) put the row back
as ``retry`` with exponential backoff; permanent ones, or too many attempts, park it as
``dead`` (dead letter) for a person to look at. A row left ``processing`` by a crashed
worker is reclaimed after a lease, so nothing acknowledged is lost.

Options: ``max_attempts`` (5), ``backoff_s`` (0.05, doubled per attempt), ``lease_s`` (30).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.engine import Row

from hookproof.receivers import TRANSIENT_DB_ERRORS, Receiver, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.db import inbox

log = logging.getLogger(__name__)

#: Seconds the worker sleeps when the inbox is empty (new rows also wake it at once).
POLL_S = 0.2


class InboxQueue(Receiver):
    """Durable inbox + a worker with atomic claims, retries and a dead-letter state."""

    name = "inbox_queue"
    framework = "flask"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.max_attempts = int(config.option("max_attempts", 5))
        self.backoff_s = config.option("backoff_s", 0.05)
        self.lease_s = config.option("lease_s", 30.0)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._run, name=f"{self.name}-worker", daemon=True)
        self._worker.start()

    # ---- the webhook handler: persist and acknowledge -------------------------
    def process(self, event: WebhookEvent) -> Reply:
        now = time.time()
        stmt = self.store.dialect_insert(inbox).values(event_id=event.id, payload=event.to_json(), state="received",
                                                attempts=0, available_at=now, received_at=now)
        with self.store.transaction() as conn:
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["event_id"]))
        self._wake.set()
        return Reply(200, {"queued": event.id})

    # ---- the worker ------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                row = self._claim()
            except Exception:  # the database is unreachable for now: try again later
                log.exception("claiming from the inbox failed")
                row = None
            if row is None:
                self._wake.wait(POLL_S)
                self._wake.clear()
                continue
            self._work(row)

    def _claim(self) -> Row[Any] | None:
        """Atomically move the oldest ready row to ``processing``; None when there is none."""
        now = time.time()
        ready = or_(and_(inbox.c.state.in_(("received", "retry")), inbox.c.available_at <= now),
                    and_(inbox.c.state == "processing", inbox.c.claimed_at < now - self.lease_s))
        with self.store.transaction() as conn:
            found = conn.execute(select(inbox.c.event_id, inbox.c.state, inbox.c.claimed_at).where(ready)
                                 .order_by(inbox.c.received_at).limit(1)).first()
            if found is None:
                return None
            same_claim = inbox.c.claimed_at.is_(None) if found.claimed_at is None else inbox.c.claimed_at == found.claimed_at
            # Compare-and-set: no row comes back when another worker (a replica) won it.
            return conn.execute(update(inbox).where(inbox.c.event_id == found.event_id, inbox.c.state == found.state,
                                                    same_claim)
                                .values(state="processing", claimed_at=now, attempts=inbox.c.attempts + 1)
                                .returning(*inbox.c)).first()

    def _work(self, row: Row[Any]) -> None:
        try:
            event = WebhookEvent.from_json(row.payload)
            effect, state = self.effect_of(event), self.state_of(event)
            with self.store.transaction() as conn:
                if effect is not None and not self.store.has_effect(conn, effect.business_key):
                    self.store.apply_effect(conn, effect, event.id)
                if state is not None:
                    self.store.write_state(conn, state, only_newer=True, event_created=event.created)
                conn.execute(update(inbox).where(inbox.c.event_id == row.event_id)
                             .values(state="processed", last_error=None))
        except TRANSIENT_DB_ERRORS as exc:
            self._fail(row, exc, transient=True)
        except Exception as exc:  # a bug or a malformed event: retrying will not help
            self._fail(row, exc, transient=False)

    def _fail(self, row: Row[Any], exc: Exception, *, transient: bool) -> None:
        dead = not transient or row.attempts >= self.max_attempts
        delay = self.backoff_s * 2 ** (row.attempts - 1)
        log.warning("event %s attempt %d failed (%s): %s", row.event_id, row.attempts,
                    "dead letter" if dead else f"retry in {delay:.2f} s", exc)
        with self.store.transaction() as conn:
            conn.execute(update(inbox).where(inbox.c.event_id == row.event_id).values(
                state="dead" if dead else "retry", available_at=time.time() + delay, last_error=repr(exc)[:2000]))

    # ---- operations --------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Inbox rows per state (``received``, ``processing``, ``retry``, ``processed``, ``dead``)."""
        with self.store.transaction() as conn:
            return {r.state: r.n for r in conn.exec_driver_sql("SELECT state, COUNT(*) AS n FROM inbox GROUP BY state")}

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._worker.join(timeout=5)
        super().close()


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver (starts its worker thread)."""
    return make_app(InboxQueue(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, InboxQueue.name)
