"""fetch_then_write: a test receiver that fetches a subscription and writes it if it changed, without a lock.

`examples.receivers.fetch_state`, except how a subscription event's state is kept: as
Stripe advises for events that arrive out of order, the subscription is fetched from the
provider API on each ``customer.subscription.*`` event; the stored row is read first (in a
transaction of its own: no row lock), the fetched status compared with it in code, and
written unconditionally when it differs (the Django twin: ``Subscription.objects.get(id=…)``,
``stripe.Subscription.retrieve``, ``row.save()`` without ``select_for_update``). Two events of
one subscription handled at once fetch around a change between them; when the older fetch's
write commits last, the newer state is lost. The event id is claimed in the write's
transaction, so a failed fetch (503) loses nothing.

``--option locked=1`` gives the correct twin: the claim, the read, the fetch and the write
share one transaction (SQLite's ``BEGIN IMMEDIATE``: the row, with the whole file, is locked
from the read to the write, as ``select_for_update`` locks it), so the second handler reads
and fetches only once the first committed. Run as ``python -m tests.scenarios.fetch_then_write``
from the repository root.
"""

from __future__ import annotations

from typing import Any

from examples.receivers.fetch_state import FetchState, ProviderUnavailable
from hookproof.receivers import OK, ReceiverConfig, Reply, StateChange, WebhookEvent, make_app, run_cli


class FetchThenWrite(FetchState):
    """fetch_state whose subscription state is read, fetched, compared by status and written blindly."""

    name = "fetch_then_write"

    def process(self, event: WebhookEvent) -> Reply:
        if self.state_of(event) is None:
            return super().process(event)
        try:
            if self.config.option("locked", 0):
                return self._locked(event)
            return self._unlocked(event)
        except ProviderUnavailable as exc:
            return Reply(503, {"error": str(exc)})

    def _locked(self, event: WebhookEvent) -> Reply:
        with self.store.transaction() as conn:
            if not self.store.claim(conn, event.id, event.id):
                return Reply(200, {"duplicate": event.id})
            stored = self.store.read_state(conn, event.object_id)
            fetched = self._fetched(event)
            if stored is None or stored.status != fetched.status:
                self.store.write_state(conn, fetched, only_newer=False, event_created=event.created)
        return OK

    def _unlocked(self, event: WebhookEvent) -> Reply:
        with self.store.transaction() as read:
            if self.store.is_processed(read, event.id):
                return Reply(200, {"duplicate": event.id})
            stored = self.store.read_state(read, event.object_id)
        fetched = self._fetched(event)
        with self.store.transaction() as conn:
            if not self.store.claim(conn, event.id, event.id):
                return Reply(200, {"duplicate": event.id})
            if stored is None or stored.status != fetched.status:
                self.store.write_state(conn, fetched, only_newer=False, event_created=event.created)
        return OK

    def _fetched(self, event: WebhookEvent) -> StateChange:
        sub = self._get(f"/v1/subscriptions/{event.object_id}", account=event.account)
        return StateChange(sub["id"], sub["status"], int(sub.get("hookproof_version", 0)))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FetchThenWrite(config))


if __name__ == "__main__":
    run_cli(create_app, FetchThenWrite.name)
